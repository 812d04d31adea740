"""A store outage is answered 503 with ``Retry-After``, never 500, and ends by itself.

A real ``merknera serve`` on a throwaway PostgreSQL cluster of this test's own, with every
listener on.  A loop of requests keeps hitting the results API (reads and an admin write),
``/rpc``, two pages, Battlebot's HTTP routes and GraphQL (reads and registrations), the
hexagons API and the Kalaha board API (a read and a new board) while the server is stopped
(``pg_ctl stop -m fast``, as a restart does) until every route has answered 503 a few
times, then started again.  Every answer is the route's usual one or a 503 with
``Retry-After`` in the listener's own error shape; once the server is back every route
answers as usual again and the node coordinates again, without a restart of the platform.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from merknera.protocol import jsonrpc
from merknera.scheduler.coordinator import LOCK as COORDINATOR_LOCK
from merknera.store.db import RETRY_AFTER, StoreUnavailableError
from tests.e2e.harness import ADMIN_TOKEN, E2E
from tests.support import free_port
from tests.support.postgres import Cluster, start_cluster

SPRING_KEYS = {"timestamp", "status", "error", "message", "path"}
"""The keys of Spring Boot's error body (the Kalaha board API's refusals)."""

_names = itertools.count(1)


@dataclass
class Answer:
    """What a route answered."""

    status: int
    content_type: str
    retry_after: str | None
    text: str


@dataclass
class Route:
    """A route the loop hits: the request, the status it answers while the store is up,
    and the listener whose error shape its 503 must have."""

    label: str
    method: str
    listener: str
    path: Callable[[], str]
    usual: int
    shape: str
    body: Callable[[], Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    fine: Callable[[Answer], bool] = lambda _answer: True
    """Whether an answer of the usual status is the usual answer (GraphQL's errors come
    with 200)."""
    answers: list[Answer] = field(default_factory=list)


def shaped(route: Route, answer: Answer) -> bool:
    """Whether a 503 has the listener's error shape and ``Retry-After``."""
    if answer.retry_after != str(RETRY_AFTER):
        return False
    if route.shape == "page":
        return answer.content_type == "text/html" and "503" in answer.text
    if route.shape == "text":
        return answer.content_type == "text/plain" and "database" in answer.text
    if answer.content_type != "application/json":
        return False
    body = json.loads(answer.text)
    if route.shape == "spring":
        return set(body) == SPRING_KEYS and body["status"] == 503
    if route.shape == "rpc":
        return body["error"]["code"] == jsonrpc.INTERNAL_ERROR and "database" in str(body)
    return set(body) == {"error"} and "database" in body["error"]


def unknown_token(answer: Answer) -> bool:
    """Whether ``/rpc`` refused the token (it looked the token up)."""
    code: int = json.loads(answer.text)["error"]["code"]
    return code == jsonrpc.UNKNOWN_TOKEN


def no_graphql_errors(answer: Answer) -> bool:
    """Whether a GraphQL answer has data and no errors."""
    return "errors" not in json.loads(answer.text)


def routes() -> list[Route]:
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    return [
        Route("bots", "GET", "main", lambda: "/api/bots", 200, "json"),
        Route("games", "GET", "main", lambda: "/api/games?limit=5", 200, "json"),
        Route("leaderboard", "GET", "main", lambda: "/api/leaderboard?game=TICTACTOE", 200,
              "json"),
        Route("tournaments", "GET", "main", lambda: "/api/tournaments", 200, "json"),
        Route("nodes", "GET", "main", lambda: "/api/nodes", 200, "json"),
        Route("nodes (admin)", "GET", "main", lambda: "/api/nodes", 200, "json",
              headers=admin),
        Route("admin disable", "POST", "main", lambda: "/api/admin/bots/999/disable", 409,
              "json", headers=admin),
        Route("rpc register", "POST", "main", lambda: "/rpc", 200, "rpc",
              body=lambda: {"jsonrpc": "2.0", "id": 1, "method": "RegistrationService.Register",
                            "params": {"token": "not-a-token", "botname": "Probe",
                                       "botversion": "1", "game": "TICTACTOE",
                                       "rpcendpoint": "http://127.0.0.1:9/rpc"}},
              fine=unknown_token),
        Route("home page", "GET", "main", lambda: "/", 200, "page"),
        Route("leaderboard page", "GET", "main", lambda: "/leaderboard/TICTACTOE", 200,
              "page"),
        Route("battlebot bots", "GET", "battlebot", lambda: "/bots/noughtsandcrosses", 200,
              "json"),
        Route("battlebot register", "POST", "battlebot", lambda: "/bots/noughtsandcrosses",
              201, "json",
              body=lambda: {"bot_id": f"Probe{next(_names)}", "owner": "prober"}),
        Route("battlebot graphql bots", "POST", "battlebot", lambda: "/graphql", 200, "json",
              body=lambda: {"query": "{ bots(gameType: NOUGHTS_AND_CROSSES) { name } }"},
              fine=no_graphql_errors),
        Route("battlebot graphql register", "POST", "battlebot", lambda: "/graphql", 200,
              "json", body=lambda: {"query": (
                  "mutation { registerBot(gameType: NUMBERWANG, "
                  f'name: "Graph{next(_names)}", owner: "prober") {{ password }} }}')},
              fine=no_graphql_errors),
        Route("hexagons game", "GET", "hexagons", lambda: f"/{uuid.uuid4().hex}", 404, "text"),
        Route("kalaha board", "GET", "kalaha", lambda: f"/api/boards/{uuid.uuid4()}", 404,
              "spring"),
        Route("kalaha new board", "POST", "kalaha", lambda: "/api/boards", 201, "spring"),
    ]


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """A cluster of this test's own: it is stopped and started again."""
    started = start_cluster()
    try:
        yield started
    finally:
        started.stop()


@contextlib.asynccontextmanager
async def request_loop(e2e: E2E, bases: dict[str, str],
                       table: list[Route]) -> AsyncIterator[asyncio.Task[None]]:
    """Hit every route of ``table`` in turn, again and again, until the block ends (the
    loop's task: it ends early only if a request fails)."""
    async def ask(route: Route) -> None:
        body = route.body() if route.body is not None else None
        async with e2e.session.request(route.method, bases[route.listener] + route.path(),
                                       json=body, headers=route.headers) as response:
            route.answers.append(Answer(response.status, response.content_type,
                                        response.headers.get("Retry-After"),
                                        await response.text()))

    async def loop() -> None:
        while True:
            for route in table:
                await ask(route)
            await asyncio.sleep(0.02)  # a pace, not a wait for anything

    task = asyncio.create_task(loop())
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


COORDINATOR_LOCKS = ("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "  # noqa: S608
                     f"AND granted AND objid = {COORDINATOR_LOCK}")
"""How many sessions hold the coordinator's lock."""

OUTAGE_ANSWERS = 40
"""503s each route must have answered before PostgreSQL starts again: the outage spans
many rounds of the loop (a few seconds), so every route meets a server that is still
down after the store has tried to connect again, and the node's heartbeat and the
coordinator's connection fail meanwhile too."""


async def test_a_stopped_postgresql_is_answered_503_then_served_again(
        cluster: Cluster, e2e: E2E) -> None:
    url = cluster.new_database()
    database = url.rsplit("/", 1)[1]
    e2e.db = url  # type: ignore[assignment]  # the harness passes it on as --db
    ports = {name: free_port() for name in ("battlebot", "hexagons", "kalaha")}
    platform = await e2e.start_platform(
        request_burst="100000", request_rate="100000", registration_burst="100000",
        auth_failure_burst="100000",
        max_bots_per_user="100000", max_open_games_per_client="100000",
        max_open_games="100000",
        # The coordinator tries to take its lock again every third of a lease.
        lease_seconds="3", battlebot_port=str(ports["battlebot"]),
        hexagons_port=str(ports["hexagons"]), kalaha_port=str(ports["kalaha"]))
    bases = {"main": platform.url,
             **{name: f"http://127.0.0.1:{port}" for name, port in ports.items()}}
    table = routes()

    def wrong() -> list[tuple[str, int, str]]:
        """Every answer that is neither the route's usual one nor a well-formed 503."""
        return [(route.label, answer.status, answer.text[:200]) for route in table
                for answer in route.answers
                if not (answer.status == route.usual and route.fine(answer))
                and not (answer.status == 503 and shaped(route, answer))]

    async with request_loop(e2e, bases, table) as loop:
        async def every_route(status: Callable[[Route], int], count: int,
                              marks: list[int]) -> tuple[bool | None, str]:
            if loop.done():
                loop.result()  # the failed request's error
            assert not wrong(), wrong()
            short = [route.label for route, mark in zip(table, marks, strict=True)
                     if sum(answer.status == status(route)
                            for answer in route.answers[mark:]) < count]
            return (True if not short else None), f"not yet from {short}"

        def marks() -> list[int]:
            return [len(route.answers) for route in table]

        await e2e.wait_until("every route's usual answer", lambda: every_route(
            lambda route: route.usual, 1, [0] * len(table)))
        await asyncio.to_thread(cluster.pause)
        paused = marks()
        await e2e.wait_until(f"{OUTAGE_ANSWERS} 503s from every route with PostgreSQL "
                             "stopped", lambda: every_route(lambda _route: 503,
                                                            OUTAGE_ANSWERS, paused))
        # A Battlebot client's login reads the store too: it is told, and closed.
        async with e2e.session.ws_connect(bases["battlebot"]) as ws:
            await ws.send_json({"name": "nobody", "password": "x", "gameType": "NUMBERWANG"})
            told = await ws.receive_json(timeout=30)
        assert told == {"authentication": "failed",
                        "error": StoreUnavailableError.for_clients}, told
        await asyncio.to_thread(cluster.resume)
        resumed = marks()
        await e2e.wait_until("every route's usual answer with PostgreSQL back",
                             lambda: every_route(lambda route: route.usual, 1, resumed))

        async def coordinating() -> tuple[bool | None, str]:
            locks = await asyncio.to_thread(cluster.psql, COORDINATOR_LOCKS, database)
            return (True if locks == "1" else None), f"{locks} coordinator's locks held"

        # The node's duties came back by themselves too: the restart ended the session
        # that held the coordinator's lock, and the node takes it again.
        await e2e.wait_until("the coordinator's lock taken again", coordinating)
    assert not wrong(), wrong()
    assert platform.child.running

"""Requests a page of another origin could make a visitor's browser send, on every
listener (:mod:`merknera.guard.crosssite`): real listeners on loopback, real HTTP.

A browser sends a ``text/plain``, form-typed or body-less ``POST`` to another origin
without a preflight (and with an ``Origin`` header); such a request must start no game.
What the original clients send (JSON typed as JSON, the Kalaha front end's empty ``POST``,
the MebiPenny Ruby clients' untyped or form-typed JSON without ``Origin``) still works,
and a page of any origin may still read a Kalaha board.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import aiohttp
import pytest
from pytest_aiohttp import AiohttpServer

from merknera.app import Platform
from merknera.config import Config
from merknera.server import gateway_ports, running
from merknera.store import users
from tests.support import ScriptedBot, free_port, json_or_text, until

HOSTILE = "http://evil.example"
"""A page that would play games through its visitors' browsers."""
FRONT_END = "http://localhost:4200"
"""The original Kalaha front end's origin (``kalaha-fe`` under ``ng serve``)."""
SIMPLE_TYPES = ("text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                "multipart/form-data; boundary=x")
"""The types a page of another origin may give a body without a preflight."""
SPRING_415 = "Content-Type '{}' is not supported"


def port_of(config: Config, key: str) -> int:
    """The port of a listener, by its setting's key (``port``, ``kalaha_port``, ...)."""
    return {"port": config.listeners.port, **gateway_ports(config)}[key]


@dataclasses.dataclass
class Served:
    """The platform with every listener, and a client of it."""

    config: Config
    platform: Platform
    token: str
    http: aiohttp.ClientSession

    def url(self, path: str, port: str = "port") -> str:
        return f"http://127.0.0.1:{port_of(self.config, port)}{path}"

    async def call(self, method: str, url: str, body: Any = None, *,
                   content_type: str | None = None, origin: str | None = None,
                   headers: dict[str, str] | None = None) -> tuple[int, Any, Any]:
        """Status, headers and body (decoded JSON, else text) of one request; ``body`` is
        sent as JSON text (bytes as they are), typed ``content_type`` (None: untyped)."""
        sent = dict(headers or {})
        if content_type is not None:
            sent["Content-Type"] = content_type
        if origin is not None:
            sent["Origin"] = origin
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        # aiohttp types a body itself unless told: skip that to send it untyped.
        skip = ["Content-Type"] if content_type is None else []
        async with self.http.request(method, url, data=data, headers=sent,
                                     skip_auto_headers=skip) as response:
            return response.status, response.headers, json_or_text(await response.text())

    async def games(self) -> int:
        """Games the store holds."""
        found: int = await self.platform.db.fetchval("SELECT COUNT(*) FROM games")
        return found


Serve = Callable[..., Awaitable[Served]]


@pytest.fixture
async def serve(config: Config) -> AsyncIterator[Serve]:
    """``await serve(**config changes)``: the platform served by ``merknera.server.running``
    with its Battlebot, hexagons and Kalaha listeners."""
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=20)))

        async def start(**changes: Any) -> Served:
            changed = config.replace(
                port=0, battlebot_port=free_port(), hexagons_port=free_port(),
                kalaha_port=free_port(), **changes)
            live, platform = await stack.enter_async_context(running(changed))
            _, token = await users.create_user(platform.db, "alice")
            return Served(live, platform, token, http)

        yield start


async def online_bot(served: Served, aiohttp_server: AiohttpServer, game: str) -> int:
    """A bot of ``game`` registered and online for people to play; its id."""
    server = await aiohttp_server(ScriptedBot().app())
    status, _, reply = await served.call("POST", served.url("/rpc"), {
        "jsonrpc": "2.0", "id": 1, "method": "RegistrationService.Register", "params": {
            "token": served.token, "botname": f"{game.lower()}-bot", "botversion": "1",
            "game": game, "rpcendpoint": str(server.make_url("/rpc"))}},
        content_type="application/json")
    assert status == 200 and "result" in reply, reply

    async def listed() -> list[Any]:
        _, _, found = await served.call("GET", served.url(f"/api/play/opponents?game={game}"))
        return list(found["bots"])

    async def online() -> bool:
        return bool(await listed())

    await until(online)
    (bot,) = await listed()
    return int(bot["id"])


# -- the main site ------------------------------------------------------------------------------


async def test_a_play_a_page_of_another_origin_could_send_starts_no_game(
        serve: Serve, aiohttp_server: AiohttpServer) -> None:
    served = await serve()
    bot = await online_bot(served, aiohttp_server, "TICTACTOE")
    start = {"game": "TICTACTOE", "opponent": bot}
    for content_type in (*SIMPLE_TYPES, None):
        status, _, refused = await served.call("POST", served.url("/api/play"), start,
                                               content_type=content_type, origin=HOSTILE)
        sent = "no Content-Type" if content_type is None else f"Content-Type {content_type!r}"
        assert (status, refused) == (415, {"error": f"{sent} is not accepted here: send the "
                                                    "body as application/json"})
    assert await served.games() == 0
    # The same body typed as JSON (as the play page sends it) starts the game.
    status, _, game = await served.call("POST", served.url("/api/play"), start,
                                        content_type="application/json")
    assert status == 201, game
    assert await served.games() == 1
    moves = served.url(f"/api/play/{game['token']}/moves")
    status, _, refused = await served.call("POST", moves, {"move": {"position": 4}},
                                           content_type="text/plain", origin=HOSTILE)
    assert status == 415 and refused["error"].startswith("Content-Type 'text/plain' is not")
    status, _, moved = await served.call("POST", moves, {"move": {"position": 4}},
                                         content_type="application/json")
    assert status == 200 and len(moved["moves"]) >= 1, moved


async def test_rpc_takes_json_only_as_merkneras_server_did(serve: Serve) -> None:
    served = await serve()
    register = {"jsonrpc": "2.0", "id": 3, "method": "RegistrationService.Register",
                "params": {"token": served.token, "botname": "plain", "botversion": "1",
                           "game": "TICTACTOE", "rpcendpoint": "http://127.0.0.1:9/rpc"}}
    status, _, reply = await served.call("POST", served.url("/rpc"), register,
                                         content_type="text/plain", origin=HOSTILE)
    assert (status, reply) == (415, {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": "Invalid request: Content-Type 'text/plain' is not "
                                   "accepted here: send the body as application/json"}})
    assert await served.platform.db.fetchval("SELECT COUNT(*) FROM bots") == 0


async def test_an_admin_call_from_a_page_of_another_origin_is_refused(serve: Serve) -> None:
    served = await serve(admin_token="secret")
    bearer = {"Authorization": "Bearer secret"}
    suspend = served.url("/api/admin/users/alice/suspend")

    async def suspended() -> bool:
        found = await served.platform.db.fetchval(
            "SELECT suspended_reason FROM users WHERE name = ?", ("alice",))
        return found is not None

    status, _, refused = await served.call("POST", suspend, origin=HOSTILE, headers=bearer)
    assert (status, refused) == (403, {"error": f"refused: POST from a page of another "
                                                f"origin (Origin: {HOSTILE}); pages of "
                                                "other origins may not change anything "
                                                "here"})
    status, _, refused = await served.call("POST", suspend, b'{"reason": "r"}',
                                           content_type="text/plain", headers=bearer)
    assert (status, refused) == (415, {"error": "Content-Type 'text/plain' is not accepted "
                                                "here: send the body as application/json, "
                                                "or send no body"})
    assert not await suspended()
    # Without a body and without Origin, as a script sends it, or from the site itself.
    for origin in (None, served.config.listeners.base_url):
        status, _, done = await served.call("POST", suspend, origin=origin, headers=bearer)
        assert status == 200, done
        assert await suspended()
        status, _, done = await served.call(
            "POST", served.url("/api/admin/users/alice/unsuspend"), origin=origin,
            headers=bearer)
        assert status == 200 and not await suspended(), done


# -- the Kalaha listener ----------------------------------------------------------------------


async def test_a_board_a_page_of_another_origin_could_make_starts_no_game(
        serve: Serve, aiohttp_server: AiohttpServer) -> None:
    served = await serve()
    bot = await online_bot(served, aiohttp_server, "KALAHA")
    boards = served.url("/api/boards", "kalaha_port")
    for content_type in SIMPLE_TYPES:
        for body in ({"opponent": bot}, {}):
            status, headers, refused = await served.call("POST", boards, body, origin=HOSTILE,
                                                         content_type=content_type)
            assert (status, refused["message"], refused["path"]) == (
                415, SPRING_415.format(content_type), "/api/boards"), refused
            assert "Access-Control-Allow-Origin" not in headers, headers
    # No body at all: the original front end's request, refused from another origin.
    status, headers, refused = await served.call("POST", boards, origin=HOSTILE)
    assert (status, refused["error"], refused["message"]) == (
        403, "Forbidden", f"Invalid CORS request: a page of {HOSTILE} may not POST here "
                          "(kalaha_origins lists the front ends that may)"), refused
    assert "Access-Control-Allow-Origin" not in headers, headers
    assert await served.games() == 0
    # The original front end's new board (an empty POST, untyped), and the README's curl.
    status, headers, board = await served.call("POST", boards, origin=FRONT_END)
    assert status == 201 and headers["Access-Control-Allow-Origin"] == "*", (status, board)
    # A front end's page may read the secret a new name is given (none here: anonymous).
    assert headers["Access-Control-Expose-Headers"] == "X-Guest-Secret, Retry-After"
    status, _, other = await served.call("POST", boards, content_type="application/json")
    assert status == 201, other

    async def both_stored() -> bool:
        return await served.games() == 2

    await until(both_stored)
    play = served.url(f"/api/boards/{board['boardId']}", "kalaha_port")
    status, _, refused = await served.call("PUT", play, {"pitIndex": 0, "player": "ONE"},
                                           content_type="text/plain", origin=HOSTILE)
    assert (status, refused["message"]) == (415, SPRING_415.format("text/plain")), refused


async def test_any_page_reads_boards_and_only_the_front_ends_change_them(
        serve: Serve) -> None:
    served = await serve()
    boards = served.url("/api/boards", "kalaha_port")
    status, _, board = await served.call("POST", boards, origin=FRONT_END)
    assert status == 201, board
    path = f"/api/boards/{board['boardId']}"
    one = served.url(path, "kalaha_port")

    async def preflight(where: str, method: str, origin: str) -> tuple[int, Any]:
        status, headers, _ = await served.call("OPTIONS", where, origin=origin, headers={
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "content-type"})
        return status, headers

    play_page = served.config.listeners.base_url  # the platform's own play page calls the listener
    for origin in (FRONT_END, play_page):
        for where, method in ((boards, "POST"), (one, "PUT"), (one, "GET")):
            status, headers = await preflight(where, method, origin)
            assert status == 200 and headers["Access-Control-Allow-Origin"] == "*", headers
            assert headers["Access-Control-Allow-Methods"] == "GET,POST,PUT", headers
            assert headers["Access-Control-Allow-Headers"] == "content-type", headers
    for where, method in ((boards, "POST"), (one, "PUT")):
        status, headers = await preflight(where, method, HOSTILE)
        assert status == 403, headers
        assert not [h for h in headers if h.lower().startswith("access-control-")], headers
    # Any page may read: a GET's preflight tells it of GET only, and every GET is readable.
    status, headers = await preflight(one, "GET", HOSTILE)
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "*", headers
    assert headers["Access-Control-Allow-Methods"] == "GET", headers
    status, headers, read = await served.call("GET", one, origin=HOSTILE)
    assert (status, read["boardId"]) == (200, board["boardId"])
    assert headers["Access-Control-Allow-Origin"] == "*", headers
    # A JSON PUT (which no browser sends to another origin without the preflight refused
    # above) is not readable by that origin's pages; a front end's is.
    status, headers, _ = await served.call("PUT", one, {"pitIndex": 0, "player": "ONE"},
                                           content_type="application/json", origin=HOSTILE)
    assert status == 200 and "Access-Control-Allow-Origin" not in headers, headers
    status, headers, _ = await served.call("PUT", one, {"pitIndex": 1, "player": "ONE"},
                                           content_type="application/json", origin=FRONT_END)
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "*", headers


async def test_the_operator_lists_the_front_ends(serve: Serve) -> None:
    served = await serve(kalaha_origins=("https://kalaha.example",),
                         public_url="https://arena.example")
    boards = served.url("/api/boards", "kalaha_port")
    asked = {"Access-Control-Request-Method": "POST"}
    # The play page, wherever a browser loaded it: the public URL, or this machine's port.
    for origin, allowed in (("https://kalaha.example", True),
                            ("https://KALAHA.example:443", True),
                            ("https://arena.example", True),
                            (f"http://127.0.0.1:{served.config.listeners.port}", True),
                            (FRONT_END, False), ("http://kalaha.example", False),
                            ("http://127.0.0.1:1", False)):
        status, headers, _ = await served.call("OPTIONS", boards, origin=origin,
                                               headers=asked)
        assert (status == 200) is allowed, (origin, status)
        assert ("Access-Control-Allow-Origin" in headers) is allowed, (origin, headers)
        status, _, _ = await served.call("POST", boards, origin=origin)
        assert (status == 201) is allowed, (origin, status)


# -- the hexagons and Battlebot listeners -------------------------------------------------------


async def test_hexagons_takes_its_ruby_clients_posts_but_no_foreign_page_s(
        serve: Serve) -> None:
    served = await serve()
    games = served.url("/", "hexagons_port")
    size = {"rows": 5, "cols": 4}
    status, _, refused = await served.call("POST", games, size, origin=HOSTILE,
                                           content_type="text/plain")
    assert (status, refused) == (403, f"refused: POST from a page of another origin (Origin: "
                                      f"{HOSTILE}); pages of other origins may not change "
                                      "anything here")
    # Net::HTTP types a body it is given untyped as a form; viz.rb observes with no body.
    for content_type in ("application/x-www-form-urlencoded", None, "application/json"):
        status, headers, _ = await served.call("POST", games, size, content_type=content_type)
        assert status == 201, (content_type, status)
    game = headers["Location"]
    status, _, refused = await served.call("POST", served.url(f"{game}/players",
                                                              "hexagons_port"),
                                           {"name": "amy"}, origin=HOSTILE)
    assert status == 403, refused
    status, _, refused = await served.call("POST", served.url(f"{game}/observers",
                                                              "hexagons_port"),
                                           origin="null")  # a sandboxed page
    assert status == 403, refused
    # GET /match makes a game: a browser says when a page of another site asks for it.
    status, _, refused = await served.call("GET", served.url("/match", "hexagons_port"),
                                           headers={"Sec-Fetch-Site": "cross-site"})
    assert (status, refused) == (403, "refused: a game asked for by a page of another site "
                                      "(Sec-Fetch-Site: cross-site)")


async def test_battlebot_registrations_are_json_as_its_clients_send_them(
        serve: Serve) -> None:
    served = await serve()
    salted = served.url("/bots/noughtsandcrosses", "battlebot_port")
    graphql = served.url("/graphql", "battlebot_port")
    mutation = {"query": 'mutation { registerBot(gameType: NOUGHTS_AND_CROSSES, name: "B2", '
                         'owner: "o") { password } }'}
    for url, body in ((salted, {"bot_id": "B1", "owner": "o"}), (graphql, mutation)):
        for content_type in (*SIMPLE_TYPES, None):
            status, _, refused = await served.call("POST", url, body, origin=HOSTILE,
                                                   content_type=content_type)
            assert status == 415 and refused["error"].endswith(
                "is not accepted here: send the body as application/json"), refused
    assert await served.platform.db.fetchval("SELECT COUNT(*) FROM bots") == 0
    status, _, done = await served.call("POST", salted, {"bot_id": "B1", "owner": "o"},
                                        content_type="application/json")
    assert status == 201, done
    status, _, done = await served.call("POST", graphql, mutation,
                                        content_type="application/json")
    assert status == 200 and done["data"]["registerBot"]["password"], done


async def test_a_refusal_quotes_an_origin_that_is_no_text(serve: Serve) -> None:
    """Bytes that are no UTF-8 in the headers (aiohttp reads them as lone surrogates) are
    quoted as escapes in every listener's refusal, never a failure of its own."""
    served = await serve()
    for port, path in (("hexagons_port", "/"), ("kalaha_port", "/api/boards"),
                       ("port", "/api/admin/ladder/pause")):
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port_of(served.config, port))
        writer.write(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                     "Connection: close\r\nOrigin: http://".encode() + b"\xff.example\r\n\r\n")
        async with asyncio.timeout(10):
            answer = await reader.read()
        writer.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 403 "), (port, answer)
        assert b"http://\\\\udcff.example" in body or b"http://\\udcff.example" in body, \
            (port, body)


async def test_a_preflight_with_a_long_foreign_host_is_refused_cheaply(serve: Serve) -> None:
    # The listener's front ends include the main port at the request's host; reading that
    # host through yarl ran IDNA on it (25 ms for 8 KB, and a UnicodeError, so a 500, for
    # some), for any preflight, before the rate limit.
    served = await serve()
    for host in ("\u00e9" * 4000, "a" * 8000, "x.example:99999999", "[::1"):
        reader, writer = await asyncio.open_connection("127.0.0.1", served.config.kalaha.port)
        writer.write(b"OPTIONS /api/boards HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
                     b"Origin: http://hostile.example\r\nAccess-Control-Request-Method: POST"
                     b"\r\nConnection: close\r\n\r\n")
        async with asyncio.timeout(10):
            answer = await reader.read()
        writer.close()
        assert answer.startswith(b"HTTP/1.1 403 "), (host[:20], answer[:200])
        assert b"Access-Control-Allow-Origin" not in answer


async def test_a_front_end_reads_the_kalaha_listeners_429_and_preflights_count(
        serve: Serve) -> None:
    served = await serve(request_burst=2, request_rate=0.1)
    board = served.url("/api/boards/00000000-0000-0000-0000-000000000000", "kalaha_port")
    seen = []
    for _ in range(3):
        status, headers, _ = await served.call("GET", board, origin=FRONT_END)
        seen.append((status, headers.get("Access-Control-Allow-Origin"),
                     "Retry-After" in headers))
    # The limit's answer is the front end's to read, Retry-After and all.
    assert seen == [(404, "*", False), (404, "*", False), (429, "*", True)]
    status, headers, _ = await served.call("OPTIONS", board, origin=FRONT_END, headers={
        "Access-Control-Request-Method": "PUT"})
    assert status == 429 and "Retry-After" in headers

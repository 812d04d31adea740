"""Helpers shared by tests: a running platform with a client, table counts, the hosted games
with their assets."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import json
import os
import random
import socket
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeAlias

from aiohttp import web
from aiohttp.test_utils import TestClient
from prometheus_client.parser import text_string_to_metric_families
from pytest_aiohttp import AiohttpServer

from merknera.app import Platform
from merknera.assets import AssetStore, default_directory
from merknera.games import JSON, REGISTRY, AnyGame


@dataclasses.dataclass
class Arena:
    """A running platform and an HTTP client for it."""

    platform: Platform
    client: TestClient  # type: ignore[type-arg]
    token: str

    async def rpc(self, method: str, params: object, *, dialect2: bool = True,
                  request_id: object = 1) -> dict[str, object]:
        """POST one JSON-RPC request to /rpc and return the decoded reply."""
        body: dict[str, object] = {"method": method, "params": params, "id": request_id}
        if dialect2:
            body["jsonrpc"] = "2.0"
        response = await self.client.post("/rpc", json=body)
        assert response.status == 200, await response.text()
        reply = await response.json()
        assert isinstance(reply, dict)
        return reply

    async def register(self, name: str, endpoint: str, version: str = "1.0",
                       token: str | None = None, game: str = "TICTACTOE") -> dict[str, object]:
        """Register a bot and return the reply."""
        return await self.rpc("RegistrationService.Register", {
            "token": token or self.token, "botname": name, "botversion": version,
            "game": game, "rpcendpoint": endpoint, "programminglanguage": "Python",
            "website": "https://example.org", "description": "a test bot"})

    async def settle(self, time_limit: float = 30.0) -> None:
        """Wait until every game has ended and every Complete/Error call went out."""
        async with asyncio.timeout(time_limit):
            await self.platform.scheduler.wait_idle()
            await self.platform.scheduler.arena.notifier.drain()

    async def game(self, game_id: int, *, as_owner: bool = True) -> dict[str, Any]:
        """A game as the results API shows it: to the owner of the bots (alice, who sees
        the calls' bodies), or to anybody."""
        headers = {"Authorization": f"Bearer {self.token}"} if as_owner else {}
        response = await self.client.get(f"/api/games/{game_id}", headers=headers)
        assert response.status == 200
        found = await response.json()
        assert isinstance(found, dict)
        return found

    async def counts(self) -> dict[str, int]:
        """Rows in every table (``Database.table_names``), to show that a refused request
        stored nothing."""
        db = self.platform.db
        tables = await db.table_names()
        return {table: await db.fetchval(f'SELECT COUNT(*) FROM "{table}"')  # noqa: S608
                for table in tables}


Reply: TypeAlias = "Callable[[dict[str, Any], Any], Awaitable[web.StreamResponse | JSON]]"
"""A scripted NextMove: (params, request id) -> a result, or a whole raw HTTP response."""


@functools.cache
def configured(mnemonic: str) -> AnyGame:
    """The registered game ``mnemonic`` with its asset files when it has any, as the
    platform sets it up."""
    game = REGISTRY[mnemonic]
    if game.assets:
        game = game.with_assets(AssetStore.load(default_directory()).contents(mnemonic))
    return game


def json_or_text(text: str) -> Any:
    """An answer's body as JSON when it is JSON, else as its text (None when empty)."""
    try:
        return json.loads(text) if text else None
    except ValueError:
        return text


PORTS_FROM = 10_000
"""The first port :func:`free_port` gives: below the kernel's ephemeral range (32768 and
up), which every outgoing connection takes its local port from."""
PORTS_EACH = 4_000
"""Ports of each test worker's own block (pytest-xdist's ``gw0``, ``gw1``, ...)."""


def _ports() -> Iterator[int]:
    """This process's ports, in its worker's block from a place of its own (another run's
    worker of the same number starts elsewhere), round the block once."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    block = PORTS_FROM + (int(worker) if worker.isdigit() else 0) % 5 * PORTS_EACH
    start = random.Random(os.getpid()).randrange(PORTS_EACH)
    return (block + (start + step) % PORTS_EACH for step in range(PORTS_EACH))


_PORTS = _ports()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on, for a server a test starts: a port no
    other test worker gives, and out of the range the kernel hands outgoing connections, so
    that nothing takes it between now and the server's bind."""
    for port in _PORTS:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use, or closing
            return port
    raise RuntimeError(f"no free port left in this worker's {PORTS_EACH} ports")


def first_empty(params: dict[str, Any]) -> int:
    """The first empty cell of a tic-tac-toe NextMove."""
    return int(params["gamestate"].index(""))


async def play_first_empty(params: dict[str, Any], _id: Any) -> JSON:
    """A well-behaved tic-tac-toe bot."""
    return {"position": first_empty(params)}


@dataclasses.dataclass
class InFlight:
    """Calls out at the same time, across bots."""

    now: int = 0
    most: int = 0

    def enter(self) -> None:
        """One more call is out."""
        self.now += 1
        self.most = max(self.most, self.now)


@dataclasses.dataclass
class ScriptedBot:
    """A real HTTP bot whose NextMove reply is scripted; it records every call it gets.

    It answers Status.Ping, and answers NewGame with a method-not-found error, as
    Merknera's bots did.
    """

    next_move: Reply = play_first_empty
    calls: list[tuple[str, dict[str, Any]]] = dataclasses.field(default_factory=list)
    signed: list[tuple[str, str, bytes]] = dataclasses.field(default_factory=list)
    """(timestamp, signature, body) of every call."""
    in_flight: int = 0
    most_in_flight: int = 0
    """The most NextMove calls this bot was answering at the same time."""
    shared: InFlight | None = None
    """A counter shared by several bots, to see how many calls were out at once in all."""
    new_game: JSON = None
    """The result to answer NewGame with (None: a method-not-found error, as Merknera's
    bots did)."""
    _arrived: asyncio.Condition = dataclasses.field(default_factory=asyncio.Condition,
                                                    repr=False)

    def app(self) -> web.Application:
        """The bot's aiohttp application (serve it with the aiohttp_server fixture)."""
        app = web.Application()
        app.router.add_post("/rpc", self._handle)
        return app

    async def wait_for(self, suffix: str, count: int, time_limit: float = 20.0) -> None:
        """Wait until ``count`` calls whose method ends with ``suffix`` have come in."""
        async with asyncio.timeout(time_limit), self._arrived:
            await self._arrived.wait_for(lambda: len(self.methods(suffix)) >= count)

    def methods(self, suffix: str) -> list[dict[str, Any]]:
        """The params of every call received whose method ends with ``suffix``."""
        return [params for method, params in self.calls if method.endswith(suffix)]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.signed.append((request.headers.get("X-Merknera-Timestamp", ""),
                            request.headers.get("X-Merknera-Signature", ""), body))
        call = json.loads(body)
        method, params, call_id = call["method"], call.get("params") or {}, call["id"]
        self.calls.append((method, params))
        async with self._arrived:
            self._arrived.notify_all()
        if method == "Status.Ping":
            return web.json_response({"jsonrpc": "2.0", "result": {"ping": "OK"}, "id": call_id})
        if method.endswith(".NextMove"):
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            if self.shared is not None:
                self.shared.enter()
            try:
                reply = await self.next_move(params, call_id)
            finally:
                self.in_flight -= 1
                if self.shared is not None:
                    self.shared.now -= 1
            if isinstance(reply, web.StreamResponse):
                return reply
            return web.json_response({"jsonrpc": "2.0", "result": reply, "id": call_id})
        if method.endswith(".NewGame") and self.new_game is not None:
            return web.json_response({"jsonrpc": "2.0", "result": self.new_game,
                                      "id": call_id})
        if method.endswith((".Complete", ".Error")):
            return web.json_response({"jsonrpc": "2.0", "result": None, "id": call_id})
        return web.json_response({"jsonrpc": "2.0", "id": call_id, "error": {
            "code": -32601, "message": f"can't find method {method}"}})


def random_mover(seed: int) -> Any:
    """A tic-tac-toe NextMove that plays a random free cell (seeded), a moment later."""
    chooser = random.Random(seed)

    async def move(params: dict[str, Any], _id: Any) -> JSON:
        await asyncio.sleep(0.02)
        free = [cell for cell, mark in enumerate(params["gamestate"]) if not mark]
        return {"position": chooser.choice(free)}

    return move


async def serve_bot(aiohttp_server: AiohttpServer, bot: ScriptedBot,
                    port: int | None = None) -> str:
    """Serve ``bot`` with the aiohttp_server fixture (on ``port``, or a free one); its
    endpoint URL."""
    server = await aiohttp_server(bot.app(), port=port)
    return str(server.make_url("/rpc"))


async def until(condition: Callable[[], bool | Awaitable[bool]], within: float = 10.0,
                every: float = 0.01) -> None:
    """Wait until ``condition()`` holds, looking every ``every`` seconds; a TimeoutError
    after ``within`` seconds (a guard against a hang, not a measurement)."""
    async with asyncio.timeout(within):
        while True:
            held = condition()
            if await held if inspect.isawaitable(held) else held:
                return
            await asyncio.sleep(every)


@dataclasses.dataclass
class InfoBot:
    """A real HTTP bot of the Squelchbot REST API (``protocol: "squelch-rest"``) that is
    only ever pinged: ``GET /bot/info`` answers ``{"name": name}``, an HTTP ``status``
    other than 200, or drops the connection; every other request gets an empty 200.

    Register it at its base URL (``server.make_url("")``).  Change ``name``, ``status`` or
    ``drop`` between pings to script what the next ping hears.
    """

    name: JSON = "infobot"
    status: int = 200
    drop: bool = False
    heard: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    """(method, path with its query) of every request, in the order they came."""

    def app(self) -> web.Application:
        """The bot's aiohttp application (serve it with the aiohttp_server fixture)."""
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._handle)
        return app

    def pings(self) -> int:
        """How many ``GET /bot/info`` requests came in."""
        return self.heard.count(("GET", "/bot/info"))

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.heard.append((request.method, request.raw_path))
        if self.drop:
            assert request.transport is not None
            request.transport.close()
            return web.Response()
        if (request.method, request.raw_path) != ("GET", "/bot/info"):
            return web.Response()
        if self.status != 200:
            return web.Response(status=self.status, text="the bot is down")
        return web.json_response({"name": self.name})


Samples: TypeAlias = "dict[tuple[str, frozenset[tuple[str, str]]], float]"
"""Metric samples by name and labels."""


def metric_samples(text: str) -> Samples:
    """Every sample of a ``GET /metrics`` answer, read by Prometheus' own parser."""
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def sample(samples: Samples, name: str, **labels: str) -> float | None:
    """The value of one sample (None when there is no such sample)."""
    return samples.get((name, frozenset(labels.items())))

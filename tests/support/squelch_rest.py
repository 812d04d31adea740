"""What the Squelch REST tests share: recording REST bots and scripted JSON-RPC bots on real
aiohttp servers, short seeded matches, and helpers to compare what each wire was sent.

The REST bots record every request as it came over the wire (method, path, headers, body).
Two things make runs comparable: matches are short (two games to 1000 points) and every game
gets the same seed (the ``same_short_matches`` fixture), so the same dice fall in every match
of a test.  A match in which a REST bot sits then replays, call for call, in a second
platform where a JSON-RPC bot that behaves alike takes its seat.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from merknera.games import JSON
from merknera.games.squelch import Squelch
from merknera.protocol.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from merknera_bots.squelch import make_bot
from tests.support import Arena

SETTINGS = {"dieCount": 6, "maxPoints": 1000, "gameCount": 2, "maxTurns": 200}
SEED = 10
"""Every game's seed (see the module docstring): one under which the recording bot of the
wire test rolls a squelch in each match, so that it is sent every call of the spec."""

REST_LIMIT = 0.3
"""``rest_call_timeout`` of the timeout case: well under the 1 s ``move_timeout``."""

GENEROUS_LIMIT = 5.0
"""``rest_call_timeout`` of every other fault case: so long that no call of a busy machine
runs out of it, and a fault meant to be another kind never turns into a timeout."""

SELF_NAME = "somebot v1.0 (recording)"
"""What the recording bot's ``GET /bot/info`` answers: longer than the spec's 20 characters."""

# The spec's calls (seeds/000_*): the path, and the body's keys (None: no body).
ROUTES: dict[str, tuple[re.Pattern[str], frozenset[str]]] = {
    "MatchStart": (re.compile(r"/match/(\d+)/start"),
                   frozenset({"dieCount", "maxPoints", "gameCount", "yourBotIndex",
                              "botNames"})),
    "MatchEnd": (re.compile(r"/match/(\d+)/end"), frozenset({"winsByBotIndex"})),
    # The spec gives game/start no body: the platform sends {} (see merknera.seats).
    "GameStart": (re.compile(r"/match/(\d+)/game/(\d+)/start"), frozenset()),
    "GameEnd": (re.compile(r"/match/(\d+)/game/(\d+)/end"),
                frozenset({"finalPlayerTurns", "winnerBotIndex"})),
    "TurnStart": (re.compile(r"/match/(\d+)/game/(\d+)/turn/(\d+)/start"),
                  frozenset({"startPoints", "otherPlayerTurns", "isFinalRound"})),
    "NextMove": (re.compile(r"/match/(\d+)/game/(\d+)/turn/(\d+)/choose"),
                 frozenset({"dieValues", "options"})),
    "Squelch": (re.compile(r"/match/(\d+)/game/(\d+)/turn/(\d+)/squelch"),
                frozenset({"dieValues"})),
}
"""By the name the JSON-RPC wire gives the same call (``Squelch.<name>``)."""

RPC_ONLY = ("players", "winner")
"""Params only the JSON-RPC wire has: NewGame's seat count, Complete's verdict."""


class Drop:
    """A behaviour's answer that closes the connection without a reply."""


DROP = Drop()

Answer: TypeAlias = "web.StreamResponse | Drop | JSON"
"""A scripted choose: a JSON result, a whole HTTP response, or :data:`DROP`."""
Behaviour: TypeAlias = "Callable[[dict[str, Any], float], Awaitable[Answer]]"
"""(the choose's params, the bot's time limit per call) -> what to answer."""


async def first_and_stay(params: dict[str, Any], limit: float) -> Answer:
    """The best option (they come highest first), banked at once."""
    return {"take": params["options"][0]["id"], "stay": True}


def _drop(request: web.Request) -> web.Response:
    """Close the connection under the request (the platform sees it drop before a reply)."""
    assert request.transport is not None
    request.transport.close()
    return web.Response()


@dataclass(frozen=True)
class Heard:
    """One request as it came over the wire."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def signed_by(self, secret: str) -> bool:
        """Whether the signature headers verify with ``secret`` (over the exact body)."""
        return verify(secret, self.headers.get(TIMESTAMP_HEADER, ""), self.body,
                      self.headers.get(SIGNATURE_HEADER, ""))


@dataclass(frozen=True)
class RestCall:
    """A recorded PUT read as the spec's call: the JSON-RPC name, the ids from the path."""

    name: str
    match: int
    game: int | None
    turn: int | None
    body: dict[str, Any] | None

    def as_params(self) -> dict[str, Any]:
        """The params the JSON-RPC wire carries for the same call: the ids moved back from
        the path into the params, as that wire names them."""
        params: dict[str, Any] = {"matchid": self.match}
        if self.game is not None:
            params["gameid"] = self.game
        if self.turn is not None:
            params["turnid"] = self.turn
        return {**params, **(self.body or {})}


def read_call(heard: Heard) -> RestCall:
    """The spec's call a PUT is; fails the test for a path the spec does not have."""
    assert heard.method == "PUT", heard
    for name, (pattern, _keys) in ROUTES.items():
        found = pattern.fullmatch(heard.path)
        if found is not None:
            match, game, turn = (*(int(part) for part in found.groups()), None, None)[:3]
            assert match is not None
            body = json.loads(heard.body) if heard.body else None
            return RestCall(name, match, game, turn, body)
    raise AssertionError(f"PUT {heard.path} is no call of the Squelchbot API")


@dataclass
class RestBot:
    """A Squelch bot of the REST API that records every request; its choose is scripted.

    Every other call is answered with an empty 200, ``GET /bot/info`` with :data:`SELF_NAME`.
    Any path at all is taken (and recorded), so a call the spec lacks would show up.
    """

    choose: Behaviour = first_and_stay
    limit: float = 1.0
    """The platform's limit per call for this bot (what a slow behaviour oversleeps)."""
    drop: Callable[[Heard], bool] = lambda heard: False
    """Whether to drop the connection of a request (before anything else is done with it)."""
    heard: list[Heard] = field(default_factory=list)

    def app(self) -> web.Application:
        """The bot's aiohttp application (serve it with the aiohttp_server fixture)."""
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._handle)
        return app

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        heard = Heard(request.method, request.raw_path, dict(request.headers),
                      await request.read())
        self.heard.append(heard)
        if self.drop(heard):
            return _drop(request)
        if request.method == "GET" and request.raw_path == "/bot/info":
            return web.json_response({"name": SELF_NAME})
        if request.method == "PUT" and request.raw_path.endswith("/choose"):
            answer = await self.choose(json.loads(heard.body), self.limit)
            if isinstance(answer, Drop):
                return _drop(request)
            if isinstance(answer, web.StreamResponse):
                return answer
            return web.json_response(answer)
        return web.Response()

    def calls(self) -> list[RestCall]:
        """Every PUT as the spec's call, in the order they came."""
        return [read_call(heard) for heard in self.heard if heard.method == "PUT"]


@dataclass
class RpcBot:
    """A JSON-RPC Squelch bot that records every call; its NextMove is scripted.

    Status.Ping is answered ``{"ping": "OK"}``, every other call with a null result.
    """

    next_move: Behaviour = first_and_stay
    limit: float = 1.0
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def app(self) -> web.Application:
        """The bot's aiohttp application (serve it with the aiohttp_server fixture)."""
        app = web.Application()
        app.router.add_post("/rpc", self._handle)
        return app

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        call = json.loads(await request.read())
        method, params, call_id = call["method"], call.get("params") or {}, call["id"]
        self.calls.append((method, params))
        result: Answer = {"ping": "OK"} if method == "Status.Ping" else None
        if method == "Squelch.NextMove":
            result = await self.next_move(params, self.limit)
            if isinstance(result, Drop):
                return _drop(request)
            if isinstance(result, web.StreamResponse):
                return result
        return web.json_response({"jsonrpc": "2.0", "result": result, "id": call_id})

    def squelch_calls(self, name: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        """The ``Squelch.*`` calls received (only those named ``name``, if given), by their
        short names."""
        return [(method.removeprefix("Squelch."), params) for method, params in self.calls
                if method.startswith("Squelch.")
                and (name is None or method == f"Squelch.{name}")]


@pytest.fixture(autouse=True)
def same_short_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short matches, all dealt the same dice (see the module docstring)."""
    monkeypatch.setattr(Squelch, "default_settings", SETTINGS)
    monkeypatch.setattr(secrets, "randbits", lambda bits: SEED)


async def register(arena: Arena, name: str, endpoint: str, *, rest: bool) -> str:
    """Register a Squelch bot (a REST one at its base URL); returns its secret."""
    params: dict[str, object] = {
        "token": arena.token, "botname": name, "botversion": "1.0", "game": "SQUELCH",
        "rpcendpoint": endpoint, "programminglanguage": "Python"}
    if rest:
        params["protocol"] = "squelch-rest"
    reply = await arena.rpc("RegistrationService.Register", params)
    assert "result" in reply, reply
    result = reply["result"]
    assert isinstance(result, dict)
    secret = result["secret"]
    assert isinstance(secret, str)
    return secret


async def seat(arena: Arena, aiohttp_server: AiohttpServer, name: str,
               bot: RestBot | RpcBot) -> str:
    """Serve ``bot`` and register it as ``name``; returns its secret."""
    server = await aiohttp_server(bot.app())
    if isinstance(bot, RestBot):
        return await register(arena, name, str(server.make_url("")), rest=True)
    return await register(arena, name, str(server.make_url("/rpc")), rest=False)


async def seat_good(arena: Arena, aiohttp_server: AiohttpServer) -> None:
    """The reference JSON-RPC ``good`` bot, registered as "good" (bot 1)."""
    good, _ = make_bot("good")
    server = await aiohttp_server(good.make_app())
    await register(arena, "good", str(server.make_url("/rpc")), rest=False)


async def api(arena: Arena, path: str) -> dict[str, Any]:
    """GET a JSON document of the API as alice (the owner of every bot)."""
    response = await arena.client.get(path, headers={"Authorization": f"Bearer {arena.token}"})
    assert response.status == 200, await response.text()
    found = await response.json()
    assert isinstance(found, dict)
    return found


Calls: TypeAlias = list[tuple[str, dict[str, Any]]]
"""(name, params) of calls, in the order they were made."""


def by_match(calls: Calls) -> dict[int, Calls]:
    """Calls grouped by match, in the order each match made them."""
    grouped: dict[int, Calls] = {}
    for name, params in calls:
        grouped.setdefault(params["matchid"], []).append((name, params))
    return grouped


def exact(value: Any) -> str:
    """``value`` as canonical JSON: compared so, ``false`` differs from ``0`` (and ``1.0``
    from ``1``), as they do on the wire."""
    return json.dumps(value, sort_keys=True)


def without(params: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``params`` without ``keys``."""
    return {key: value for key, value in params.items() if key not in keys}


def move_log(game: dict[str, Any]) -> list[tuple[int, int, str, str | None]]:
    """A game's move log as (seq, seat, move, fault): what the rules made of each call."""
    return [(m["seq"], m["seat"], exact(m["move"]), m["fault"]) for m in game["moves"]]

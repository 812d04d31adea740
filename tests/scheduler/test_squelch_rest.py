"""Bots that speak the Squelchbot REST API (``protocol: "squelch-rest"``) on the real platform.

The REST bots here are real aiohttp servers that record every request as it came over the
wire (method, path, headers, body).  They play against JSON-RPC Squelch bots, scripted or the
reference ``good`` bot, on the in-process platform with its real SQLite file.

Two things make runs comparable: matches are short (two games to 1000 points) and every game
gets the same seed, so the same dice fall in every match of a test.  A match in which a REST bot
sits then replays, call for call, in a second platform where a JSON-RPC bot that behaves alike
takes its seat; what the REST bot was sent, and how its faults were judged, is compared with
what that JSON-RPC bot was sent and how its faults were judged.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from bots.squelch import make_bot
from merknera.botclient import BotClient
from merknera.config import Config, GameRules
from merknera.games import JSON, get_game
from merknera.games.squelch import Squelch, SquelchCall
from merknera.protocol.faults import FaultKind
from merknera.protocol.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from merknera.seats.squelch_rest import SquelchRestTransport
from tests.conftest import ArenaFactory
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


# --- the exact wire ----------------------------------------------------------------------------


async def test_a_rest_bot_is_called_exactly_as_the_spec_says(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer, tmp_path: Path) -> None:
    # Platform A: a JSON-RPC bot ("rpc") against the REST bot ("rest").
    arena = await make_arena(db=str(tmp_path / "rest.db"))
    rpc, rest = RpcBot(), RestBot()
    await seat(arena, aiohttp_server, "rpc", rpc)
    secret = await seat(arena, aiohttp_server, "rest", rest)
    await arena.settle(60.0)
    # Platform B: the same two matches, with a JSON-RPC bot that plays alike in rest's seat.
    twin_arena = await make_arena(db=str(tmp_path / "twin.db"))
    twin_rpc, twin = RpcBot(), RpcBot()
    await seat(twin_arena, aiohttp_server, "rpc", twin_rpc)
    await seat(twin_arena, aiohttp_server, "rest", twin)
    await twin_arena.settle(60.0)

    games = {match: await arena.game(match) for match in (1, 2)}
    for match, game in games.items():
        assert (game["status"], game["reason"]) == ("FINISHED", "NORMAL"), game["detail"]
        assert [m for m in game["moves"] if m["fault"]] == []
        assert move_log(game) == move_log(await twin_arena.game(match))
    # Registration asks the bot its name first; that GET has no body, and it is the only GET.
    first = rest.heard[0]
    assert (first.method, first.path, first.body) == ("GET", "/bot/info", b"")
    assert {(h.method, h.path) for h in rest.heard if h.method != "PUT"} == {("GET",
                                                                             "/bot/info")}
    # Every request is signed with the secret Register returned, over the exact body.
    assert all(heard.signed_by(secret) for heard in rest.heard)
    assert not any(heard.signed_by(secret + "0") for heard in rest.heard)

    puts = [heard for heard in rest.heard if heard.method == "PUT"]
    for heard in puts:
        call = read_call(heard)
        keys = ROUTES[call.name][1]
        assert call.body is not None and set(call.body) == keys, heard
        assert heard.headers.get("Content-Type") == "application/json"

    # Call for call, the REST bot was sent what the JSON-RPC bot in its seat was sent, the
    # ids moved from the params into the path (JSON-RPC's own params aside).
    rest_calls = by_match([(c.name, c.as_params()) for c in rest.calls()])
    twin_calls = by_match([(name, without(params, *RPC_ONLY))
                           for name, params in twin.squelch_calls()])
    assert set(rest_calls) == {1, 2}
    assert {match: [(name, exact(params)) for name, params in calls]
            for match, calls in rest_calls.items()} == {
        match: [(name, exact(params)) for name, params in calls]
        for match, calls in twin_calls.items()}
    for mine in rest_calls.values():
        assert {name for name, _ in mine} == set(ROUTES)

    rpc_calls = by_match(rpc.squelch_calls())
    for match, mine in rest_calls.items():
        names = [name for name, _ in mine]
        assert names[0] == "MatchStart" and names[-1] == "MatchEnd"
        assert "Error" not in names
        # The game ids run 1..gameCount; the turn ids of a game, 1.. across both seats.
        starts = [params["gameid"] for name, params in mine if name == "GameStart"]
        assert starts == [1, 2]
        theirs = rpc_calls[match]
        for game_id in starts:
            turns = sorted(params["turnid"] for name, params in mine + theirs
                           if name == "TurnStart" and params["gameid"] == game_id)
            assert turns == list(range(1, len(turns) + 1)) and len(turns) >= 2
        # What both seats are told, the REST bot is told with the same values.
        start, their_start = mine[0][1], theirs[0][1]
        assert exact(without(start, "yourBotIndex")) == exact(
            without(their_start, "yourBotIndex", *RPC_ONLY))
        assert start["botNames"] == (["rpc", "rest"] if match == 1 else ["rest", "rpc"])
        assert start["botNames"][start["yourBotIndex"]] == "rest"
        assert start["yourBotIndex"] != their_start["yourBotIndex"]
        for shared in ("GameStart", "GameEnd"):
            assert exact([p for n, p in mine if n == shared]) == exact(
                [p for n, p in theirs if n == shared])
        wins = games[match]["final_state"]["wins"]
        assert exact(mine[-1][1]) == exact({"matchid": match, "winsByBotIndex": wins})
        assert theirs[-1][1]["winsByBotIndex"] == wins and sum(wins) == 2
    # The platform's Error has no REST form: none went to the JSON-RPC bot either here, and
    # every request the REST bot got is a call of the spec (read_call above).
    assert rpc.squelch_calls("Error") == []

    # The API shows the protocol and the name the bot gives itself (cut to 20 characters).
    shown = await api(arena, "/api/bots/2")
    assert (shown["name"], shown["protocol"], shown["self_name"]) == (
        "rest", "squelch-rest", SELF_NAME[:20].strip())
    other = await api(arena, "/api/bots/1")
    assert (other["protocol"], other["self_name"]) == ("jsonrpc", None)
    page = await arena.client.get("/bots/2")
    text = await page.text()
    assert page.status == 200
    assert "the Squelchbot REST API" in text and SELF_NAME[:20].strip() in text


# --- faults ------------------------------------------------------------------------------------


async def oversleep(params: dict[str, Any], limit: float) -> Answer:
    # Twice the bot's own limit: for the REST bot that is 0.6 s, so a platform that gave it
    # the 1 s move_timeout instead of its rest_call_timeout would see no timeout at all.
    await asyncio.sleep(2 * limit)
    return await first_and_stay(params, limit)


async def http_500(params: dict[str, Any], limit: float) -> Answer:
    return web.Response(status=500, text="Internal Server Error")


async def not_json(params: dict[str, Any], limit: float) -> Answer:
    return web.Response(text="lol, not json", content_type="application/json")


async def not_a_choice(params: dict[str, Any], limit: float) -> Answer:
    return {"option": params["options"][0]["id"]}


async def unknown_option(params: dict[str, Any], limit: float) -> Answer:
    return {"take": "99", "stay": True}


async def hang_up(params: dict[str, Any], limit: float) -> Answer:
    return DROP


@dataclass(frozen=True)
class FaultCase:
    """A fault a seat makes at every choose, and how each wire describes it."""

    behaviour: Behaviour
    kind: FaultKind
    reason: str
    rest_says: str
    rpc_says: str
    rest_limit: float = GENEROUS_LIMIT
    """The REST seat's ``rest_call_timeout``: short only where the fault is a timeout."""

    @property
    def faults(self) -> int:
        """The faults the seat makes in a match before it forfeits."""
        return 3 if self.reason == "STRIKES" else 1


FAULTS = [
    FaultCase(oversleep, FaultKind.TIMEOUT, "TIMEOUT", f"no reply within {REST_LIMIT:g} s",
              "no reply within 1 s", rest_limit=REST_LIMIT),
    FaultCase(http_500, FaultKind.HTTP_STATUS, "STRIKES", "HTTP status 500 to PUT /match/",
              "HTTP status 500"),
    FaultCase(not_json, FaultKind.MALFORMED_REPLY, "STRIKES",
              "the choose reply: the body is not JSON",
              "the body is not JSON"),
    FaultCase(not_a_choice, FaultKind.INVALID_MOVE, "STRIKES", 'the reply has no "take"',
              'the reply has no "take"'),
    FaultCase(unknown_option, FaultKind.ILLEGAL_MOVE, "STRIKES", "there is no option '99'",
              "there is no option '99'"),
    FaultCase(hang_up, FaultKind.UNREACHABLE, "UNREACHABLE",
              "the connection was lost before a reply", "the connection was lost before a reply"),
]


@pytest.mark.parametrize("case", FAULTS, ids=[case.kind.value for case in FAULTS])
async def test_a_rest_bot_faults_as_a_json_rpc_bot_does(
        case: FaultCase, make_arena: ArenaFactory, aiohttp_server: AiohttpServer,
        tmp_path: Path) -> None:
    rules = {"SQUELCH": GameRules(move_timeout=1.0, max_strikes=3,
                                  rest_call_timeout=case.rest_limit)}
    # The reference good bot (bot 1) against a seat that faults at every choose (bot 2):
    # match 1 seats the faulty bot second, match 2 first; once over REST, once over JSON-RPC.
    arena = await make_arena(db=str(tmp_path / "rest.db"), games=rules)
    rest = RestBot(choose=case.behaviour, limit=case.rest_limit)
    await seat_good(arena, aiohttp_server)
    await seat(arena, aiohttp_server, "faulty", rest)
    await arena.settle(60.0)
    twin_arena = await make_arena(db=str(tmp_path / "rpc.db"), games=rules)
    rpc = RpcBot(next_move=case.behaviour)
    await seat_good(twin_arena, aiohttp_server)
    await seat(twin_arena, aiohttp_server, "faulty", rpc)
    await twin_arena.settle(60.0)

    for match in (1, 2):
        game, twin = await arena.game(match), await twin_arena.game(match)
        for played, says in ((game, case.rest_says), (twin, case.rpc_says)):
            assert (played["status"], played["outcome"], played["reason"]) == (
                "FINISHED", "WIN", case.reason), played["detail"]
            assert {s["name"]: s["result"] for s in played["seats"]} == {"good": "WIN",
                                                                         "faulty": "LOSS"}
            faults = [m for m in played["moves"] if m["fault"] is not None]
            assert [m["fault"] for m in faults] == [case.kind.value] * case.faults
            faulty_seat = 1 if match == 1 else 0
            assert {m["seat"] for m in faults} == {faulty_seat}
            assert all(says in m["fault_detail"] for m in faults), faults
            assert says in played["detail"]
        # The same call made the same fault, with the same consequences, on either wire.
        assert move_log(game) == move_log(twin)

    # The JSON-RPC bot heard of each fault in an Error; the REST bot only in its log, since
    # the spec has no such call (every request it got is one of the spec's: read_call).
    errors = rpc.squelch_calls("Error")
    assert len(errors) == 2 * case.faults
    assert {params["errorcode"] for _, params in errors} == {case.kind.error_code}
    names = {call.name for call in rest.calls()}
    assert names <= set(ROUTES) and "MatchEnd" in names
    log = await api(arena, "/api/bots/2/log")
    logged = [e for e in log["log"] if e["message"].startswith(f"Fault {case.kind.value} ")]
    assert {e["game_id"] for e in logged} == {1, 2} and len(logged) == 2 * case.faults
    if case.kind is FaultKind.HTTP_STATUS:
        # The REST fault names the call as the spec does, its ids filled in.
        detail = next(m["fault_detail"] for m in (await arena.game(1))["moves"] if m["fault"])
        assert re.search(r"to PUT /match/1/game/1/turn/\d+/choose: Internal Server Error",
                         detail), detail
    if case.kind is FaultKind.UNREACHABLE:
        # Every try of the choose was dropped: it went out again, the same URL and body.
        chooses = [h for h in rest.heard if h.path.startswith("/match/1/")
                   and h.path.endswith("/choose")]
        assert len(chooses) >= 2 and len({(h.path, h.body) for h in chooses}) == 1


# --- a connection that drops once --------------------------------------------------------------


async def test_a_dropped_connection_is_sent_again_and_the_game_goes_on(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer, tmp_path: Path) -> None:
    seen: set[tuple[str, str, bytes]] = set()

    def first_try(heard: Heard) -> bool:
        # Every call's first try (told apart by URL and body), not the pings.
        key = (heard.method, heard.path, heard.body)
        if heard.method != "PUT" or key in seen:
            return False
        seen.add(key)
        return True

    # Whole matches are played: the opponent is a scripted bot, which answers at once
    # however busy the machine (the reference good bot's final-round tables take a while).
    arena = await make_arena(db=str(tmp_path / "drop.db"))
    rest = RestBot(drop=first_try)
    await seat(arena, aiohttp_server, "other", RpcBot())
    secret = await seat(arena, aiohttp_server, "dropped", rest)
    await arena.settle(60.0)
    twin_arena = await make_arena(db=str(tmp_path / "twin.db"))
    await seat(twin_arena, aiohttp_server, "other", RpcBot())
    await seat(twin_arena, aiohttp_server, "dropped", RpcBot())
    await twin_arena.settle(60.0)

    for match in (1, 2):
        game = await arena.game(match)
        assert (game["status"], game["reason"]) == ("FINISHED", "NORMAL"), game["detail"]
        assert [m for m in game["moves"] if m["fault"]] == []
        # Nothing was lost: the match went exactly as one without drops.
        assert move_log(game) == move_log(await twin_arena.game(match))
    # Each call came twice, the same URL and body, signed both times; the first was dropped.
    puts = [heard for heard in rest.heard if heard.method == "PUT"]
    tries: dict[tuple[str, bytes], list[Heard]] = {}
    for heard in puts:
        tries.setdefault((heard.path, heard.body), []).append(heard)
    assert len(tries) == len(seen) and all(len(sent) == 2 for sent in tries.values())
    assert all(heard.signed_by(secret) for heard in puts)
    calls = [read_call(sent[1]) for sent in tries.values()]
    assert {call.name for call in calls} >= set(ROUTES) - {"Squelch"}
    assert sum(call.name == "NextMove" for call in calls) >= 4


async def test_a_resent_call_carries_a_later_timestamp(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer, tmp_path: Path) -> None:
    dropped: list[str] = []

    def first_choose(heard: Heard) -> bool:
        if heard.path.endswith("/choose") and not dropped:
            dropped.append(heard.path)
            return True
        return False

    arena = await make_arena(db=str(tmp_path / "drop.db"))
    rest = RestBot(drop=first_choose)
    await seat(arena, aiohttp_server, "other", RpcBot())
    await seat(arena, aiohttp_server, "dropped", rest)
    await arena.settle(60.0)
    sent = [h for h in rest.heard if dropped and h.path == dropped[0]]
    assert len(sent) == 2 and sent[0].body == sent[1].body
    # PROTOCOL: a second try is signed anew with a later timestamp, so that a bot that
    # refuses a signature it has seen (a replay) takes it.
    assert int(sent[1].headers[TIMESTAMP_HEADER]) > int(sent[0].headers[TIMESTAMP_HEADER])



def test_every_squelch_call_has_a_rest_route() -> None:
    """A call of the game without a route would not reach a REST bot."""
    config = Config()
    transport = SquelchRestTransport(BotClient(config), config)
    shown = {call: transport.describe(get_game("SQUELCH"), call) for call in SquelchCall}
    assert all(text.startswith("PUT /match/{matchId}") for text in shown.values()), shown
    assert len(set(shown.values())) == len(SquelchCall)

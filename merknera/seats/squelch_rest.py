"""Seats that speak the Squelchbot REST API (``seeds/000_*``; ``research/seed-systems.md`` b.2).

The platform is the arena: it calls the bot's base URL (its ``rpcendpoint``) with the
spec's paths and bodies, ``PUT`` for every game call and ``GET /bot/info`` as the ping.
The game's calls map one to one onto the spec's (PROTOCOL.md section 4 names them after
it), the ids moving from params into the path:

=================  ===========================================================
``MatchStart``     ``PUT /match/{m}/start``  dieCount, maxPoints, gameCount, ...
``GameStart``      ``PUT /match/{m}/game/{g}/start``  (``{}``: the spec has no body)
``TurnStart``      ``PUT /match/{m}/game/{g}/turn/{t}/start``
``NextMove``       ``PUT /match/{m}/game/{g}/turn/{t}/choose`` -> {take, stay}
``Squelch``        ``PUT /match/{m}/game/{g}/turn/{t}/squelch``
``GameEnd``        ``PUT /match/{m}/game/{g}/end``
``MatchEnd``       ``PUT /match/{m}/end``
=================  ===========================================================

The match id is the platform's game id.  The spec has no call for the platform's
``Error``: a REST bot learns of a fault only from its game's log and pages.  Every call has
the spec's per-call limit (``rest_call_timeout``, 1 s unless the operator sets it per game),
and a call whose connection drops is sent again with the same URL and body, which the
spec requires bots to take (its calls are idempotent).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

from merknera.botclient import BotClient, CallResult, PlatformResourceError, preview, with_fault
from merknera.config import Config
from merknera.games import JSON, AnyGame, JSONObject
from merknera.games.squelch import SquelchCall
from merknera.names import NameRefusedError, check_text
from merknera.protocol import strict_json
from merknera.protocol.excerpt import excerpt
from merknera.protocol.faults import FaultKind
from merknera.seats.base import SeatCall, Transport
from merknera.store.bots import Bot

log = logging.getLogger(__name__)

INFO_PATH = "/bot/info"

SELF_NAME_CHARS = 20
"""The spec's longest bot name in ``/bot/info``; a longer one is cut."""


@dataclass(frozen=True)
class _Route:
    """Where a call goes and which of its params make the body."""

    path: str
    """The spec's path, with ``{matchId}``, ``{gameId}`` and ``{turnId}`` to fill in."""
    body: tuple[str, ...]
    """The body's keys, in the spec's order.  A call the spec gives no body gets ``{}``
    as JSON: bots built on frameworks that read every PUT as JSON refuse anything else
    (CherryPy's ``json_in``, which ``rmpacheco/py-squelch-bot`` uses, answers 411 without
    a length, 415 for an empty body of another type and 400 for an empty JSON one)."""

    def url_path(self, call: SeatCall) -> str:
        """The path of this call: the match id is the platform's game id; the game and
        turn ids are the call's ``gameid`` and ``turnid`` params."""
        return self.path.format_map(_Ids(call))


class _Ids(dict[str, int]):
    def __init__(self, call: SeatCall) -> None:
        super().__init__()
        self._call = call

    def __missing__(self, key: str) -> int:
        if key == "matchId":
            return self._call.game_id
        value = self._call.params.get(key.lower())
        if not isinstance(value, int) or isinstance(value, bool):
            # The game makes these params: anything else is the platform's bug.
            raise ValueError(f"the Squelch call {self._call.name} has no integer {key}")
        return value


_ROUTES: dict[str, _Route] = {
    SquelchCall.MATCH_START: _Route(
        "/match/{matchId}/start",
        ("dieCount", "maxPoints", "gameCount", "yourBotIndex", "botNames")),
    SquelchCall.GAME_START: _Route("/match/{matchId}/game/{gameId}/start", ()),
    SquelchCall.TURN_START: _Route("/match/{matchId}/game/{gameId}/turn/{turnId}/start",
                                   ("startPoints", "otherPlayerTurns", "isFinalRound")),
    SquelchCall.CHOOSE: _Route("/match/{matchId}/game/{gameId}/turn/{turnId}/choose",
                               ("dieValues", "options")),
    SquelchCall.SQUELCH: _Route("/match/{matchId}/game/{gameId}/turn/{turnId}/squelch",
                                ("dieValues",)),
    SquelchCall.GAME_END: _Route("/match/{matchId}/game/{gameId}/end",
                                 ("finalPlayerTurns", "winnerBotIndex")),
    SquelchCall.MATCH_END: _Route("/match/{matchId}/end", ("winsByBotIndex",)),
}
"""Squelch's calls by the game's names for them (merknera.games.squelch)."""


class SquelchRestTransport(Transport):
    """Bots of ``protocol: "squelch-rest"``: Squelch only."""

    ping_name = f"GET {INFO_PATH}"
    ping_names_bot = True

    def __init__(self, client: BotClient, config: Config) -> None:
        self._client = client
        self._config = config

    def _limit(self, mnemonic: str) -> float:
        return self._config.rules_for(mnemonic).rest_call_timeout

    def describe(self, game: AnyGame, name: str) -> str:
        route = _ROUTES.get(name)
        return name if route is None else f"PUT {route.path}"

    async def ask(self, bot: Bot, game: AnyGame, call: SeatCall,
                  time_limit: float) -> CallResult:
        route = _ROUTES.get(call.name)
        if route is None:
            raise ValueError(f"the Squelchbot API has no call {call.name!r}")
        path, body = _request(route, call)
        raw = await self._client.exchange(bot.endpoint, bot.secret, "PUT", path, body,
                                          self._limit(game.mnemonic))
        # The move log keeps the call as a whole, its path too (the body alone says
        # neither the match nor the turn); the body goes in as the bytes already encoded.
        logged = b'{"method":"PUT","path":' + strict_json.dumps(path) + b',"body":' + body + b"}"
        raw = dataclasses.replace(raw, request=logged)
        if raw.fault is not None or raw.reply is None:
            return raw
        if raw.status != 200:
            return with_fault(raw, FaultKind.HTTP_STATUS,
                              f"HTTP status {raw.status} to PUT {path}: "
                              f"{preview(raw.reply)}")
        if call.name != game.calls.move:
            return raw  # a 200 is all the spec asks of the other calls
        if not raw.reply.strip():
            return with_fault(raw, FaultKind.MALFORMED_REPLY, "the choose reply is empty; "
                              'expected {"take": "<option id>", "stay": true or false}')
        try:
            result = strict_json.loads(raw.reply)
        except strict_json.BadJSONError as exc:
            return with_fault(raw, FaultKind.MALFORMED_REPLY,
                              f"the choose reply: the body is not JSON: "
                              f"{excerpt(str(exc))}")
        return CallResult(request=raw.request, result=result, reply=raw.reply,
                          status=raw.status, latency=raw.latency)

    async def tell(self, bot: Bot, game: AnyGame, call: SeatCall,
                   time_limit: float) -> CallResult:
        route = _ROUTES.get(call.name)
        if route is None:
            # The platform's Error has no REST form: the spec has no such call.
            if call.name != game.calls.error:
                log.warning("%s has no Squelchbot API call; not sent", call.name)
            return CallResult(request=b"")
        path, body = _request(route, call)
        try:
            return await self._client.exchange(bot.endpoint, bot.secret, "PUT", path, body,
                                                self._limit(game.mnemonic))
        except PlatformResourceError as exc:
            log.warning("PUT %s not sent: %s", path, exc)
            return CallResult(request=body)

    async def ping(self, bot: Bot) -> CallResult:
        """``GET /bot/info``: a 200 means online; its ``name`` (see :func:`self_name`) is
        the result, when it gives one."""
        raw = await self._client.exchange(bot.endpoint, bot.secret, "GET", INFO_PATH, b"",
                                          self._limit(bot.game))
        if raw.fault is not None or raw.reply is None:
            return raw
        if raw.status != 200:
            return with_fault(raw, FaultKind.HTTP_STATUS, f"HTTP status {raw.status}")
        return CallResult(request=raw.request, result=self_name(raw.reply), reply=raw.reply,
                          status=raw.status, latency=raw.latency)


def self_name(reply: bytes) -> str | None:
    """The name in a ``/bot/info`` reply ``{"name": "somebot v1.0"}``, cut to the spec's
    20 characters, if it has one that passes the rules for text shown on pages
    (:func:`merknera.names.check_text`: no control, invisible or reordering characters)."""
    try:
        info = strict_json.loads(reply)
    except strict_json.BadJSONError:
        return None
    name: JSON = info.get("name") if isinstance(info, dict) else None
    if not isinstance(name, str):
        return None
    name = name.strip()[:SELF_NAME_CHARS].strip()
    try:
        check_text(name, "name")
    except NameRefusedError:
        return None
    return name or None


def _request(route: _Route, call: SeatCall) -> tuple[str, bytes]:
    """The call's path and body (the spec's keys, from the call's params)."""
    body: JSONObject = {key: call.params.get(key) for key in route.body}
    return route.url_path(call), strict_json.dumps(body)

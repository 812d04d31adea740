"""Sessions of bots that serve the Squelchbot REST API (``seeds/000_*``;
``research/seed-systems.md`` b.2).

The platform is the arena: it calls the bot's base URL (its ``rpcendpoint``) with the
spec's paths and bodies (:mod:`merknera.games.squelch.rest`), ``PUT`` for every game call
and ``GET /bot/info`` as the ping.  The spec has no call for the platform's ``Error``: a
REST bot learns of a fault only from its game's log and pages.  Every call has the spec's
per-call limit (``rest_call_timeout``, 1 s unless the operator sets it per game), and a
call whose connection drops is sent again with the same URL and body, which the spec
requires bots to take (its calls are idempotent).
"""

from __future__ import annotations

import dataclasses
import logging

from merknera.botclient import BotClient, CallResult, PlatformResourceError, preview, with_fault
from merknera.config import Config
from merknera.games import JSON, AnyGame
from merknera.games.squelch.rest import INFO_PATH, ROUTES, Route
from merknera.names import NameRefusedError, check_text
from merknera.protocol import strict_json
from merknera.protocol.excerpt import excerpt
from merknera.protocol.faults import FaultKind
from merknera.seats.base import Call, Sitting
from merknera.seats.called import CalledCarrier, Notifier
from merknera.store.bots import Bot

log = logging.getLogger(__name__)

SELF_NAME_CHARS = 20
"""The spec's longest bot name in ``/bot/info``; a longer one is cut."""


class SquelchRestCarrier(CalledCarrier):
    """Bots of ``protocol: "squelch-rest"``: Squelch only."""

    ping_name = f"GET {INFO_PATH}"
    ping_names_bot = True

    def __init__(self, client: BotClient, config: Config, notifier: Notifier) -> None:
        super().__init__(notifier)
        self._client = client
        self._config = config

    def _limit(self, mnemonic: str) -> float:
        return self._config.rules_for(mnemonic).rest_call_timeout

    def describe(self, game: AnyGame, name: str) -> str:
        route = ROUTES.get(name)
        return name if route is None else f"PUT {route.path}"

    async def ask(self, bot: Bot, sitting: Sitting, call: Call,
                  time_limit: float) -> CallResult:
        route = ROUTES.get(call.name)
        if route is None:
            raise ValueError(f"the Squelchbot API has no call {call.name!r}")
        game = sitting.game
        path, body = _request(route, sitting, call)
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

    async def tell(self, bot: Bot, sitting: Sitting, call: Call,
                   time_limit: float) -> CallResult:
        route = ROUTES.get(call.name)
        game = sitting.game
        if route is None:
            # The platform's Error has no REST form: the spec has no such call.
            if call.name != game.calls.error:
                log.warning("%s has no Squelchbot API call; not sent", call.name)
            return CallResult(request=b"")
        path, body = _request(route, sitting, call)
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


def _request(route: Route, sitting: Sitting, call: Call) -> tuple[str, bytes]:
    """The call's path (the match id is the game's id) and its body, encoded."""
    return (route.url_path(sitting.game_id, call.params),
            strict_json.dumps(route.request_body(call.params)))

"""A tiny kit for writing Merknera bots: JSON-RPC dispatch, the reply cache and signature checks.

A bot is a :class:`Bot` (the game's method prefix plus an ``async def`` NextMove handler) run by
:func:`merknera_bots.launcher.run_bot`, which parses the common command line and then either
serves HTTP and registers the bot's URL with the platform, or (``--connect``) opens a
WebSocket to the platform and plays over it, until SIGINT or SIGTERM::

    async def next_move(*, gameid: int, gamestate: list[str], **extra: Any) -> dict[str, Any]:
        return {"position": gamestate.index("")}

    def main() -> int:
        args = make_parser("My bot").parse_args()
        return run_bot(Bot("TicTacToe", next_move), args, game="TICTACTOE",
                       default_name="my-bot")

Both ways every call goes through :meth:`Bot.dispatch`, so the game logic is the same code
whichever way the bot is reached.

The protocol is in README.md (for bot authors). This module and ``merknera_bots/launcher.py`` import
nothing from ``merknera``: copy them next to your bot if you like. They need ``aiohttp``,
``jsonrpcserver==5.0.9`` and ``jsonrpcclient==4.0.3``.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import inspect
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from jsonrpcserver import JsonRpcError, Success, async_dispatch

__all__ = [
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "Bot",
    "Handler",
    "InvalidParamsError",
    "ReplayGuard",
    "sign",
    "verify",
]

logger = logging.getLogger(__name__)

TIMESTAMP_HEADER = "X-Merknera-Timestamp"
SIGNATURE_HEADER = "X-Merknera-Signature"
#: How far (seconds) a call's timestamp may be from our clock, either way.
SIGNATURE_MAX_AGE = 60.0
#: Signatures remembered at most, to refuse a call sent again (a replay).
REPLAY_MEMORY = 100_000

_INVALID_PARAMS = -32602
_INTERNAL_ERROR = -32603

Handler = Callable[..., Awaitable[Any]]
"""A method handler: ``async def``, params as keyword arguments, ``**extra`` accepted; it
returns the JSON-serialisable result."""


class InvalidParamsError(ValueError):
    """Raised by a handler whose params are wrong; the caller gets -32602 and this message."""


# --- signatures -------------------------------------------------------------------------


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-Merknera-Signature`` value for ``body`` sent at ``timestamp``.

    That is ``"sha256=" + hex(HMAC-SHA256(secret, "<timestamp>.<body>"))``, keyed with the
    secret string from the Register reply encoded as UTF-8 (not hex-decoded).
    """
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body,
                   hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, signature: str, *,
           now: float | None = None, max_age: float = SIGNATURE_MAX_AGE) -> bool:
    """Whether ``signature`` is the platform's signature of ``body`` at ``timestamp``.

    A timestamp that is not a decimal number of unix seconds, or is more than ``max_age``
    seconds away from ``now`` (default: the clock), is refused so that a recorded call cannot
    be replayed later.
    """
    if not timestamp.isascii() or not timestamp.isdigit():
        return False
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > max_age:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body).encode(),
                               signature.encode("utf-8", errors="replace"))


def unsigned(secret: str, request: web.Request, body: bytes) -> web.Response | None:
    """A 401 for a request whose signature headers do not verify with ``secret`` (see
    :func:`verify`), or None for a signed one."""
    timestamp = request.headers.get(TIMESTAMP_HEADER, "")
    signature = request.headers.get(SIGNATURE_HEADER, "")
    if verify(secret, timestamp, body, signature):
        return None
    logger.warning("refused a call with a bad, old or missing signature from %s",
                   request.remote)
    return web.Response(status=401, text="bad, old or missing X-Merknera-Signature\n")


class ReplayGuard:
    """The signatures of the calls taken lately: a call whose signature was seen within
    the window is a replay, refused even though its signature is right.

    A signature is remembered until its timestamp is out of the window (then
    :func:`verify` refuses it anyway); at most ``memory`` of them, beyond which the oldest
    are forgotten.
    """

    def __init__(self, max_age: float = SIGNATURE_MAX_AGE, memory: int = REPLAY_MEMORY) -> None:
        self._max_age = max_age
        self._memory = memory
        self._seen: OrderedDict[str, float] = OrderedDict()

    def first_time(self, signature: str, timestamp: str, *, now: float | None = None) -> bool:
        """Whether ``signature`` is new (and remember it); False for a replay."""
        current = time.time() if now is None else now
        while self._seen and (next(iter(self._seen.values())) < current
                              or len(self._seen) >= self._memory):
            self._seen.popitem(last=False)
        if signature in self._seen:
            return False
        self._seen[signature] = int(timestamp) + self._max_age
        return True


# --- the server -------------------------------------------------------------------------


def _normalise(message: Any) -> Any:
    """Smooth over what jsonrpcserver 5.0.9 would refuse in a call that is fine by the protocol."""
    if not isinstance(message, dict):
        return message  # left for jsonrpcserver's validator to refuse
    message = dict(message)
    # The platform sends "params": null for Status.Ping (as Merknera did); jsonrpcserver's
    # request schema only allows an array or an object, so it would answer Invalid Request.
    if "params" in message and message["params"] is None:
        del message["params"]
    # Merknera-era callers speak a JSON-RPC 1.0 flavour without a "jsonrpc" member, which the
    # schema requires; the reply is turned back into that dialect in Bot._handle.
    if message.get("jsonrpc") != "2.0":
        message["jsonrpc"] = "2.0"
    # Param keys are case-insensitive in this protocol (Merknera's Go server matched them so).
    params = message.get("params")
    if isinstance(params, dict):
        message["params"] = {str(k).lower(): v for k, v in params.items()}
    return message


def _deserialize(text: str) -> Any:
    """The deserializer handed to jsonrpcserver: JSON, then :func:`_normalise`."""
    message = json.loads(text)
    if isinstance(message, list):
        return [_normalise(item) for item in message]
    return _normalise(message)


def _to_legacy(reply: str) -> str:
    """A jsonrpcserver (2.0) reply re-spoken in the 1.0 dialect: string error, no "jsonrpc"."""
    response = json.loads(reply)
    error = response.get("error")
    if isinstance(error, dict):
        text = str(error.get("message", "error"))
        data = error.get("data")
        if isinstance(data, str) and data:
            text = f"{text}: {data}"
        error = text
    return json.dumps({"result": response.get("result"), "error": error,
                       "id": response.get("id")})


def _wrap(name: str, handler: Handler) -> Callable[..., Awaitable[Any]]:
    """Adapt a handler to jsonrpcserver, guarding its sharp edges."""
    # jsonrpcserver's async_dispatch awaits whatever the method returns: a plain def fails every
    # call with "object Right can't be used in 'await' expression".
    if not inspect.iscoroutinefunction(handler):
        raise TypeError(f"the handler for {name} must be an async def")
    # jsonrpcserver answers Invalid params to any key the handler does not name, and the
    # platform may add params to a call at any time.
    parameters = inspect.signature(handler).parameters.values()
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        raise TypeError(f"the handler for {name} must accept **extra (new params may be sent)")

    # functools.wraps sets __wrapped__, so the signature jsonrpcserver binds the params
    # against is the handler's own: a missing param gets Invalid params before any call.
    @functools.wraps(handler)
    async def method(*args: Any, **params: Any) -> Any:
        try:
            result = await handler(*args, **params)
        except InvalidParamsError as exc:
            raise JsonRpcError(_INVALID_PARAMS, "Invalid params", str(exc)) from None
        except Exception:
            # jsonrpcserver would put str(exc) in the reply's error data; a stack's details are
            # the bot's business, so the caller gets a fixed message and the log the rest.
            logger.exception("%s failed", name)
            raise JsonRpcError(_INTERNAL_ERROR, "Internal error") from None
        return Success(result)

    return method


def _params_for_log(params: dict[str, Any]) -> str:
    text = json.dumps(params, sort_keys=True, default=str)
    return text if len(text) <= 400 else text[:400] + "..."


async def _ping(**_extra: Any) -> dict[str, str]:
    return {"ping": "OK"}


async def _ready(**_extra: Any) -> dict[str, str]:
    return {"status": "READY"}


_CacheKey = tuple[str, str, str]


class Bot:
    """The JSON-RPC methods of one bot: :meth:`dispatch` answers one message, and
    :meth:`make_app` serves them over HTTP (with signature checks once :attr:`secret` is set).

    Out of the box it answers ``Status.Ping`` with ``{"ping": "OK"}``,
    ``<prefix>.NewGame`` with ``{"status": "READY"}``, logs ``<prefix>.Complete`` and
    ``<prefix>.Error`` (result null) and serves ``<prefix>.NextMove`` with ``next_move``,
    whose replies are cached (see :meth:`method`). Any other method gets the JSON-RPC
    method-not-found error. Replace or add methods with :meth:`method`.
    """

    def __init__(self, prefix: str, next_move: Handler, *, cache_size: int = 1024) -> None:
        self.prefix = prefix
        self.secret: str | None = None
        """The secret from the Register reply; once set, every call must be signed with it,
        at most :data:`SIGNATURE_MAX_AGE` seconds ago, and not seen before."""
        self._replays = ReplayGuard()
        self._methods: dict[str, Callable[..., Awaitable[Any]]] = {}
        self._cached_methods: set[str] = set()
        self._cache: OrderedDict[_CacheKey, asyncio.Task[str]] = OrderedDict()
        self._cache_size = cache_size
        self.method("Status.Ping", _ping)
        self.method(f"{prefix}.NewGame", _ready)
        self.method(f"{prefix}.NextMove", next_move, cache=True)
        self.method(f"{prefix}.Complete", self._log_call("Complete"))
        self.method(f"{prefix}.Error", self._log_call("Error"))

    def method(self, name: str, handler: Handler, *, cache: bool = False) -> None:
        """Serve JSON-RPC method ``name`` with ``handler``.

        ``handler`` must be an ``async def`` taking the params as keyword arguments and
        accepting ``**extra``; it returns the result, or raises :class:`InvalidParamsError`.
        Any other exception is logged and answered with a fixed "Internal error".

        With ``cache=True`` a repeated call (same method, id and params) gets the first
        call's reply without running the handler again, as the protocol's idempotency rule
        asks; use it for every call whose answer may vary (NextMove of a random bot).

        :raises TypeError: if ``handler`` is not an ``async def`` or lacks ``**extra``.
        """
        self._methods[name] = _wrap(name, handler)
        if cache:
            self._cached_methods.add(name)
        else:
            self._cached_methods.discard(name)

    def make_app(self) -> web.Application:
        """An aiohttp application answering JSON-RPC POSTs on any path."""
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        return app

    def _log_call(self, what: str) -> Handler:
        async def log_call(**params: Any) -> None:
            logger.info("%s.%s %s", self.prefix, what, _params_for_log(params))

        return log_call

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        # Until the Register reply brings the secret every call is accepted: the platform may
        # start games (and sign their calls) the moment the registration commits, before the
        # reply has reached us.
        if self.secret is not None:
            refused = unsigned(self.secret, request, body)
            if refused is not None:
                return refused
            timestamp = request.headers.get(TIMESTAMP_HEADER, "")
            signature = request.headers.get(SIGNATURE_HEADER, "")
            if not self._replays.first_time(signature, timestamp):
                logger.warning("refused a replayed call from %s", request.remote)
                return web.Response(status=401, text="this call was taken before (a replay)\n")

        reply = await self.dispatch(body.decode("utf-8", errors="replace"))
        if reply is None:  # a notification: nothing to answer
            return web.Response(status=204)
        return web.Response(text=reply, content_type="application/json")

    async def dispatch(self, text: str) -> str | None:
        """The reply to one JSON-RPC message ``text``, or None when it needs none (a
        notification).

        This is the whole bot but for the transport: the HTTP handler of :meth:`make_app`
        and a bot's WebSocket to the platform (:class:`merknera_bots.launcher.PlatformConnection`)
        both hand every message here, so a bot plays the same either way.  The reply is in
        the dialect of the call (a call without ``"jsonrpc": "2.0"`` gets Merknera's 1.0
        style), calls of cached methods get their first reply again (see :meth:`method`),
        and a message that is not JSON-RPC gets the JSON-RPC error saying so.
        """
        try:
            raw = json.loads(text)
        except (ValueError, RecursionError):
            raw = None  # jsonrpcserver answers the parse error itself
        legacy = isinstance(raw, dict) and raw.get("jsonrpc") != "2.0"
        key = self._cache_key(raw)
        reply = await (self._dispatch(text) if key is None else self._dispatch_once(key, text))
        if not reply:
            return None
        return _to_legacy(reply) if legacy else reply

    async def _dispatch(self, text: str) -> str:
        reply: str = await async_dispatch(text, methods=self._methods,
                                          deserializer=_deserialize)
        return reply

    def _cache_key(self, raw: Any) -> _CacheKey | None:
        if not isinstance(raw, dict) or "id" not in raw:
            return None
        message = _normalise(raw)
        name = message.get("method")
        if not isinstance(name, str) or name not in self._cached_methods:
            return None
        return (name, json.dumps(message["id"]),
                json.dumps(message.get("params"), sort_keys=True, separators=(",", ":")))

    async def _dispatch_once(self, key: _CacheKey, text: str) -> str:
        # The cache holds tasks, not replies, so a retry that arrives while the first call is
        # still thinking waits for that answer instead of computing a second, different one.
        task = self._cache.get(key)
        if task is None:
            task = asyncio.create_task(self._dispatch(text))
            self._cache[key] = task
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        try:
            reply = await asyncio.shield(task)
        except Exception:
            self._forget(key, task)
            raise
        if "result" not in json.loads(reply):
            self._forget(key, task)  # only answers are remembered; a failed call may be retried
        return reply

    def _forget(self, key: _CacheKey, task: asyncio.Task[str]) -> None:
        if self._cache.get(key) is task:
            del self._cache[key]

"""Calls from the platform to bots: one shared session, deadlines, a size cap, signatures.

Every call ends in a :class:`CallResult`: either a ``result`` or a classified
:class:`Fault`.  Nothing a bot sends (or fails to send) raises out of here; only the
platform's own shortage of descriptors or memory does (:class:`PlatformResourceError`),
because that is no bot's fault.

Fault messages are shown to everybody once a game is over, so they never name the
endpoint (its URL, host or address: the bot list hides them on purpose) and quote at most
a short excerpt of what the bot sent.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import logging
import os
import socket
import ssl
import time
from dataclasses import dataclass

from merknera import __version__, http1
from merknera.cache import Cache
from merknera.config import Config
from merknera.endpoints import (
    AddressRefusedError,
    EndpointRefusedError,
    Resolver,
    address_allowed,
    literal_ip,
    parse_endpoint,
)
from merknera.games.base import JSON
from merknera.protocol import jsonrpc, signing
from merknera.protocol.excerpt import EXCERPT, excerpt
from merknera.protocol.faults import FaultKind

log = logging.getLogger(__name__)

_request_ids = itertools.count(1)

PING_METHOD = "Status.Ping"
"""The JSON-RPC ping (docs/bots/protocol.md section 2)."""

RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
"""Errors that mean the platform, not the bot, is out of something."""


def next_request_id() -> int:
    """A fresh request id: integers, because Merknera's bots decode ids as integers."""
    return next(_request_ids)


class PlatformResourceError(RuntimeError):
    """The platform could not make a call for want of its own descriptors or memory.

    Not a fault of the bot: the caller waits and tries again, or leaves the game for
    later, but never counts it against the bot.
    """


def wanted_connections(config: Config) -> int:
    """How many connections to bots the client would like to keep at most."""
    return max(256, config.scheduling.concurrency * 4)


@dataclass(frozen=True)
class Fault:
    """A call that did not produce a result, and why."""

    kind: FaultKind
    message: str


@dataclass(frozen=True)
class CallResult:
    """The end of one call to a bot."""

    request: bytes
    """The request as sent, for the move log: a JSON-RPC call's body; a REST call's method,
    path and body (see merknera.seats.squelch_rest)."""
    result: JSON = None
    """The reply's ``result`` (meaningful only when ``fault`` is None)."""
    fault: Fault | None = None
    reply: bytes | None = None
    """The reply body as received (None if none came)."""
    status: int | None = None
    """The HTTP status of the reply (None where no HTTP reply came)."""
    latency: float = 0.0
    """Seconds from sending the request to having read the whole reply."""

    @property
    def ok(self) -> bool:
        """Whether the call produced a result."""
        return self.fault is None

    @property
    def answered(self) -> bool:
        """Whether any reply came (the bot was heard from, whatever it said)."""
        return self.reply is not None


URLS_KEPT = 10_000
"""Endpoint URLs whose checks and origins are kept, the most recently called."""


class BotClient:
    """The platform's HTTP client for bots.  Use as ``async with BotClient(config)``."""

    def __init__(self, config: Config, connection_limit: int | None = None) -> None:
        self._config = config
        self._networks = config.calls.networks
        self._limit = connection_limit or wanted_connections(config)
        self._pool: http1.ConnectionPool | None = None
        self._refusals: Cache[str, str | None] = Cache(URLS_KEPT)
        self._origins: Cache[str, http1.Origin] = Cache(URLS_KEPT)
        # The headers every request carries, written once.
        self._fixed = (f"User-Agent: Merknera/{__version__}\r\nAccept: application/json\r\n"
                       "Accept-Encoding: identity\r\n")

    async def __aenter__(self) -> BotClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Open the shared pool of connections."""
        self._pool = http1.ConnectionPool(self._limit, self._config.calls.connect_timeout,
                                          Resolver(self._networks))

    async def close(self) -> None:
        """Close the shared pool of connections."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def _refusal(self, endpoint: str) -> str | None:
        """Why an endpoint may not be called, checked once per URL (in words that do not
        quote it)."""
        if endpoint not in self._refusals:
            reason = None
            try:
                host = parse_endpoint(endpoint).raw_host or ""
                literal = literal_ip(host)
                if literal is not None and not address_allowed(literal, self._networks):
                    reason = "the endpoint's address is outside the networks this platform calls"
            except EndpointRefusedError:
                reason = "the endpoint is not a URL this platform calls"
            self._refusals.put(endpoint, reason)
        return self._refusals.get(endpoint)

    async def call(self, endpoint: str, secret: str, method: str, params: JSON,
                   time_limit: float, request_id: int | None = None) -> CallResult:
        """Call ``method`` on a bot and check the reply strictly.

        A connection that drops before any reply is retried once with the same request
        (same id), as docs/bots/protocol.md allows, if the deadline leaves time for it.
        """
        request_id = next_request_id() if request_id is None else request_id
        body = jsonrpc.encode_call(method, params, request_id)
        raw = await self._post(endpoint, secret, body, time_limit, retry=True)
        if raw.fault is not None or raw.reply is None:
            return raw
        if raw.status != 200:
            return with_fault(raw, FaultKind.HTTP_STATUS,
                               f"HTTP status {raw.status}: {preview(raw.reply)}")
        try:
            result = jsonrpc.decode_reply(raw.reply, request_id)
        except jsonrpc.MalformedReplyError as exc:
            return with_fault(raw, FaultKind.MALFORMED_REPLY, excerpt(str(exc)))
        except jsonrpc.BotRpcError as exc:
            return with_fault(raw, FaultKind.RPC_ERROR,
                               f"the bot answered an error: {excerpt(str(exc))}")
        return CallResult(request=body, result=result, reply=raw.reply, status=raw.status,
                          latency=raw.latency)

    async def ping(self, endpoint: str, secret: str) -> CallResult:
        """``Status.Ping``: any HTTP 200 within the ping timeout means online.

        The body is read (within the size cap) but not judged: Merknera's bots answer
        ``{"ping": "OK"}``, ``{"status": "OK"}`` or ``"OK"``, and all of them are alive.
        """
        body = jsonrpc.encode_call(PING_METHOD, None, next_request_id())
        raw = await self._post(endpoint, secret, body, self._config.calls.ping_timeout, retry=True)
        if raw.fault is None and raw.status != 200:
            return with_fault(raw, FaultKind.HTTP_STATUS, f"HTTP status {raw.status}")
        return raw

    async def notify(self, endpoint: str, secret: str, method: str, params: JSON,
                     time_limit: float | None = None) -> CallResult:
        """A call whose reply is ignored (``Complete``, ``Error``): delivered or not (not,
        when the platform is short of descriptors or memory: it is dropped, with a line in
        the log, and the result has no reply)."""
        body = jsonrpc.encode_call(method, params, next_request_id())
        try:
            return await self._post(endpoint, secret, body,
                                    time_limit or self._config.calls.notify_timeout, retry=False)
        except PlatformResourceError as exc:
            log.warning("%s not sent: %s", method, exc)
            return CallResult(request=body)

    async def exchange(self, endpoint: str, secret: str, http_method: str, path: str,
                       body: bytes, time_limit: float) -> CallResult:
        """One signed HTTP request to ``path`` under a bot's base URL ``endpoint`` (a bot
        that speaks a game's own REST API), and its raw reply: faults only for transport
        failures, the status and body for the caller to judge.

        A connection that drops before any reply is sent again with the same URL and
        body, if the deadline leaves time for it (such APIs make bots idempotent).

        :raises PlatformResourceError: if the platform is out of descriptors or memory.
        """
        url = endpoint.rstrip("/") + path
        return await self._post(endpoint, secret, body, time_limit, retry=True,
                                method=http_method, url=url)

    async def _post(self, endpoint: str, secret: str, body: bytes, time_limit: float,
                    retry: bool, *, method: str = "POST", url: str | None = None) -> CallResult:
        """Send one request (a POST to ``endpoint`` unless told otherwise) and read the raw
        reply; faults only for transport failures.

        :raises PlatformResourceError: if the platform is out of descriptors or memory.
        """
        if self._pool is None:
            raise RuntimeError("BotClient.start() was not called")
        # The policy is checked on the endpoint as registered (once per endpoint), not on
        # each URL under it.
        refusal = self._refusal(endpoint)
        if refusal is not None:
            return CallResult(request=body, fault=Fault(FaultKind.UNREACHABLE, refusal))
        try:
            origin = self._origin(url or endpoint)
        except ValueError:
            return CallResult(request=body, fault=Fault(
                FaultKind.UNREACHABLE, "the endpoint is not a URL this platform calls"))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + time_limit
        started = time.perf_counter()
        attempts = 2 if retry else 1
        stamp = 0
        for attempt in range(attempts):
            # A second attempt carries a later timestamp than the first, hence another
            # signature: a bot that refuses a signature it has seen (a replay) takes it.
            stamp = max(int(time.time()), stamp + 1)
            timestamp = str(stamp)
            try:
                head = self._head(method, origin, timestamp,
                                  signing.sign(secret, timestamp, body), body)
            except UnicodeEncodeError:  # Origin.of lets only ASCII through: a safety net
                return CallResult(request=body, fault=Fault(
                    FaultKind.UNREACHABLE, "the endpoint is not a URL this platform calls"))
            try:
                reply = await self._pool.request(origin, head, body,
                                                 self._config.calls.max_reply_bytes, deadline)
                return CallResult(request=body, reply=reply.body, status=reply.status,
                                  latency=time.perf_counter() - started)
            except (TimeoutError, http1.HttpError) as exc:
                # The OS's reason rides along (ConnectError.os_error, or the cause of a
                # lost connection): the platform's own shortage is no bot's fault.
                _raise_if_exhausted(exc)
                kind, message, again = self._failure(exc, time_limit)
                if again and attempt + 1 < attempts and deadline - loop.time() > 0.05:
                    continue
                return self._fault(body, started, kind, message)
        raise AssertionError("unreachable")  # pragma: no cover

    def _origin(self, url: str) -> http1.Origin:
        """Where a URL's requests go, worked out once per URL."""
        origin = self._origins.get(url)
        if origin is None:
            origin = http1.Origin.of(url)
            self._origins.put(url, origin)
        return origin

    def _head(self, method: str, origin: http1.Origin, timestamp: str, signature: str,
              body: bytes) -> bytes:
        """A request's line and headers: every value is the platform's own (the target
        and host were percent- and IDNA-encoded by the URL parser), so none can break a
        line."""
        sized = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n" if (
            body or method not in ("GET", "HEAD")) else ""
        return (f"{method} {origin.target} HTTP/1.1\r\nHost: {origin.host_header}\r\n"
                f"{self._fixed}{signing.TIMESTAMP_HEADER}: {timestamp}\r\n"
                f"{signing.SIGNATURE_HEADER}: {signature}\r\n{sized}\r\n").encode("ascii")

    def _failure(self, exc: BaseException, time_limit: float) -> tuple[FaultKind, str, bool]:
        """A failed request as (fault, message, worth another attempt)."""
        if isinstance(exc, TimeoutError):
            return FaultKind.TIMEOUT, f"no reply within {time_limit:g} s", False
        if isinstance(exc, http1.ConnectTimeoutError):
            return (FaultKind.UNREACHABLE,
                    f"could not connect within {self._config.calls.connect_timeout:g} s", False)
        if isinstance(exc, http1.ConnectError):
            return FaultKind.UNREACHABLE, f"cannot connect: {_describe(exc.os_error)}", False
        if isinstance(exc, http1.ConnectionLostError):
            # The connection dropped before any reply (often a kept-alive connection the
            # bot had just closed): the same request once more, if time is left.
            return (FaultKind.UNREACHABLE,
                    f"the connection was lost before a reply: {exc}", True)
        if isinstance(exc, http1.BrokenReplyError):
            # The bot answered, then its reply broke off: a bad reply from a reachable
            # bot, not a bot that cannot be reached.
            return FaultKind.MALFORMED_REPLY, f"the reply broke off: {exc}", False
        if isinstance(exc, http1.ReplyTooLargeError):
            return (FaultKind.MALFORMED_REPLY,
                    f"the reply is larger than {self._config.calls.max_reply_bytes} bytes", False)
        if isinstance(exc, http1.InvalidReplyError):
            return (FaultKind.MALFORMED_REPLY,
                    f"not a valid HTTP reply: {excerpt(str(exc))}", False)
        return FaultKind.UNREACHABLE, f"cannot call the bot: {_describe(exc)}", False

    @staticmethod
    def _fault(body: bytes, started: float, kind: FaultKind, message: str) -> CallResult:
        return CallResult(request=body, fault=Fault(kind, message),
                          latency=time.perf_counter() - started)


def with_fault(raw: CallResult, kind: FaultKind, message: str) -> CallResult:
    """``raw`` (a reply that came) judged to be a fault of ``kind``."""
    return CallResult(request=raw.request, fault=Fault(kind, message), reply=raw.reply,
                      status=raw.status, latency=raw.latency)


def preview(body: bytes) -> str:
    """The start of a reply body, for a fault message."""
    text = excerpt(body[:EXCERPT + 1].decode("utf-8", errors="replace"))
    return text or "(empty body)"


def _exhausted(exc: BaseException | None) -> OSError | None:
    """The error in ``exc``'s chain that says the platform is out of descriptors or
    memory, if there is one (aiohttp wraps the OS's error, sometimes twice)."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, socket.gaierror) and exc.errno == socket.EAI_MEMORY:
            return exc
        if isinstance(exc, OSError) and exc.errno in RESOURCE_ERRNOS:
            return exc
        inner = getattr(exc, "os_error", None)
        exc = inner if isinstance(inner, BaseException) and inner is not exc else (
            exc.__cause__ or exc.__context__)
        seen += 1
    return None


def _raise_if_exhausted(exc: BaseException) -> None:
    found = _exhausted(exc)
    if found is not None:
        raise PlatformResourceError(
            f"the platform is short of its own resources: {_describe(found)}") from exc


def _describe(exc: BaseException | None) -> str:
    """An error in words that never quote an address or a URL (the OS's and aiohttp's
    messages do: "Connect call failed ('10.0.0.7', 8001)")."""
    if exc is None:
        return "unknown error"
    if isinstance(exc, ssl.SSLError):
        return f"the TLS handshake failed ({exc.reason or type(exc).__name__})"
    if isinstance(exc, socket.gaierror):
        return f"the host name does not resolve ({exc.strerror})"
    if isinstance(exc, OSError) and exc.errno:
        return os.strerror(exc.errno)
    if isinstance(exc, AddressRefusedError):
        return str(exc)
    return type(exc).__name__

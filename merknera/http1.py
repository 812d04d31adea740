"""HTTP/1.1 requests to bots over kept-alive connections: the wire of the bot client.

Why not aiohttp's client: a call to a bot is one small request and one small reply,
thousands a second, and aiohttp's ``ClientSession`` spends about 75 us of CPU on each
(request and response objects, header multidicts, payload writers, stream readers, trace
hooks): more than the rest of a move together.  Here a request is written as one bytes
object, and a reply is parsed by llhttp (``httptools``: the parser of Node.js, also used
by uvicorn) straight into a status and a body, for about a third of that.

It does what calls to bots need and no more: one request at a time on a connection,
connections kept alive per origin (LIFO, closed after :data:`KEEPALIVE` idle seconds), a
bound on connections in all, names resolved through a resolver (the platform's
:class:`~merknera.endpoints.PolicyResolver`, cached for :data:`DNS_TTL` seconds), TLS with
the system's certificates, and a cap on the reply's size checked as it arrives.  No
redirects, no cookies, no proxies, no compression: a bot's reply is the bytes it sent.

Every failure is a :class:`HttpError` that says which stage failed, so that the caller can
tell a bot that cannot be reached from one whose reply broke off.  Deadlines are the
caller's (``asyncio.timeout`` around :meth:`ConnectionPool.request`); a cancelled request
closes its connection, so a late reply never meets the next request.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

import httptools
from yarl import URL

KEEPALIVE = 15.0
"""Seconds an idle connection is kept for the next request to the same origin."""

DNS_TTL = 10.0
"""Seconds a host name's addresses are kept."""

MAX_HEAD = 64 * 1024
"""Bytes of status line and headers accepted before a reply counts as not HTTP."""


class HttpError(Exception):
    """A request that did not produce a whole reply."""


class ConnectError(HttpError):
    """No connection could be made; ``os_error`` says why (refused, unreachable, a name
    that does not resolve or resolves outside the allowed networks)."""

    def __init__(self, os_error: OSError) -> None:
        super().__init__(str(os_error))
        self.os_error = os_error


class ConnectTimeoutError(HttpError):
    """No connection within the connect timeout."""


class ConnectionLostError(HttpError):
    """The connection ended before any byte of the reply (often a kept-alive connection
    the other side had just closed): the request may be sent again."""


class BrokenReplyError(HttpError):
    """The reply began, then the connection ended before its end."""


class InvalidReplyError(HttpError):
    """The bytes that came back are not an HTTP reply."""


class ReplyTooLargeError(HttpError):
    """The reply's body is larger than the cap."""


@dataclass(frozen=True)
class Origin:
    """Where a request goes: scheme, host and port, and the request target."""

    tls: bool
    host: str
    """As in the URL (IDNA-encoded; an IPv6 literal without brackets)."""
    port: int
    host_header: str
    target: str
    """Path and query, percent-encoded, as the request line carries them."""

    @staticmethod
    def of(url: str) -> Origin:
        """The origin and target of an absolute http(s) URL.

        :raises ValueError: if it is not one.
        """
        parsed = URL(url)
        host, port = parsed.raw_host, parsed.port
        if parsed.scheme not in ("http", "https") or not host or port is None:
            raise ValueError("not an absolute http(s) URL")
        tls = parsed.scheme == "https"
        bracketed = f"[{host}]" if ":" in host else host
        default = 443 if tls else 80
        return Origin(tls, host, port,
                      bracketed if port == default else f"{bracketed}:{port}",
                      parsed.raw_path_qs or "/")


@dataclass(frozen=True)
class Reply:
    """A whole HTTP reply."""

    status: int
    body: bytes


class Resolver(Protocol):
    """Host names to addresses (aiohttp's resolvers have this shape)."""

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> Sequence[
                          Mapping[str, object]]: ...


class _Connection(asyncio.Protocol):
    """One connection: sends a request, parses its reply (llhttp calls the ``on_*``)."""

    def __init__(self, pool: ConnectionPool, key: tuple[bool, str, int]) -> None:
        self._pool = pool
        self.key = key
        self.transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._waiter: asyncio.Future[Reply] | None = None
        self._cap = 0
        self._chunks: list[bytes] = []
        self._size = 0
        self._received = 0
        """Bytes of the reply so far."""
        self._headers_done = False
        self._until_eof = True  # no Content-Length, not chunked: the body ends with the stream
        self.reusable = False
        self.idle_since = 0.0
        self.counted = True
        """Whether this connection still counts against the pool's limit."""
        self._timer: asyncio.TimerHandle | None = None
        self._stopped: HttpError | None = None
        """Why a callback stopped the parser."""

    # -- asyncio.Protocol -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport, as create_connection makes (not always a subclass of
        # asyncio.Transport: uvloop's are not).
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            # Bytes nobody asked for (a reply after its end, a reply to a cancelled
            # request): this connection's stream can no longer be trusted.
            self.reusable = False
            self._close()
            return
        self._received += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(InvalidReplyError("it switches protocols"))
            return
        except httptools.HttpParserError as exc:
            # llhttp wraps what a callback raised: the callback's own error says more.
            self._fail(self._stopped or InvalidReplyError(str(exc) or type(exc).__name__))
            return
        if not self._headers_done and self._received > MAX_HEAD:
            # Checked after parsing: the body that follows a head in the same read counts
            # against the size cap, not against this one.
            self._fail(InvalidReplyError(f"its head is longer than {MAX_HEAD} bytes"))

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        self.reusable = False
        self._pool.lost(self)
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._headers_done and self._until_eof:
            self._complete()  # the body was everything up to the end of the stream
        elif self._received == 0:
            waiter.set_exception(ConnectionLostError(_why(exc)))
        else:
            waiter.set_exception(BrokenReplyError(_why(exc)))

    # -- llhttp's callbacks -------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self._waiter is not None and self._waiter.done():
            # Another reply after the whole one, in the same read: not a stream to reuse.
            self.reusable = False

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"content-length":
            self._until_eof = False
            if value.strip().isdigit() and int(value) > self._cap:
                self._stop(ReplyTooLargeError())
        elif name == b"transfer-encoding":
            self._until_eof = False

    def on_headers_complete(self) -> None:
        self._headers_done = True

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size > self._cap:
            self._stop(ReplyTooLargeError())
        self._chunks.append(body)

    def _stop(self, error: HttpError) -> None:
        """Stop parsing: llhttp turns this into an error of its own (see data_received)."""
        self._stopped = error
        raise error

    def on_message_complete(self) -> None:
        if self._parser.get_status_code() < 200:
            # 1xx: an interim reply; the real one follows on this stream.
            self._chunks, self._size, self._headers_done, self._until_eof = [], 0, False, True
            return
        self.reusable = self._parser.should_keep_alive()
        self._complete()

    # -- the pool's side ------------------------------------------------------------------------

    def send(self, data: bytes, cap: int, deadline: float) -> asyncio.Future[Reply]:
        """Write one request; its reply comes in the returned future, or TimeoutError at
        ``deadline`` (the loop's clock)."""
        assert self.transport is not None
        self._reset()
        self._cap = cap
        self.reusable = False
        loop = asyncio.get_running_loop()
        self._waiter = loop.create_future()
        # A timer of the connection's own, not asyncio.timeout around the await: the same
        # deadline for a fraction of the cost, on the path every move takes.
        self._timer = loop.call_at(deadline, self._expire)
        self.transport.write(data)
        return self._waiter

    def _expire(self) -> None:
        self._timer = None
        self._fail(TimeoutError())

    def _reset(self) -> None:
        self._chunks, self._size, self._received, self._stopped = [], 0, 0, None
        self._headers_done, self._until_eof = False, True

    def _complete(self) -> None:
        self._stop_timer()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(Reply(self._parser.get_status_code(), b"".join(self._chunks)))
        self._chunks = []

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fail(self, exc: HttpError | TimeoutError) -> None:
        self._stop_timer()
        self.reusable = False
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(exc)
        self._close()

    def _close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()


def _why(exc: BaseException | None) -> str:
    return "the other side closed the connection" if exc is None else (
        type(exc).__name__ if not isinstance(exc, OSError) or not exc.strerror
        else exc.strerror)


class ConnectionPool:
    """Kept-alive connections to any number of origins, at most ``limit`` open at once.

    Use as ``async with ConnectionPool(...)``, or call :meth:`close`.
    """

    def __init__(self, limit: int, connect_timeout: float, resolver: Resolver,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        self._limit = limit
        self._connect_timeout = connect_timeout
        self._resolver = resolver
        self._ssl = ssl_context
        self._idle: dict[tuple[bool, str, int], list[_Connection]] = {}
        self._open = 0
        self._slots: list[asyncio.Future[None]] = []  # waiting for a connection to close
        self._names: dict[tuple[str, int], tuple[float, list[tuple[str, int]]]] = {}
        self._sweeper: asyncio.TimerHandle | None = None
        self._closed = False

    @property
    def open_connections(self) -> int:
        """Connections open now, in use or idle."""
        return self._open

    async def __aenter__(self) -> ConnectionPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the idle connections; those in use close when their request ends."""
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for idle in self._idle.values():
            for connection in idle:
                connection._close()
        self._idle.clear()

    async def request(self, origin: Origin, head: bytes, body: bytes, cap: int,
                      deadline: float) -> Reply:
        """Send ``head`` (request line and headers, ending in an empty line) and ``body``
        to ``origin`` on a kept-alive connection or a new one, and read the whole reply
        by ``deadline`` (the running loop's clock).

        :raises TimeoutError: at the deadline.
        :raises HttpError: if there is no whole reply (with ``ConnectError``'s
            ``os_error`` the OS's reason, for the caller to tell the platform's own
            shortage of descriptors from a bot that cannot be reached).
        """
        if self._closed:
            raise RuntimeError("the connection pool is closed")
        connection = self._take_idle((origin.tls, origin.host, origin.port))
        if connection is None:
            async with asyncio.timeout_at(deadline):
                connection = await self._connect(origin)
        done = False
        try:
            reply = await connection.send(head + body if body else head, cap, deadline)
            done = True
        finally:
            if done and connection.reusable and not self._closed:
                connection.idle_since = time.monotonic()
                self._idle.setdefault(connection.key, []).append(connection)
                self._schedule_sweep()
            else:
                connection._close()
        return reply

    # -- connections ----------------------------------------------------------------------------

    def _take_idle(self, key: tuple[bool, str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            transport = connection.transport
            if transport is not None and not transport.is_closing() and (
                    now - connection.idle_since < KEEPALIVE):
                return connection
            connection._close()
        return None

    async def _connect(self, origin: Origin) -> _Connection:
        await self._slot()
        self._open += 1
        opened = False
        try:
            connection = await self._dial(origin)
            opened = True
            return connection
        finally:
            if not opened:
                self._freed()

    async def _slot(self) -> None:
        """Wait until one more connection may be opened (closing an idle one of another
        origin if that makes room)."""
        while self._open >= self._limit:
            oldest = min((idle[0] for idle in self._idle.values() if idle),
                         key=lambda c: c.idle_since, default=None)
            if oldest is not None:
                self._idle[oldest.key].remove(oldest)
                oldest.counted = False  # its room is taken now; connection_lost comes later
                self._open -= 1
                oldest._close()
                continue
            slot = asyncio.get_running_loop().create_future()
            self._slots.append(slot)
            try:
                await slot
            except asyncio.CancelledError:
                if slot.done() and not slot.cancelled():
                    self._wake()  # woken, then cancelled: the room goes to the next waiter
                raise
            finally:
                if slot in self._slots:
                    self._slots.remove(slot)

    def lost(self, connection: _Connection) -> None:
        """A connection closed (called by it)."""
        idle = self._idle.get(connection.key)
        if idle and connection in idle:
            idle.remove(connection)
        if connection.counted:
            connection.counted = False
            self._freed()

    def _freed(self) -> None:
        self._open -= 1
        self._wake()

    def _wake(self) -> None:
        while self._slots:
            slot = self._slots.pop(0)
            if not slot.done():
                slot.set_result(None)
                break

    async def _dial(self, origin: Origin) -> _Connection:
        loop = asyncio.get_running_loop()
        key = (origin.tls, origin.host, origin.port)
        context = None
        if origin.tls:
            context = self._ssl or _default_context()
        last: OSError | None = None
        try:
            async with asyncio.timeout(self._connect_timeout):
                for host, family in await self._addresses(origin.host, origin.port):
                    try:
                        _, connection = await loop.create_connection(
                            lambda: _Connection(self, key), host, origin.port, family=family,
                            ssl=context, server_hostname=origin.host if context else None)
                    except OSError as exc:
                        last = exc
                        continue
                    return connection
        except TimeoutError:
            raise ConnectTimeoutError(
                f"no connection within {self._connect_timeout:g} s") from None
        assert last is not None
        raise ConnectError(last) from last

    async def _addresses(self, host: str, port: int) -> list[tuple[str, int]]:
        """The addresses to try for a host: itself if it is an address, else its name's
        (kept :data:`DNS_TTL` seconds).

        :raises ConnectError: if the name does not resolve (or only outside the networks).
        """
        try:
            literal = socket.AF_INET6 if ":" in host else socket.AF_INET
            socket.inet_pton(literal, host)
            return [(host, literal)]
        except OSError:
            pass
        now = time.monotonic()
        known = self._names.get((host, port))
        if known is not None and known[0] > now:
            return known[1]
        try:
            found = await self._resolver.resolve(host, port, socket.AF_UNSPEC)
        except OSError as exc:
            raise ConnectError(exc) from exc
        addresses: list[tuple[str, int]] = []
        for entry in found:
            address, kind = entry["host"], entry["family"]
            assert isinstance(address, str) and isinstance(kind, int)
            addresses.append((address, kind))
        if len(self._names) > 10_000:
            self._names.clear()
        self._names[(host, port)] = (now + DNS_TTL, addresses)
        return addresses

    def _schedule_sweep(self) -> None:
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().call_later(KEEPALIVE, self._sweep)

    def _sweep(self) -> None:
        """Close connections idle for :data:`KEEPALIVE` seconds (their descriptors)."""
        self._sweeper = None
        now = time.monotonic()
        for idle in self._idle.values():
            for connection in [c for c in idle if now - c.idle_since >= KEEPALIVE]:
                connection._close()
        if any(self._idle.values()):
            self._schedule_sweep()


_context: ssl.SSLContext | None = None


def _default_context() -> ssl.SSLContext:
    """The system's certificates, made once (loading them costs milliseconds)."""
    global _context
    if _context is None:
        _context = ssl.create_default_context()
    return _context

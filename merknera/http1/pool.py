"""Kept-alive connections to bots' origins, bounded in all (see :mod:`merknera.http1`)."""

from __future__ import annotations

import asyncio
import re
import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from yarl import URL

from merknera.hosts import host_port
from merknera.http1.connection import (
    ConnectError,
    Connection,
    ConnectionLostError,
    ConnectTimeoutError,
    Reply,
)

KEEPALIVE = 15.0
"""Seconds an idle connection is kept for the next request to the same origin."""

_HOST = re.compile(r"[A-Za-z0-9._:%-]+")


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
        if not _HOST.fullmatch(host):
            # An IPv6 zone id is kept as written: it must not put odd bytes in the head.
            raise ValueError("the host has characters a request line cannot carry")
        tls = parsed.scheme == "https"
        default = 443 if tls else 80
        return Origin(tls, host, port, host_port(host, None if port == default else port),
                      parsed.raw_path_qs or "/")


class Resolver(Protocol):
    """Host names to the addresses to try, each with its socket family
    (:class:`merknera.endpoints.Resolver`)."""

    async def resolve(self, host: str, port: int) -> Sequence[tuple[str, int]]: ...


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
        self._idle: dict[tuple[bool, str, int], list[Connection]] = {}
        self._open = 0
        self._slots: list[asyncio.Future[None]] = []  # waiting for a connection to close
        self._sweeper: asyncio.TimerHandle | None = None
        self._closed = False

    @property
    def open_connections(self) -> int:
        """Connections open now, in use or idle."""
        return self._open

    @property
    def waiting(self) -> int:
        """Requests waiting in line for room to open a connection."""
        return sum(not slot.done() for slot in self._slots)

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
        for idle in list(self._idle.values()):
            for connection in list(idle):
                connection.close()
        self._idle.clear()

    async def request(self, origin: Origin, head: bytes, body: bytes, cap: int,
                      deadline: float) -> Reply:
        """Send ``head`` (request line and headers, ending in an empty line) and ``body``
        to ``origin`` on a kept-alive connection or a new one, and read the whole reply
        by ``deadline`` (the running loop's clock).

        :raises TimeoutError: at the deadline (a little later after a stall of the
            platform's own, once what came meanwhile is read: :mod:`merknera.stalls`).
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
                if self._slots:
                    self._grant()  # it is closed to make room for a waiting origin
            else:
                connection.close()
        return reply

    # -- connections ----------------------------------------------------------------------------

    def _take_idle(self, key: tuple[bool, str, int]) -> Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            transport = connection.transport
            if transport is not None and not transport.is_closing() and (
                    now - connection.idle_since < KEEPALIVE):
                return connection
            connection.close()
        return None

    async def _connect(self, origin: Origin) -> Connection:
        await self._slot()
        opened = False
        try:
            connection = await self._dial(origin)
            if connection.closed:  # ended before the pool had it: lost() did not count it
                raise ConnectionLostError("the connection closed as it opened")
            connection.counted = opened = True
            return connection
        finally:
            if not opened:
                self._freed()

    async def _slot(self) -> None:
        """Take room for one more connection (counted in ``_open`` on return), waiting in
        line behind those that came first.

        Room is handed to the first waiter the moment it frees, already counted for it: a
        request that comes later, or one that goes on at once on the same task, cannot
        take it first and leave the waiter waiting for ever.
        """
        if not self._slots and self._make_room():
            self._open += 1
            return
        slot = asyncio.get_running_loop().create_future()
        self._slots.append(slot)
        try:
            await slot
        except asyncio.CancelledError:
            if slot.done() and not slot.cancelled():
                self._freed()  # handed the room, then cancelled: it goes to the next waiter
            raise
        finally:
            if slot in self._slots:
                self._slots.remove(slot)

    def _make_room(self) -> bool:
        """Whether one more connection may open now, closing the longest idle connection
        (of any origin) if that makes room."""
        if self._open < self._limit:
            return True
        oldest = min((idle[0] for idle in self._idle.values() if idle),
                     key=lambda c: c.idle_since, default=None)
        if oldest is None:
            return False
        self._idle[oldest.key].remove(oldest)
        oldest.counted = False  # its room is taken now; connection_lost comes later
        self._open -= 1
        oldest.close()
        return True

    def _grant(self) -> None:
        """Hand room to the waiters in the order they came, while there is room."""
        while self._slots:
            if self._slots[0].done():  # cancelled while waiting
                self._slots.pop(0)
                continue
            if not self._make_room():
                return
            self._open += 1
            self._slots.pop(0).set_result(None)

    def lost(self, connection: Connection) -> None:
        """A connection closed (called by it)."""
        idle = self._idle.get(connection.key)
        if idle is not None and connection in idle:
            idle.remove(connection)
            if not idle:
                del self._idle[connection.key]
        if connection.counted:
            connection.counted = False
            self._freed()

    def _freed(self) -> None:
        self._open -= 1
        self._grant()

    async def _dial(self, origin: Origin) -> Connection:
        loop = asyncio.get_running_loop()
        key = (origin.tls, origin.host, origin.port)
        context = None
        if origin.tls:
            context = self._ssl or _default_context()
        last: OSError | None = None
        try:
            async with asyncio.timeout(self._connect_timeout):
                try:
                    addresses = await self._resolver.resolve(origin.host, origin.port)
                except OSError as exc:
                    raise ConnectError(exc) from exc
                for host, family in addresses:
                    try:
                        _, connection = await loop.create_connection(
                            lambda: Connection(key, self.lost), host, origin.port, family=family,
                            ssl=context,
                            server_hostname=origin.host.rstrip(".") if context else None)
                    except OSError as exc:
                        last = exc
                        continue
                    return connection
        except TimeoutError:
            raise ConnectTimeoutError(
                f"no connection within {self._connect_timeout:g} s") from None
        assert last is not None
        raise ConnectError(last) from last

    def _schedule_sweep(self) -> None:
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().call_later(KEEPALIVE, self._sweep)

    def _sweep(self) -> None:
        """Close connections idle for :data:`KEEPALIVE` seconds (their descriptors)."""
        self._sweeper = None
        now = time.monotonic()
        for idle in list(self._idle.values()):  # closing may empty (and drop) a list
            for connection in [c for c in idle if now - c.idle_since >= KEEPALIVE]:
                connection.close()
        if any(self._idle.values()):
            self._schedule_sweep()


_context: ssl.SSLContext | None = None


def _default_context() -> ssl.SSLContext:
    """The system's certificates, made once (loading them costs milliseconds)."""
    global _context
    if _context is None:
        _context = ssl.create_default_context()
    return _context

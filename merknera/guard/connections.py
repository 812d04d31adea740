"""Client connections on a listener: counted per client, capped, and watched for their end.

aiohttp's server keeps a connection open for as long as its peer likes, and accepts as
many as the kernel hands it: a few hundred idle sockets exhaust the process's descriptors,
and then the platform cannot call its bots.  :class:`ConnectionGuard` sits between the
event loop and aiohttp's protocol (:class:`GuardedSite` installs it), so that it sees
every connection from its first byte: beyond :attr:`ConnectionGuard.per_client` from one
client, or :attr:`ConnectionGuard.total` in all, a connection is answered at once with 429
or 503 and closed.  How long a connection may stay without a request is aiohttp's
``keepalive_timeout``, which since 3.14 runs from the connection's start too (see
:meth:`merknera.guard.Guard.runner_options`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import web

from merknera.guard.clients import client_key

POLL_SECONDS = 1.0
"""How often :meth:`ConnectionGuard.gone` looks at a connection it does not own (one
served by a test server that bypasses the guard)."""


def _refusal(status: int, reason: str, message: str, retry_after: int) -> bytes:
    body = json.dumps({"error": message}).encode()
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: {retry_after}\r\n"
            "Connection: close\r\n\r\n").encode() + body


_PER_CLIENT = _refusal(429, "Too Many Requests",
                       "too many connections from your address; close some first", 5)
_FULL = _refusal(503, "Service Unavailable", "too many connections; try again shortly", 5)


class Connection:
    """One open client connection."""

    __slots__ = ("client", "closed")

    def __init__(self, client: str) -> None:
        self.client = client
        """The client's key (:func:`merknera.guard.clients.client_key`)."""
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Done when the connection has ended."""


class ConnectionGuard:
    """Counts the connections of every listener it is installed on, and caps them."""

    def __init__(self, total: int, per_client: int) -> None:
        self.total = total
        """Connections open at once, at most (set from the descriptor budget at start)."""
        self.per_client = per_client
        """Connections one client may hold open at once."""
        self.refused = 0
        """Connections refused so far."""
        self._open: dict[object, Connection] = {}
        self._by_client: Counter[str] = Counter()

    @property
    def open(self) -> int:
        """Connections open now."""
        return len(self._open)

    def open_from(self, client: str) -> int:
        """Connections one client holds open now."""
        return self._by_client[client]

    def protocol_factory(self, inner: Callable[[], asyncio.Protocol]
                         ) -> Callable[[], asyncio.Protocol]:
        """A protocol factory for ``loop.create_server`` that guards ``inner``'s."""
        return lambda: _GuardedProtocol(self, inner())

    def _admit(self, transport: asyncio.BaseTransport) -> Connection | None:
        peer = transport.get_extra_info("peername")
        client = client_key(peer[0] if isinstance(peer, tuple) and peer else None)
        refusal = None
        if self._by_client[client] >= self.per_client:
            refusal = _PER_CLIENT
        elif len(self._open) >= self.total:
            refusal = _FULL
        if refusal is not None:
            self.refused += 1
            if isinstance(transport, asyncio.WriteTransport):
                transport.write(refusal)
            transport.close()
            return None
        connection = Connection(client)
        self._open[transport] = connection
        self._by_client[client] += 1
        return connection

    def _release(self, transport: asyncio.BaseTransport) -> None:
        connection = self._open.pop(transport, None)
        if connection is None:
            return
        self._by_client[connection.client] -= 1
        if self._by_client[connection.client] <= 0:
            del self._by_client[connection.client]
        if not connection.closed.done():
            connection.closed.set_result(None)

    def connection_of(self, request: web.BaseRequest) -> Connection | None:
        """The guarded connection a request came on (None if it bypassed the guard)."""
        transport = request.transport
        return None if transport is None else self._open.get(transport)

    @contextlib.asynccontextmanager
    async def gone(self, request: web.BaseRequest) -> AsyncIterator[asyncio.Future[Any]]:
        """A future that is done as soon as the request's client has disconnected.

        For a guarded connection that is the connection's own end; otherwise (a server
        the guard is not installed on) the transport is looked at every second.
        """
        connection = self.connection_of(request)
        if connection is not None:
            yield connection.closed
            return

        async def poll() -> None:
            # A transport has no event to wait on; this path serves only test servers.
            while True:
                transport = request.transport
                if transport is None or transport.is_closing():
                    return
                await asyncio.sleep(POLL_SECONDS)

        watcher = asyncio.ensure_future(poll())
        try:
            yield watcher
        finally:
            watcher.cancel()


class _GuardedProtocol(asyncio.Protocol):
    """Passes everything to aiohttp's protocol, once the guard has admitted the
    connection."""

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol) -> None:
        self._guard = guard
        self._inner = inner
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self._guard._admit(transport) is not None:
            self._transport = transport
            self._inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._transport is not None:
            self._guard._release(self._transport)
            self._inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._transport is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._transport is not None else None

    def pause_writing(self) -> None:
        if self._transport is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._transport is not None:
            self._inner.resume_writing()


class GuardedSite(web.SockSite):
    """aiohttp's ``SockSite`` with a :class:`ConnectionGuard` between the loop and the
    server's protocol."""

    def __init__(self, runner: web.BaseRunner, sock: Any, guard: ConnectionGuard,
                 **kwargs: Any) -> None:
        super().__init__(runner, sock, **kwargs)
        self._guard = guard

    async def start(self) -> None:
        # BaseSite.start registers the site with its runner; SockSite.start would then
        # serve the unguarded factory, so the server is made here instead.
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        self._server = await asyncio.get_running_loop().create_server(
            self._guard.protocol_factory(server), sock=self._sock, backlog=self._backlog)

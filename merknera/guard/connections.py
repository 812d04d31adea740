"""Client connections on a listener: counted per client, capped, and watched for their end.

aiohttp's server keeps a connection open for as long as its peer likes, and accepts as
many as the kernel hands it: a few hundred idle sockets exhaust the process's descriptors,
and then the platform cannot call its bots.  :class:`ConnectionGuard` sits between the
event loop and aiohttp's protocol (:class:`GuardedListener` installs it), so that it sees
every connection from its first byte: beyond its client's share, a connection is answered
at once with 429 and closed; when every place is taken, the network holding the most gives
up its oldest connection (:class:`merknera.guard.holdings.Holdings`), and if none holds
more than the newcomer's, the newcomer is answered 503.  How long a connection may stay
without a request is aiohttp's ``keepalive_timeout``, which since 3.14 runs from the
connection's start too (see :meth:`merknera.guard.Guard.runner_options`).
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
from collections import Counter
from collections.abc import Callable, Mapping

from aiohttp import web

from merknera.guard.clients import client_key
from merknera.guard.holdings import FullError, Holdings
from merknera.guard.throttle import RateLimitedError
from merknera.refused import Limit, Refusals


def _refusal(status: int, reason: str, message: str, retry_after: int) -> bytes:
    body = json.dumps({"error": message}).encode()
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: {retry_after}\r\n"
            "Connection: close\r\n\r\n").encode() + body


_PER_CLIENT = _refusal(429, "Too Many Requests",
                       "too many connections from your address; close some first", 5)
_FULL = _refusal(503, "Service Unavailable", "too many connections; try again shortly", 5)


class ConnectionGuard:
    """Counts the connections of every listener it is installed on, and caps them."""

    def __init__(self, total: int, per_client: int, refusals: Refusals | None = None) -> None:
        self.holdings: Holdings[asyncio.BaseTransport] = Holdings(total, per_client,
                                                                  "connections")
        self.refusals = Refusals() if refusals is None else refusals
        """Where the connections refused are counted."""
        self._closed: dict[asyncio.BaseTransport, asyncio.Future[None]] = {}
        """Each open connection's end."""
        self._listening: Counter[str] = Counter()
        """Open connections by the name of their listener."""

    @property
    def total(self) -> int:
        """Connections open at once, at most (set from the descriptor budget at start)."""
        return self.holdings.total

    @total.setter
    def total(self, value: int) -> None:
        self.holdings.total = value

    @property
    def open(self) -> int:
        """Connections open now."""
        return len(self._closed)

    def open_from(self, client: str) -> int:
        """Connections one client holds open now."""
        return self.holdings.held(client)

    def open_by_listener(self) -> Mapping[str, int]:
        """Connections open now, by the name of the listener that accepted them (every
        listener that has accepted one, with 0 once they are closed)."""
        return self._listening

    def protocol_factory(self, inner: Callable[[], asyncio.Protocol], listener: str = ""
                         ) -> Callable[[], asyncio.Protocol]:
        """A protocol factory for ``loop.create_server`` that guards ``inner``'s; its
        connections are counted under the name ``listener``."""
        return lambda: _GuardedProtocol(self, inner(), listener)

    def _admit(self, transport: asyncio.BaseTransport, listener: str) -> bool:
        peer = transport.get_extra_info("peername")
        client = client_key(peer[0] if isinstance(peer, tuple) and peer else None)
        try:
            # A connection turned out for another network's newcomer is reset: it has no
            # request under way worth finishing more than the newcomer's first.
            self.holdings.take(client, transport, transport.abort
                               if isinstance(transport, asyncio.Transport) else transport.close)
        except (RateLimitedError, FullError) as exc:
            per_client = isinstance(exc, RateLimitedError)
            self.refusals.count(Limit.CONNECTIONS_PER_CLIENT if per_client
                                else Limit.CONNECTIONS_FULL)
            if isinstance(transport, asyncio.WriteTransport):
                transport.write(_PER_CLIENT if per_client else _FULL)
            transport.close()
            return False
        self._closed[transport] = asyncio.get_running_loop().create_future()
        self._listening[listener] += 1
        return True

    def _release(self, transport: asyncio.BaseTransport, listener: str) -> None:
        self._listening[listener] -= 1
        self.holdings.give_back(transport)
        closed = self._closed.pop(transport, None)
        if closed is not None and not closed.done():
            closed.set_result(None)

    def gone(self, request: web.BaseRequest) -> asyncio.Future[None]:
        """A future done as soon as the request's client has disconnected (never, for a
        connection the guard is not installed on: a test server's)."""
        transport = request.transport
        closed = None if transport is None else self._closed.get(transport)
        return closed if closed is not None else asyncio.get_running_loop().create_future()


class _GuardedProtocol(asyncio.Protocol):
    """Passes everything to aiohttp's protocol, once the guard has admitted the
    connection."""

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol, listener: str) -> None:
        self._guard = guard
        self._inner = inner
        self._listener = listener
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self._guard._admit(transport, self._listener):
            self._transport = transport
            self._inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._transport is not None:
            self._guard._release(self._transport, self._listener)
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


class GuardedListener:
    """A listening socket serving an aiohttp runner's server through a
    :class:`ConnectionGuard`.  aiohttp's sites serve the runner's protocol unguarded, so the
    server is made here from the runner's public ``server`` (after ``runner.setup()``);
    stop it before the runner's ``cleanup()``, which closes the connections."""

    BACKLOG = 128
    """Connections the kernel queues before they are accepted (aiohttp's sites' default)."""

    def __init__(self, runner: web.BaseRunner, sock: socket.socket, guard: ConnectionGuard,
                 ssl_context: ssl.SSLContext | None = None, name: str = "") -> None:
        self._runner, self._sock, self._guard, self._ssl = runner, sock, guard, ssl_context
        self.name = name
        """What its connections are counted under (:meth:`ConnectionGuard.open_by_listener`)."""
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        """Accept connections.

        :raises RuntimeError: when the runner was not set up.
        """
        server = self._runner.server
        if server is None:
            raise RuntimeError("the runner must be set up before its listener starts")
        self._server = await asyncio.get_running_loop().create_server(
            self._guard.protocol_factory(server, self.name), sock=self._sock, ssl=self._ssl,
            backlog=self.BACKLOG)

    def stop(self) -> None:
        """Accept no more connections (those open stay, for the runner to close)."""
        if self._server is not None:
            self._server.close()
            self._server = None

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

On a TLS listener the guard admits each connection as it is accepted, before its
handshake, which has that time too: a handshake that never ends holds its client's place
meanwhile, and no more than its share of them are under way.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import ssl
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from aiohttp import web

from merknera.guard.clients import client_key
from merknera.guard.forwarded import Proxies
from merknera.guard.holdings import FullError, Holdings
from merknera.guard.throttle import RateLimitedError
from merknera.refused import Limit, Refusals

log = logging.getLogger(__name__)


def _refusal(status: int, reason: str, message: str, retry_after: int) -> bytes:
    body = json.dumps({"error": message}).encode()
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: {retry_after}\r\n"
            "Connection: close\r\n\r\n").encode() + body


_PER_CLIENT = _refusal(429, "Too Many Requests",
                       "too many connections from your address; close some first", 5)
_FULL = _refusal(503, "Service Unavailable", "too many connections; try again shortly", 5)


class ConnectionGuard:
    """Counts the connections of every listener it is installed on, and caps them.

    A connection from a trusted proxy (``proxies``) carries many clients' requests, one
    after another: it counts against ``max_connections`` only, never against one
    client's share (the proxy is where each client's own connections are, and where
    they are capped).
    """

    def __init__(self, total: int, per_client: int, refusals: Refusals | None = None,
                 proxies: Proxies | None = None) -> None:
        self.holdings: Holdings[_GuardedProtocol] = Holdings(total, per_client, "connections")
        self.refusals = Refusals() if refusals is None else refusals
        """Where the connections refused are counted."""
        self.proxies = Proxies(()) if proxies is None else proxies
        """The peers whose connections are not capped per client."""
        self._closed: dict[asyncio.BaseTransport, asyncio.Future[None]] = {}
        """Each connection's end, by the transport its application uses."""
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
        """Connections open now (those still in their TLS handshake too)."""
        return len(self.holdings)

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

    def _admit(self, protocol: _GuardedProtocol, address: str | None) -> bytes | None:
        """Count a new connection from ``address``: None when it may go on, else the
        answer it is refused with."""
        try:
            # A connection turned out for another network's newcomer is reset: it has no
            # request under way worth finishing more than the newcomer's first.
            self.holdings.take(client_key(address), protocol, protocol.abort,
                               capped=not self.proxies.trusts(address))
        except (RateLimitedError, FullError) as exc:
            per_client = isinstance(exc, RateLimitedError)
            self.refusals.count(Limit.CONNECTIONS_PER_CLIENT if per_client
                                else Limit.CONNECTIONS_FULL)
            return _PER_CLIENT if per_client else _FULL
        self._listening[protocol.listener] += 1
        return None

    def _connected(self, transport: asyncio.BaseTransport) -> None:
        """The application has the connection, through ``transport``."""
        self._closed[transport] = asyncio.get_running_loop().create_future()

    def _release(self, protocol: _GuardedProtocol,
                 transport: asyncio.BaseTransport | None) -> None:
        """The connection has ended; ``transport`` is its application's, if it had one."""
        self._listening[protocol.listener] -= 1
        self.holdings.give_back(protocol)
        closed = None if transport is None else self._closed.pop(transport, None)
        if closed is not None and not closed.done():
            closed.set_result(None)

    def gone(self, request: web.BaseRequest) -> asyncio.Future[None]:
        """A future done as soon as the request's client has disconnected (never, for a
        connection the guard is not installed on: a test server's)."""
        transport = request.transport
        closed = None if transport is None else self._closed.get(transport)
        return closed if closed is not None else asyncio.get_running_loop().create_future()


def _peer(address: object) -> str | None:
    """The host of a socket address (None for one that is not an IP address's)."""
    return address[0] if isinstance(address, tuple) and address else None


class _GuardedProtocol(asyncio.Protocol):
    """Passes everything to aiohttp's protocol, once the guard has admitted the
    connection: as its transport is made (plain HTTP), or as it is accepted, before its
    TLS handshake (:meth:`start_tls`)."""

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol, listener: str) -> None:
        self._guard = guard
        self._inner = inner
        self.listener = listener
        self._admitted = False
        self._connected: asyncio.BaseTransport | None = None
        """The transport the application uses, once it has the connection."""
        self._lost = False
        self._handshake: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if not self._admitted:
            refusal = self._guard._admit(self, _peer(transport.get_extra_info("peername")))
            if refusal is not None:
                if isinstance(transport, asyncio.WriteTransport):
                    transport.write(refusal)
                transport.close()
                return
            self._admitted = True
        self._connected = transport
        self._guard._connected(transport)
        self._inner.connection_made(transport)

    def start_tls(self, sock: socket.socket, address: object, tls: Handshakes) -> bool:
        """Admit the connection accepted on ``sock``, and start its TLS handshake; False
        when it is refused (``sock`` is closed then: a TLS client would not understand an
        answer)."""
        if self._guard._admit(self, _peer(address)) is not None:
            sock.close()
            return False
        self._admitted = True
        tls.under_way.add(self)
        self._handshake = asyncio.get_running_loop().create_task(self._handshake_on(sock, tls))
        return True

    async def _handshake_on(self, sock: socket.socket, tls: Handshakes) -> None:
        try:
            await asyncio.get_running_loop().connect_accepted_socket(
                lambda: self, sock, ssl=tls.context, ssl_handshake_timeout=tls.timeout)
        except OSError as exc:  # no handshake: refused, reset, too slow (the socket is closed)
            self.connection_lost(exc)
        except asyncio.CancelledError:  # turned out, or the listener stopped
            self.connection_lost(None)
            raise
        except Exception as exc:  # a handshake that failed otherwise: its place is given back
            log.warning("a TLS handshake failed: %s: %s", type(exc).__name__, exc)
            sock.close()
            self.connection_lost(exc)
        finally:
            tls.under_way.discard(self)
        if self._connected is None:  # reset during the handshake
            self.connection_lost(None)

    def abort(self) -> None:
        """Reset the connection (in its handshake, or the application's)."""
        if isinstance(self._connected, asyncio.Transport):
            self._connected.abort()
        elif self._handshake is not None:
            self._handshake.cancel()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._lost or not self._admitted:
            return
        self._lost = True
        self._guard._release(self, self._connected)
        if self._connected is not None:
            self._inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._connected is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._connected is not None else None

    def pause_writing(self) -> None:
        if self._connected is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._connected is not None:
            self._inner.resume_writing()


@dataclass
class Handshakes:
    """How a listener's connections start TLS, and those still in their handshake."""

    context: ssl.SSLContext
    timeout: float
    """Seconds a client has to complete its handshake."""
    under_way: set[_GuardedProtocol] = field(default_factory=set)

    def abort(self) -> None:
        """Reset every connection still in its handshake (the listener stops)."""
        for protocol in list(self.under_way):
            protocol.abort()


ACCEPT_RETRY_SECONDS = 1.0
"""How long a TLS listener waits to accept again after accepting failed (no descriptor
left, as asyncio's own servers wait)."""


class GuardedListener:
    """A listening socket serving an aiohttp runner's server through a
    :class:`ConnectionGuard`, over TLS when given a context.  aiohttp's sites serve the
    runner's protocol unguarded, so the server is made here from the runner's public
    ``server`` (after ``runner.setup()``); stop it before the runner's ``cleanup()``,
    which closes the connections.

    A TLS listener accepts its connections itself, so that the guard admits each before
    its handshake, and starts TLS on it with ``loop.connect_accepted_socket``.
    """

    BACKLOG = 128
    """Connections the kernel queues before they are accepted (aiohttp's sites' default)."""

    def __init__(self, runner: web.BaseRunner, sock: socket.socket, guard: ConnectionGuard,
                 ssl_context: ssl.SSLContext | None = None, name: str = "",
                 handshake_timeout: float = 60.0) -> None:
        self._runner, self._sock, self._guard = runner, sock, guard
        self._tls = None if ssl_context is None else Handshakes(ssl_context,
                                                                handshake_timeout)
        self.name = name
        """What its connections are counted under (:meth:`ConnectionGuard.open_by_listener`)."""
        self._server: asyncio.Server | None = None
        self._accepting: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Accept connections.

        :raises RuntimeError: when the runner was not set up.
        """
        server = self._runner.server
        if server is None:
            raise RuntimeError("the runner must be set up before its listener starts")
        if self._tls is None:
            self._server = await asyncio.get_running_loop().create_server(
                self._guard.protocol_factory(server, self.name), sock=self._sock,
                backlog=self.BACKLOG)
            return
        self._sock.listen(self.BACKLOG)
        self._accepting = asyncio.get_running_loop().create_task(
            self._accept(server, self._tls), name=f"accept-{self.name}")

    async def _accept(self, server: web.Server, tls: Handshakes) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, address = await loop.sock_accept(self._sock)
            except OSError as exc:
                log.warning("the %s listener could not accept a connection (%s); it tries "
                            "again in %g s", self.name or "main", exc, ACCEPT_RETRY_SECONDS)
                await asyncio.sleep(ACCEPT_RETRY_SECONDS)
                continue
            sock.setblocking(False)
            _GuardedProtocol(self._guard, server(), self.name).start_tls(sock, address, tls)

    def stop(self) -> None:
        """Accept no more connections, and reset those still in their TLS handshake (those
        open stay, for the runner to close)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._accepting is not None:
            self._accepting.cancel()
            self._accepting = None
        if self._tls is not None:
            self._tls.abort()

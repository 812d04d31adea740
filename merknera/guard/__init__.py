"""What every listener of the platform does to keep one client from taking it over.

One :class:`Guard` per platform process holds the per-client limits, and every listener
(``/rpc``, the API and pages, and the gateways that speak the other arenas' protocols)
uses the same one:

* who the client is: its address, or behind a trusted proxy the address the proxy names
  (:meth:`Guard.forwarded`, the first middleware of every listener; :meth:`Guard.caller`);
* requests: :meth:`Guard.middleware` caps how many one client sends a second;
* connections: :class:`ConnectionGuard` caps them per client and in all, and aiohttp's
  ``keepalive_timeout`` (:meth:`Guard.runner_options`) closes those that send no request;
* request bodies: :meth:`Guard.read_body` reads them within a size and a time limit;
* long-lived streams: :meth:`Guard.stream` gives each its place among
  :attr:`Guard.streams` (capped per client and in all) and a send timeout;
* tokens: :attr:`Guard.auth` slows down a client that sends wrong ones (HTTP 429);
* requests a page of another origin could make a visitor's browser send unasked:
  :func:`merknera.guard.crosssite.middleware` refuses them (415, 403) on every listener.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from aiohttp import web

from merknera.config import Config
from merknera.guard.bodies import BodyError, read_body
from merknera.guard.clients import CALLER, Caller, client_key, same_host
from merknera.guard.connections import ConnectionGuard, GuardedListener
from merknera.guard.forwarded import Proxies
from merknera.guard.holdings import FullError, Holdings
from merknera.guard.streams import Stream, StreamEndedError
from merknera.guard.throttle import AuthThrottle, Buckets, RateLimitedError
from merknera.refused import Limit, Refusals

T = TypeVar("T")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

__all__ = [
    "GUARD_KEY",
    "AuthThrottle",
    "BodyError",
    "Caller",
    "ConnectionGuard",
    "FullError",
    "Guard",
    "GuardedListener",
    "Holdings",
    "Proxies",
    "RateLimitedError",
    "Stream",
    "StreamEndedError",
    "client_key",
    "same_host",
    "too_many",
]


def too_many(error: RateLimitedError) -> web.HTTPTooManyRequests:
    """The HTTP 429 answer (a JSON body, ``Retry-After``) to a refused attempt."""
    return web.HTTPTooManyRequests(
        text=json.dumps({"error": error.message}), content_type="application/json",
        headers={"Retry-After": error.retry_after_header})


class Guard:
    """The per-client limits of every listener of one platform process."""

    def __init__(self, config: Config) -> None:
        self.config = config
        """Where the limits come from: the keys of the same names."""
        self.refusals = Refusals()
        """The clients each limit refused (these and the platform's other limits')."""
        self.proxies = Proxies.of(config.listeners)
        """The trusted proxies, whose forwarding headers name a request's client."""
        self.connections = ConnectionGuard(config.limits.max_connections,
                                           config.limits.max_connections_per_client,
                                           self.refusals, self.proxies)
        self.auth = AuthThrottle(config.limits.auth_failure_burst,
                                 config.limits.auth_failure_interval, self.refusals)
        self.requests = Buckets(config.limits.request_burst, 1.0 / config.limits.request_rate)
        """Requests per client: a client that sends more than its share is answered 429,
        so that one client cannot keep the event loop (whose lag every move deadline
        feels) to itself."""
        self.streams: Holdings[Stream] = Holdings(config.limits.max_streams,
                                                  config.limits.max_streams_per_client,
                                                  "live streams")
        """The live streams of every listener (server-sent events, the hexagons observers'
        streams), each in its place (:meth:`stream`)."""

    @web.middleware
    async def forwarded(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Who sent the request (:meth:`caller`); behind a trusted proxy, the request as
        its client sent it: ``request.remote`` the client's address and
        ``request.scheme`` the client's scheme, for every middleware and handler after
        this one (the first of every listener's)."""
        found = self.proxies.resolve(request.remote, request.headers)
        if found is None:
            request[CALLER] = Caller(request.remote)
            return await handler(request)
        if found.address is None:  # a proxy's request that does not say whose it is
            request[CALLER] = Caller(None, via=request.remote)
        else:
            request[CALLER] = Caller(found.address)
        remote = found.address or request.remote
        if remote is None or (remote == request.remote
                              and found.scheme in (None, request.scheme)):
            return await handler(request)
        return await handler(request.clone(remote=remote,
                                           scheme=found.scheme or request.scheme))

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """The per-client request rate of a listener's application (429 beyond it)."""
        self.count_request(request)
        return await handler(request)

    def count_request(self, request: web.BaseRequest) -> None:
        """Count a request against its client's rate (:meth:`middleware` counts every
        request that reaches the application's handlers).

        :raises web.HTTPTooManyRequests: beyond the rate.
        """
        wait = self.requests.take(self.client(request))
        if wait > 0:
            self.refusals.count(Limit.REQUEST_RATE)
            raise too_many(RateLimitedError(
                "too many requests from your address; slow down", wait))

    @staticmethod
    def caller(request: web.BaseRequest) -> Caller:
        """Who sent the request: its client's address as :meth:`forwarded` found it (the
        peer's, for a request that did not pass it)."""
        found = request.get(CALLER)
        return found if found is not None else Caller(request.remote)

    @classmethod
    def client(cls, request: web.BaseRequest) -> str:
        """The key the request's client is counted under."""
        return cls.caller(request).client

    def runner_options(self) -> dict[str, Any]:
        """Keyword arguments for an ``AppRunner`` serving a listener.

        aiohttp's keep-alive timer runs from a connection's start and from the end of
        each response, and closes the connection if no whole request head has arrived by
        then: it is the timeout for idle, kept-alive and slowly-sent heads alike.  After
        answering a request whose body was not read to its end (refused as too large or
        too slow), aiohttp reads on for ``lingering_time`` so that the client sees the
        answer: a short while, or a slow client would keep the connection that long.

        Bodies are never inflated: aiohttp would inflate a gzip body as it arrives, on the
        event loop, whatever the handler reads of it (a few hundred KiB of gzip inflate to
        hundreds of MiB), and no protocol here sends compressed bodies
        (:func:`merknera.guard.bodies.read_body` refuses them).
        """
        return {"keepalive_timeout": self.config.limits.idle_timeout,
                "lingering_time": min(LINGERING_SECONDS, self.config.limits.idle_timeout),
                "auto_decompress": False}

    def listener(self, runner: web.BaseRunner, sock: socket.socket,
                 ssl_context: ssl.SSLContext | None = None, name: str = "") -> GuardedListener:
        """A listener serving ``runner`` (set up) on the listening socket ``sock``, guarded,
        over TLS when ``ssl_context`` is given (the handshake within ``idle_timeout``);
        its connections are counted under ``name``."""
        return GuardedListener(runner, sock, self.connections, ssl_context, name,
                               self.config.limits.idle_timeout)

    @contextlib.contextmanager
    def stream(self, request: web.BaseRequest) -> Iterator[Stream]:
        """A live stream's place for the request's client among :attr:`streams`, held
        until the block ends: the stream must end when the place goes to another
        network's newcomer or the client leaves (:attr:`Stream.ends`), and its writes
        have ``stream_send_timeout`` (:meth:`Stream.send`).

        :raises RateLimitedError: when the client holds ``max_streams_per_client``.
        :raises FullError: when all ``max_streams`` are taken and nobody can make room.
        """
        stream = Stream(request.transport, self.connections.gone(request),
                        self.config.limits.stream_send_timeout)
        try:
            self.streams.take(self.client(request), stream, stream.turn_out)
        except RateLimitedError:
            self.refusals.count(Limit.STREAMS_PER_CLIENT)
            raise
        except FullError:
            self.refusals.count(Limit.STREAMS_FULL)
            raise
        try:
            yield stream
        finally:
            self.streams.give_back(stream)

    async def read_body(self, request: web.BaseRequest, limit: int) -> bytes:
        """The request's body, at most ``limit`` bytes, within ``body_timeout``.

        :raises BodyError: with the status to answer and why.
        """
        return await read_body(request, limit, self.config.limits.body_timeout)

    async def verify_token(self, request: web.BaseRequest, token: str,
                           lookup: Callable[[str], Awaitable[T | None]]) -> T | None:
        """:meth:`AuthThrottle.verify` for a request's client; 429 when it must wait."""
        try:
            return await self.auth.verify(self.client(request), token, lookup)
        except RateLimitedError as exc:
            raise too_many(exc) from None


LINGERING_SECONDS = 2.0
"""How long a connection is read on after answering a request whose body was left unread."""

GUARD_KEY: web.AppKey[Guard] = web.AppKey("guard", Guard)
"""Where an application keeps its platform's :class:`Guard`."""

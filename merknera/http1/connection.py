"""One HTTP/1.1 connection to a bot: it sends a request, parses the reply with llhttp
(``httptools``), and says precisely what went wrong (see :mod:`merknera.http1`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import httptools

from merknera import stalls

MAX_HEAD = 64 * 1024
"""Bytes of status line and headers accepted before a reply counts as not HTTP."""

FRAMING = 64 * 1024
"""Bytes a reply may spend on framing beyond its head and body (chunk sizes and their
extensions): past ``MAX_HEAD + 2 * cap + FRAMING`` bytes in all a reply is refused."""


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
class Reply:
    """A whole HTTP reply."""

    status: int
    body: bytes


class Connection(asyncio.Protocol):
    """One connection: sends a request, parses its reply (llhttp calls the ``on_*``)."""

    def __init__(self, key: tuple[bool, str, int],
                 on_lost: Callable[[Connection], None]) -> None:
        self._on_lost = on_lost
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
        self.counted = False
        """Whether this connection counts against the pool's limit (from the moment the
        pool has it whole, until its end is seen once)."""
        self.closed = False
        self._timer: asyncio.TimerHandle | None = None
        self._due: stalls.Due | None = None
        """When the reply to the request under way is due (after the platform's own
        stalls, looked for again)."""
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
            self.close()
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
        elif self._received > MAX_HEAD + 2 * self._cap + FRAMING:
            # Endless chunk extensions or zeros cost no memory, but no end either.
            self._fail(ReplyTooLargeError())

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        self.closed = True
        self.reusable = False
        self._on_lost(self)
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._headers_done and self._until_eof and exc is None:
            self._complete()  # the body was everything up to the (clean) end of the stream
            return
        error: HttpError = (ConnectionLostError(_why(exc)) if self._received == 0
                            else BrokenReplyError(_why(exc)))
        error.__cause__ = exc  # the OS's reason (the caller tells a shortage of its own)
        waiter.set_exception(error)

    # -- llhttp's callbacks -------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self._waiter is not None and self._waiter.done():
            # Another reply after the whole one, in the same read: not a stream to reuse.
            self.reusable = False

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._headers_done:
            # A trailer after a chunked body: no limit would hold its size (llhttp keeps
            # adding to one value), and no bot needs one.
            self._stop(InvalidReplyError("it has a trailer after its chunked body"))
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
        if self._waiter is not None and self._waiter.done():
            self.reusable = False  # a second whole reply in the same read
            return
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
        if self.closed or self.transport.is_closing():
            raise ConnectionLostError("the connection had closed")  # (uvloop would raise)
        self._reset()
        self._cap = cap
        self.reusable = False
        loop = asyncio.get_running_loop()
        self._waiter = loop.create_future()
        # A timer of the connection's own, not asyncio.timeout around the await: the same
        # deadline for a fraction of the cost, on the path every move takes.
        self._due = stalls.Due(deadline)
        self._timer = loop.call_at(deadline, self._expire)
        self.transport.write(data)
        return self._waiter

    def _expire(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None and self._due is not None:
            loop = asyncio.get_running_loop()
            if not self._due.look(loop.time()):
                self._timer = loop.call_at(self._due.at, self._expire)
                return
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
        self.close()

    def close(self) -> None:
        """Close at once (nothing more is read or sent)."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()


def _why(exc: BaseException | None) -> str:
    return "the other side closed the connection" if exc is None else (
        type(exc).__name__ if not isinstance(exc, OSError) or not exc.strerror
        else exc.strerror)

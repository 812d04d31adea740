"""A live stream's place (server-sent events, the hexagons observers' stream): what ends
it, and how it sends; and how any long answer is written (:func:`in_time`).

Every live stream of every listener holds a place among :attr:`merknera.guard.Guard.
streams` while it runs (:meth:`merknera.guard.Guard.stream`).  It must end when its place
is given to another network's newcomer (every place taken), and when its client leaves
(noticed at once, so that the place is free again at once).  A client that does not take
what it is sent within ``stream_send_timeout`` is cut off: its connection is reset, so
that neither the place, the connection nor what is queued for the client outlives the
timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

from aiohttp import web

T = TypeVar("T")

PIECE = 256 * 1024
"""Bytes written at once to a client of a long answer or a live stream, each write within
the send timeout (``stream_send_timeout``)."""


class StreamEndedError(ConnectionResetError):
    """The stream must end: its place went to a newcomer, its client left, or its client
    does not read what it is sent.  A :class:`ConnectionResetError`, as aiohttp's write to
    a client that left is, so that a stream ends the same way whichever came first."""


class Stream:
    """One live stream's place, from its start to its end."""

    def __init__(self, transport: asyncio.Transport | None, gone: asyncio.Future[None],
                 send_timeout: float) -> None:
        self._transport = transport
        self._turned_out: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._send_timeout = send_timeout
        self.ends: tuple[asyncio.Future[None], ...] = (self._turned_out, gone)
        """Done when the stream must end: its place went to a newcomer, its client left."""

    def turn_out(self) -> None:
        """The stream's place went to another network's newcomer (the turn-out action its
        :class:`~merknera.guard.holdings.Holdings` place was taken with)."""
        if not self._turned_out.done():
            self._turned_out.set_result(None)

    @property
    def turned_out(self) -> bool:
        """Whether the stream's place went to a newcomer."""
        return self._turned_out.done()

    def done(self) -> bool:
        """Whether the stream must end."""
        return any(future.done() for future in self.ends)

    async def wait(self, awaitable: Awaitable[T]) -> T:
        """``awaitable``'s result, while the stream may go on (``awaitable`` is cancelled
        should the stream have to end first).

        :raises StreamEndedError: when the stream must end first.
        """
        waited = asyncio.ensure_future(awaitable)
        either: set[asyncio.Future[Any]] = {waited, *self.ends}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not waited.done():
                waited.cancel()
        if not waited.done() or waited.cancelled():
            raise StreamEndedError(self._why())
        return waited.result()

    async def send(self, response: web.StreamResponse, data: bytes) -> None:
        """Write ``data`` to the stream within the send timeout.

        :raises StreamEndedError: when the stream must end, or its client did not take
            ``data`` in time (its connection is then reset); :class:`ConnectionResetError`
            when the client has gone.
        """
        if self.done():
            raise StreamEndedError(self._why())
        await in_time(response.write(data), self._send_timeout, self._transport)

    async def end(self, response: web.StreamResponse) -> None:
        """End the response (its last chunk) within the send timeout, which aiohttp would
        otherwise wait for as long as the client does not read; the connection is reset if
        the client does not take it in time.  Nothing to do if the client has gone."""
        with contextlib.suppress(ConnectionResetError):
            await in_time(response.write_eof(), self._send_timeout, self._transport)

    def _why(self) -> str:
        if self.turned_out:
            return "the stream's place went to another client"
        return "the client has gone"


async def in_time(write: Awaitable[None], seconds: float,
                  transport: asyncio.Transport | None) -> None:
    """``write`` (of a response to its client) done within ``seconds``; if the client does
    not take it in time, its connection is reset: what is queued for it is dropped, the
    connection's place is free (``connection_lost``), and a write waiting for it fails.

    :raises StreamEndedError: when the client did not take it in time;
        :class:`ConnectionResetError` when it has gone.
    """
    try:
        async with asyncio.timeout(seconds):
            await write
    except TimeoutError:
        if transport is not None:
            transport.abort()
        raise StreamEndedError("the client does not read what it is sent") from None

"""A client's WebSocket as every listener holds it: what is sent to the client is queued and
written in order by one task, so that sending never waits, and a client that does not read
its socket holds up only its own writer, and only so much of the platform's memory."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

from aiohttp import WSMsgType, web

from merknera.games import JSONObject

log = logging.getLogger(__name__)

CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
"""The platform is done with the client for now (its game ended without a final state, or
the platform stopped)."""
CLOSE_POLICY = 1008
"""The client broke a rule (too many messages, never logged in or registered)."""
CLOSE_REPLACED = 4000
"""A newer connection of the same client replaced this one."""

HEARTBEAT_SECONDS = 30.0
"""How often a listener pings a quiet socket (WebSocket pings): one whose pong does not
come is closed."""

MAX_QUEUED = 256
"""Messages queued for a client that it has not read, at most."""
MAX_QUEUED_BYTES = 8 * 1024 * 1024
"""Bytes queued for a client that it has not read, at most."""
FLUSH_SECONDS = 2.0
"""How long the last messages to a client (a refusal, a final state) may take."""


class ClientSocket:
    """A client's WebSocket, its messages queued and written in order by one task.

    A client that lets :data:`MAX_QUEUED` messages or :data:`MAX_QUEUED_BYTES` bytes pile
    up unread loses the connection at once.
    """

    def __init__(self, ws: web.WebSocketResponse, peer: str,
                 abort: Callable[[], None], name: str = "socket") -> None:
        self.ws = ws
        self.peer = peer
        """The client's address key (:meth:`merknera.guard.Guard.client`)."""
        self._abort = abort
        self.closed = asyncio.Event()
        """Set once the socket is closing or closed, by either side: nothing more is sent,
        and whoever waits on the client stops waiting."""
        self.ended: str | None = None
        """Why the platform closed the socket, if it did (for the client's log)."""
        self._on_close: list[Callable[[], None]] = []
        self._outbox: asyncio.Queue[bytes | tuple[int, str]] = asyncio.Queue()
        self._queued_bytes = 0
        self._writer = asyncio.create_task(self._write(), name=f"{name}-writer-{peer}")

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once, when the socket starts closing (at once if it has)."""
        if self.closed.is_set():
            callback()
        else:
            self._on_close.append(callback)

    def _closing(self) -> None:
        if not self.closed.is_set():
            self.closed.set()
            callbacks, self._on_close = self._on_close, []
            for callback in callbacks:
                callback()

    @property
    def queued_bytes(self) -> int:
        """Bytes queued for the client and not yet written to its connection."""
        return self._queued_bytes

    def send(self, message: JSONObject | bytes) -> None:
        """Queue a text frame: a JSON object, or the UTF-8 JSON text of one."""
        if self.closed.is_set():
            return
        data = message if isinstance(message, bytes) else json.dumps(
            message, separators=(",", ":")).encode()
        if (self._outbox.qsize() >= MAX_QUEUED
                or self._queued_bytes + len(data) > MAX_QUEUED_BYTES):
            log.info("a client at %s does not read its socket; cut off", self.peer)
            self.ended = "the platform cut it off: it did not read its socket"
            self._closing()
            self._abort()
            return
        self._queued_bytes += len(data)
        self._outbox.put_nowait(data)

    def close(self, code: int = CLOSE_NORMAL, reason: str = "") -> None:
        """Close the socket once the messages queued before are written; ``reason`` goes
        in the close frame (at most 123 bytes of it, as the frame allows)."""
        if not self.closed.is_set():
            self.ended = f"the platform closed it ({code}{': ' + reason if reason else ''})"
            self._closing()
            self._outbox.put_nowait((code, _close_reason(reason)))

    async def _write(self) -> None:
        try:
            while True:
                item = await self._outbox.get()
                if isinstance(item, tuple):
                    code, reason = item
                    await self.ws.close(code=code, message=reason.encode())
                    break
                self._queued_bytes -= len(item)
                await self.ws.send_frame(item, WSMsgType.TEXT)
        except (ConnectionError, RuntimeError):
            pass  # the client went away; the reader sees it too
        finally:
            self._closing()

    async def finish(self) -> None:
        """The socket is done with (the client left, or was sent away): write what is
        queued (a little while at most), close it, and stop the writer."""
        self.close()
        try:
            async with asyncio.timeout(FLUSH_SECONDS):
                await asyncio.shield(self._writer)
        except TimeoutError:
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
        if not self.ws.closed:
            await self.ws.close()


def _close_reason(reason: str) -> str:
    """``reason`` cut to fit a close frame (123 bytes of UTF-8), on a character's edge."""
    data = reason.encode()
    if len(data) <= 123:
        return reason
    return data[:120].decode(errors="ignore") + "..."

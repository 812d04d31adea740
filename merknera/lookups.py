"""Host names to addresses, on threads of the platform's own.

The system's resolver (``getaddrinfo``) blocks a thread until it answers, up to its own
time-outs (5 s a try on Linux, and it tries again).  The event loops lend it their shared
threads: uvloop's four libuv workers, asyncio's default executor.  So a few bots whose
names resolve slowly (a dead name server, on purpose or not) would hold every one of
those threads, and every other lookup of the process would wait behind them: the
endpoints of every other bot, every registration's check.

Here each lookup runs on :data:`THREADS` daemon threads kept for lookups alone, and a name
being looked up is looked up once: its other callers wait for the same answer, so the
threads are held by distinct names only.  A caller's time limit ends its own wait, not the
lookup.  Daemon threads, because a lookup still blocked must not hold up the process's
exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import socket
import threading
from collections.abc import Callable
from typing import Any

from merknera.threads import as_helper

_Key = tuple[asyncio.AbstractEventLoop, str, int, int, int]
"""A lookup in flight: the loop waiting for it, host, port, family and flags."""

THREADS = 8
"""Lookups that may block at once; more wait for a thread."""

AddrInfo = tuple[int, int, int, str, tuple[Any, ...]]
"""One entry of ``getaddrinfo``: family, type, proto, canonical name, socket address."""
Lookup = Callable[[str, int, int, int], list[AddrInfo]]
"""``getaddrinfo`` for (host, port, family, flags), stream sockets only."""


def system_lookup(host: str, port: int, family: int, flags: int) -> list[AddrInfo]:
    """The system resolver's answer for stream sockets."""
    found = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM, 0, flags)
    return [(int(kind), int(kind_of_socket), proto, name, tuple(address))
            for kind, kind_of_socket, proto, name, address in found]


class Lookups:
    """Lookups on :data:`THREADS` threads of their own, one at a time per name."""

    def __init__(self, threads: int = THREADS, lookup: Lookup = system_lookup) -> None:
        if threads < 1:
            raise ValueError("threads must be at least 1")
        self._size = threads
        self._lookup = lookup
        self._work: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._started = 0
        self._lock = threading.Lock()
        self._pending: dict[_Key, asyncio.Future[list[AddrInfo]]] = {}

    async def getaddrinfo(self, host: str, port: int = 0, family: int = socket.AF_UNSPEC,
                          flags: int = 0) -> list[AddrInfo]:
        """``getaddrinfo(host, port, family, SOCK_STREAM, 0, flags)``, shared with the
        callers already waiting for the same name.

        :raises OSError: (``socket.gaierror``) if it does not resolve.
        """
        loop = asyncio.get_running_loop()
        key = (loop, host, port, family, flags)
        shared = self._pending.get(key)
        if shared is None:
            shared = self._pending[key] = loop.create_future()
            shared.add_done_callback(lambda done: self._settled(key, done))
            self._submit(loop, shared, key)
        # Shielded: a caller that gives up leaves the answer to the others.
        return await asyncio.shield(shared)

    def _submit(self, loop: asyncio.AbstractEventLoop, answer: asyncio.Future[list[AddrInfo]],
                key: _Key) -> None:
        _, host, port, family, flags = key

        def work() -> None:
            try:
                found = self._lookup(host, port, family, flags)
            except Exception as exc:  # handed to the waiting callers
                _deliver(loop, answer, None, exc)
            else:
                _deliver(loop, answer, found, None)

        self._work.put(work)
        with self._lock:
            if self._started < self._size:
                self._started += 1
                threading.Thread(target=self._serve, name="merknera-lookup",
                                 daemon=True).start()

    def _serve(self) -> None:
        as_helper()
        while True:
            self._work.get()()

    def _settled(self, key: _Key, done: asyncio.Future[list[AddrInfo]]) -> None:
        if self._pending.get(key) is done:
            del self._pending[key]
        if not done.cancelled():
            done.exception()  # retrieved: every caller may have given up


def _deliver(loop: asyncio.AbstractEventLoop, answer: asyncio.Future[list[AddrInfo]],
             found: list[AddrInfo] | None, error: Exception | None) -> None:
    """Settle ``answer`` on its loop's thread (nothing, if that loop has closed)."""
    def settle() -> None:
        if answer.done():
            return
        if error is not None:
            answer.set_exception(error)
        else:
            answer.set_result(found or [])

    with contextlib.suppress(RuntimeError):  # the loop closed while the name was looked up
        loop.call_soon_threadsafe(settle)


LOOKUPS = Lookups()
"""The process's lookups (its threads start with the first lookup)."""

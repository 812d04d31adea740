"""Work a request may make the platform do that costs more than a few milliseconds of CPU
(rebuilding a replay, decoding a game's stored calls, rebuilding a gateway's stored game):
done off the event loop, on threads of its own, a bounded number at once, each within a
time limit.

A thread running pure Python holds the GIL, so the event loop's thread waits for it each
time it wants the GIL back (up to the interpreter's switch interval with one such thread,
and far longer with several contending).  Hence one worker thread by default, and a line
in front of it that nobody passes:

- A request that may need such work takes its :class:`Place` first, before it waits for
  anything (a game's frames another request is extending, a turn to read from the store,
  a worker) or reads what the work needs: a client may hold :data:`PER_CLIENT` places (429
  beyond), the platform :data:`PLACES` (503 beyond).  Whatever the place then waits for,
  it waits :data:`WAIT_LIMIT` seconds at most in all (503 after).
- A job for a worker waits in a short line (:data:`WAITING` beyond those running; 503
  when it is full) and gets a :class:`Deadline` when it starts, which it checks as it goes
  (a thread cannot be stopped from outside): past it, the job stops and raises
  :class:`TimeLimitError`, keeping what it made where it can (a replay keeps its frames
  and goes on from there next time).

Work small enough (a few rows, a short log) is done at once on the loop by its caller, in
its place: never refused for a full line.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any, TypeVar

from merknera.refused import Limit, Refusals, RefusedError
from merknera.threads import as_helper

T = TypeVar("T")

WORKERS = 1
"""Jobs run at once."""
WAITING = 8
"""Jobs that may wait for a worker, beyond those running."""
PER_CLIENT = 8
"""Places one client may hold (the ``max_heavy_per_client`` of the platform's config)."""
PLACES = 64
"""Places held at once by all clients (and by the platform's own work: live streams' next
frames)."""
TIME_LIMIT = 2.0
"""Seconds a job may run."""
WAIT_LIMIT = 4.0
"""Seconds a place may wait in all for its turns (a game's frames, a read, a worker)."""
RETRY_AFTER = 2.0
"""Seconds a refused client is told to wait."""
READS = 2
"""Reads from the store for such work at once (a long game's move log, the longest read
the platform makes): the store's other connections stay free for everybody else."""
YIELD_EVERY = 0.0005
"""Seconds of a job's work between the moments it lets the event loop's thread have the
GIL (:class:`Deadline`)."""


class BusyError(RefusedError):
    """Work refused: its client holds its share of places (429), or the platform has as
    much such work as it may, or a turn did not come in time (503); the client is told to
    ask again after :data:`RETRY_AFTER` seconds."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status, message, RETRY_AFTER)


class TimeLimitError(Exception):
    """A job ran past its time limit and stopped."""


class Deadline:
    """When a job must stop (``None``: never, for work small enough to do on the loop).

    A job on a worker asks it often (every row, every frame), and each time a while has
    passed since the last, the worker lets go of the GIL for a moment (``pace``): the event
    loop's thread, which gives the GIL up at every read and write, would otherwise wait up
    to the interpreter's switch interval to get it back each time, and a loop iteration
    with many writes would wait many times over.
    """

    def __init__(self, seconds: float | None, pace: bool = False) -> None:
        self.seconds = seconds
        now = time.monotonic()
        self._at = None if seconds is None else now + seconds
        self._pace = pace
        self._next_yield = now + YIELD_EVERY

    def passed(self) -> bool:
        """Whether the job's time is up."""
        if self._pace:
            now = time.monotonic()
            if now >= self._next_yield:
                time.sleep(0)  # lets go of the GIL: a waiting thread takes it now
                self._next_yield = now + YIELD_EVERY
        return self._at is not None and time.monotonic() >= self._at

    def check(self) -> None:
        """:raises TimeLimitError: once the job's time is up."""
        if self.passed():
            raise TimeLimitError(f"the work took longer than its {self.seconds:g} s")


UNLIMITED = Deadline(None)
"""The deadline of work done at once on the event loop (small by the caller's measure)."""

_FULL = "the platform is making as many such answers as it may at once; ask again shortly"


class Work:
    """The places and the line of heavy jobs of one platform process, and the threads that
    run them."""

    def __init__(self, workers: int = WORKERS, waiting: int = WAITING,
                 per_client: int = PER_CLIENT, places: int = PLACES,
                 time_limit: float = TIME_LIMIT, wait_limit: float = WAIT_LIMIT,
                 refusals: Refusals | None = None) -> None:
        self.workers = workers
        self.waiting = waiting
        self.per_client = per_client
        self.places = places
        self.time_limit = time_limit
        self.wait_limit = wait_limit
        self.started = 0
        """Jobs started so far."""
        self.refusals = Refusals() if refusals is None else refusals
        """Where the work refused is counted."""
        self._executor: ThreadPoolExecutor | None = None
        self._slots: asyncio.Semaphore | None = None
        self._reads: asyncio.Semaphore | None = None
        self._held = 0
        self._placed = 0
        self._clients: Counter[str] = Counter()

    @property
    def held(self) -> int:
        """Jobs running or waiting for a worker now."""
        return self._held

    @property
    def placed(self) -> int:
        """Places held now."""
        return self._placed

    def place(self, client: str | None) -> Place:
        """A place for a request's work, taken now; give it back by leaving it (``async
        with``) once the answer is made, or sent.

        ``client`` (a :meth:`merknera.guard.Guard.client` key) counts the place against
        that client's share; None for work the platform owes a request it has taken
        already (a live stream's next frames).

        :raises BusyError: 429 when ``client`` holds :attr:`per_client` places already;
            503 when :attr:`places` are held.
        """
        if client is not None and self._clients[client] >= self.per_client:
            self.refusals.count(Limit.HEAVY_PER_CLIENT)
            raise BusyError(429, f"your address is waiting for {self.per_client} answers that "
                                 "take the platform a while to make; ask again once they came")
        if self._placed >= self.places:
            self.refusals.count(Limit.BUSY)
            raise BusyError(503, _FULL)
        self._placed += 1
        if client is not None:
            self._clients[client] += 1
        return Place(self, client)

    async def run(self, job: Callable[[Deadline], T], client: str | None = None) -> T:
        """``job(deadline)`` on a worker thread in a place of its own (:meth:`place`,
        :meth:`Place.run`); its result."""
        async with self.place(client) as place:
            return await place.run(job)

    def _give_back(self, client: str | None) -> None:
        self._placed -= 1
        if client is not None:
            self._clients[client] -= 1
            if self._clients[client] <= 0:
                del self._clients[client]

    def _semaphores(self) -> tuple[asyncio.Semaphore, asyncio.Semaphore]:
        if self._slots is None or self._reads is None:
            self._slots, self._reads = asyncio.Semaphore(self.workers), asyncio.Semaphore(READS)
        return self._slots, self._reads

    def _submit(self, job: Callable[[Deadline], T]) -> Future[T]:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.workers, "merknera-work",
                                                initializer=as_helper)
        future = self._executor.submit(self._timed, job)
        self.started += 1
        return future

    def _timed(self, job: Callable[[Deadline], T]) -> T:
        return job(Deadline(self.time_limit, pace=True))

    def close(self) -> None:
        """Let the threads go once their jobs end (the platform stops); a later job starts
        new ones."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        self._slots = self._reads = None


class Place:
    """One request's place (:meth:`Work.place`): what it waits for, it waits for within
    :attr:`Work.wait_limit` seconds of taking the place, in all; and its jobs run on the
    workers, one at a time."""

    def __init__(self, work: Work, client: str | None) -> None:
        self._work = work
        self._client = client
        self._until = asyncio.get_running_loop().time() + work.wait_limit
        self._left = False

    async def __aenter__(self) -> Place:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        self.leave()

    def leave(self) -> None:
        """Give the place back (once; its jobs have ended: :meth:`run` returns only then)."""
        if not self._left:
            self._left = True
            self._work._give_back(self._client)

    async def wait(self, awaitable: Awaitable[T]) -> T:
        """``awaitable``'s result, if it comes within the place's time to wait.

        :raises BusyError: 503 when it does not (``awaitable`` is cancelled).
        """
        try:
            async with asyncio.timeout_at(self._until) as limit:
                return await awaitable
        except TimeoutError:
            if not limit.expired():
                raise
            self._work.refusals.count(Limit.BUSY)
            raise BusyError(503, _FULL) from None

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[None]:
        """A turn to read from the store what the work needs (at most :data:`READS` at
        once, the others waiting their turn within the place's time)."""
        _, reads = self._work._semaphores()
        await self.wait(reads.acquire())
        try:
            yield
        finally:
            reads.release()

    async def run(self, job: Callable[[Deadline], T]) -> T:
        """``job(deadline)`` on a worker thread, once one is free; its result.  Returns or
        raises only once the job has ended, even when the caller is cancelled: whatever
        the caller holds for the job (a game's frames) stays held while it runs.

        :raises BusyError: 503 when the line is full, or no worker came free within the
            place's time to wait.
        :raises TimeLimitError: (from the job) when it ran past :attr:`Work.time_limit`.
        """
        work = self._work
        if work._held >= work.workers + work.waiting:
            work.refusals.count(Limit.BUSY)
            raise BusyError(503, _FULL)
        slots, _ = work._semaphores()
        work._held += 1
        try:
            await self.wait(slots.acquire())
        except BaseException:
            work._held -= 1
            raise
        loop = asyncio.get_running_loop()

        def free() -> None:
            slots.release()
            work._held -= 1

        def finished(_: Future[T]) -> None:
            # The worker is free once its job has ended, not when the request stops
            # waiting for it: a job cannot be stopped from outside.
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(free)

        try:
            future = work._submit(job)
        except BaseException:
            free()
            raise
        future.add_done_callback(finished)
        waited = asyncio.wrap_future(future)
        try:
            return await asyncio.shield(waited)
        except asyncio.CancelledError:
            await _ended(waited)
            raise


async def _ended(future: asyncio.Future[Any]) -> None:
    """Wait until ``future`` is done, however often the caller is cancelled meanwhile (a
    job's future: done within the job's time limit)."""
    while not future.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait([future])

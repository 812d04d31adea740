"""The replays a platform process holds: one :class:`~merknera.web.replay.FrameLog` per
game and kind of viewer, shared by every request and live stream that shows the game, and
extended with the rows stored since rather than rebuilt.

A running game's frames hide what its players may not know (``reveal=False``): its
replays and every live stream (to the end of the stream) are cut from that log.  A
finished game's replay shows everything: its log is built once, sealed, and kept.  The
logs are kept the most recently used first, within a budget of bytes (a log that live
streams follow is kept, and counted, while they do); one let go is built again from the
first row when next asked for.

Every request that may need more than an answer kept already works in its
:class:`~merknera.work.Place`, taken before it waits for anything: for the game's log while
another request extends it, for a turn to read the rows, for a worker.  Work that costs
more than a few rows' worth of CPU (a log's first build, a long catch-up, frames made
whole, gzip of a long replay) runs on :class:`merknera.work.Work`'s threads: bounded in
number, each within a time limit, refused with :class:`~merknera.work.BusyError` when the
line is full.  A build stopped by its time limit keeps its frames and goes on from there
at the next request.  Extending a log, and making a replay that is kept (once for all who
ask meanwhile), waits for the log; a replay that is not kept (every state whole of a
running game) and a stream's events are cut from the frames there are when the cut
begins, which never change.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from merknera.cache import Cache
from merknera.guard.streams import PIECE
from merknera.store import Database
from merknera.store.games import GameStatus
from merknera.store.results import move_log
from merknera.web.replay import (
    EncodedReplay,
    FrameLog,
    GameHeader,
    ReplayCache,
    States,
)
from merknera.work import UNLIMITED, Deadline, Place, TimeLimitError, Work

T = TypeVar("T")

INLINE_ROWS = 16
"""Rows (or frames made whole) few enough to handle on the event loop itself, even on the
largest boards: a live stream's next move, a replay that gained a few since it was last
asked for.  More go to a worker."""
INLINE_BYTES = 64 * 1024
"""Replays short enough to encode and gzip on the event loop itself."""
FULL_RUNNING_FRAMES = 200
"""Frames a running game's replay may have to be made with every state whole
(``?states=full``): such a replay is made afresh for each request (the frames change as
the game goes on), and a long game's is megabytes."""


class RunningFullError(Exception):
    """A running game's replay with every state whole, asked for when it has more than
    :data:`FULL_RUNNING_FRAMES` frames."""

    def __init__(self, game_id: int, frames: int) -> None:
        super().__init__(
            f"game {game_id} is running and has {frames} frames: its replay with every state "
            f"whole (states=full) is made for at most {FULL_RUNNING_FRAMES} while it runs; "
            "ask for states=delta (keyframes and patches, what the game page loads), follow "
            "it live with states=full, or ask again once it is over")


@dataclass(eq=False)
class Shared:
    """A game's frame log as its users share it: one extends it at a time (:attr:`lock`),
    and the store is read once for callers that come together."""

    log: FrameLog
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    asked: int = 0
    """Catch-ups asked for."""
    served: int = 0
    """Every catch-up asked for up to this one has been served by a read of the store
    begun after it was asked for."""
    followers: int = 0
    """Live streams following the log now: it is kept (and counted) while they do."""


class Replays:
    """Every game's frame logs held by this process, and the whole-state replays of
    finished games (kept apart, within a budget of their own, so that asking for those
    cannot push out the replays the game pages load)."""

    def __init__(self, work: Work, budget: int = 64 * 1024 * 1024,
                 full_budget: int = 32 * 1024 * 1024, most: int = 256) -> None:
        self.work = work
        self.built = 0
        """Logs begun (each from its game's first row)."""
        self.applied = 0
        """Rows applied to logs, over all of them."""
        self._held: Cache[tuple[int, bool], Shared] = Cache(
            most, budget=budget, size=lambda shared: shared.log.size,
            held=lambda shared: shared.followers > 0)
        """The logs, but for those live streams follow: a log grows as its game goes on."""
        self._full = ReplayCache(full_budget)

    # -- the logs ---------------------------------------------------------------------------

    @property
    def budget(self) -> float:
        """Bytes the logs are kept within, but for those live streams follow."""
        return self._held.budget

    @property
    def most(self) -> float:
        """Logs kept at most, however small (each holds its game's state too)."""
        return self._held.most

    @property
    def logs(self) -> int:
        """Logs held now."""
        return len(self._held)

    @property
    def size(self) -> int:
        """Bytes the logs held now hold (:attr:`FrameLog.size`)."""
        return self._held.size

    def shared(self, header: GameHeader, reveal: bool) -> Shared:
        """The game's log for viewers who see everything (``reveal``) or not: the one held,
        else a new one (to be caught up, :meth:`catch_up`)."""
        key = (header.start.id, reveal)
        found = self._held.get(key)
        if found is not None:
            return found
        made = Shared(FrameLog(header, reveal))
        self.built += 1
        self._held.put(key, made)
        return made

    @contextlib.contextmanager
    def following(self, shared: Shared) -> Iterator[Shared]:
        """``shared`` followed by a live stream meanwhile: kept, and counted, until the
        stream ends (held again if it was let go)."""
        key = (shared.log.header.start.id, shared.log.reveal)
        shared.followers += 1
        if self._held.get(key) is None:
            self._held.put(key, shared)
        try:
            yield shared
        finally:
            shared.followers -= 1
            self._held.fit()

    async def catch_up(self, shared: Shared, db: Database, place: Place,
                       final: bool = False) -> None:
        """Apply the rows stored since the log was last caught up (read after this call
        began, so every row stored before it is in).  ``final``: the caller read that the
        game is finished before calling, so these are all its rows; the log is then sealed.

        Callers that come while another reads the store wait for it (in their places),
        and read no more if its read began after they came.

        :raises BusyError: when the log, a read or a worker did not come in the place's
            time, or a worker is needed and none may be had.
        :raises TimeLimitError: when the rows took longer than a job may; those applied
            stay applied.
        """
        log = shared.log
        if log.complete:
            return
        shared.asked += 1
        ticket = shared.asked
        await place.wait(shared.lock.acquire())
        try:
            if log.complete:
                return
            if shared.served < ticket:
                asked = shared.asked
                async with place.reading():
                    rows = await db.read(functools.partial(
                        move_log, game_id=log.header.start.id, after=log.seq))
                if rows:
                    before = log.seq
                    # Rows after a move that no longer replays cost nothing: they are read.
                    small = len(rows) <= INLINE_ROWS or log.error is not None
                    try:
                        done = await self._run(small, functools.partial(log.extend, rows),
                                               place)
                    finally:  # the rows applied stay applied, whatever stopped the caller
                        self.applied += sum(1 for row in rows if before < row["seq"] <= log.seq)
                        self._held.fit()
                    if not done:
                        raise TimeLimitError("the replay took longer to build than one "
                                             "request may make it take")
                shared.served = asked
            if final:
                log.seal()
        finally:
            shared.lock.release()

    async def _run(self, small: bool, job: Callable[[Deadline], T], place: Place | None) -> T:
        """``job`` at once on the loop when ``small``, else on a worker in ``place`` (in a
        place of the platform's own when None)."""
        if small:
            return job(UNLIMITED)
        if place is None:
            return await self.work.run(job)
        return await place.run(job)

    # -- whole replays ----------------------------------------------------------------------

    def cached(self, game_id: int, states: States) -> EncodedReplay | None:
        """A finished game's replay ready to send, if one is (no store read needed)."""
        if states is States.FULL:
            return self._full.get((game_id, states))
        shared = self._held.get((game_id, True))
        if shared is None or not shared.log.complete:
            return None
        return shared.log.kept(GameStatus.FINISHED)

    async def replay(self, db: Database, header: GameHeader, states: States,
                     place: Place) -> EncodedReplay:
        """The game's whole replay (``GET /api/games/<id>/replay``), hiding what players
        may not know while it runs.

        :raises BusyError: when the log, a read or a worker did not come in the place's
            time, or a worker is needed and none may be had.
        :raises TimeLimitError: when building it took longer than a job may (what was
            built is kept: ask again).
        :raises RunningFullError: for every state whole of a running game with more than
            :data:`FULL_RUNNING_FRAMES` frames.
        """
        start = header.start
        finished = start.status is GameStatus.FINISHED
        found = self.cached(start.id, states)
        if found is not None:
            return found
        hidden = self._held.get((start.id, False))
        if finished and hidden is not None and hidden.followers == 0:
            self._held.pop((start.id, False))  # its frames serve no one now
        shared = self.shared(header, reveal=finished)
        log = shared.log
        full = states is States.FULL
        if full and not finished:
            if log.count > FULL_RUNNING_FRAMES:
                raise RunningFullError(start.id, log.count)  # known before any work
            await self.catch_up(shared, db, place)
            if log.count > FULL_RUNNING_FRAMES:
                raise RunningFullError(start.id, log.count)
            # Made afresh, from the frames there are: nobody waits for the log meanwhile.
            return await self._run(log.count <= INLINE_ROWS,
                                   functools.partial(log.full, start.status), place)
        await self.catch_up(shared, db, place, final=finished)
        # A replay that is kept is made under the log's lock, once: those who waited for
        # it find it made.
        await place.wait(shared.lock.acquire())
        try:
            if not full:
                made = log.kept(start.status)
                if made is None:
                    made = await self._run(log.frame_bytes <= INLINE_BYTES, functools.partial(
                        log.encoded, start.status), place)
                    self._held.fit()
                return made
            made = self._full.get((start.id, states))
            if made is None:
                made = await self._run(log.count <= INLINE_ROWS,
                                       functools.partial(log.full, start.status), place)
                if log.reveal and log.complete:  # the finished game's own log, every row in
                    self._full.put((start.id, states), made)
            return made
        finally:
            shared.lock.release()

    # -- live streams -----------------------------------------------------------------------

    async def cut(self, shared: Shared, start: int, states: States, first: bool,
                  event: Callable[[int, bytes], bytes], place: Place | None
                  ) -> tuple[int, bytes]:
        """The next piece of a live stream (written before the next is cut): the log's
        frames from index ``start`` on, each as ``event`` makes it of its row (move number)
        and its JSON, up to about :data:`~merknera.guard.streams.PIECE` bytes (one frame at
        least); how many frames, and the piece.  Each frame is whole with
        :attr:`States.FULL`, else as the log has it but for the first when ``first`` (a
        live stream's first frame: its client may have nothing before it).  Made on a
        worker when many frames are to be made whole (in ``place``, or in one of the
        platform's own when None), where a piece ends early rather than run past the job's
        time.

        :raises BusyError: when a worker is needed and none may be had.
        """
        log = shared.log
        end = log.count
        whole = states is States.FULL

        def piece(deadline: Deadline) -> tuple[int, bytes]:
            made: list[bytes] = []
            size = 0
            index = start
            while index < end and size < PIECE:
                if index > start and deadline.passed():
                    break
                made_whole = whole or (first and index == start)
                frame = log.whole(index) if made_whole else log.frames[index]
                made.append(event(log.seqs[index], frame))
                size += len(made[-1])
                index += 1
            return index - start, b"".join(made)

        return await self._run(not whole or end - start <= INLINE_ROWS, piece, place)

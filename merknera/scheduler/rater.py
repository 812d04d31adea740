"""Rating results in passes, a moment after they are stored (see merknera.store.ratings).

A finish queues its game for rating in the transaction that stores the result; the runner
then pokes the :class:`Rater`, which waits :data:`GATHER` seconds for the results of that
moment and rates them all in one write (:func:`merknera.store.ratings.rate_queued`).  At
full speed that is one pass for dozens of games, instead of a rating in each finishing
transaction, each with its own reads and writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging

from merknera.store import Database, ratings
from merknera.store.db import now

log = logging.getLogger(__name__)

GATHER = 0.02
"""Seconds a pass waits after the first poke, for the results of that moment."""

RETRY = 1.0
"""Seconds before a failed pass is tried again."""

SWEEP = 5.0
"""Seconds between passes when nothing pokes: results nobody announced get rated too (a
finish whose runner was cancelled as it committed, a dead node's last results)."""

PATIENCE = 3
"""Passes a result stamped at or after each pass's stamp is left for, before it is rated
all the same (another node's clock runs ahead: its stamps stay ahead of this node's)."""


class Rater:
    """This node's rating passes.  :meth:`start`, :meth:`poke` after each result,
    :meth:`stop`."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._wanted = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start passing, with one pass at once for results queued before (a node that
        stopped between a finish and its rating)."""
        self._task = asyncio.create_task(self._run(), name="rater")
        self.poke()

    def poke(self) -> None:
        """A result was queued: rate it in the next pass."""
        self._idle.clear()
        self._wanted.set()

    async def wait_idle(self) -> None:
        """Wait until every result queued here so far is rated."""
        await self._idle.wait()

    async def stop(self) -> None:
        """Stop passing, rating what is left first (no result of this node comes later)."""
        if self._task is None:
            return
        self._task.cancel()
        # asyncio.wait, not awaiting the task: a cancellation of this caller still reaches it.
        await asyncio.wait([self._task])
        self._task = None
        try:
            await ratings.rate_queue(self._db)
        except Exception:
            log.exception("could not rate the results queued (the next start rates them)")
        self._idle.set()

    async def _run(self) -> None:
        held_back = 0
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SWEEP):
                    await self._wanted.wait()
            await asyncio.sleep(GATHER)
            self._wanted.clear()
            # Results stamped in the millisecond of the newest stamp wait for the next
            # pass: one stored later could still sort before them.  Those still waiting
            # after PATIENCE passes (stamped ahead by another node's clock) are rated all
            # the same; the pass puts them in order by rating again what sorts after them.
            try:
                done = await self._db.transaction(functools.partial(
                    ratings.rate_queued, before=None if held_back >= PATIENCE else now()))
            except Exception:
                log.exception("a rating pass failed; trying again in %g s", RETRY)
                await asyncio.sleep(RETRY)
                self._wanted.set()
                continue
            held_back = held_back + 1 if done.waiting else 0
            if held_back:
                self._wanted.set()
            elif not self._wanted.is_set():
                self._idle.set()

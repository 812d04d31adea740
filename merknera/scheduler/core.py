"""The scheduler: starts a runner task per game, resumes unfinished games (this node's, and
those of nodes that died: merknera.scheduler.leases), stops cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Iterable

from merknera.logcontext import about_game
from merknera.scheduler.arena import Arena
from merknera.scheduler.leases import OFFERS
from merknera.scheduler.runner import GameRunner
from merknera.store import nodes
from merknera.tasks import TaskSet

log = logging.getLogger(__name__)

RESUME_ALL = 1_000_000
"""At start, every unfinished game that no live node plays is resumed (its runner waits
for a place in play), as one node always did."""


class Scheduler:
    """Owns one task per unfinished game; ``concurrency`` of them play at once."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._people: set[int] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopping = False
        self._sweeper: asyncio.Task[None] | None = None
        self._cancelling = TaskSet()

    async def start(self) -> None:
        """Resume the unfinished games no live node plays, from their stored moves; then
        keep the leases and take the games of nodes that die, and games without a runner
        (one whose runner failed to record its end)."""
        leases = self.arena.leases
        await leases.heartbeat()
        self.arena.rater.start()
        # One node resumes every game (each waits for a place); one of several takes what
        # it has room for, and leaves the rest to the others.
        alone = not self.arena.db.dialect.shared
        unfinished = await leases.claimable(RESUME_ALL if alone else self.room(), ())
        if unfinished:
            log.info("resuming %d unfinished games", len(unfinished))
        self.submit(unfinished)
        self._sweeper = asyncio.create_task(
            leases.run(lambda: list(self._tasks), self.room, self.submit, self._lost),
            name="leases")

    def room(self) -> int:
        """Games this node could start playing now (``concurrency`` less its runners)."""
        return max(0, self.arena.config.scheduling.concurrency - self.running)

    async def free(self) -> int:
        """Games the arena could start playing now: this node's room, or with several
        nodes the room of them all (``concurrency`` each, less every unfinished game)."""
        leases = self.arena.leases
        if leases.live_nodes <= 1:
            return self.room()
        unfinished = await nodes.unfinished_count(self.arena.db)
        return max(0, self.arena.config.scheduling.concurrency * leases.live_nodes - unfinished)

    async def offer(self, game_ids: list[int]) -> None:
        """New games for whichever node has room: with one node, started here; with
        several, offered to the nodes' claim loops (this one's too, and the others by a
        notification), so that the games of the ladder and tournaments spread over the
        nodes."""
        leases = self.arena.leases
        if leases.live_nodes <= 1 or not self.arena.db.dialect.shared:
            self.submit(game_ids)
        elif game_ids:
            leases.offered(len(game_ids))
            await nodes.notify(self.arena.db, OFFERS, f"{leases.node} {len(game_ids)}")

    def _lost(self, game_ids: set[int]) -> None:
        self._cancelling.spawn(self.cancel(game_ids))

    def submit(self, game_ids: Iterable[int], *, people: bool = False) -> None:
        """Start runners for these games (a game already running is left alone).

        ``people``: the games' clients started them and play them at their own pace (a
        gateway's polling clients): they are not counted in :attr:`running`, so that
        idle boards never take the ladder's room (they hold no place in play while their
        clients think).
        """
        if self._stopping:
            return
        for game_id in game_ids:
            if game_id in self._tasks:
                continue
            if people:
                self._people.add(game_id)
            # In a context of its own: every line it logs names its game.
            task = asyncio.create_task(GameRunner(self.arena, game_id).run(),
                                       name=f"game-{game_id}", context=about_game(game_id))
            self._tasks[game_id] = task
            self._idle.clear()
            task.add_done_callback(functools.partial(self._done, game_id))

    def _done(self, game_id: int, _task: asyncio.Task[None]) -> None:
        self._tasks.pop(game_id, None)
        self._people.discard(game_id)
        if not self._tasks:
            self._idle.set()

    async def cancel(self, game_ids: Iterable[int]) -> None:
        """Stop the runners of games that ended elsewhere (superseded)."""
        tasks = [self._tasks[gid] for gid in game_ids if gid in self._tasks]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def running(self) -> int:
        """Runner tasks alive (playing, waiting for a slot, or waiting for a bot), but
        those of games that people play at a gateway (see :meth:`submit`)."""
        return len(self._tasks) - len(self._people)

    async def wait_idle(self) -> None:
        """Wait until no game is left to play, and every result is rated."""
        await self._idle.wait()
        await self.arena.rater.wait_idle()

    async def stop(self) -> None:
        """Cancel every runner; their games resume at the next start."""
        self._stopping = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self.cancel(list(self._tasks))
        await self._cancelling.wait()
        await self.arena.rater.stop()
        await self.arena.notifier.stop()
        try:
            await self.arena.leases.stopped()
        except Exception:
            log.exception("could not give up this node's leases (they run out by themselves)")

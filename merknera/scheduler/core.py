"""The scheduler: starts a runner task per game, resumes unfinished games, stops cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Iterable

from merknera.scheduler.arena import Arena
from merknera.scheduler.runner import GameRunner
from merknera.store import games

log = logging.getLogger(__name__)

SWEEP_SECONDS = 30.0
"""How often unfinished games are checked for a runner."""


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

    async def start(self) -> None:
        """Resume every unfinished game from its stored moves, and keep looking for
        unfinished games that have no runner (one whose runner failed to record its end)."""
        unfinished = await games.unfinished(self.arena.db)
        if unfinished:
            log.info("resuming %d unfinished games", len(unfinished))
        self.submit(unfinished)
        self._sweeper = asyncio.create_task(self._sweep(), name="orphan-sweeper")

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            try:
                orphans = [gid for gid in await games.unfinished(self.arena.db)
                           if gid not in self._tasks]
            except Exception:
                log.exception("could not look for games without a runner")
                continue
            if orphans:
                log.warning("games without a runner, started again: %s", orphans[:20])
                self.submit(orphans)

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
            task = asyncio.create_task(GameRunner(self.arena, game_id).run(),
                                       name=f"game-{game_id}")
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
        """Wait until no game is left to play."""
        await self._idle.wait()

    async def stop(self) -> None:
        """Cancel every runner; their games resume at the next start."""
        self._stopping = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self.cancel(list(self._tasks))
        await self.arena.notifier.stop()

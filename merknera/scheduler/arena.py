"""What every game runner shares: the config, the store, the seat transports, the presence,
the event bus, the concurrency slots, the notifier for calls whose replies are ignored,
and the rater."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from merknera.assets import AssetStore
from merknera.config import Config
from merknera.events import EventBus, GameFinished
from merknera.games import JSON, AnyGame
from merknera.scheduler.leases import Leases
from merknera.scheduler.presence import Presence
from merknera.scheduler.rater import Rater
from merknera.scheduler.readiness import Readiness
from merknera.scheduler.slots import Slots
from merknera.seats import SeatCall, Seats
from merknera.store import Database
from merknera.store.bots import Bot
from merknera.tasks import TaskSet


class Notifier:
    """Calls whose replies are ignored (Error, Complete), delivered in the background.

    Calls to one bot go out one after another in the order they were sent (a strike's
    Error before the game's Complete).
    """

    def __init__(self, seats: Seats, time_limit: float, drain_time: float) -> None:
        self._seats = seats
        self._time_limit = time_limit
        self._drain_time = drain_time
        self._tasks = TaskSet()
        self._last: dict[int, asyncio.Task[None]] = {}

    def send(self, bot: Bot, game: AnyGame, calls: Sequence[SeatCall]) -> None:
        """Deliver calls of ``game`` to a bot after those sent to it before."""
        task = self._tasks.spawn(self._deliver(bot, game, calls, self._last.get(bot.id)))
        self._last[bot.id] = task
        task.add_done_callback(functools.partial(self._done, bot.id))

    def _done(self, bot_id: int, task: asyncio.Task[None]) -> None:
        if self._last.get(bot_id) is task:
            del self._last[bot_id]

    async def _deliver(self, bot: Bot, game: AnyGame, calls: Sequence[SeatCall],
                       after: asyncio.Task[None] | None) -> None:
        if after is not None:
            await asyncio.gather(after, return_exceptions=True)
        for call in calls:
            await self._seats.tell(bot, game, call, self._time_limit)

    async def drain(self) -> None:
        """Wait for every call under way to be delivered or to fail."""
        await self._tasks.wait()

    async def stop(self) -> None:
        """Let the calls under way finish (a little while), then give up on the rest."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._drain_time):
                await self.drain()
        await self._tasks.close()


@dataclass
class Arena:
    """What every runner shares."""

    config: Config
    db: Database
    seats: Seats
    """How to reach each bot, by the protocol it speaks."""
    presence: Presence
    events: EventBus
    notifier: Notifier
    slots: Slots
    """One place per game in active play (``concurrency``; a fair share per owner)."""
    games: Mapping[str, AnyGame]
    """Every hosted game by mnemonic, set up with its assets."""
    assets: AssetStore
    readiness: Readiness
    leases: Leases
    """This node's game leases (one node, or one of several on PostgreSQL)."""
    finish_hooks: list[Callable[[GameFinished], Coroutine[Any, Any, None] | None]] = field(
        default_factory=list)
    """Called after every game that finished with its result stored; unlike the event
    bus, they never miss one.  A hook with something to wait for returns a coroutine,
    run in a task of its own; one with nothing to do for this game returns None (most
    games: a task a game and hook cost about as much as a bot's move)."""
    _hook_tasks: TaskSet = field(default_factory=TaskSet)
    rater: Rater = field(init=False)
    """Rates the results in passes (see merknera.store.ratings)."""

    def __post_init__(self) -> None:
        self.rater = Rater(self.db)

    def latest(self, bot: Bot) -> Bot:
        """The bot's latest registration (endpoint, secret), or the record given if it is
        no longer current."""
        return self.presence.bot(bot.id) or bot

    def after_game(self, finished: GameFinished) -> None:
        """Run the finish hooks for a game."""
        for hook in self.finish_hooks:
            work = hook(finished)
            if work is not None:
                self._hook_tasks.spawn(work)

    def new_game_settings(self, mnemonic: str) -> dict[str, JSON]:
        """The settings a new game of ``mnemonic`` is stored with: the hashes of the asset
        files it is played with (see GameRunner._assets_changed)."""
        if not self.games[mnemonic].assets:
            return {}
        return {"assets": {name: f.sha1 for name, f in self.assets.roles(mnemonic).items()}}

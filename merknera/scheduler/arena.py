"""What every game runner shares: the config, the store, the carriers, the presence, the
event bus, the concurrency slots, the notifier for calls whose replies are ignored, and the
rater."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
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
from merknera.seats import Carriers, Notifier
from merknera.store import Database
from merknera.store.bots import Bot
from merknera.tasks import TaskSet


@dataclass
class Arena:
    """What every runner shares."""

    config: Config
    db: Database
    carriers: Carriers
    """How to reach each bot, by the protocol it speaks."""
    presence: Presence
    events: EventBus
    notifier: Notifier
    """Calls whose replies are ignored, delivered in the background (the called bots')."""
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
        files it is played with (see merknera.scheduler.opening)."""
        if not self.games[mnemonic].assets:
            return {}
        return {"assets": {name: f.sha1 for name, f in self.assets.roles(mnemonic).items()}}

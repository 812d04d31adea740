"""Taking bots out of play and back: by an admin, or by the fault rule.

The fault rule: a bot whose own faults (faulty replies, or forfeits it lost) marred at least
``fault_share`` of its last ``fault_window`` games with a result is disabled, and its log
says why.  Registering the same version again re-enables it; a bot an admin disabled stays
disabled until an admin enables it.  Disabling ends the bot's unfinished games without a
result.  What the store records is :mod:`merknera.store.discipline`'s; this is what a running
platform does besides: it forgets the bots and stops the runners of the games ended.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Coroutine
from typing import Any

from merknera.events import GameFinished
from merknera.protocol.bot_protocols import BotProtocol
from merknera.scheduler.core import Scheduler
from merknera.store import bots, discipline
from merknera.store.bots import Bot
from merknera.store.discipline import DisabledBy

log = logging.getLogger(__name__)


class Discipline:
    """Disables and enables bots, and applies the fault rule after games."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self._arena = scheduler.arena
        self._arena.finish_hooks.append(self._after)

    def _after(self, finished: GameFinished) -> Coroutine[Any, Any, None] | None:
        """The fault rule's work after a game in which some bot was at fault (a finish
        hook: None when nobody was)."""
        return self._apply_rule(finished) if finished.at_fault else None

    async def _apply_rule(self, finished: GameFinished) -> None:
        try:
            await self.after_game(list(finished.at_fault))
        except Exception:
            log.exception("the fault rule failed after game %d", finished.game_id)

    async def disable(self, bot_id: int, by: DisabledBy, reason: str) -> bool:
        """Take a bot out of play; False if it was not a current bot."""
        ended = await discipline.disable(self._arena.db, bot_id, by, reason)
        if ended is None:
            return False
        log.info("bot %d disabled (%s): %s", bot_id, by, reason, extra={"bot_id": bot_id})
        self._arena.presence.retired([bot_id])
        await self._scheduler.cancel(ended)
        return True

    async def enable(self, bot_id: int) -> Bot | None:
        """Put a disabled bot back in play (it is pinged first); None if it was not
        disabled."""
        bot = await discipline.enable(self._arena.db, bot_id)
        if bot is not None:
            self._arena.presence.restored(bot)
        return bot

    async def suspend(self, user_name: str, reason: str) -> list[int] | None:
        """Suspend a user: no registration of theirs is taken, and their current bots are
        disabled until the suspension is lifted.  Returns the ids of the bots disabled;
        None if there is no such user."""
        done = await discipline.suspend(self._arena.db, user_name, reason)
        if done is None:
            return None
        log.info("user %s suspended (%s); bots disabled: %s", user_name, reason,
                 done.bots_disabled)
        self._arena.presence.retired(done.bots_disabled)
        await self._scheduler.cancel(done.games_ended)
        return done.bots_disabled

    async def unsuspend(self, user_name: str) -> list[int] | None:
        """Lift a user's suspension; the bots it disabled are enabled again (and play once
        they answer a ping).  Returns their ids; None if there is no such user."""
        back = await discipline.unsuspend(self._arena.db, user_name)
        if back is None:
            return None
        for bot in back:
            self._arena.presence.restored(bot)
        log.info("user %s no longer suspended; bots enabled: %s", user_name,
                 [bot.id for bot in back])
        return [bot.id for bot in back]

    async def after_game(self, bot_ids: list[int]) -> None:
        """Apply the fault rule to bots that were at fault in a game just finished."""
        config = self._arena.config
        if config.scheduling.fault_share <= 0:
            return
        for bot_id in bot_ids:
            seated = self._arena.presence.bot(bot_id)
            if seated is not None and seated.protocol is BotProtocol.GUEST:
                # A guest plays only games its players start, and a fault of one person
                # on a board must not shut out the next (the anonymous guest is shared).
                continue
            marks = await self._arena.db.read(functools.partial(
                bots.recent_faults, bot_id=bot_id, window=config.scheduling.fault_window))
            if len(marks) < config.scheduling.fault_window:
                continue
            faulty = sum(marks)
            if faulty / len(marks) >= config.scheduling.fault_share:
                await self.disable(bot_id, "FAULTS", (
                    f"{faulty} of its last {len(marks)} games had faults of its own "
                    f"(the limit is {config.scheduling.fault_share:.0%}); register it again to "
                    "play again"))


"""Taking bots out of play and back: by an admin, or by the fault rule.

The fault rule: a bot whose own faults (faulty replies, or forfeits it lost) marred at least
``fault_share`` of its last ``fault_window`` games with a result is disabled, and its log
says why.  Registering the same version again re-enables it; a bot an admin disabled stays
disabled until an admin enables it.  Disabling ends the bot's unfinished games without a
result.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Coroutine
from typing import Any

from merknera.events import GameFinished
from merknera.games import Outcome, Termination
from merknera.protocol.bot_protocols import BotProtocol
from merknera.scheduler.core import Scheduler
from merknera.store import bots, games, logs, now, users
from merknera.store.bots import Bot
from merknera.store.db import Connection

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

    async def disable(self, bot_id: int, by: str, reason: str) -> bool:
        """Take a bot out of play; False if it was not a current bot."""
        stamp = now()
        ended = await self._arena.db.transaction(
            lambda conn: _disable(conn, bot_id, by, reason, stamp))
        if ended is None:
            return False
        log.info("bot %d disabled (%s): %s", bot_id, by, reason, extra={"bot_id": bot_id})
        self._arena.presence.retired([bot_id])
        await self._scheduler.cancel(ended)
        return True

    async def enable(self, bot_id: int) -> Bot | None:
        """Put a disabled bot back in play (it is pinged first); None if it was not
        disabled."""
        bot = await self._arena.db.transaction(lambda conn: _enable(conn, bot_id))
        if bot is not None:
            self._arena.presence.restored(bot)
        return bot

    async def suspend(self, user_name: str, reason: str) -> list[int] | None:
        """Suspend a user: no registration of theirs is taken, and their current bots are
        disabled until the suspension is lifted.  Returns the ids of the bots disabled;
        None if there is no such user."""
        stamp = now()
        done = await self._arena.db.transaction(
            lambda conn: _suspend(conn, user_name, reason, stamp))
        if done is None:
            return None
        bot_ids, ended = done
        log.info("user %s suspended (%s); bots disabled: %s", user_name, reason, bot_ids)
        self._arena.presence.retired(bot_ids)
        await self._scheduler.cancel(ended)
        return bot_ids

    async def unsuspend(self, user_name: str) -> list[int] | None:
        """Lift a user's suspension; the bots it disabled are enabled again (and play once
        they answer a ping).  Returns their ids; None if there is no such user."""
        back = await self._arena.db.transaction(lambda conn: _unsuspend(conn, user_name))
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


def _disable(conn: Connection, bot_id: int, by: str, reason: str,
             stamp: str, with_owner: bool = False) -> list[int] | None:
    found = conn.execute("SELECT status, disabled_with_owner FROM bots WHERE id = ?",
                         (bot_id,)).fetchone()
    if found is not None and found[1] and by == "ADMIN" and not with_owner:
        # Out with its suspended owner, and now disabled for itself: it stays out when
        # the suspension is lifted.
        conn.execute("UPDATE bots SET disabled_reason = ?, disabled_with_owner = 0 "
                     "WHERE id = ?", (reason, bot_id))
        logs.add(conn, bot_id, f"Disabled by an admin: {reason}")
        return []
    if found is None or found[0] not in ("ONLINE", "OFFLINE"):
        return None
    unfinished = bots.disable(conn, bot_id, by, reason, with_owner)
    ended = Outcome.no_result(Termination.ABORTED, f"bot {bot_id} was disabled: {reason}")
    for game_id in unfinished:
        lines = [(seated, f"Game ended without a result (gameId: {game_id}): {ended.detail}")
                 for seated in games.seated(conn, game_id)]
        games.finish_in(conn, game_id, ended, None, lines, stamp)
    who = "an admin" if by == "ADMIN" else "the fault rule"
    logs.add(conn, bot_id, f"Disabled by {who}: {reason}")
    return unfinished


def _enable(conn: Connection, bot_id: int) -> Bot | None:
    bot = bots.enable(conn, bot_id)
    if bot is not None:
        logs.add(conn, bot_id, "Enabled again; it plays once it answers a ping")
    return bot


def _suspend(conn: Connection, user_name: str, reason: str,
             stamp: str) -> tuple[list[int], list[int]] | None:
    user = users.by_name(conn, user_name)
    if user is None:
        return None
    users.set_suspended(conn, user.id, reason)
    disabled, ended = [], []
    for bot_id in bots.current_of(conn, user.id):
        unfinished = _disable(conn, bot_id, "ADMIN", f"its owner {user.name} was suspended: "
                              f"{reason}", stamp, with_owner=True)
        if unfinished is not None:
            disabled.append(bot_id)
            ended += unfinished
    return disabled, ended


def _unsuspend(conn: Connection, user_name: str) -> list[Bot] | None:
    user = users.by_name(conn, user_name)
    if user is None:
        return None
    users.set_suspended(conn, user.id, None)
    return [bot for bot_id in bots.disabled_with_owner(conn, user.id)
            if (bot := _enable(conn, bot_id)) is not None]

"""Taking bots out of play and back, and suspending users: what the store records, one
transaction each.

These are the operations themselves, shared by the admin API (through the running
platform's :class:`merknera.scheduler.discipline.Discipline`, which also forgets the bots
and stops the runners of the games ended) and the command line (``merknera bot
disable|enable``, ``merknera user suspend|unsuspend``), which changes the store beside a
running platform: the platform takes the store's word at its next look (see
:class:`merknera.scheduler.coordinator.Coordinator`), as it does for another node's changes.

A suspended user's bots are *disabled*, with ``disabled_with_owner`` set: disabled is the
one state that every part of the platform already keeps out of play (the ladder,
tournaments, the gateways, every node), disabling ends their unfinished games at once, and
lifting the suspension enables exactly the bots it disabled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from merknera.games.base import Outcome, Termination
from merknera.store import bots, games, logs, users
from merknera.store.bots import Bot
from merknera.store.db import Connection, Database, now

DisabledBy = Literal["ADMIN", "FAULTS"]
"""Who took a bot out of play: an admin, or the fault rule (re-registering re-enables only
a bot the fault rule took out)."""

REASON_CHARS = 500
"""The longest reason kept for a disabled bot or a suspended user."""
DISABLED_BY_ADMIN = "disabled by an admin"
"""The reason recorded when an admin gives none."""
SUSPENDED_BY_ADMIN = "suspended by an admin"
"""The reason recorded when an admin gives none."""


@dataclass(frozen=True)
class Suspension:
    """What suspending a user did."""

    bots_disabled: list[int]
    """Their bots that were current, disabled with them."""
    games_ended: list[int]
    """Those bots' unfinished games, ended without a result."""


async def disable(db: Database, bot_id: int, by: DisabledBy, reason: str) -> list[int] | None:
    """Take a current bot out of play, ending its unfinished games without a result.

    Returns the ids of the games ended; None if it was not a current bot (unknown,
    superseded or disabled already).  A bot out with its suspended owner that an admin
    disables is disabled for itself from then on (it stays out when the suspension is
    lifted), and nothing else changes ([]).
    """
    stamp = now()
    return await db.transaction(
        lambda conn: _disable(conn, bot_id, by, reason[:REASON_CHARS], stamp))


async def enable(db: Database, bot_id: int) -> Bot | None:
    """Put a disabled bot back: offline until it answers a ping.  None if it was not
    disabled."""
    return await db.transaction(lambda conn: _enable(conn, bot_id))


async def suspend(db: Database, user_name: str, reason: str) -> Suspension | None:
    """Suspend a user: their registrations and their token are refused, and their current
    bots disabled, until the suspension is lifted.  None if there is no such user."""
    stamp = now()
    return await db.transaction(
        lambda conn: _suspend(conn, user_name, reason[:REASON_CHARS], stamp))


async def unsuspend(db: Database, user_name: str) -> list[Bot] | None:
    """Lift a user's suspension and enable the bots it disabled (those an admin did not
    also disable for themselves); returns them.  None if there is no such user."""
    return await db.transaction(lambda conn: _unsuspend(conn, user_name))


def _disable(conn: Connection, bot_id: int, by: DisabledBy, reason: str,
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
             stamp: str) -> Suspension | None:
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
    return Suspension(disabled, ended)


def _unsuspend(conn: Connection, user_name: str) -> list[Bot] | None:
    user = users.by_name(conn, user_name)
    if user is None:
        return None
    users.set_suspended(conn, user.id, None)
    return [bot for bot_id in bots.disabled_with_owner(conn, user.id)
            if (bot := _enable(conn, bot_id)) is not None]

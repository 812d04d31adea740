"""Queries of the ladder and the fault rule: who is busy, rated, recently met, faulting."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence


def unfinished_counts(conn: sqlite3.Connection, bot_ids: Sequence[int]) -> dict[int, int]:
    """Unfinished games per bot (bots without any are left out)."""
    marks = ",".join("?" * len(bot_ids))
    return dict(conn.execute(
        "SELECT seats.bot_id, COUNT(*) FROM seats JOIN games ON games.id = seats.game_id "
        f"WHERE games.status != 'FINISHED' AND seats.bot_id IN ({marks}) "
        "GROUP BY seats.bot_id", tuple(bot_ids)).fetchall())


def ratings_of(conn: sqlite3.Connection,
               bot_ids: Sequence[int]) -> dict[int, tuple[float, float, int]]:
    """(mu, sigma, rated games) of the bots that have a rating."""
    marks = ",".join("?" * len(bot_ids))
    return {row[0]: (row[1], row[2], row[3]) for row in conn.execute(
        f"SELECT bot_id, mu, sigma, rated_games FROM ratings WHERE bot_id IN ({marks})",
        tuple(bot_ids))}


def recent_opponents(conn: sqlite3.Connection, bot_ids: Sequence[int],
                     games: int) -> dict[int, set[int]]:
    """The bots each bot met in its last ``games`` games."""
    marks = ",".join("?" * len(bot_ids))
    found: dict[int, set[int]] = {}
    for mine, theirs in conn.execute(
            "SELECT a.bot_id, b.bot_id FROM seats a JOIN seats b "
            "ON b.game_id = a.game_id AND b.bot_id != a.bot_id "
            f"WHERE a.bot_id IN ({marks}) AND a.game_id IN (SELECT game_id FROM seats "
            "WHERE bot_id = a.bot_id ORDER BY game_id DESC LIMIT ?)", (*bot_ids, games)):
        found.setdefault(mine, set()).add(theirs)
    return found

"""Queries of the ladder and the fault rule: who is busy, rated, recently met, faulting."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass


def unfinished_counts(conn: sqlite3.Connection, bot_ids: Sequence[int]) -> dict[int, int]:
    """Unfinished games per bot (bots without any are left out).

    Driven from the unfinished games (few, indexed by status), not from every seat the
    bots ever held.
    """
    wanted = set(bot_ids)
    return {bot_id: count for bot_id, count in conn.execute(
        "SELECT seats.bot_id, COUNT(*) FROM games JOIN seats ON seats.game_id = games.id "
        "WHERE games.status IN ('PENDING', 'RUNNING') GROUP BY seats.bot_id")
        if bot_id in wanted}


def ratings_of(conn: sqlite3.Connection,
               bot_ids: Sequence[int]) -> dict[int, tuple[float, float, int]]:
    """(mu, sigma, rated games) of the bots that have a rating."""
    marks = ",".join("?" * len(bot_ids))
    return {row[0]: (row[1], row[2], row[3]) for row in conn.execute(
        f"SELECT bot_id, mu, sigma, rated_games FROM ratings WHERE bot_id IN ({marks})",
        tuple(bot_ids))}


@dataclass(frozen=True)
class Recent:
    """A bot's latest games: whom it met and how often it had the first seat."""

    opponents: frozenset[int]
    """The bots met in its last three games."""
    first_seats: int
    """Of its last ten games, those in which it had seat 0 (moved first)."""


def recent(conn: sqlite3.Connection, bot_ids: Sequence[int]) -> dict[int, Recent]:
    """Each bot's :class:`Recent`: one indexed lookup per bot (seats_bot), then one query
    for the opponents (a window function over all their seats measured slower)."""
    latest = {bot_id: [(row[0], row[1]) for row in conn.execute(
        "SELECT game_id, seat FROM seats WHERE bot_id = ? ORDER BY game_id DESC LIMIT 10",
        (bot_id,))] for bot_id in bot_ids}
    last_three = {game_id for games in latest.values()
                  for game_id, _ in games[:3]}
    seated: dict[int, list[int]] = {}
    if last_three:
        marks = ",".join("?" * len(last_three))
        for game_id, bot_id in conn.execute(
                f"SELECT game_id, bot_id FROM seats WHERE game_id IN ({marks})",
                tuple(last_three)):
            seated.setdefault(game_id, []).append(bot_id)
    found = {}
    for bot_id, games in latest.items():
        met = {other for game_id, _ in games[:3] for other in seated.get(game_id, ())
               if other != bot_id}
        found[bot_id] = Recent(frozenset(met), sum(1 for _, seat in games if seat == 0))
    return found


def current(conn: sqlite3.Connection, bot_ids: Sequence[int]) -> list[int]:
    """Those of the bots still in play (neither superseded nor disabled)."""
    marks = ",".join("?" * len(bot_ids))
    return [row[0] for row in conn.execute(
        f"SELECT id FROM bots WHERE id IN ({marks}) AND status IN ('ONLINE', 'OFFLINE')",
        tuple(bot_ids))]

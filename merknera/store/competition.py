"""Queries of the ladder and the fault rule: who is busy, rated, recently met, faulting."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple

from merknera.ratings import DEFAULT
from merknera.store.db import Connection


def ratings_of(conn: Connection,
               bot_ids: Sequence[int]) -> dict[int, tuple[float, float, int]]:
    """(mu, sigma, rated games) of the bots that have a rating."""
    return {row[0]: (row[1], row[2], row[3]) for row in conn.execute(
        f"SELECT bot_id, mu, sigma, rated_games FROM ratings WHERE bot_id IN {conn.dialect.ids()}",
        (json.dumps(list(bot_ids)),))}


FIRST_SEAT_GAMES = 10
"""How many of a bot's latest games its first-seat count covers."""
RECENT_GAMES = 12
"""How many of a bot's latest games make its recent opponents."""


class Contender(NamedTuple):
    """A bot with room for another game, with its rating and first seats."""

    bot_id: int
    mu: float
    sigma: float
    rated_games: int
    """0 (and the default rating) for a bot not rated yet."""
    first_seats: int
    """Of its last ten games, those in which it had seat 0 (moved first)."""


# One statement and one row per bot, however long the bots' histories: the ladder reads
# every online bot of a game on each pass, and a query per bot (or a row per seat handed
# to Python) cost more than the rest of the pass together.
# * busy: bots with ``cap`` unfinished games, driven from the unfinished games (few, and
#   indexed by status), not from every seat the bots ever held;
# * the first seats come from the bot's newest entries of seats_bot_seat alone: it holds
#   the seat too (migration 005), so no table row is read;
# * the bot ids come as one JSON array, so any number of bots fits in one statement.
_CONTENDERS = """
WITH busy(bot_id) AS (
    SELECT seats.bot_id FROM games JOIN seats ON seats.game_id = games.id
    WHERE games.status IN ('PENDING', 'RUNNING') AND games.handle IS NULL
      AND games.origin NOT IN ('CHALLENGE', 'DUEL')
    GROUP BY seats.bot_id HAVING COUNT(*) >= :cap)
SELECT wanted.value,
       COALESCE(ratings.mu, :mu), COALESCE(ratings.sigma, :sigma),
       COALESCE(ratings.rated_games, 0),
       (SELECT COUNT(*) FROM (SELECT seats.seat FROM seats
                              JOIN games ON games.id = seats.game_id
                              WHERE seats.bot_id = wanted.value
                                AND games.origin NOT IN ('CHALLENGE', 'DUEL')
                              ORDER BY seats.game_id DESC LIMIT :first_seat_games) AS latest
        WHERE seat = 0)
FROM {wanted} AS wanted LEFT JOIN ratings ON ratings.bot_id = wanted.value
WHERE wanted.value NOT IN (SELECT bot_id FROM busy)
"""


def contenders(conn: Connection, bot_ids: Sequence[int],
               cap: int) -> list[Contender]:
    """Those of the bots with fewer than ``cap`` unfinished games, with their ratings and
    first seats.  Games that people started at a gateway (those with a handle) do not
    count: a person's idle boards against a bot must not keep it out of the ladder; nor do
    challenges and duels, which have places of their own."""
    query = _CONTENDERS.format(wanted=conn.dialect.ids(":bot_ids"))
    return [Contender(*row) for row in conn.execute(query, {
        "bot_ids": json.dumps(list(bot_ids)), "cap": cap, "mu": DEFAULT.mu,
        "sigma": DEFAULT.sigma, "first_seat_games": FIRST_SEAT_GAMES})]


# Like _CONTENDERS, one row per bot; each bot's last games come from seats_bot_seat, and
# their other seats from the seats' primary key.  Each other seat comes as "game:bot", so
# that the games can be put back in order whatever order the aggregate joins them in.
_OPPONENTS = """
SELECT wanted.value,
       (SELECT {joined} FROM seats AS other
        WHERE other.game_id IN (SELECT seats.game_id FROM seats
                                JOIN games ON games.id = seats.game_id
                                WHERE seats.bot_id = wanted.value
                                  AND games.origin NOT IN ('CHALLENGE', 'DUEL')
                                ORDER BY seats.game_id DESC LIMIT :recent_games)
          AND other.bot_id != wanted.value)
FROM {wanted} AS wanted
"""


def recent_opponents(conn: Connection,
                     bot_ids: Sequence[int]) -> dict[int, tuple[tuple[int, ...], ...]]:
    """The other seats of each of these bots' last :data:`RECENT_GAMES` games (those in
    play too), newest first: one tuple of bot ids per game."""
    found: dict[int, tuple[tuple[int, ...], ...]] = {}
    for bot_id, met in conn.execute(_OPPONENTS.format(
            wanted=conn.dialect.ids(":bot_ids"),
            joined=conn.dialect.joined("other.game_id || ':' || other.bot_id")), {
            "bot_ids": json.dumps(list(bot_ids)), "recent_games": RECENT_GAMES}):
        numbers = list(map(int, met.replace(":", ",").split(","))) if met else []
        games: dict[int, list[int]] = {}
        for game_id, other in zip(numbers[::2], numbers[1::2], strict=True):
            games.setdefault(game_id, []).append(other)
        found[bot_id] = tuple(tuple(sorted(games[game_id]))
                              for game_id in sorted(games, reverse=True))
    return found


def current(conn: Connection, bot_ids: Sequence[int]) -> list[int]:
    """Those of the bots still in play (neither superseded nor disabled)."""
    return [row[0] for row in conn.execute(
        f"SELECT id FROM bots WHERE id IN {conn.dialect.ids()} AND status IN ('ONLINE', 'OFFLINE')",
        (json.dumps(list(bot_ids)),))]

"""Ratings in the store: kept in step with the results, and rebuilt from them.

Every game that ends with a result is rated inside the transaction that records the result
(:func:`rate_in`, called by :func:`merknera.store.games.finish_in`), so a result and its
rating change commit together or not at all.  Games without a result (superseded, aborted)
are not rated.

**Order.**  Ratings depend on the order games are rated in.  That order is the order of
finish, ``(games.finished_at, games.id)``: :func:`rebuild_in` replays every stored result in
it.  The live order is the same one: usually a game that finishes sorts after every game
rated before it and is simply rated on top.  When it does not (two games finished in the
same millisecond and the one with the larger id committed first, or the clock stepped
back), :func:`rate_in` rewinds the bots of the games that sort after it to their ratings
before it (from ``rating_history``) and rates those games again, in order, after it.  So at
every commit the ratings equal a rebuild from the results stored so far, float for float.

A game in which one bot holds two seats is not rated (one bot cannot be two teams); no game
the platform schedules does that.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from merknera.games.base import Outcome
from merknera.ratings import DEFAULT, Rating, update
from merknera.store.db import Connection, Database, Row

_WITH_RESULT = "games.status = 'FINISHED' AND games.outcome != 'NO_RESULT'"
_RATED = f"{_WITH_RESULT} AND games.rated = 1"
"""A rated game: one with a result (its seats all have a rank), and no anonymous seat."""
_UPSERT = (
    "INSERT INTO ratings (bot_id, game, mu, sigma, rated_games, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (bot_id) DO UPDATE SET game = excluded.game, "
    "mu = excluded.mu, sigma = excluded.sigma, rated_games = excluded.rated_games, "
    "updated_at = excluded.updated_at")


@dataclass(frozen=True)
class BotRating:
    """A bot's current rating and how many rated games it rests on."""

    bot_id: int
    game: str
    rating: Rating
    rated_games: int
    updated_at: str | None
    """``finished_at`` of the game that last changed it; None for an unrated bot."""


@dataclass(frozen=True)
class HistoryPoint:
    """A bot's rating right after one rated game."""

    game_id: int
    finished_at: str
    rating: Rating


@dataclass(frozen=True)
class RebuildSummary:
    """What :func:`rebuild_in` did."""

    games: int
    """Games rated."""
    bots: int
    """Bots with a rating afterwards."""
    changed: int
    """Bots whose stored rating row differed from the rebuilt one (0: it was in step)."""


# -- writes (on the writer's thread, inside a write transaction) --------------------------------


RATING_LOCK = 0x6D726B72  # "mrkr"
"""The advisory lock that puts the finishes of every node in a line for rating."""


def rate_in(conn: Connection, game_id: int, outcome: Outcome) -> bool:
    """Rate a game that was just recorded as finished (inside the same transaction).

    Must run after the game's row and seats are written (``finished_at``, the seats' ranks).
    Does nothing for an outcome without ranks.  Returns whether the game was rated.
    """
    if outcome.ranks is None:
        return False
    # Nodes sharing a PostgreSQL database finish games at the same time: ratings are read,
    # updated and written one finish at a time (a lock held to the end of the
    # transaction), or two finishes would both start from the same rating and one update
    # would be lost.  SQLite's one writer is one at a time already.
    conn.execute(f"SELECT 1 /*pg: , pg_advisory_xact_lock({RATING_LOCK})*/")
    row = conn.execute(f"SELECT game, finished_at, rated FROM games WHERE id = ? AND "
                       f"{_WITH_RESULT}", (game_id,)).fetchone()
    if row is None:
        raise ValueError(f"game {game_id} is not finished with a result; it cannot be rated")
    if not row["rated"]:
        return False  # an anonymous seat: played and kept, but nobody is rated
    game, finished_at = row["game"], row["finished_at"]
    if _rated_after(conn, game, finished_at, game_id):
        _replay_from(conn, game, finished_at, game_id)
        return _has_history(conn, game_id)
    bot_ids = [r[0] for r in conn.execute(
        "SELECT bot_id FROM seats WHERE game_id = ? ORDER BY seat", (game_id,))]
    return _rate_one(conn, game_id, game, finished_at, list(zip(bot_ids, outcome.ranks,
                                                                 strict=True)))


def rebuild_in(conn: Connection) -> RebuildSummary:
    """Recompute every rating from the stored results, in the order of finish.

    Replaces both tables; the numbers equal those kept live, float for float.
    """
    conn.execute(f"SELECT 1 /*pg: , pg_advisory_xact_lock({RATING_LOCK})*/")  # see rate_in
    before = {row[0]: tuple(row) for row in conn.execute(
        "SELECT bot_id, game, mu, sigma, rated_games, updated_at FROM ratings")}
    conn.execute("DELETE FROM rating_history")
    conn.execute("DELETE FROM ratings")
    current: dict[int, BotRating] = {}
    history: list[tuple[int, int, float, float, float]] = []
    rated = 0
    rows = conn.execute(
        "SELECT games.id, games.game, games.finished_at, seats.bot_id, seats.rank "
        f"FROM games JOIN seats ON seats.game_id = games.id WHERE {_RATED} "
        "ORDER BY games.finished_at, games.id, seats.seat")
    for (game_id, game, finished_at), seats in itertools.groupby(
            rows, key=lambda r: (r[0], r[1], r[2])):
        seated = [(seat[3], seat[4]) for seat in seats]
        after = _next(current, game, finished_at, seated)
        if after is None:
            continue
        rated += 1
        for new in after:
            current[new.bot_id] = new
            history.append(_history_row(game_id, new))
    conn.executemany(
        "INSERT INTO rating_history (game_id, bot_id, mu, sigma, ordinal) VALUES (?, ?, ?, ?, ?)",
        history)
    conn.executemany(
        "INSERT INTO ratings (bot_id, game, mu, sigma, rated_games, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?)", [_rating_row(r) for r in current.values()])
    after_rows = {r.bot_id: _rating_row(r) for r in current.values()}
    changed = sum(1 for bot_id in before.keys() | after_rows.keys()
                  if before.get(bot_id) != after_rows.get(bot_id))
    return RebuildSummary(games=rated, bots=len(current), changed=changed)


def _next(current: dict[int, BotRating], game: str, finished_at: str,
          seated: Sequence[tuple[int, int]]) -> list[BotRating] | None:
    """The seats' ratings after a game, given their ratings before it; None if unrated.

    ``seated``: (bot id, rank) in seat order.  The one place a rating is computed, live
    and in a rebuild alike.
    """
    bot_ids = [bot_id for bot_id, _ in seated]
    if len(set(bot_ids)) != len(bot_ids):
        return None
    olds = [current.get(bot_id) for bot_id in bot_ids]
    news = update([DEFAULT if old is None else old.rating for old in olds],
                  [rank for _, rank in seated])
    return [BotRating(bot_id, game, new, (0 if old is None else old.rated_games) + 1,
                      finished_at)
            for bot_id, old, new in zip(bot_ids, olds, news, strict=True)]


def _rate_one(conn: Connection, game_id: int, game: str, finished_at: str,
              seated: Sequence[tuple[int, int]]) -> bool:
    """Rate one game on top of the stored ratings."""
    current = _load(conn, [bot_id for bot_id, _ in seated])
    after = _next(current, game, finished_at, seated)
    if after is None:
        return False
    conn.executemany(_UPSERT, [_rating_row(r) for r in after])
    conn.executemany(
        "INSERT INTO rating_history (game_id, bot_id, mu, sigma, ordinal) VALUES (?, ?, ?, ?, ?)",
        [_history_row(game_id, r) for r in after])
    return True


def _rated_after(conn: Connection, game: str, finished_at: str,
                 game_id: int) -> list[tuple[int, str]]:
    """(id, finished_at) of the games of ``game`` with a result that sort after the point."""
    return [(row[0], row[1]) for row in conn.execute(
        "SELECT id, finished_at FROM games "
        f"WHERE finished_at >= ? AND (finished_at, id) > (?, ?) AND game = ? AND {_RATED} "
        "ORDER BY finished_at, id", (finished_at, finished_at, game_id, game))]


def _replay_from(conn: Connection, game: str, finished_at: str, game_id: int) -> None:
    """Rate again, in order, the game at the point and every game of ``game`` after it."""
    replay = [(game_id, finished_at), *_rated_after(conn, game, finished_at, game_id)]
    seatings = {gid: [(row[0], row[1]) for row in conn.execute(
        "SELECT bot_id, rank FROM seats WHERE game_id = ? ORDER BY seat", (gid,))]
        for gid, _ in replay}
    conn.executemany("DELETE FROM rating_history WHERE game_id = ?",
                     [(gid,) for gid, _ in replay])
    for bot_id in sorted({bot_id for seated in seatings.values() for bot_id, _ in seated}):
        _rewind(conn, bot_id)
    for gid, stamp in replay:
        _rate_one(conn, gid, game, stamp, seatings[gid])


def _rewind(conn: Connection, bot_id: int) -> None:
    """Set a bot's rating to its last remaining history point (none: unrated)."""
    last = conn.execute(
        "SELECT rating_history.mu, rating_history.sigma, games.game, games.finished_at, "
        "(SELECT COUNT(*) FROM rating_history WHERE bot_id = :bot) AS rated_games "
        "FROM rating_history JOIN games ON games.id = rating_history.game_id "
        "WHERE rating_history.bot_id = :bot ORDER BY games.finished_at DESC, games.id DESC "
        "LIMIT 1", {"bot": bot_id}).fetchone()
    if last is None:
        conn.execute("DELETE FROM ratings WHERE bot_id = ?", (bot_id,))
        return
    conn.execute(_UPSERT, (bot_id, last["game"], last["mu"], last["sigma"], last["rated_games"],
                           last["finished_at"]))


def _has_history(conn: Connection, game_id: int) -> bool:
    return conn.execute("SELECT 1 FROM rating_history WHERE game_id = ? LIMIT 1",
                        (game_id,)).fetchone() is not None


def _load(conn: Connection, bot_ids: Iterable[int]) -> dict[int, BotRating]:
    found = {}
    for bot_id in bot_ids:
        row = conn.execute("SELECT * FROM ratings WHERE bot_id = ?", (bot_id,)).fetchone()
        if row is not None:
            found[bot_id] = _bot_rating(row)
    return found


def _bot_rating(row: Row) -> BotRating:
    return BotRating(row["bot_id"], row["game"], Rating(row["mu"], row["sigma"]),
                     row["rated_games"], row["updated_at"])


def _rating_row(r: BotRating) -> tuple[int, str, float, float, int, str | None]:
    return (r.bot_id, r.game, r.rating.mu, r.rating.sigma, r.rated_games, r.updated_at)


def _history_row(game_id: int, r: BotRating) -> tuple[int, int, float, float, float]:
    return (game_id, r.bot_id, r.rating.mu, r.rating.sigma, r.rating.conservative)


# -- the store's interface ----------------------------------------------------------------------


async def rebuild(db: Database) -> RebuildSummary:
    """:func:`rebuild_in` in one write transaction."""
    return await db.transaction(rebuild_in)


async def rebuild_if_needed(db: Database) -> RebuildSummary | None:
    """Rebuild when some game with a result has no rating history (a database that had
    results before migration 002 added ratings); None when every rated game is in step.

    For start-up: it reads every finished game's id once (an index lookup each).
    """
    missing = await db.fetchval(
        f"SELECT EXISTS (SELECT 1 FROM games WHERE {_RATED} AND NOT EXISTS "
        "(SELECT 1 FROM rating_history WHERE rating_history.game_id = games.id) "
        "AND (SELECT COUNT(DISTINCT bot_id) = COUNT(*) FROM seats "
        "WHERE seats.game_id = games.id))")
    return await rebuild(db) if missing else None


async def for_game(db: Database, game: str) -> dict[int, BotRating]:
    """The stored ratings of every bot of a game that has one, by bot id (unrated bots are
    missing: they stand at :data:`merknera.ratings.DEFAULT`)."""
    rows = await db.fetchall("SELECT * FROM ratings WHERE game = ?", (game,))
    return {row["bot_id"]: _bot_rating(row) for row in rows}


async def get(db: Database, bot_id: int) -> BotRating | None:
    """A bot's stored rating, or None if it has played no rated game."""
    row = await db.fetchone("SELECT * FROM ratings WHERE bot_id = ?", (bot_id,))
    return None if row is None else _bot_rating(row)


async def history(db: Database, bot_id: int, limit: int = 1000) -> list[HistoryPoint]:
    """A bot's rating after each of its latest ``limit`` rated games, oldest first."""
    rows = await db.fetchall(
        "SELECT rating_history.game_id, games.finished_at, rating_history.mu, "
        "rating_history.sigma FROM rating_history "
        "JOIN games ON games.id = rating_history.game_id WHERE rating_history.bot_id = ? "
        "ORDER BY games.finished_at DESC, games.id DESC LIMIT ?", (bot_id, limit))
    return [HistoryPoint(row[0], row[1], Rating(row[2], row[3])) for row in reversed(rows)]

"""Ratings in the store: kept in step with the results, and rebuilt from them.

A game that ends with a result is queued for rating (:func:`queue_in`, called by
:func:`merknera.store.games.finish_in`) in the transaction that records the result, so a
result and its place in the queue commit together or not at all.  The queue is rated in
passes (:func:`rate_queued`, run by :class:`merknera.scheduler.rater.Rater` a moment after
results come in): one pass rates every result of that moment with a few statements,
rather than a transaction's worth of statements per game.  Games without a result
(superseded, aborted) are not rated.

**Order.**  Ratings depend on the order games are rated in.  That order is the order of
finish, ``(games.finished_at, games.id)``: :func:`rebuild_in` replays every stored result in
it.  The live order is the same one.  A pass rates only the results stamped before a given
stamp (the newest one handed out when the pass was queued): a result still to come is
stamped no earlier, so it cannot sort before one rated now.  The one exception, games
stamped by another node whose clock is behind, or a clock that stepped back, is handled as
before: a pass that finds a rated game sorting after a queued one rewinds the bots of the
games after it to their ratings before it (from ``rating_history``) and rates those games
again, in order, after it.  So once the queue is empty the ratings equal a rebuild from the
results, float for float.

A game in which one bot holds two seats is not rated (one bot cannot be two teams); no game
the platform schedules does that.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class RatingPass:
    """What one :func:`rate_queued` did."""

    rated: int
    """Games rated."""
    waiting: int
    """Queued games left for a later pass (stamped at or after its stamp)."""


def queue_in(conn: Connection, game_id: int) -> None:
    """Queue a game just recorded as finished with a result, for :func:`rate_queued`."""
    conn.execute("INSERT INTO rating_queue (game_id) VALUES (?)", (game_id,))


def rate_queued(conn: Connection, before: str | None = None) -> RatingPass:
    """Rate the queued games that finished before the stamp ``before`` (all of them when
    None), in the order of finish, inside a write transaction.

    ``before`` must be a stamp no result still to be stored here can sort before: the
    newest :func:`merknera.store.db.now` handed out before this pass was queued.
    """
    # Nodes sharing a PostgreSQL database rate at the same time: ratings are read,
    # updated and written one pass at a time (a lock held to the end of the transaction),
    # or two passes would both start from the same rating and one update would be lost.
    # SQLite's one writer is one at a time already.
    conn.dialect.serialize(conn, RATING_LOCK)
    queued = conn.execute(
        "SELECT games.id, games.game, games.finished_at, "
        f"({_RATED}) AS rateable FROM rating_queue "
        "JOIN games ON games.id = rating_queue.game_id "
        "ORDER BY games.finished_at, games.id").fetchall()
    due = [row for row in queued if before is None or row["finished_at"] < before]
    if not due:
        return RatingPass(0, len(queued))
    ids = json.dumps([row["id"] for row in due])
    # A game rated already (by a rebuild that overlapped its finish) only leaves the queue.
    done = {row[0] for row in conn.execute(
        "SELECT DISTINCT game_id FROM rating_history "
        f"WHERE game_id IN {conn.dialect.ids()}", (ids,))}
    rateable = [(row["id"], row["game"], row["finished_at"]) for row in due
                if row["rateable"] and row["id"] not in done]
    seatings: dict[int, list[tuple[int, int]]] = {game_id: [] for game_id, _, _ in rateable}
    for row in conn.execute("SELECT game_id, bot_id, rank FROM seats WHERE game_id IN "
                            f"{conn.dialect.ids()} ORDER BY game_id, seat", (ids,)):
        if row[0] in seatings:
            seatings[row[0]].append((row[1], row[2]))
    firsts: dict[str, tuple[int, str]] = {}
    for game_id, game, finished_at in rateable:
        firsts.setdefault(game, (game_id, finished_at))
    if any(_rated_after(conn, game, finished_at, game_id)
           for game, (game_id, finished_at) in firsts.items()):
        # A rated game sorts after a queued one (another node's clock, or a clock that
        # stepped back): one game at a time, rewinding those after it, each out of the
        # queue once rated (a game in the queue is not rated yet: see _rated_after).
        rated = 0
        for game_id, game, finished_at in rateable:
            rated += _rate_in_order(conn, game_id, game, finished_at, seatings[game_id])
            conn.execute("DELETE FROM rating_queue WHERE game_id = ?", (game_id,))
        conn.execute(f"DELETE FROM rating_queue WHERE game_id IN {conn.dialect.ids()}", (ids,))
        return RatingPass(rated, len(queued) - len(due))
    current = _load(conn, {bot_id for seated in seatings.values() for bot_id, _ in seated})
    changed: dict[int, BotRating] = {}
    history: list[tuple[int, int, float, float, float]] = []
    rated = 0
    for game_id, game, finished_at in rateable:
        after = _next(current, game, finished_at, seatings[game_id])
        if after is None:
            continue
        rated += 1
        for new in after:
            current[new.bot_id] = changed[new.bot_id] = new
            history.append(_history_row(game_id, new))
    conn.executemany(_UPSERT, [_rating_row(r) for r in changed.values()])
    conn.executemany(
        "INSERT INTO rating_history (game_id, bot_id, mu, sigma, ordinal) VALUES (?, ?, ?, ?, ?)",
        history)
    conn.execute(f"DELETE FROM rating_queue WHERE game_id IN {conn.dialect.ids()}", (ids,))
    return RatingPass(rated, len(queued) - len(due))


def _rate_in_order(conn: Connection, game_id: int, game: str, finished_at: str,
                   seated: Sequence[tuple[int, int]]) -> bool:
    """Rate one game in its place in the order of finish: on top of the stored ratings,
    or, when rated games sort after it, by rating those again after it."""
    if _rated_after(conn, game, finished_at, game_id):
        _replay_from(conn, game, finished_at, game_id)
        return _has_history(conn, game_id)
    return _rate_one(conn, game_id, game, finished_at, seated)


def rebuild_in(conn: Connection) -> RebuildSummary:
    """Recompute every rating from the stored results, in the order of finish.

    Replaces both tables; the numbers equal those kept live, float for float.
    """
    conn.dialect.serialize(conn, RATING_LOCK)  # see rate_queued
    before = {row[0]: tuple(row) for row in conn.execute(
        "SELECT bot_id, game, mu, sigma, rated_games, updated_at FROM ratings")}
    # The results first, then out of the queue exactly those: on PostgreSQL a finish may
    # commit between two statements here, and its game must stay queued for a pass.
    rows = conn.execute(
        "SELECT games.id, games.game, games.finished_at, seats.bot_id, seats.rank "
        f"FROM games JOIN seats ON seats.game_id = games.id WHERE {_RATED} "
        "ORDER BY games.finished_at, games.id, seats.seat").fetchall()
    conn.execute(f"DELETE FROM rating_queue WHERE game_id IN {conn.dialect.ids()}",
                 (json.dumps(sorted({row[0] for row in rows})),))
    conn.execute("DELETE FROM rating_history")
    conn.execute("DELETE FROM ratings")
    current: dict[int, BotRating] = {}
    history: list[tuple[int, int, float, float, float]] = []
    rated = 0
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
    """(id, finished_at) of the rated games of ``game`` that sort after the point (games
    still in the rating queue are not rated yet)."""
    return [(row[0], row[1]) for row in conn.execute(
        "SELECT id, finished_at FROM games "
        f"WHERE finished_at >= ? AND (finished_at, id) > (?, ?) AND game = ? AND {_RATED} "
        "AND NOT EXISTS (SELECT 1 FROM rating_queue WHERE rating_queue.game_id = games.id) "
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
    rows = conn.execute(f"SELECT * FROM ratings WHERE bot_id IN {conn.dialect.ids()}",
                        (json.dumps(sorted(bot_ids)),))
    return {row["bot_id"]: _bot_rating(row) for row in rows}


def _bot_rating(row: Row) -> BotRating:
    return BotRating(row["bot_id"], row["game"], Rating(row["mu"], row["sigma"]),
                     row["rated_games"], row["updated_at"])


def _rating_row(r: BotRating) -> tuple[int, str, float, float, int, str | None]:
    return (r.bot_id, r.game, r.rating.mu, r.rating.sigma, r.rated_games, r.updated_at)


def _history_row(game_id: int, r: BotRating) -> tuple[int, int, float, float, float]:
    return (game_id, r.bot_id, r.rating.mu, r.rating.sigma, r.rating.conservative)


# -- the store's interface ----------------------------------------------------------------------


async def queued_count(db: Database) -> int:
    """Games waiting in the rating queue (every node's)."""
    return int(await db.fetchval("SELECT COUNT(*) FROM rating_queue"))


async def rate_queue(db: Database) -> RatingPass:
    """Rate every queued result now (:func:`rate_queued` without a stamp: for a node that
    stops, and for tools that store results themselves)."""
    return await db.transaction(rate_queued)


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
        "AND NOT EXISTS (SELECT 1 FROM rating_queue WHERE rating_queue.game_id = games.id) "
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

"""Read-only queries behind the results API: bots with records and ratings, games, moves,
leaderboards."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from merknera.protocol.excerpt import excerpt
from merknera.protocol.jsonrpc import EnvelopeError, loads
from merknera.ratings import DEFAULT, Rating, bands, rank_key
from merknera.store import ratings as rating_store
from merknera.store.db import IDS, Connection, Database, Row
from merknera.store.games import GameStatus

_BOT_COLUMNS = (
    "bots.id, bots.name, bots.version, bots.game, users.name AS owner, bots.status, "
    "bots.language, bots.website, bots.description, bots.created_at, bots.last_seen_at, "
    "bots.protocol, bots.self_name, "
    "COUNT(seats.game_id) AS played, "
    "COUNT(CASE WHEN seats.result = 'WIN' THEN 1 END) AS won, "
    "COUNT(CASE WHEN seats.result = 'DRAW' THEN 1 END) AS drawn, "
    "COUNT(CASE WHEN seats.result = 'LOSS' THEN 1 END) AS lost, "
    "ratings.mu AS rating_mu, ratings.sigma AS rating_sigma, "
    "COALESCE(ratings.rated_games, 0) AS rated_games"
)
_BOT_FROM = (
    "FROM bots JOIN users ON users.id = bots.user_id "
    "LEFT JOIN ratings ON ratings.bot_id = bots.id "
    "LEFT JOIN seats ON seats.bot_id = bots.id AND seats.result IN ('WIN', 'DRAW', 'LOSS')"
)


def score(won: int, drawn: int, played: int) -> float:
    """Points per game as a percentage: a win is 1, a draw 1/2 (Merknera counted it as 1)."""
    return round(100.0 * (won + 0.5 * drawn) / played, 2) if played else 0.0


def _dict(row: Row) -> dict[str, Any]:
    return dict(zip(row.keys(), tuple(row), strict=True))


def rating_json(rating: Rating, rated_games: int) -> dict[str, Any]:
    """A rating as the API shows it: the mean and its uncertainty, the conservative
    estimate bots are ranked by (mu - 3 sigma), the 95% interval (mu ± 1.96 sigma), and how
    many rated games it rests on (0: the default rating of a bot that has not played)."""
    return {"mu": rating.mu, "sigma": rating.sigma, "conservative": rating.conservative,
            "low": rating.low, "high": rating.high, "rated_games": rated_games}


def _rating(row: Row) -> Rating:
    mu = row["rating_mu"]
    return DEFAULT if mu is None else Rating(mu, row["rating_sigma"])


def _bot(row: Row) -> dict[str, Any]:
    bot = _dict(row)
    for column in ("rating_mu", "rating_sigma", "rated_games"):
        del bot[column]
    bot["score"] = score(row["won"], row["drawn"], row["played"])
    bot["rating"] = rating_json(_rating(row), row["rated_games"])
    return bot


async def list_bots(db: Database, game: str | None = None,
                    include_retired: bool = False) -> list[dict[str, Any]]:
    """Bots with their win/draw/loss record and their rating, by id."""
    where, params = ["1 = 1"], []
    if game is not None:
        where.append("bots.game = ?")
        params.append(game)
    if not include_retired:
        where.append("bots.status != 'SUPERSEDED'")
    rows = await db.fetchall(
        f"SELECT {_BOT_COLUMNS} {_BOT_FROM} WHERE {' AND '.join(where)} "
        "GROUP BY bots.id, users.id, ratings.bot_id ORDER BY bots.id", tuple(params))
    return [_bot(row) for row in rows]


async def get_bot(db: Database, bot_id: int, history_limit: int = 1000) -> dict[str, Any] | None:
    """One bot with its record, its rating and its rating after each of its latest
    ``history_limit`` rated games (oldest first), and its other versions."""
    row = await db.fetchone(
        f"SELECT {_BOT_COLUMNS} {_BOT_FROM} WHERE bots.id = ? "
        "GROUP BY bots.id, users.id, ratings.bot_id",
        (bot_id,))
    if row is None:
        return None
    bot = _bot(row)
    versions = await db.fetchall(
        "SELECT id, version, status, created_at FROM bots WHERE name = ? ORDER BY id",
        (row["name"],))
    bot["versions"] = [_dict(v) for v in versions]
    bot["rating_history"] = [
        {"game_id": point.game_id, "finished_at": point.finished_at, "mu": point.rating.mu,
         "sigma": point.rating.sigma, "conservative": point.rating.conservative}
        for point in await rating_store.history(db, bot_id, history_limit)]
    return bot


async def leaderboard(db: Database, game: str) -> list[dict[str, Any]]:
    """Current bots of a game ranked by rating, with their W/D/L records.

    The order is :func:`merknera.ratings.rank_key` (the conservative estimate mu - 3 sigma,
    then the mean), then the W/D/L score, games played, name and version; a bot that has not
    played stands at the default rating.  ``rank`` is the position from 1; ``band`` the
    statistically tied band (:func:`merknera.ratings.bands`: rows whose 95% interval overlaps
    the interval of their band's first row share its number); ``tied_with_next`` says whether
    the next row is in the same band (False on the last row).
    """
    # Guests (hexagons players, people) stand on it once a rated game rated them: the
    # anonymous guest of boards that anyone may move on never is.
    bots = [bot for bot in await list_bots(db, game)
            if bot["protocol"] != "guest" or bot["rating"]["rated_games"]]

    def rating(bot: dict[str, Any]) -> Rating:
        return Rating(bot["rating"]["mu"], bot["rating"]["sigma"])

    bots.sort(key=lambda b: (*rank_key(rating(b)), -b["score"], -b["played"], b["name"],
                             b["version"], b["id"]))
    tie_bands = bands([rating(bot) for bot in bots])
    for index, bot in enumerate(bots):
        bot["rank"] = index + 1
        bot["band"] = tie_bands[index]
        bot["tied_with_next"] = index + 1 < len(bots) and tie_bands[index + 1] == tie_bands[index]
    return bots


@dataclass(frozen=True)
class GameFilter:
    """Which games to list."""

    game: str | None = None
    bot: int | None = None
    status: str | None = None
    limit: int = 50
    before: int | None = None
    """Only games with a smaller id (for paging, newest first)."""


async def list_games(db: Database, query: GameFilter) -> list[dict[str, Any]]:
    """Games newest first, each with its seats."""
    where: list[str] = ["1 = 1"]
    params: list[str | int] = []
    if query.game is not None:
        where.append("games.game = ?")
        params.append(query.game)
    if query.status is not None:
        where.append("games.status = ?")
        params.append(query.status)
    if query.bot is not None:
        where.append("games.id IN (SELECT game_id FROM seats WHERE bot_id = ?)")
        params.append(query.bot)
    if query.before is not None:
        where.append("games.id < ?")
        params.append(query.before)
    rows = await db.fetchall(
        "SELECT id, game, status, outcome, reason, detail, created_at, started_at, finished_at "
        f"FROM games WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?",
        (*params, query.limit))
    found = [_dict(row) for row in rows]
    if found:
        seats = await _seats(db, [g["id"] for g in found])
        for game in found:
            game["seats"] = seats.get(game["id"], [])
    return found


async def _seats(db: Database, game_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    rows = await db.fetchall(
        "SELECT seats.game_id, seats.seat, seats.bot_id, bots.name, bots.version, bots.protocol, "
        "seats.result, seats.rank, seats.score FROM seats JOIN bots ON bots.id = seats.bot_id "
        f"WHERE seats.game_id IN {IDS} ORDER BY seats.game_id, seats.seat",
        (json.dumps(game_ids),))
    by_game: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        seat = _dict(row)
        by_game.setdefault(seat.pop("game_id"), []).append(seat)
    return by_game


def _json_or_text(text: str | None) -> Any:
    """A stored body as JSON when it is JSON, else as the text a bot sent."""
    if text is None:
        return None
    try:
        # A bot's reply may be anything, deeply nested JSON included: decode it safely.
        return loads(text)
    except EnvelopeError:
        return text


async def get_game(db: Database, game_id: int) -> dict[str, Any] | None:
    """A game with its seats, outcome and every call of its move log."""
    row = await db.fetchone("SELECT * FROM games WHERE id = ?", (game_id,))
    if row is None:
        return None
    game = _dict(row)
    # A gateway's handle lets its holder move (a Kalaha board, a person's game in the
    # browser): it is the client's, never shown.
    del game["handle"]
    game["rated"] = bool(game["rated"])
    game["settings"] = json.loads(game["settings"])
    game["final_state"] = _json_or_text(game["final_state"])
    game["seats"] = (await _seats(db, [game_id])).get(game_id, [])
    moves = await db.fetchall(
        "SELECT seq, seat, move, request, reply, latency_ms, fault, fault_detail, created_at "
        "FROM moves WHERE game_id = ? ORDER BY seq", (game_id,))
    game["moves"] = [
        {"seq": m["seq"], "seat": m["seat"], "move": _json_or_text(m["move"]),
         "request": _json_or_text(m["request"]), "reply": _json_or_text(m["reply"]),
         "reply_excerpt": excerpt(m["reply"]) if m["fault"] is not None and m["reply"]
         is not None else None,
         "latency_ms": m["latency_ms"], "fault": m["fault"], "fault_detail": m["fault_detail"],
         "created_at": m["created_at"]}
        for m in moves]
    return game


async def seat_owners(db: Database, game_id: int) -> dict[int, int]:
    """The owner (user id) of each seat's bot in a game."""
    rows = await db.fetchall("SELECT seats.seat, bots.user_id FROM seats JOIN bots ON "
                             "bots.id = seats.bot_id WHERE seats.game_id = ?", (game_id,))
    return {row[0]: row[1] for row in rows}


async def game_summary(db: Database, game_id: int) -> dict[str, Any] | None:
    """A game without its move log: status, outcome, reason, times, where it came from,
    and its seats."""
    row = await db.fetchone(
        "SELECT id, game, status, outcome, reason, detail, created_at, started_at, "
        "finished_at, origin, contest, tournament_id, round, rated FROM games WHERE id = ?",
        (game_id,))
    if row is None:
        return None
    game = _dict(row)
    game["rated"] = bool(game["rated"])
    game["seats"] = (await _seats(db, [game_id])).get(game_id, [])
    return game


async def running_games(db: Database, limit: int = 20) -> list[dict[str, Any]]:
    """Games being played now, newest first, each with its seats and moves so far."""
    found = await list_games(db, GameFilter(status="RUNNING", limit=limit))
    if found:
        counts = {row[0]: row[1] for row in await db.fetchall(
            f"SELECT game_id, MAX(seq) FROM moves WHERE game_id IN {IDS} GROUP BY game_id",
            (json.dumps([game["id"] for game in found]),))}
        for game in found:
            game["moves"] = counts.get(game["id"], 0)
    return found


async def bot_counts(db: Database) -> dict[str, tuple[int, int]]:
    """Per game: (current bots, of which online).  Games without bots are left out."""
    rows = await db.fetchall(
        "SELECT game, COUNT(*), COUNT(CASE WHEN status = 'ONLINE' THEN 1 END) FROM bots "
        "WHERE status IN ('ONLINE', 'OFFLINE') GROUP BY game")
    return {row[0]: (row[1], row[2]) for row in rows}


@dataclass(frozen=True)
class ReplayStart:
    """What replaying a game starts from."""

    id: int
    game: str
    status: GameStatus
    seed: int
    settings: dict[str, Any]
    players: tuple[str, ...]
    """The seated bots' names in seat order."""


def replay_start(conn: Connection, game_id: int) -> ReplayStart | None:
    """A game's mnemonic, status, seed, settings and players (None if there is none)."""
    row = conn.execute("SELECT game, status, seed, settings FROM games WHERE id = ?",
                       (game_id,)).fetchone()
    if row is None:
        return None
    players = tuple(name for (name,) in conn.execute(
        "SELECT bots.name FROM seats JOIN bots ON bots.id = seats.bot_id "
        "WHERE seats.game_id = ? ORDER BY seats.seat", (game_id,)))
    return ReplayStart(game_id, row[0], GameStatus(row[1]), row[2], json.loads(row[3]),
                       players)


def move_log(conn: Connection, game_id: int, after: int = 0,
             upto: int | None = None) -> list[Row]:
    """A game's move log after move ``after`` (up to ``upto``) in order, without the calls'
    bodies (most of a log's bytes, which a replay does not need)."""
    return list(conn.execute(
        "SELECT seq, seat, move, latency_ms, fault, fault_detail, created_at FROM moves "
        "WHERE game_id = ? AND seq > ? AND seq <= ? ORDER BY seq",
        (game_id, after, 2**62 if upto is None else upto)))


async def game_status(db: Database, game_id: int) -> GameStatus | None:
    """A game's status, or None if there is no such game."""
    found: str | None = await db.fetchval("SELECT status FROM games WHERE id = ?", (game_id,))
    return None if found is None else GameStatus(found)

"""Read-only queries behind the results API: bots with records and ratings, games, moves,
leaderboards."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from merknera.protocol.excerpt import EXCERPT, excerpt
from merknera.protocol.strict_json import BadJSONError, loads
from merknera.ratings import DEFAULT, Rating, bands, rank_key
from merknera.store import ratings as rating_store
from merknera.store.db import Connection, Database, Dialect, Row
from merknera.store.games import GameStatus
from merknera.work import UNLIMITED, Deadline

_BOT_COLUMNS = (
    "bots.id, bots.name, bots.version, bots.game, users.name AS owner, bots.status, "
    "bots.language, bots.website, bots.description, bots.created_at, bots.last_seen_at, "
    "bots.protocol, bots.self_name, bots.candidate, "
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
    bot["candidate"] = bool(row["candidate"])
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
    # Candidate versions play only challenges and duels: they have pages, not places.
    bots = [bot for bot in await list_bots(db, game) if not bot["candidate"]
            and (bot["protocol"] != "guest" or bot["rating"]["rated_games"])]

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
        "SELECT id, game, status, outcome, reason, detail, created_at, started_at, finished_at, "
        f"origin, rated FROM games WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?",
        (*params, query.limit))
    found = [{**_dict(row), "rated": bool(row["rated"])} for row in rows]
    if found:
        seats = await _seats(db, [g["id"] for g in found])
        for game in found:
            game["seats"] = seats.get(game["id"], [])
    return found


async def _seats(db: Database, game_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    return await db.read(functools.partial(_seats_in, game_ids=game_ids))


def _seats_in(conn: Connection, game_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    rows = conn.execute(
        "SELECT seats.game_id, seats.seat, seats.bot_id, bots.name, bots.version, bots.protocol, "
        "seats.result, seats.rank, seats.score FROM seats JOIN bots ON bots.id = seats.bot_id "
        f"WHERE seats.game_id IN {conn.dialect.ids()} ORDER BY seats.game_id, seats.seat",
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
    except BadJSONError:
        return text


@dataclass(frozen=True)
class StoredGame:
    """A game as the store holds it, its JSON not decoded yet: :meth:`summary` and
    :meth:`moves` decode it (CPU work for a long game or long calls: off the event loop)."""

    row: dict[str, Any]
    seats: list[dict[str, Any]]
    move_rows: list[Row]
    calls_of: frozenset[int] | None
    """The seats whose calls' bodies were read (None: every seat's)."""

    @property
    def running(self) -> bool:
        """Whether the game is not finished yet."""
        return bool(self.row["status"] != GameStatus.FINISHED.value)

    def shows_calls_of(self, seat: int) -> bool:
        """Whether the bodies of the calls of ``seat`` were read."""
        return self.calls_of is None or seat in self.calls_of

    def summary(self) -> dict[str, Any]:
        """The game's columns, its JSON decoded, and its seats."""
        game = dict(self.row)
        # A gateway's handle lets its holder move (a Kalaha board, a person's game in the
        # browser): it is the client's, never shown.
        del game["handle"]
        game["rated"] = bool(game["rated"])
        game["settings"] = json.loads(game["settings"])
        game["final_state"] = _json_or_text(game["final_state"])
        game["seats"] = [dict(seat) for seat in self.seats]
        return game

    def moves(self, deadline: Deadline = UNLIMITED) -> Iterator[dict[str, Any]]:
        """Each call of the move log read, decoded (``request`` and ``reply`` None for the
        seats whose bodies were not read; ``reply_excerpt`` the start of a faulty reply).

        :raises TimeLimitError: once ``deadline`` has passed.
        """
        for m in self.move_rows:
            deadline.check()
            yield {"seq": m["seq"], "seat": m["seat"], "move": _json_or_text(m["move"]),
                   "request": _json_or_text(m["request"]), "reply": _json_or_text(m["reply"]),
                   "reply_excerpt": None if m["reply_head"] is None else excerpt(m["reply_head"]),
                   "latency_ms": m["latency_ms"], "fault": m["fault"],
                   "fault_detail": m["fault_detail"], "created_at": m["created_at"]}


class BodiesTooLongError(Exception):
    """The calls asked for carry more characters of bodies than one answer may."""


@dataclass(frozen=True)
class CallsSize:
    """How many calls a read of a game's move log takes, and the characters of their
    bodies: known from the store before the bodies are read."""

    calls: int
    chars: int
    most_chars: int
    """The characters of bodies one answer may carry."""
    fit: int
    """Of the calls, how many come first within :attr:`most_chars`."""
    last: int
    """The last call's move number (0: none)."""

    @property
    def too_long(self) -> bool:
        """Whether the bodies of more than one call are to be read and come to more than
        :attr:`most_chars` characters."""
        return self.calls > 1 and self.chars > self.most_chars


def calls_size(conn: Connection, game_id: int, calls_of: frozenset[int] | None,
               most_chars: int, after: int = 0, limit: int | None = None) -> CallsSize:
    """The size of :func:`read_game`'s read of the same calls (``fit``: within
    ``most_chars``), counted by the store without reading the bodies out."""
    request, reply, params = _bodies_of(conn.dialect, calls_of)
    calls, fit, chars, last = conn.execute(
        "SELECT count(*), coalesce(sum(CASE WHEN upto <= ? THEN 1 ELSE 0 END), 0), "
        "coalesce(max(upto), 0), coalesce(max(seq), 0) FROM (SELECT seq, "
        "sum(chars) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) AS upto FROM "
        f"(SELECT seq, coalesce(length({request}), 0) + coalesce(length({reply}), 0) "
        f"AS chars {_CALLS}) AS calls) AS sized",
        (most_chars, *params, *_bounds(game_id, after, limit))).fetchone()
    return CallsSize(int(calls), int(chars), most_chars, int(fit), int(last))


def read_game(conn: Connection, game_id: int, calls_of: frozenset[int] | None,
              after: int = 0, limit: int | None = None,
              size: CallsSize | None = None) -> StoredGame | None:
    """A game with its seats and its move log after move ``after`` (at most ``limit``
    calls), reading the calls' bodies (``request``, ``reply``) of the seats ``calls_of``
    only (None: of every seat), and of faulty replies only their first
    :data:`~merknera.protocol.excerpt.EXCERPT` characters and one; None if there is no
    such game.  ``size``: the same calls as :func:`calls_size` counted them, and the
    calls read are those counted, whatever was stored since.

    :raises BodiesTooLongError: when ``size`` is :attr:`~CallsSize.too_long`.
    """
    row = conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
    if row is None:
        return None
    request, reply, params = _bodies_of(conn.dialect, calls_of)
    bounds = _bounds(game_id, after, limit)
    if size is not None:
        if size.too_long:
            raise BodiesTooLongError(
                f"the {size.calls} calls of game {game_id} after move {after} asked for "
                f"carry {size.chars:,} characters of bodies, more than the "
                f"{size.most_chars:,} one answer may carry: ask for {max(1, size.fit)} at a "
                "time (limit), then those after them (after)")
        bounds[2] = size.last
    moves = list(conn.execute(
        f"SELECT seq, seat, move, {request} AS request, {reply} AS reply, "
        "CASE WHEN fault IS NOT NULL THEN substr(reply, 1, ?) END AS reply_head, "
        f"latency_ms, fault, fault_detail, created_at {_CALLS}",
        (*params, EXCERPT + 1, *bounds)))
    return StoredGame(_dict(row), _seats_in(conn, [game_id]).get(game_id, []), moves,
                      calls_of)


_CALLS = "FROM moves WHERE game_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?"
"""The calls of a read of a move log (:func:`_bounds` gives its parameters)."""


def _bounds(game_id: int, after: int, limit: int | None) -> list[int]:
    return [game_id, after, 2**62, 2**62 if limit is None else limit]


def _bodies_of(dialect: Dialect,
               calls_of: frozenset[int] | None) -> tuple[str, str, tuple[str, ...]]:
    """The columns of the bodies read (those of the seats ``calls_of`` only, None: every
    seat's) and their parameters."""
    if calls_of is None:
        return "request", "reply", ()
    shown = json.dumps(sorted(calls_of))
    request, reply = (f"CASE WHEN seat IN {dialect.ids()} THEN {column} END"
                      for column in ("request", "reply"))
    return request, reply, (shown, shown)


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
            f"SELECT game_id, MAX(seq) FROM moves WHERE game_id IN {db.dialect.ids()} "
            "GROUP BY game_id",
            (json.dumps([game["id"] for game in found]),))}
        for game in found:
            game["moves"] = counts.get(game["id"], 0)
    return found


async def bot_counts(db: Database) -> dict[str, tuple[int, int]]:
    """Per game: (current bots, of which online).  Games without bots are left out."""
    rows = await db.fetchall(
        "SELECT game, COUNT(*), COUNT(CASE WHEN status = 'ONLINE' THEN 1 END) FROM bots "
        "WHERE status IN ('ONLINE', 'OFFLINE') AND candidate = 0 GROUP BY game")
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

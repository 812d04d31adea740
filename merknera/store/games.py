"""Games, their seats and their move log.

Writes here are conditional on the game not being finished, so a runner that lost a race
(its game was superseded a moment ago) cannot change a finished game.
"""

from __future__ import annotations

import asyncio
import enum
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from merknera.games.base import JSON, Outcome, SeatResult, Termination
from merknera.protocol.faults import FaultKind
from merknera.store import logs, ratings
from merknera.store.db import Connection, Database, Row, enum_or_none, now, storable


class GameStatus(enum.Enum):
    """Where a game stands."""

    PENDING = "PENDING"
    """Created, no move asked for yet."""
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"


class GameResult(enum.Enum):
    """The stored summary of an outcome."""

    WIN = "WIN"
    DRAW = "DRAW"
    NO_RESULT = "NO_RESULT"


@dataclass(frozen=True)
class SeatRecord:
    """Who sits where."""

    seat: int
    bot_id: int
    ready: bool = False
    """Whether the seat's bot has answered NewGame (or called Ready)."""
    result: SeatResult | None = None
    """How the game ended for this seat; None until it has finished."""


@dataclass(frozen=True)
class MoveRecord:
    """One stored call for a move: an accepted move, or a fault."""

    seq: int
    seat: int
    move: JSON
    """The accepted move as the bot sent it; None for a fault."""
    fault: FaultKind | None
    fault_detail: str | None


@dataclass(frozen=True)
class GameRecord:
    """What a runner needs to resume a game."""

    id: int
    game: str
    status: GameStatus
    seed: int
    settings: dict[str, JSON]
    seats: tuple[SeatRecord, ...]
    moves: tuple[MoveRecord, ...]
    result: GameResult | None = None
    """The summary of the outcome; None until the game has finished."""
    termination: Termination | None = None
    """Why the game ended; None until it has finished."""
    origin: str = "REGISTRATION"
    """What made the game: REGISTRATION, LADDER, TOURNAMENT or MATCH (a gateway's lobby)."""


def summarise(outcome: Outcome) -> GameResult:
    """WIN when one seat won alone, DRAW when first place is shared, NO_RESULT when nobody
    is rated."""
    if outcome.ranks is None:
        return GameResult.NO_RESULT
    return GameResult.WIN if len(outcome.winners) == 1 else GameResult.DRAW


def create(conn: Connection, game: str, seed: int, bot_ids: Sequence[int],
           settings: dict[str, JSON] | None = None, *, origin: str = "REGISTRATION",
           tournament_id: int | None = None, round_number: int | None = None,
           contest: str | None = None, handle: str | None = None, rated: bool = True,
           lease: tuple[str, float] | None = None) -> int:
    """A new pending game with its seats in order (inside a write transaction).

    ``handle`` is the game's id at a gateway (a hexagons game id, a Kalaha board's UUID);
    a game with ``rated`` false (an anonymous seat) changes nobody's rating.  ``lease``
    (node, until) leases it to a node from the start: the node holding its connected
    clients (merknera.scheduler.leases); other games go to whichever node claims them.
    """
    return create_many(conn, game, [(seed, bot_ids)], settings, origin=origin,
                       tournament_id=tournament_id, round_number=round_number,
                       contest=contest, handle=handle, rated=rated, lease=lease)[0]


def create_many(conn: Connection, game: str, seatings: Sequence[tuple[int, Sequence[int]]],
                settings: dict[str, JSON] | None = None, *, origin: str = "REGISTRATION",
                tournament_id: int | None = None, round_number: int | None = None,
                contest: str | None = None, handle: str | None = None, rated: bool = True,
                lease: tuple[str, float] | None = None, challenge_id: int | None = None,
                duel_id: int | None = None, pairs: Sequence[int] | None = None) -> list[int]:
    """:func:`create` for several games alike but for their ``(seed, bot_ids)``; their ids,
    in the order given.  A challenge's or a duel's games (``challenge_id``, ``duel_id``)
    carry their pair's number (``pairs``, one per game: a pair is two games of one seed,
    seats swapped).

    One statement per game and one for all their seats (a newcomer's round robin is two
    games per opponent): each statement is a trip into SQLite that must take the GIL back
    from the event loop, which is busy playing the games already running.  (A game's row
    is inserted on its own because the order of a multi-row INSERT's RETURNING rows is not
    promised, and seeds may repeat.)

    :raises ValueError: if a gateway's handle is given to more than one game.
    """
    if handle is not None and len(seatings) > 1:
        raise ValueError("a gateway's handle names one game")
    node, until = lease or (None, None)
    stored_settings, stamp = json.dumps(settings or {}), now()
    numbers = list(pairs) if pairs is not None else [None] * len(seatings)
    ids = [int(conn.execute(
        "INSERT INTO games (game, seed, settings, created_at, origin, tournament_id, round, "
        "contest, handle, rated, node, lease_until, challenge_id, duel_id, pair) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (game, seed, stored_settings, stamp, origin, tournament_id, round_number, contest,
         handle, int(rated), node, until, challenge_id, duel_id, pair)).fetchone()[0])
        for (seed, _), pair in zip(seatings, numbers, strict=True)]
    conn.executemany(
        "INSERT INTO seats (game_id, seat, bot_id) VALUES (?, ?, ?)",
        [(game_id, seat, bot_id) for game_id, (_, bot_ids) in zip(ids, seatings, strict=True)
         for seat, bot_id in enumerate(bot_ids)])
    return ids


def by_handle(conn: Connection, game: str, handle: str) -> int | None:
    """The id of the game of ``game`` that a gateway knows as ``handle``, if any."""
    row = conn.execute("SELECT id FROM games WHERE handle = ? AND game = ?",
                       (handle, game)).fetchone()
    return None if row is None else int(row[0])


async def load(db: Database, game_id: int) -> GameRecord | None:
    """A game with its seats and its whole move log (and, once finished, how it ended),
    or None."""
    return await db.read(lambda conn: load_in(conn, game_id))


def load_in(conn: Connection, game_id: int) -> GameRecord | None:
    """:func:`load` on a connection of the caller's (inside a transaction, say)."""
    row = conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
    return None if row is None else records_of(conn, [row])[0]


def records_of(conn: Connection, rows: Sequence[Row]) -> list[GameRecord]:
    """The games whose ``games`` rows (every column) are ``rows``, with their seats and
    moves: two queries for all of them, however many."""
    if not rows:
        return []
    ids = json.dumps([row["id"] for row in rows])
    seats: dict[int, list[Row]] = {row["id"]: [] for row in rows}
    moves: dict[int, list[Row]] = {row["id"]: [] for row in rows}
    for seat in conn.execute(
            "SELECT game_id, seat, bot_id, ready, result FROM seats "
            f"WHERE game_id IN {conn.dialect.ids()} ORDER BY game_id, seat", (ids,)):
        seats[seat["game_id"]].append(seat)
    for move in conn.execute(
            "SELECT game_id, seq, seat, move, fault, fault_detail FROM moves "
            f"WHERE game_id IN {conn.dialect.ids()} ORDER BY game_id, seq", (ids,)):
        moves[move["game_id"]].append(move)
    return [_record(row, seats[row["id"]], moves[row["id"]]) for row in rows]


def _record(row: Row, seats: Iterable[Row], moves: Iterable[Row]) -> GameRecord:
    # The columns' text becomes the enums here, and only here (finish_in writes .value).
    return GameRecord(
        id=row["id"], game=row["game"], status=GameStatus(row["status"]), seed=row["seed"],
        settings=json.loads(row["settings"]),
        seats=tuple(SeatRecord(seat["seat"], seat["bot_id"], bool(seat["ready"]),
                               enum_or_none(SeatResult, seat["result"]))
                    for seat in seats),
        moves=tuple(
            MoveRecord(m["seq"], m["seat"], None if m["move"] is None else json.loads(m["move"]),
                       enum_or_none(FaultKind, m["fault"]), m["fault_detail"]) for m in moves),
        result=enum_or_none(GameResult, row["outcome"]),
        termination=enum_or_none(Termination, row["reason"]),
        origin=row["origin"],
    )


async def mark_ready(db: Database, game_id: int, seat: int) -> None:
    """The seat's bot is ready for the game (it holds the assets)."""
    await db.write_one("UPDATE seats SET ready = 1 WHERE game_id = ? AND seat = ?",
                       (game_id, seat))


async def mark_running(db: Database, game_id: int, ready_seats: Sequence[int] = ()) -> None:
    """PENDING -> RUNNING with the start time, and these seats' bots are ready."""
    stamp = now()

    def work(conn: Connection) -> None:
        conn.executemany("UPDATE seats SET ready = 1 WHERE game_id = ? AND seat = ?",
                         [(game_id, seat) for seat in ready_seats])
        conn.execute("UPDATE games SET status = 'RUNNING', started_at = ? "
                     "WHERE id = ? AND status = 'PENDING'", (stamp, game_id))

    await db.transaction(work)


@dataclass(frozen=True)
class LoggedCall:
    """A row for the move log: an accepted move (``move``) or a fault (``fault``)."""

    seq: int
    seat: int
    move: JSON = None
    fault: FaultKind | None = None
    fault_detail: str | None = None
    request: str | None = None
    reply: str | None = None
    latency_ms: float | None = None


def record_moves(db: Database, game_id: int, calls: Sequence[LoggedCall],
                 node: str | None = None) -> asyncio.Future[bool]:
    """Queue calls for the move log, written in one transaction (all or none), unless the
    game has finished by then, or (``node`` given) is not leased to ``node`` any more.

    The future says whether they were written (False: the game was finished, or another
    node plays it).  Writes are applied in the order they are queued.
    """
    stamp = now()
    rows = [(game_id, call.seq, call.seat,
             None if call.fault is not None else json.dumps(call.move), call.request,
             call.reply, call.latency_ms, None if call.fault is None else call.fault.value,
             None if call.fault_detail is None else storable(call.fault_detail), stamp,
             game_id, *(() if node is None else (node,)))
            for call in calls]
    # One statement a row, each inserting only while the game runs: in one transaction the
    # game cannot finish between rows, so all go in or none.  On PostgreSQL the game's row
    # is share-locked, so a node taking the lease over waits for these rows to commit (and
    # then replays them) rather than asking for the same move again.
    leased = "" if node is None else " AND node = ?"
    return db.submit(lambda conn: conn.executemany(
        "INSERT INTO moves (game_id, seq, seat, move, request, reply, latency_ms, fault, "
        "fault_detail, created_at) "
        "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS "
        f"(SELECT 1 FROM games WHERE id = ? AND status != 'FINISHED'{leased}"
        f"{conn.dialect.share_lock})", rows).rowcount > 0)


async def finish(db: Database, game_id: int, outcome: Outcome, final_state: JSON,
                 log_lines: Sequence[tuple[int, str]] = (), node: str | None = None,
                 rates: bool = True) -> bool:
    """Record how a game ended, once, with the bots' log lines about it (``rates`` false:
    its result changes no rating, see :func:`merknera.scheduler.play.rates`).

    Returns False (and changes nothing) if the game had finished already, or (``node``
    given) is not leased to ``node`` any more.
    """
    stamp = now()
    return await db.transaction(
        lambda conn: finish_in(conn, game_id, outcome, final_state, log_lines, stamp, node,
                               rates))


def finish_in(conn: Connection, game_id: int, outcome: Outcome, final_state: JSON,
              log_lines: Sequence[tuple[int, str]], stamp: str,
              node: str | None = None, rates: bool = True) -> bool:
    """:func:`finish` inside a write transaction; a rated game with a result is queued for
    rating in it too (:func:`merknera.store.ratings.queue_in`)."""
    # The update returns the number of seats (numbered from 0) and whether the game is
    # rated: one statement fewer than reading them.
    finished = conn.execute(
        "UPDATE games SET status = 'FINISHED', outcome = ?, reason = ?, detail = ?, "
        "final_state = ?, finished_at = ?, started_at = COALESCE(started_at, ?), "
        "rated = rated * ? "
        "WHERE id = ? AND status != 'FINISHED'" + ("" if node is None else " AND node = ?")
        + " RETURNING (SELECT COUNT(*) FROM seats WHERE seats.game_id = games.id), rated",
        (summarise(outcome).value, outcome.termination.value, storable(outcome.detail),
         json.dumps(final_state), stamp, stamp, int(rates), game_id,
         *(() if node is None else (node,)))).fetchone()
    if finished is None:
        return False
    conn.executemany(
        "UPDATE seats SET result = ?, rank = ?, score = ? WHERE game_id = ? AND seat = ?",
        [(outcome.result_for(seat).value,
          None if outcome.ranks is None else outcome.ranks[seat],
          None if outcome.scores is None else outcome.scores[seat], game_id, seat)
         for seat in range(finished[0])])
    logs.add_many(conn, [(bot_id, message, game_id) for bot_id, message in log_lines], stamp)
    if outcome.ranks is not None and finished[1]:
        # Its place in the rating queue commits with the result (games without a result
        # are not rated).
        ratings.queue_in(conn, game_id)
    return True


def seated(conn: Connection, game_id: int) -> list[int]:
    """The bot ids of a game in seat order."""
    return [row[0] for row in conn.execute(
        "SELECT bot_id FROM seats WHERE game_id = ? ORDER BY seat", (game_id,))]

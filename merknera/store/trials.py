"""Challenges and duels: unrated games an owner asks for, played in pairs (one seed, seats
swapped) between two bots.

A challenge plays a set number of games between a bot of the owner's and any other; a duel
plays pairs between a candidate and a baseline version of one bot until a sequential test
decides.  Their games are made a pair at a time (:func:`add_pair`) by the scheduler's
trials (:mod:`merknera.scheduler.trials`), within their share of the places in play.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from merknera.games import JSON
from merknera.store import games
from merknera.store.db import Connection, Row, now

SCORES = {"WIN": 1.0, "DRAW": 0.5, "LOSS": 0.0}
"""A seat's result as points."""


@dataclass(frozen=True)
class Challenge:
    """A challenge as asked for."""

    id: int
    user_id: int
    bot_id: int
    """The challenger: a bot of the owner's."""
    opponent_id: int
    games: int
    """Games asked for (pairs of two, and a last single game when odd)."""
    created_at: str


@dataclass(frozen=True)
class DuelTerms:
    """What a duel tests: Elo ``elo0`` (H0) against ``elo1`` (H1), with error rates
    ``alpha`` and ``beta``, over at most ``max_pairs`` pairs."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    max_pairs: int = 1000


@dataclass(frozen=True)
class Duel:
    """A duel as stored."""

    id: int
    user_id: int
    candidate_id: int
    baseline_id: int
    terms: DuelTerms
    status: str
    """RUNNING, FINISHED (decided, or ``max_pairs`` played) or STOPPED (by its owner, or a
    version left play)."""
    result: str | None
    """H1 (the candidate is stronger), H0 (it is not), or None (undecided)."""
    decided: list[int] | None
    """The pentanomial counts the duel ended on (games still in play then do not count)."""
    created_at: str
    finished_at: str | None


@dataclass(frozen=True)
class PlayedGame:
    """One game of a challenge or a duel, for the side that asked (the challenger, the
    candidate)."""

    game_id: int
    pair: int
    status: str
    """PENDING, RUNNING or FINISHED."""
    points: float | None
    """The asking side's points (1, 0.5, 0); None until it ended with a result."""


# -- writes (inside a write transaction) ---------------------------------------------------


def create_challenge(conn: Connection, user_id: int, bot_id: int, opponent_id: int,
                     count: int) -> int:
    """Store a challenge of ``count`` games; its id (its games come later)."""
    return int(conn.execute(
        "INSERT INTO challenges (user_id, bot_id, opponent_id, games, created_at) "
        "VALUES (?, ?, ?, ?, ?) RETURNING id",
        (user_id, bot_id, opponent_id, count, now())).fetchone()[0])


def create_duel(conn: Connection, user_id: int, candidate_id: int, baseline_id: int,
                terms: DuelTerms) -> int:
    """Store a running duel; its id (its games come later)."""
    return int(conn.execute(
        "INSERT INTO duels (user_id, candidate_id, baseline_id, elo0, elo1, alpha, beta, "
        "max_pairs, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (user_id, candidate_id, baseline_id, terms.elo0, terms.elo1, terms.alpha, terms.beta,
         terms.max_pairs, now())).fetchone()[0])


TRIALS_LOCK = 0x6D726B74  # "mrkt"
"""The advisory lock that puts the pairs made on every node in a line."""


def add_pair(conn: Connection, game: str, seed: int, first: int, second: int,
             settings: dict[str, JSON], *, single: bool = False,
             challenge_id: int | None = None, duel_id: int | None = None) -> list[int]:
    """The next pair of unrated games of one seed (``first`` in seat one, then in seat
    two), or one game when ``single``; their ids.  None is made (an empty list) unless, in
    this transaction, the duel still runs or the challenge still lacks games, and both
    bots are in play."""
    conn.dialect.serialize(conn, TRIALS_LOCK)
    column, key = ("duel_id", duel_id) if duel_id is not None else ("challenge_id", challenge_id)
    if duel_id is not None:
        going = conn.execute("SELECT 1 FROM duels WHERE id = ? AND status = 'RUNNING'",
                             (duel_id,)).fetchone() is not None
    else:
        going = conn.execute(
            "SELECT 1 FROM challenges WHERE id = ? AND games > (SELECT COUNT(*) FROM games "
            "WHERE challenge_id = ?)", (challenge_id, challenge_id)).fetchone() is not None
    playing = conn.execute("SELECT COUNT(*) FROM bots WHERE id IN (?, ?) "
                           "AND status IN ('ONLINE', 'OFFLINE')", (first, second)).fetchone()[0]
    if not going or playing != 2:
        return []
    pair = int(conn.execute(f"SELECT COALESCE(MAX(pair) + 1, 0) FROM games "
                            f"WHERE {column} = ?", (key,)).fetchone()[0])
    seatings: list[tuple[int, Sequence[int]]] = [(seed, (first, second))]
    if not single:
        seatings.append((seed, (second, first)))
    origin = "DUEL" if duel_id is not None else "CHALLENGE"
    return games.create_many(conn, game, seatings, settings, origin=origin, rated=False,
                             challenge_id=challenge_id, duel_id=duel_id,
                             pairs=[pair] * len(seatings))


def end_duel(conn: Connection, duel_id: int, status: str, result: str | None,
             counts: Sequence[int]) -> bool:
    """A running duel ends (FINISHED or STOPPED, with its result and the pentanomial counts
    it was decided on); False if it had ended."""
    return conn.execute(
        "UPDATE duels SET status = ?, result = ?, decided = ?, finished_at = ? "
        "WHERE id = ? AND status = 'RUNNING'",
        (status, result, json.dumps(list(counts)), now(), duel_id)).rowcount > 0


# -- reads -----------------------------------------------------------------------------------


def challenge(conn: Connection, challenge_id: int) -> Challenge | None:
    """A challenge by id."""
    row = conn.execute("SELECT * FROM challenges WHERE id = ?", (challenge_id,)).fetchone()
    return None if row is None else _challenge(row)


def duel(conn: Connection, duel_id: int) -> Duel | None:
    """A duel by id."""
    row = conn.execute("SELECT * FROM duels WHERE id = ?", (duel_id,)).fetchone()
    return None if row is None else _duel(row)


def open_challenges(conn: Connection) -> list[Challenge]:
    """Challenges with games still to be made, oldest first."""
    rows = conn.execute(
        "SELECT * FROM challenges WHERE games > (SELECT COUNT(*) FROM games "
        "WHERE games.challenge_id = challenges.id) ORDER BY id").fetchall()
    return [_challenge(row) for row in rows]


def running_duels(conn: Connection) -> list[Duel]:
    """Duels still running, oldest first."""
    return [_duel(row) for row in conn.execute(
        "SELECT * FROM duels WHERE status = 'RUNNING' ORDER BY id")]


def challenges_since(conn: Connection, user_id: int, since: str) -> int:
    """How many challenges a user asked for since the stamp ``since``."""
    found: int = conn.execute(
        "SELECT COUNT(*) FROM challenges WHERE user_id = ? AND created_at >= ?",
        (user_id, since)).fetchone()[0]
    return found


def unfinished_games(conn: Connection) -> int:
    """Games of challenges and duels not finished yet (their share of the places)."""
    found: int = conn.execute(
        "SELECT COUNT(*) FROM games WHERE status IN ('PENDING', 'RUNNING') "
        "AND origin IN ('CHALLENGE', 'DUEL')").fetchone()[0]
    return found


def played(conn: Connection, *, challenge_id: int | None = None,
           duel_id: int | None = None, side: int) -> list[PlayedGame]:
    """The games of a challenge or a duel by pair and id, each with the points of the bot
    ``side`` (the challenger, the candidate)."""
    column, key = ("challenge_id", challenge_id) if challenge_id is not None else (
        "duel_id", duel_id)
    rows = conn.execute(
        f"SELECT games.id, games.pair, games.status, games.outcome, seats.result "
        f"FROM games JOIN seats ON seats.game_id = games.id AND seats.bot_id = ? "
        f"WHERE games.{column} = ? ORDER BY games.pair, games.id", (side, key)).fetchall()
    return [PlayedGame(row[0], row[1], row[2],
                       None if row[3] in (None, "NO_RESULT") else SCORES.get(row[4]))
            for row in rows]


def pair_scores(games_played: Sequence[PlayedGame]) -> list[int]:
    """The pairs whose two games ended with a result, in the order of their numbers: the
    asking side's points over each pair, in half points (0 to 4)."""
    by_pair: dict[int, list[float | None]] = {}
    for game in games_played:
        by_pair.setdefault(game.pair, []).append(game.points)
    return [round(2 * sum(p for p in points if p is not None))
            for _, points in sorted(by_pair.items())
            if len(points) == 2 and None not in points]


def pentanomial(games_played: Sequence[PlayedGame]) -> list[int]:
    """The counts of pairs (both games ended with a result) whose points for the asking
    side are 0, 0.5, 1, 1.5 and 2."""
    counts = [0] * 5
    for score in pair_scores(games_played):
        counts[score] += 1
    return counts


def _challenge(row: Row) -> Challenge:
    return Challenge(row["id"], row["user_id"], row["bot_id"], row["opponent_id"],
                     row["games"], row["created_at"])


def _duel(row: Row) -> Duel:
    return Duel(row["id"], row["user_id"], row["candidate_id"], row["baseline_id"],
                DuelTerms(row["elo0"], row["elo1"], row["alpha"], row["beta"],
                          row["max_pairs"]),
                row["status"], row["result"],
                None if row["decided"] is None else list(json.loads(row["decided"])),
                row["created_at"], row["finished_at"])

"""Tournaments: their entrants, rounds, games and byes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from merknera.games.base import SeatResult
from merknera.store.db import Connection, enum_or_none, now
from merknera.store.games import GameStatus


@dataclass(frozen=True)
class TournamentGame:
    """One game of a tournament, from its first seat's view."""

    game_id: int
    round: int
    first: int
    second: int
    status: GameStatus
    result: SeatResult | None
    """The first seat's result, once finished."""


@dataclass(frozen=True)
class Tournament:
    """A tournament with everything needed to pair its next round or rank it."""

    id: int
    game: str
    format: str
    rounds: int
    status: str
    round: int
    created_at: str
    finished_at: str | None
    entrants: tuple[int, ...]
    """Bot ids in seed order."""
    games: tuple[TournamentGame, ...]
    byes: tuple[tuple[int, int], ...]
    """(round, bot id) of every bye."""


def create(conn: Connection, game: str, fmt: str, rounds: int,
           entrants: Sequence[int]) -> int:
    """A pending tournament with its entrants in seed order."""
    tournament_id = int(conn.execute(
        "INSERT INTO tournaments (game, format, rounds, created_at) VALUES (?, ?, ?, ?) "
        "RETURNING id", (game, fmt, rounds, now())).fetchone()[0])
    conn.executemany(
        "INSERT INTO tournament_entrants (tournament_id, bot_id, seed) VALUES (?, ?, ?)",
        [(tournament_id, bot_id, seed) for seed, bot_id in enumerate(entrants, start=1)])
    return tournament_id


def unfinished(conn: Connection) -> list[int]:
    """Ids of the tournaments still to be played."""
    return [row[0] for row in conn.execute(
        "SELECT id FROM tournaments WHERE status != 'FINISHED' ORDER BY id")]


def load(conn: Connection, tournament_id: int) -> Tournament | None:
    """A tournament with its entrants, games and byes."""
    row = conn.execute("SELECT * FROM tournaments WHERE id = ?", (tournament_id,)).fetchone()
    if row is None:
        return None
    entrants = tuple(r[0] for r in conn.execute(
        "SELECT bot_id FROM tournament_entrants WHERE tournament_id = ? ORDER BY seed",
        (tournament_id,)))
    rows = conn.execute(
        "SELECT games.id, games.round, games.status, a.bot_id AS first, b.bot_id AS second, "
        "a.result FROM games JOIN seats a ON a.game_id = games.id AND a.seat = 0 "
        "JOIN seats b ON b.game_id = games.id AND b.seat = 1 "
        "WHERE games.tournament_id = ? ORDER BY games.round, games.id", (tournament_id,))
    played = tuple(TournamentGame(r["id"], r["round"], r["first"], r["second"],
                                  GameStatus(r["status"]), enum_or_none(SeatResult, r["result"]))
                   for r in rows)
    byes = tuple((r[0], r[1]) for r in conn.execute(
        "SELECT round, bot_id FROM tournament_byes WHERE tournament_id = ? ORDER BY round",
        (tournament_id,)))
    return Tournament(row["id"], row["game"], row["format"], row["rounds"], row["status"],
                      row["round"], row["created_at"], row["finished_at"], entrants, played,
                      byes)


def start_round(conn: Connection, tournament_id: int, round_number: int,
                byes: Sequence[int]) -> None:
    """Record that a round begins (its games are created by the caller) and its byes."""
    conn.execute("UPDATE tournaments SET status = 'RUNNING', round = ? WHERE id = ?",
                 (round_number, tournament_id))
    conn.executemany(
        "INSERT INTO tournament_byes (tournament_id, round, bot_id) VALUES (?, ?, ?)",
        [(tournament_id, round_number, bot_id) for bot_id in byes])


def finish(conn: Connection, tournament_id: int) -> None:
    """The last round is over."""
    conn.execute("UPDATE tournaments SET status = 'FINISHED', finished_at = ? WHERE id = ?",
                 (now(), tournament_id))


def listing(conn: Connection, limit: int | None = None) -> list[dict[str, object]]:
    """Every tournament (the newest ``limit`` of them), newest first, without its games."""
    sql = ("SELECT tournaments.*, (SELECT COUNT(*) FROM tournament_entrants e "
           "WHERE e.tournament_id = tournaments.id) AS entrants FROM tournaments "
           "ORDER BY id DESC")
    rows = conn.execute(sql) if limit is None else conn.execute(f"{sql} LIMIT ?", (limit,))
    return [dict(zip(row.keys(), tuple(row), strict=True)) for row in rows]


def entrant_names(conn: Connection,
                  tournament_id: int) -> dict[int, dict[str, str]]:
    """The entrants' names and versions by bot id."""
    return {row[0]: {"name": row[1], "version": row[2]} for row in conn.execute(
        "SELECT bots.id, bots.name, bots.version FROM tournament_entrants "
        "JOIN bots ON bots.id = tournament_entrants.bot_id "
        "WHERE tournament_entrants.tournament_id = ?", (tournament_id,))}

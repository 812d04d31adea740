"""Every numbered migration, from a populated store of every earlier schema version: users,
tokens, bots (current and superseded), finished, running and pending games with seats and
move logs (a fault among them), and bot logs, all written at that version, come through to
the newest schema whole, and the ratings rebuild from them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from merknera import cli
from merknera.names import name_key, name_shape
from merknera.protocol.excerpt import without_addresses
from merknera.store import Database, results
from merknera.store import ratings as rating_store
from merknera.store.db import Connection, migrations
from merknera.store.db import split_statements as _split
from merknera.store.sqlite import REBUILDS_TABLES, SqliteConnection

STAMP = "2026-01-01T00:00:00.000Z"
TABLES = ("users", "tokens", "bots", "games", "seats", "moves", "bot_log")
"""The tables of schema 1, which every later version has."""
SeatRows = list[tuple[int, str | None, int | None]]
"""A game's seats in order: (bot id, result, rank)."""


def store_of_version(path: Path, version: int) -> None:
    """A store migrated to ``version`` as the platform of that version did, then filled
    with rows written in the columns that schema 1 has (every later one keeps them)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function("merknera_name_key", 1, name_key, deterministic=True)
    conn.create_function("merknera_name_shape", 1, name_shape, deterministic=True)
    conn.create_function("merknera_without_addresses", 1, without_addresses,
                         deterministic=True)
    for number, _, sql in migrations()[:version]:
        conn.execute("PRAGMA foreign_keys = " + ("OFF" if sql.startswith(REBUILDS_TABLES)
                                                 else "ON"))
        conn.execute("BEGIN")
        for statement in _split(sql):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number}")
        conn.execute("COMMIT")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("BEGIN")
    for name in ("alice", "bob"):
        conn.execute("INSERT INTO users (name, created_at) VALUES (?, ?)", (name, STAMP))
    conn.execute("INSERT INTO tokens (user_id, token_hash, created_at) VALUES (1, 'h', ?)",
                 (STAMP,))
    bots = [("Ann", "1", 1, "SUPERSEDED"), ("Ann", "2", 1, "ONLINE"), ("Bo", "1", 2, "OFFLINE"),
            ("Cy", "1", 2, "ONLINE")]
    for name, version_text, user, status in bots:
        conn.execute("INSERT INTO bots (name, version, game, user_id, endpoint, status, secret, "
                     "created_at) VALUES (?, ?, 'TICTACTOE', ?, 'http://127.0.0.1:9/rpc', ?, "
                     "'s', ?)", (name, version_text, user, status, STAMP))
    games: list[tuple[str, str | None, str | None, SeatRows]] = [  # seats: (bot, result, rank)
        ("FINISHED", "WIN", "NORMAL", [(2, "WIN", 0), (3, "LOSS", 1)]),
        ("FINISHED", "DRAW", "NORMAL", [(4, "DRAW", 0), (2, "DRAW", 0)]),
        ("FINISHED", "NO_RESULT", "ABORTED", [(1, "NONE", None), (3, "NONE", None)]),
        ("RUNNING", None, None, [(3, None, None), (4, None, None)]),
        ("PENDING", None, None, [(2, None, None), (4, None, None)]),
    ]
    for number, (status, outcome, reason, seats) in enumerate(games, start=1):
        finished = STAMP.replace(":00.000", f":{number:02d}.000") if outcome else None
        conn.execute(
            "INSERT INTO games (game, status, seed, outcome, reason, detail, created_at, "
            "started_at, finished_at) VALUES ('TICTACTOE', ?, ?, ?, ?, ?, ?, ?, ?)",
            (status, number, outcome, reason, reason and f"game {number}", STAMP,
             STAMP if status != "PENDING" else None, finished))
        for seat, (bot, result, rank) in enumerate(seats):
            conn.execute("INSERT INTO seats (game_id, seat, bot_id, result, rank) "
                         "VALUES (?, ?, ?, ?, ?)", (number, seat, bot, result, rank))
        if status != "PENDING":
            conn.execute("INSERT INTO moves (game_id, seq, seat, move, created_at) VALUES "
                         "(?, 1, 0, '4', ?)", (number, STAMP))
            conn.execute("INSERT INTO moves (game_id, seq, seat, fault, fault_detail, "
                         "created_at) VALUES (?, 2, 1, 'TIMEOUT', 'no reply in 10 s', ?)",
                         (number, STAMP))
        conn.execute("INSERT INTO bot_log (bot_id, game_id, message, created_at) VALUES "
                     "(?, ?, 'played', ?)", (seats[0][0], number, STAMP))
    conn.execute("COMMIT")
    conn.close()


def counts(conn: Connection) -> dict[str, int]:
    return {table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: S608
            for table in TABLES}


def kept(conn: Connection) -> list[tuple[object, ...]]:
    """What must come through unchanged: games' results, seats, moves."""
    return [tuple(row) for row in conn.execute(
        "SELECT games.id, games.status, games.outcome, games.reason, games.detail, "
        "games.finished_at, seats.seat, seats.bot_id, seats.result, seats.rank FROM games "
        "JOIN seats ON seats.game_id = games.id ORDER BY games.id, seats.seat")] + [
        tuple(row) for row in conn.execute(
            "SELECT game_id, seq, seat, move, fault, fault_detail FROM moves ORDER BY id")]


@pytest.mark.parametrize("version", range(1, len(migrations())))
async def test_a_populated_store_of_every_earlier_version_migrates_whole(
        tmp_path: Path, version: int) -> None:
    path = tmp_path / f"schema-{version}.db"
    store_of_version(path, version)
    before = sqlite3.connect(path, factory=SqliteConnection)
    before_counts, before_rows = counts(before), kept(before)
    before.close()
    db = await Database.open(path)
    try:
        assert await db.fetchval("PRAGMA user_version") == len(migrations())
        after_counts = await db.read(counts)
        assert after_counts == before_counts
        assert await db.read(kept) == before_rows
        assert await db.fetchall("PRAGMA foreign_key_check") == []
        summary = await db.transaction(rating_store.rebuild_in)
        assert (summary.games, summary.bots) == (2, 3)  # the win and the draw
        board = await results.leaderboard(db, "TICTACTOE")
        assert {row["name"] for row in board} == {"Ann", "Bo", "Cy"}
        flags = await db.fetchall("SELECT origin, handle, rated FROM games")
        assert {tuple(row) for row in flags} == {("REGISTRATION", None, 1)}
    finally:
        await db.close()


def test_db_migrate_brings_an_old_store_to_the_newest_schema(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "old.db"
    store_of_version(path, 5)
    newest = len(migrations())
    assert cli.main(["db", "migrate", "--db", str(path)]) == 0
    assert capsys.readouterr().out.strip() == (
        f"{path}: schema version {newest} (migrated from 5)")
    assert cli.main(["db", "migrate", "--db", str(path)]) == 0
    assert capsys.readouterr().out.strip() == f"{path}: schema version {newest} (it was already)"
    conn = sqlite3.connect(path, factory=SqliteConnection)
    try:
        assert counts(conn)["games"] == 5
    finally:
        conn.close()

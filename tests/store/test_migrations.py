"""Migrations on stores written by the versions before them (006, 008, 009)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from merknera.store import Database
from merknera.store.db import migrations
from merknera.store.db import split_statements as _split

OLD_FAULT = ("cannot connect to http://10.0.0.7:8001/private?key=hunter2: [Errno 111] Connect "
             "call failed ('10.0.0.7', 8001) (you forfeit the game)")


def store_of_version_5(path: Path) -> None:
    conn = sqlite3.connect(path)
    for number, _, sql in migrations()[:5]:
        for statement in _split(sql):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number}")
    stamp = "2026-01-01T00:00:00.000Z"
    conn.execute("INSERT INTO users (name, created_at) VALUES ('alice', ?)", (stamp,))
    conn.execute("INSERT INTO bots (name, version, game, user_id, endpoint, status, secret, "
                 "created_at) VALUES ('Alice', '1', 'TICTACTOE', 1, 'http://10.0.0.7:8001/', "
                 "'ONLINE', 's', ?)", (stamp,))
    conn.execute("INSERT INTO games (game, status, seed, outcome, reason, detail, created_at) "
                 "VALUES ('TICTACTOE', 'FINISHED', 1, 'NO_RESULT', 'ABORTED', ?, ?)",
                 (f"Alice: {OLD_FAULT}", stamp))
    conn.execute("INSERT INTO moves (game_id, seq, seat, fault, fault_detail, created_at) "
                 "VALUES (1, 1, 0, 'UNREACHABLE', ?, ?)", (OLD_FAULT, stamp))
    conn.execute("INSERT INTO moves (game_id, seq, seat, fault, fault_detail, created_at) "
                 "VALUES (1, 2, 0, 'RPC_ERROR', ?, ?)",
                 ("the bot answered an error: " + "SECRET " * 1000, stamp))
    conn.commit()
    conn.close()


async def test_names_get_their_keys_and_old_faults_lose_their_endpoints(
        tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store_of_version_5(path)
    db = await Database.open(path)
    try:
        keys = await db.fetchone("SELECT name_key, name_shape FROM bots")
        assert keys is not None and tuple(keys) == ("a1ice", "A1ice")
        unreachable, error = [row[0] for row in await db.fetchall(
            "SELECT fault_detail FROM moves ORDER BY seq")]
        assert unreachable == ("cannot connect to the endpoint: [Errno 111] Connect call "
                               "failed (you forfeit the game)")
        assert len(error) == 400 and error.endswith("...")
        detail = await db.fetchval("SELECT detail FROM games")
        assert detail == f"Alice: {unreachable}"
        assert await db.fetchval("PRAGMA user_version") == len(migrations())
    finally:
        await db.close()


def store_of_version_7(path: Path) -> None:
    """A store of schema 7 with a game of each origin, seats and a move."""
    conn = sqlite3.connect(path)
    for number, _, sql in migrations()[:7]:
        conn.execute("PRAGMA foreign_keys = ON")
        for statement in _split(sql):
            conn.execute(statement if "merknera_" not in statement else "SELECT 1")
        conn.execute(f"PRAGMA user_version = {number}")
    stamp = "2026-01-01T00:00:00.000Z"
    conn.execute("INSERT INTO users (name, created_at) VALUES ('alice', ?)", (stamp,))
    for name in ("A", "B"):
        conn.execute("INSERT INTO bots (name, version, game, user_id, endpoint, status, "
                     "secret, created_at) VALUES (?, '1', 'TICTACTOE', 1, 'http://x/', "
                     "'ONLINE', 's', ?)", (name, stamp))
    conn.execute("INSERT INTO tournaments (game, format, rounds, created_at) VALUES "
                 "('TICTACTOE', 'ROUND_ROBIN', 1, ?)", (stamp,))
    for origin, tournament in (("REGISTRATION", None), ("LADDER", None), ("TOURNAMENT", 1)):
        game_id = conn.execute(
            "INSERT INTO games (game, status, seed, outcome, reason, detail, final_state, "
            "created_at, started_at, finished_at, origin, tournament_id, round) VALUES "
            "('TICTACTOE', 'FINISHED', 7, 'WIN', 'NORMAL', 'd', '{}', ?, ?, ?, ?, ?, ?)",
            (stamp, stamp, stamp, origin, tournament, 1 if tournament else None)).lastrowid
        conn.executemany("INSERT INTO seats (game_id, seat, bot_id, result) VALUES (?, ?, ?, ?)",
                         [(game_id, 0, 1, "WIN"), (game_id, 1, 2, "LOSS")])
        conn.execute("INSERT INTO moves (game_id, seq, seat, move, created_at) "
                     "VALUES (?, 1, 0, '4', ?)", (game_id, stamp))
    conn.commit()
    conn.close()


SELECT_GAMES = ("SELECT id, game, status, seed, settings, outcome, reason, detail, "
                "final_state, created_at, started_at, finished_at, origin, tournament_id, "
                "round FROM games ORDER BY id")


async def test_games_rebuilt_for_matches_keep_every_row_and_reference(tmp_path: Path) -> None:
    path = tmp_path / "seven.db"
    store_of_version_7(path)
    before = sqlite3.connect(path)
    games_before = before.execute(SELECT_GAMES).fetchall()
    before.close()
    db = await Database.open(path)
    try:
        after = await db.fetchall(SELECT_GAMES)
        assert [tuple(row) for row in after] == games_before
        assert await db.fetchall("PRAGMA foreign_key_check") == []
        assert await db.fetchval("PRAGMA foreign_keys") == 1
        joined = await db.fetchval("SELECT COUNT(*) FROM seats JOIN games ON "
                                   "games.id = seats.game_id JOIN moves ON "
                                   "moves.game_id = games.id")
        assert joined == 6
        indexes = {row[0] for row in await db.fetchall(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'games'")}
        assert {"games_status", "games_game", "games_finished", "games_tournament",
                "games_contest"} <= indexes
    finally:
        await db.close()
    # The new origin and the contest are what the rebuilt table takes; a contest only
    # with a match.
    conn = sqlite3.connect(path)
    try:
        conn.execute("INSERT INTO games (game, seed, created_at, origin, contest) VALUES "
                     "('NUMBERWANG', 1, 'now', 'MATCH', 'cup')")
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("INSERT INTO games (game, seed, created_at, origin, contest) VALUES "
                         "('NUMBERWANG', 1, 'now', 'LADDER', 'cup')")
    finally:
        conn.close()


def store_of_version_8(path: Path) -> None:
    """A store of schema 8: schema 7's games, then the rebuild of migration 008, and a
    Battlebot contest game."""
    store_of_version_7(path)
    conn = sqlite3.connect(path)
    number, _, sql = migrations()[7]
    conn.execute("PRAGMA foreign_keys = OFF")  # 008 rebuilds a table, as the runner runs it
    for statement in _split(sql):
        conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {number}")
    conn.execute("INSERT INTO games (game, seed, created_at, origin, contest) VALUES "
                 "('NUMBERWANG', 1, '2026-01-02T00:00:00.000Z', 'MATCH', 'cup')")
    conn.commit()
    conn.close()


async def test_gateway_handles_and_rated_flags_join_every_stored_game_unchanged(
        tmp_path: Path) -> None:
    path = tmp_path / "eight.db"
    store_of_version_8(path)
    before = sqlite3.connect(path)
    games_before = before.execute(SELECT_GAMES).fetchall()
    before.close()
    db = await Database.open(path)
    try:
        assert await db.fetchval("PRAGMA user_version") == len(migrations())
        assert [tuple(row) for row in await db.fetchall(SELECT_GAMES)] == games_before
        flags = await db.fetchall("SELECT handle, rated FROM games")
        assert [tuple(row) for row in flags] == [(None, 1)] * len(games_before)
    finally:
        await db.close()
    conn = sqlite3.connect(path)
    try:
        insert = ("INSERT INTO games (game, seed, created_at, origin, handle, rated) VALUES "
                  "(?, 1, 'now', 'MATCH', ?, ?)")
        conn.execute(insert, ("KALAHA", "b0a4d", 0))
        conn.execute(insert, ("HEXAGONS", "b0a4d", 1))  # another gateway's namespace
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(insert, ("KALAHA", "b0a4d", 1))
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(insert, ("KALAHA", "other", 2))
    finally:
        conn.close()

"""Migration 006 on a store written by the version before it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from merknera.store import Database
from merknera.store.db import _split, migrations

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

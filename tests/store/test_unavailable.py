"""The store tells an outage from a mistake: a database that cannot be
reached now is a :class:`StoreUnavailableError` (the listeners answer it 503 with
``Retry-After``), a wrong statement is not.

PostgreSQL stopped under a running platform is ``tests/e2e/test_e2e_store_outage.py``; its
connections ended by the server, ``tests/store/test_reconnect.py``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from merknera.store import Database, StoreError
from merknera.store.db import RETRY_AFTER, StoreUnavailableError
from tests.conftest import ArenaFactory

ADMIN = "the-admin-token"


async def test_a_wrong_statement_is_no_outage(db: Database) -> None:
    with pytest.raises((sqlite3.OperationalError, psycopg.errors.UndefinedColumn)):
        await db.fetchval("SELECT no_such_column FROM users")
    with pytest.raises(StoreError) as raised:
        await db.write_one("UPDATE no_such_table SET name = name")
    assert not isinstance(raised.value, StoreUnavailableError)
    # A write that breaks a constraint is the caller's too.
    await db.write_one("INSERT INTO users (name, created_at) VALUES ('a', '')")
    with pytest.raises(StoreError) as raised:
        await db.write_one("INSERT INTO users (name, created_at) VALUES ('a', '')")
    assert not isinstance(raised.value, StoreUnavailableError)


async def test_a_sqlite_file_locked_by_another_process_is_answered_503_until_it_is_free(
        make_arena: ArenaFactory, tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    arena = await make_arena(db=str(path), admin_token=ADMIN)
    db = arena.platform.db
    # The writer waits for a lock 30 s before it gives up; here a moment.
    await db.transaction(lambda conn: conn.execute("PRAGMA busy_timeout = 50"))
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process's write transaction
        with pytest.raises(StoreUnavailableError):
            await db.write_one("UPDATE users SET name = name")
        suspend = "/api/admin/users/alice/suspend"
        headers = {"Authorization": f"Bearer {ADMIN}"}
        refused = await arena.client.post(suspend, headers=headers, json={})
        assert refused.status == 503
        assert refused.headers["Retry-After"] == str(RETRY_AFTER)
        body = await refused.json()
        assert set(body) == {"error"} and "database" in body["error"]
        assert str(path) not in body["error"]  # the logs' detail is not the client's
        # Readers still read (WAL): the pages and the API that only read go on.
        assert (await arena.client.get("/api/bots")).status == 200
        other.execute("ROLLBACK")
        done = await arena.client.post(suspend, headers=headers, json={})
        assert done.status == 200, await done.text()
    finally:
        other.close()

"""``merknera db copy``: the copies it refuses (a target with rows, a missing source, a
source a node serves, a target that is not PostgreSQL, ratings out of step), each leaving
both sides as they were; and a NUL PostgreSQL cannot hold.  The arena they copy is made by
tests/store/test_copy.py."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from merknera import cli
from merknera.scheduler.leases import Leases
from merknera.store import Database, StoreError, node_lock, users
from merknera.store.copy import CopyError, copy
from tests.store.test_copy import ORDER, Populated, check_copied, dump, pg_rows, populate
from tests.support.postgres import Cluster


async def heartbeat_only(url: str) -> None:
    """A node started on the database and beat once: no arena in it, but served."""
    db = await Database.open(url)
    try:
        await Leases(db, "node-z", "http://127.0.0.1:8003", 15.0).heartbeat()
    finally:
        await db.close()


async def one_user(url: str) -> None:
    db = await Database.open(url)
    try:
        await users.create_user(db, "zed")
    finally:
        await db.close()


@pytest.mark.parametrize(("fill", "occupied"), [(one_user, "users, tokens"),
                                                (heartbeat_only, "nodes")])
def test_a_target_with_rows_is_refused_and_left_as_it_was(
        postgres: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        fill: Callable[[str], Coroutine[Any, Any, None]], occupied: str) -> None:
    source = tmp_path / "arena.db"
    asyncio.run(populate(source))
    target = postgres.new_database()
    asyncio.run(fill(target))
    before = asyncio.run(dump(target))
    assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == (f"merknera: {target} is not empty (rows in {occupied}): "
                           "db copy moves an arena into a new database")
    with pytest.raises(CopyError, match=re.escape(f"(rows in {occupied})")):
        asyncio.run(copy(str(source), target))
    assert asyncio.run(dump(target)) == before


def test_a_missing_source_is_refused(
        postgres: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = postgres.new_database()
    for missing in (tmp_path / "nothing.db", tmp_path):
        assert cli.main(["db", "copy", "--from", str(missing), "--to", target]) == 1
        assert capsys.readouterr().err.strip() == f"merknera: {missing}: no such SQLite file"
        with pytest.raises(CopyError, match="no such SQLite file"):
            asyncio.run(copy(str(missing), target))
    assert list(tmp_path.iterdir()) == []  # no file made, not even a lock file
    assert pg_rows(target) == {}  # the target not even migrated


def test_a_source_a_node_serves_is_refused(
        postgres: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "arena.db"
    arena = asyncio.run(populate(source))
    target = postgres.new_database()
    with node_lock.serving(str(source)):
        assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"merknera: {source} is served already (merknera serve, pid ")
        with pytest.raises(StoreError, match="is served already"):
            asyncio.run(copy(str(source), target))
        assert pg_rows(target) == {}
    # once the node has stopped, the copy goes through
    assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 0
    asyncio.run(check_copied(source, target, arena))


@pytest.mark.parametrize("target", ["copy.db", "sqlite:///copy.db", "mysql://u@localhost/a",
                                    "postgresql:/copy"])
def test_a_target_that_is_not_a_postgresql_url_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "arena.db"
    asyncio.run(populate(source))
    monkeypatch.chdir(tmp_path)
    files = {path: path.read_bytes() for path in tmp_path.iterdir()}
    assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == f"merknera: --to {target!r} is not a postgresql:// URL"
    assert {path: path.read_bytes() for path in tmp_path.iterdir()} == files


def tamper(source: Path, sql: str, params: tuple[Any, ...]) -> None:
    """Change the source behind the store's back (one row)."""
    conn = sqlite3.connect(source)
    try:
        assert conn.execute(sql, params).rowcount == 1
        conn.commit()
    finally:
        conn.close()


@pytest.mark.parametrize(("sql", "row", "differ"), [
    ("UPDATE ratings SET mu = mu + 1 WHERE bot_id = ?",
     lambda arena: (arena.bots["crosses"],), "ratings for 1 bots"),
    # the history of a game that later games rated on top of: the ratings are in step
    ("UPDATE rating_history SET mu = mu + 1 WHERE bot_id = ? AND game_id = ?",
     lambda arena: (arena.bots["crosses"], arena.games["old"]), "rating history"),
], ids=["ratings", "rating_history"])
def test_ratings_out_of_step_are_refused_and_leave_no_row(
        postgres: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        sql: str, row: Callable[[Populated], tuple[int, ...]], differ: str) -> None:
    source = tmp_path / "arena.db"
    arena = asyncio.run(populate(source))
    tamper(source, sql, row(arena))
    target = postgres.new_database()
    assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == (
        "merknera: the ratings rebuilt from the copied results differ from the copied "
        f"{differ}; `merknera ratings rebuild --db {source}` brings them in step, "
        "then copy again")
    assert pg_rows(target) == dict.fromkeys(ORDER, 0)
    with pytest.raises(CopyError, match="`merknera ratings rebuild --db "):
        asyncio.run(copy(str(source), target))
    assert pg_rows(target) == dict.fromkeys(ORDER, 0)
    # what the message says to do brings them in step, and the copy goes through
    assert cli.main(["ratings", "rebuild", "--db", str(source)]) == 0
    assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 0
    asyncio.run(check_copied(source, target, arena))


def test_a_nul_that_postgresql_cannot_hold_is_copied_as_a_replacement_character(
        postgres: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "arena.db"
    arena = asyncio.run(populate(source))
    # a bot's reply is kept as it came (decoded with errors="replace"): a NUL stays a NUL
    # in SQLite; PostgreSQL's text cannot hold one, and keeps U+FFFD in its place
    tamper(source, "UPDATE moves SET reply = ? WHERE game_id = ? AND seq = 1",
           ("{\"result\": 4}\x00", arena.games["old"]))
    target = postgres.new_database()
    assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 0
    assert "Traceback" not in capsys.readouterr().err

    async def reply() -> object:
        db = await Database.open(target)
        try:
            return await db.fetchval("SELECT reply FROM moves WHERE game_id = ? AND seq = 1",
                                     (arena.games["old"],))
        finally:
            await db.close()

    assert asyncio.run(reply()) == "{\"result\": 4}\ufffd"

"""``merknera db backup``: taken while a platform plays the ladder on the store (SQLite's
online backup; PostgreSQL's pg_dump, restored with pg_restore), the backup opens as a store,
migrates, and rebuilds the same ratings as the live store's results give for the games it
holds; the backups it refuses; and an older store's backup comes out migrated."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from pytest_aiohttp import AiohttpServer

from merknera.store import Database, ratings
from merknera.store.db import POSTGRESQL_URL, migrations
from tests.conftest import ArenaFactory
from tests.store.test_migrations_every_version import store_of_version
from tests.support import Arena, ScriptedBot, random_mover, until
from tests.support.postgres import Cluster

PATIENCE = 60.0
ATTEMPTS = 5
"""Backups tried until one catches a game under way (nearly always the first)."""

_RATED = ("SELECT id FROM games WHERE status = 'FINISHED' AND outcome != 'NO_RESULT' "
          "AND rated = 1 ORDER BY id")
_RATED_COUNT = ("SELECT COUNT(*) FROM games WHERE status = 'FINISHED' "
                "AND outcome != 'NO_RESULT' AND rated = 1")
_RATED_SEATS = ("SELECT seats.game_id, seats.seat, seats.bot_id, seats.result, seats.rank "
                "FROM seats JOIN games ON games.id = seats.game_id "
                "WHERE games.status = 'FINISHED' AND games.outcome != 'NO_RESULT' "
                "AND games.rated = 1 ORDER BY seats.game_id, seats.seat")


async def merknera(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``merknera ARGS`` as a process: exit code, stdout, stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", *args, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()



async def count(db: Database, sql: str, params: tuple[Any, ...] = ()) -> int:
    return int(await db.fetchval(sql, params))


async def restored(backup: Path, store_target: str, request: pytest.FixtureRequest,
                   tmp_path: Path) -> str:
    """A store to open from the backup: the SQLite file itself, or a new PostgreSQL
    database the dump is restored into (pg_restore)."""
    if not POSTGRESQL_URL.match(store_target):
        return str(backup)
    cluster: Cluster = request.getfixturevalue("postgres")
    url = await asyncio.to_thread(cluster.new_database)
    process = await asyncio.create_subprocess_exec(
        str(cluster.bin / "pg_restore"), "--no-owner", "--exit-on-error", f"--dbname={url}",
        str(backup), stderr=asyncio.subprocess.PIPE)
    _, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return url


async def rating_tables(db: Database) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The ratings and their history, row by row."""
    return ([tuple(row) for row in await db.fetchall(
                "SELECT bot_id, game, mu, sigma, rated_games FROM ratings ORDER BY bot_id")],
            [tuple(row) for row in await db.fetchall(
                "SELECT game_id, bot_id, mu, sigma FROM rating_history "
                "ORDER BY game_id, bot_id")])


async def test_a_backup_taken_during_play_rebuilds_the_live_ratings_of_its_games(
        make_arena: ArenaFactory, store_target: str, aiohttp_server: AiohttpServer,
        tmp_path: Path, request: pytest.FixtureRequest) -> None:
    arena: Arena = await make_arena(db=store_target, ladder=True, ladder_interval=0.1,
                                    max_games_per_bot=2)
    for seed in range(4):
        server = await aiohttp_server(ScriptedBot(next_move=random_mover(seed)).app())
        reply = await arena.register(f"bot{seed}", str(server.make_url("/rpc")))
        assert "result" in reply, reply
    live = arena.platform.db
    await until(lambda: _at_least(count(live, _RATED_COUNT), 10), within=PATIENCE)

    # Back up while games are played: until a backup holds a game under way (one with
    # moves, not finished), which a copy of some moment between two games would not.
    for attempt in range(ATTEMPTS):
        backup = tmp_path / f"backup-{attempt}"
        code, out, err = await merknera("db", "backup", str(backup), "--db", store_target)
        assert code == 0, err
        assert out.startswith(f"Backed up {store_target} to {backup} (")
        copy = await Database.open(await restored(backup, store_target, request, tmp_path))
        under_way = await count(copy, "SELECT COUNT(*) FROM games WHERE status = 'RUNNING' "
                                      "AND EXISTS (SELECT 1 FROM moves "
                                      "WHERE moves.game_id = games.id)")
        if under_way or attempt == ATTEMPTS - 1:
            break
        await copy.close()
    try:
        assert under_way > 0, f"none of {ATTEMPTS} backups caught a game under way"
        assert await copy.schema_version() == len(migrations())
        if not POSTGRESQL_URL.match(store_target):
            assert f"It is a store of schema version {len(migrations())} with " in out
        # The copy is in step with itself: its ratings and queue are what its results give.
        await ratings.rate_queue(copy)
        summary = await ratings.rebuild(copy)
        assert summary.changed == 0 and summary.games >= 10
        copied_rated = [row[0] for row in await copy.fetchall(_RATED)]
        copied_seats = [tuple(row) for row in await copy.fetchall(_RATED_SEATS)]
        copied_ratings = await rating_tables(copy)
    finally:
        await copy.close()

    # The live store played on; once it is quiet, its results for the copy's games are the
    # copy's, and the ratings they give are the copy's, row for row.
    arena.platform.set_ladder_paused(True)
    await arena.settle(PATIENCE)
    assert await count(live, _RATED_COUNT) > len(copied_rated)
    assert (await ratings.rebuild(live)).changed == 0  # the live ratings: its rebuild's
    live_seats = [tuple(row) for row in await live.fetchall(_RATED_SEATS)
                  if row[0] in set(copied_rated)]
    assert live_seats == copied_seats
    later = [row[0] for row in await live.fetchall(_RATED) if row[0] not in set(copied_rated)]
    await live.transaction(lambda conn: conn.executemany(
        "UPDATE games SET rated = 0 WHERE id = ?", [(game_id,) for game_id in later]))
    await ratings.rebuild(live)
    assert await rating_tables(live) == copied_ratings


async def _at_least(counted: Awaitable[int], least: int) -> bool:
    return await counted >= least


async def test_an_older_stores_backup_is_migrated_and_the_store_left_as_it_was(
        tmp_path: Path) -> None:
    source = tmp_path / "old.db"
    older = len(migrations()) - 1
    await asyncio.to_thread(store_of_version, source, older)
    before = source.read_bytes()
    backup = tmp_path / "backup.db"
    code, out, err = await merknera("db", "backup", str(backup), "--db", str(source))
    assert code == 0, err
    assert out.splitlines()[1].startswith(
        f"It is a store of schema version {len(migrations())} (migrated from {older}) with ")
    assert source.read_bytes() == before
    assert oct(backup.stat().st_mode & 0o777) == "0o600"  # token hashes, bots' secrets
    db = await Database.open(str(backup))
    try:
        assert await db.schema_version() == len(migrations())
        assert await count(db, "SELECT COUNT(*) FROM users") == 2
    finally:
        await db.close()


async def test_the_backups_it_refuses_leave_nothing(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    db = await Database.open(str(store))
    await db.close()
    taken = tmp_path / "taken.db"
    taken.write_bytes(b"keep me")
    not_a_store = tmp_path / "notes.db"
    with sqlite3.connect(not_a_store) as conn:
        conn.execute("CREATE TABLE notes (text)")
    for path, db_path, says in [
        (taken, store, f"merknera: {taken} exists already; give a new file's name"),
        (tmp_path / "new.db", tmp_path / "missing.db",
         f"merknera: {tmp_path / 'missing.db'}: no such SQLite file"),
        (tmp_path / "new.db", not_a_store,
         f"merknera: {not_a_store} is not a Merknera store (schema version 0, 1 tables)"),
        (tmp_path / "nowhere" / "new.db", store,
         f"merknera: {tmp_path / 'nowhere'} is not a directory"),
    ]:
        code, _, err = await merknera("db", "backup", str(path), "--db", str(db_path))
        assert (code, err.strip()) == (1, says)
    assert taken.read_bytes() == b"keep me"
    assert not (tmp_path / "new.db").exists()
    assert [name for name in await asyncio.to_thread(os.listdir, tmp_path)
            if "partial" in name] == []


async def test_without_pg_dump_it_says_the_command_to_run(
        postgres: Cluster, tmp_path: Path) -> None:
    url = postgres.new_database().replace(f"//{postgres.user}@",
                                          f"//{postgres.user}:hunter2@")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERKNERA_")}
    env["PATH"] = str(tmp_path)  # no pg_dump there
    backup = tmp_path / "arena.dump"
    code, out, err = await merknera("db", "backup", str(backup), "--db", url, env=env)
    assert (code, out) == (1, "")
    assert "merknera: pg_dump is not on PATH" in err
    without = url.replace(":hunter2@", "@")
    assert err.rstrip().endswith(
        f"  pg_dump --format=custom --file={backup} --dbname={without}")
    assert "hunter2" not in err
    assert not backup.exists()


async def test_a_url_with_a_password_dumps_and_no_output_shows_it(
        postgres: Cluster, tmp_path: Path) -> None:
    url = await asyncio.to_thread(postgres.new_database)
    db = await Database.open(url)
    await db.close()
    with_password = url.replace(f"//{postgres.user}@", f"//{postgres.user}:hunter2@")
    backup = tmp_path / "arena.dump"
    code, out, err = await merknera("db", "backup", str(backup), "--db", with_password)
    assert code == 0, err
    assert out.startswith(f"Backed up {url.replace('@', ':***@')} to {backup} (")
    assert "hunter2" not in out + err
    assert "pg_restore --dbname=URL" in out
    assert backup.read_bytes()[:5] == b"PGDMP"  # pg_dump's custom format

"""The embedded store: a SQLite file in WAL mode through aiosqlite.

aiosqlite runs each connection on its own thread, and a shared connection shares its
transaction, hence one writer (``BEGIN IMMEDIATE`` ... ``COMMIT`` per batch) and separate
readers; in WAL mode readers never block the writer.  One process at a time serves a file
(:mod:`merknera.store.node_lock`).
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from merknera.names import name_key, name_shape
from merknera.protocol.excerpt import without_addresses
from merknera.store.db import Database, Dialect, StoreError, migrations, split_statements
from merknera.threads import as_helper

T = TypeVar("T")

REBUILDS_TABLES = "-- rebuilds tables"
"""The first line of a migration that rebuilds tables (run with foreign keys off)."""

UNAVAILABLE_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR,
                               sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_FULL,
                               sqlite3.SQLITE_PROTOCOL})
"""SQLite's primary result codes of a file that cannot be used now: locked by another
process (past the busy timeout), unreadable or unwritable (I/O errors, a file that cannot
be opened, a full disk)."""


def unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` says that the file cannot be used now, rather than that a statement
    was wrong (both are ``sqlite3.OperationalError``: the result code tells them apart)."""
    # An error raised by Python code rather than by SQLite has no result code.
    code = getattr(exc, "sqlite_errorcode", None) if isinstance(
        exc, sqlite3.OperationalError) else None
    return code is not None and code & 0xFF in UNAVAILABLE_CODES


SQLITE = Dialect(begin="BEGIN IMMEDIATE", errors=(sqlite3.Error,), unavailable=unavailable)


class SqliteLink:
    """An aiosqlite connection as a :class:`~merknera.store.db.Link`."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.conn = conn

    def run(self, work: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Queue ``work(sqlite3_connection, *args)`` on the connection's own thread; the
        future of its result at once.

        aiosqlite has no public call that runs several statements in one trip to its
        thread: each ``execute`` is a round trip (about 50 us here, bench/referee.py), and
        those trips were most of the cost of a move.  So this puts the work on the queue
        of aiosqlite's thread itself, as its ``_execute`` does (``_tx`` and ``_conn`` are
        its queue and sqlite3 connection), but without the coroutine ``_execute`` is: the
        store's writer sends a batch per callback, and a coroutine would cost it a task
        each time.  aiosqlite is pinned to 0.22.* in pyproject.toml for these names.
        """
        conn = self.conn
        raw: sqlite3.Connection | None = conn._conn
        if not conn._running or raw is None:
            raise ValueError("Connection closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        conn._tx.put_nowait((future, functools.partial(work, raw, *args)))
        return future

    async def close(self) -> None:
        await self.conn.close()


async def _connect(path: str) -> aiosqlite.Connection:
    # isolation_level must be given here: setting it later touches sqlite3 from the
    # wrong thread (research/aesthetics.md).  None = autocommit; we issue BEGIN ourselves.
    conn = await aiosqlite.connect(path, isolation_level=None, timeout=30.0)
    conn.row_factory = sqlite3.Row
    # Migration 006 fills the name keys of the bots stored before it, and clears their
    # fault messages, with these.
    await conn.create_function("merknera_name_key", 1, name_key, deterministic=True)
    await conn.create_function("merknera_name_shape", 1, name_shape, deterministic=True)
    await conn.create_function("merknera_without_addresses", 1, without_addresses,
                               deterministic=True)
    await conn.execute("PRAGMA foreign_keys = ON")
    await conn.execute("PRAGMA busy_timeout = 30000")
    return conn


class SqliteDatabase(Database):
    """A SQLite file opened for the platform."""

    dialect = SQLITE
    backend = "sqlite"

    @classmethod
    async def connect(cls, path: str, readers: int) -> SqliteDatabase:
        """Open (creating if needed) and migrate the file at ``path``."""
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            writer = await _connect(path)
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: cannot open it as a SQLite store: {exc}") from exc
        try:
            mode = await (await writer.execute("PRAGMA journal_mode = WAL")).fetchone()
            if path != ":memory:" and (mode is None or str(mode[0]).lower() != "wal"):
                raise StoreError(f"{path}: cannot switch to WAL mode (got {mode!r})")
            # NORMAL is durable against a crash of the process in WAL mode (only a power
            # loss may drop the last commits), and keeps each move's write short.
            await writer.execute("PRAGMA synchronous = NORMAL")
            await _migrate(writer, path)
        except sqlite3.DatabaseError as exc:  # not a database, or a damaged one
            await writer.close()
            raise StoreError(f"{path}: cannot open it as a SQLite store: {exc}") from exc
        except BaseException:
            await writer.close()
            raise
        try:
            opened: list[aiosqlite.Connection] = []
            try:
                for _ in range(max(1, readers)):
                    opened.append(await _connect(path))
            except BaseException:
                for reader in opened:
                    await reader.close()
                raise
        except BaseException:
            await writer.close()
            raise
        links = [SqliteLink(writer), *(SqliteLink(reader) for reader in opened)]
        for link in links:
            await link.run(lambda _conn: as_helper())
        return cls(path, links[0], links[1:])

    async def schema_version(self) -> int:
        return int(await self.fetchval("PRAGMA user_version"))

    async def table_names(self) -> list[str]:
        # sqlite_sequence and sqlite_stat1 are SQLite's bookkeeping.
        return [row[0] for row in await self.fetchall(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")]


async def _migrate(conn: aiosqlite.Connection, path: str) -> None:
    version = int((await (await conn.execute("PRAGMA user_version")).fetchone() or [0])[0])
    known = migrations()
    if version > len(known):
        raise StoreError(f"{path} has schema version {version}, newer than this Merknera "
                         f"knows ({len(known)}); upgrade Merknera")
    for number, name, sql in known[version:]:
        statements = split_statements(sql)
        # A migration that rebuilds a table others refer to (SQLite cannot drop a CHECK)
        # runs with foreign keys off, as SQLite's own procedure for it says, and checks
        # every reference before it commits.  The pragma is a no-op inside a transaction.
        rebuilds = sql.startswith(REBUILDS_TABLES)
        if rebuilds:
            await conn.execute("PRAGMA foreign_keys = OFF")
        await conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements:
                await conn.execute(statement)
            if rebuilds:
                broken = list(await (await conn.execute("PRAGMA foreign_key_check")).fetchall())
                if broken:
                    raise sqlite3.IntegrityError(
                        f"{len(broken)} rows refer to rows that are gone, e.g. {tuple(broken[0])}")
            await conn.execute(f"PRAGMA user_version = {number}")
            await conn.execute("COMMIT")
        except sqlite3.Error as exc:
            await conn.execute("ROLLBACK")
            raise StoreError(f"{path}: migration {name} failed: {exc}") from exc
        finally:
            if rebuilds:  # outside the transaction, where the pragma takes effect
                await conn.execute("PRAGMA foreign_keys = ON")

"""The embedded store: a SQLite file in WAL mode through Python's ``sqlite3``.

Each connection runs on a thread of its own (:class:`~.db.Link`), and a shared connection
shares its transaction, hence one writer (``BEGIN IMMEDIATE`` ... ``COMMIT`` per batch)
and separate readers; in WAL mode readers never block the writer.  One process at a time
serves a file (:mod:`merknera.store.node_lock`).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from merknera.names import name_key, name_shape
from merknera.protocol.excerpt import without_addresses
from merknera.store.db import (
    Database,
    Dialect,
    Link,
    StoreError,
    migrations,
    split_statements,
)

T = TypeVar("T")

REBUILDS_TABLES = "-- rebuilds tables"
"""The first line of a migration that rebuilds tables (run with foreign keys off)."""

UNAVAILABLE_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR,
                               sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_FULL,
                               sqlite3.SQLITE_PROTOCOL})
"""SQLite's primary result codes of a file that cannot be used now: locked by another
process (past the busy timeout), unreadable or unwritable (I/O errors, a file that cannot
be opened, a full disk)."""


class SqliteDialect(Dialect):
    """SQLite's SQL and errors.  One writer runs every write transaction alone, so no row
    or advisory lock is needed."""

    begin = "BEGIN IMMEDIATE"
    shared = False
    migrations_folder = ""
    errors = (sqlite3.Error,)

    def ids(self, param: str = "?") -> str:
        return f"(SELECT value FROM json_each({param}))"

    def joined(self, expression: str) -> str:
        return f"group_concat({expression})"

    def unavailable(self, exc: BaseException) -> bool:
        """Whether ``exc`` says that the file cannot be used now, rather than that a
        statement was wrong (both are ``sqlite3.OperationalError``: the result code tells
        them apart)."""
        # An error raised by Python code rather than by SQLite has no result code.
        code = getattr(exc, "sqlite_errorcode", None) if isinstance(
            exc, sqlite3.OperationalError) else None
        return code is not None and code & 0xFF in UNAVAILABLE_CODES


SQLITE = SqliteDialect()


class SqliteConnection(sqlite3.Connection):
    """A ``sqlite3`` connection that names its :class:`~.db.Dialect`."""

    dialect: Dialect = SQLITE


class SqliteLink(Link):
    """A ``sqlite3`` connection on a thread of its own (:class:`~.db.Link`)."""

    def __init__(self, conn: SqliteConnection, thread: ThreadPoolExecutor) -> None:
        super().__init__(thread)
        self.conn = conn

    @classmethod
    async def open(cls, path: str) -> SqliteLink:
        """Open the file (on the new thread, the connection's only user).

        :raises sqlite3.Error: when it cannot be opened.
        """
        thread, conn = await Link.on_thread("merknera-sqlite",
                                            functools.partial(_connect, path))
        return cls(conn, thread)

    def _call(self, work: Callable[..., T], *args: Any) -> T:
        return work(self.conn, *args)

    def _disconnect(self) -> None:
        self.conn.close()


def _connect(path: str) -> SqliteConnection:
    # isolation_level None = autocommit: the store issues BEGIN itself.
    conn = sqlite3.connect(path, isolation_level=None, timeout=30.0, factory=SqliteConnection)
    conn.row_factory = sqlite3.Row
    # Migration 006 fills the name keys of the bots stored before it, and clears their
    # fault messages, with these.
    conn.create_function("merknera_name_key", 1, name_key, deterministic=True)
    conn.create_function("merknera_name_shape", 1, name_shape, deterministic=True)
    conn.create_function("merknera_without_addresses", 1, without_addresses,
                         deterministic=True)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def _prepare(conn: sqlite3.Connection, path: str) -> None:
    """The writer's setup: WAL mode, its durability, the schema migrated."""
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()
    if path != ":memory:" and (mode is None or str(mode[0]).lower() != "wal"):
        raise StoreError(f"{path}: cannot switch to WAL mode (got {mode!r})")
    # NORMAL is durable against a crash of the process in WAL mode (only a power loss may
    # drop the last commits), and keeps each move's write short.
    conn.execute("PRAGMA synchronous = NORMAL")
    _migrate(conn, path)


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
            writer = await SqliteLink.open(path)
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: cannot open it as a SQLite store: {exc}") from exc
        links = [writer]
        try:
            try:
                await writer.run(_prepare, path)
            except sqlite3.DatabaseError as exc:  # not a database, or a damaged one
                raise StoreError(f"{path}: cannot open it as a SQLite store: {exc}") from exc
            for _ in range(max(1, readers)):
                links.append(await SqliteLink.open(path))
        except BaseException:
            for link in links:
                await link.close()
            raise
        return cls(path, links[0], links[1:])

    async def schema_version(self) -> int:
        return int(await self.fetchval("PRAGMA user_version"))

    async def table_names(self) -> list[str]:
        # sqlite_sequence and sqlite_stat1 are SQLite's bookkeeping.
        return [row[0] for row in await self.fetchall(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")]


def _migrate(conn: sqlite3.Connection, path: str) -> None:
    version = int((conn.execute("PRAGMA user_version").fetchone() or [0])[0])
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
            conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements:
                conn.execute(statement)
            if rebuilds:
                broken = conn.execute("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise sqlite3.IntegrityError(
                        f"{len(broken)} rows refer to rows that are gone, e.g. {tuple(broken[0])}")
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.execute("ROLLBACK")
            raise StoreError(f"{path}: migration {name} failed: {exc}") from exc
        finally:
            if rebuilds:  # outside the transaction, where the pragma takes effect
                conn.execute("PRAGMA foreign_keys = ON")

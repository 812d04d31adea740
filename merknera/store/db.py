"""The SQLite connection setup: one writer, a pool of readers, numbered migrations.

aiosqlite runs each connection on its own thread, and a shared connection shares its
transaction.  So every write is a synchronous function queued on the one writer
(:meth:`Database.transaction`), and one task at a time runs the queue as ``BEGIN IMMEDIATE``
... ``COMMIT`` on the writer's thread: nothing else can interleave with a transaction.
Readers use connections of their own (:data:`READERS`, taken in turn, so that one slow
query, a big page or a replay, holds up no other reader); in WAL mode they never block the
writer and always see committed data.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import re
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from merknera.names import name_key, name_shape
from merknera.protocol.excerpt import without_addresses

Row = sqlite3.Row
Params = tuple[Any, ...] | dict[str, Any]
T = TypeVar("T")
E = TypeVar("E", bound=enum.Enum)

_MIGRATION_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


IDS = "(SELECT value FROM json_each(?))"
"""``IN`` this, with ids given as one JSON array: one SQL variable however many ids (SQLite
allows 32,766 variables to a statement)."""


READERS = 4
"""Read connections of a store: pages, the API and replays read while games are played."""


class StoreError(RuntimeError):
    """The database cannot be used (wrong file, newer schema, failed migration)."""


_last_stamp = ""


def now() -> str:
    """The current UTC time as ISO 8601 with milliseconds, as every timestamp is stored.

    Never earlier than the last one this process gave: games are rated in the order of
    their ``finished_at``, and a wall clock stepping back (NTP, a resumed VM) would otherwise
    make each later finish re-rate every game stamped "in the future".
    """
    global _last_stamp
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    _last_stamp = max(stamp, _last_stamp)
    return _last_stamp


def enum_or_none(kind: type[E], text: str | None) -> E | None:
    """A nullable text column as a member of its enum (the store's rows hold ``.value``).

    Callers of the store get the enum, so the text is parsed here, where it is read, and
    nowhere else; an unknown value raises ValueError rather than travel on as a string.
    """
    return None if text is None else kind(text)


def migrations() -> list[tuple[int, str, str]]:
    """The numbered migrations shipped with the package: (number, file name, SQL)."""
    found = []
    for entry in resources.files("merknera.store.migrations").iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text("utf-8")))
    found.sort()
    numbers = [number for number, _, _ in found]
    if numbers != list(range(1, len(found) + 1)):
        raise StoreError(f"migrations must be numbered 001, 002, ... without gaps: {numbers}")
    return found


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


class Database:
    """A SQLite file opened for the platform.  Open with :meth:`open`, close with :meth:`close`.

    * :meth:`transaction` runs a short synchronous function on the writer's thread inside a
      write transaction.  Calls made at about the same time share one transaction (group
      commit); one failing call changes nothing and does not disturb the others.  Every
      write goes this way, from a move to a registration.
    * :meth:`read` runs a synchronous function on a free reader's thread; :meth:`fetchall`,
      :meth:`fetchone` and :meth:`fetchval` are one-query shortcuts.
    """

    def __init__(self, path: str, writer: aiosqlite.Connection,
                 readers: list[aiosqlite.Connection]) -> None:
        self.path = path
        self._writer = writer
        self._readers = readers
        self._free: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        for reader in readers:
            self._free.put_nowait(reader)
        self._pending: list[tuple[Callable[[sqlite3.Connection], Any], asyncio.Future[Any]]] = []
        self._flusher: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, path: str | Path, readers: int = READERS) -> Database:
        """Open (creating if needed) and migrate the database at ``path``, with ``readers``
        read connections."""
        path = str(path)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        writer = await _connect(path)
        try:
            mode = await (await writer.execute("PRAGMA journal_mode = WAL")).fetchone()
            if path != ":memory:" and (mode is None or str(mode[0]).lower() != "wal"):
                raise StoreError(f"{path}: cannot switch to WAL mode (got {mode!r})")
            # NORMAL is durable against a crash of the process in WAL mode (only a power
            # loss may drop the last commits), and keeps each move's write short.
            await writer.execute("PRAGMA synchronous = NORMAL")
            await _migrate(writer, path)
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
        return cls(path, writer, opened)

    async def close(self) -> None:
        """Close both connections once the writes already queued are done."""
        while self._flusher is not None:
            await asyncio.shield(self._flusher)
        await self._writer.close()
        for reader in self._readers:
            await reader.close()

    # -- writes -----------------------------------------------------------------------------

    async def transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work(connection)`` in a write transaction on the writer's thread.

        ``work`` must be quick, must not block on anything but SQLite, and must not change
        anything outside the database (it may run twice: see :func:`_run_batch`).  Its
        exception, if any, is raised here, and its writes are rolled back.
        """
        return await self.submit(work)

    def submit(self, work: Callable[[sqlite3.Connection], T]) -> asyncio.Future[T]:
        """Queue ``work`` like :meth:`transaction` and return its future at once.

        Works run in the order they were submitted, so a caller may submit its next write
        before the previous one has committed.
        """
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.append((work, future))
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush(), name="store-writer")
        return future

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    # Shielded: a cancelled writer still lets the batch finish on its thread.
                    outcomes = await asyncio.shield(
                        _in_thread(self._writer, _run_batch, [work for work, _ in batch]))
                except BaseException as exc:
                    _fail(batch, StoreError(f"the store writer failed: {exc!r}"))
                    if not isinstance(exc, Exception):
                        raise
                    continue
                for (_, future), (ok, value) in zip(batch, outcomes, strict=True):
                    if future.done():
                        continue  # its caller was cancelled; the work is done all the same
                    if ok:
                        future.set_result(value)
                    else:
                        future.set_exception(value)
        finally:
            self._flusher = None
            _fail(self._pending, StoreError("the store writer stopped"))
            self._pending = []

    async def write_one(self, sql: str, params: Params = ()) -> int:
        """Run one write statement (group-committed); returns the rows it changed."""
        return await self.transaction(lambda conn: conn.execute(sql, params).rowcount)

    # -- reads ------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _reader(self) -> AsyncIterator[aiosqlite.Connection]:
        """A free reader for one read.  Given back even if the read is cancelled: a
        connection runs its calls in order on its thread, so the next read waits for the
        cancelled one's query there."""
        reader = await self._free.get()
        try:
            yield reader
        finally:
            self._free.put_nowait(reader)

    async def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work(connection)`` on a reader's thread (one trip for several queries)."""
        async with self._reader() as reader:
            return await _in_thread(reader, work)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Rows of a query on a reader."""
        async with self._reader() as reader:
            cursor = await reader.execute(sql, params)
            return list(await cursor.fetchall())

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of a query on a reader, or None."""
        async with self._reader() as reader:
            cursor = await reader.execute(sql, params)
            return await cursor.fetchone()

    async def fetchval(self, sql: str, params: Params = ()) -> Any:
        """The first column of the first row, or None."""
        row = await self.fetchone(sql, params)
        return None if row is None else row[0]


def _fail(batch: list[tuple[Any, asyncio.Future[Any]]], error: Exception) -> None:
    for _, future in batch:
        if not future.done():
            future.set_exception(error)


async def _in_thread(conn: aiosqlite.Connection, work: Callable[..., T], *args: Any) -> T:
    """Run ``work(sqlite3_connection, *args)`` on an aiosqlite connection's own thread.

    aiosqlite has no public call that runs several statements in one trip to its thread:
    each ``execute`` is a round trip (about 50 us here, bench/referee.py), and those trips
    were most of the cost of a move.  ``_execute`` is the method every public call of
    aiosqlite goes through, and ``_conn`` its sqlite3 connection; aiosqlite is pinned to
    0.22.* in pyproject.toml for that reason.
    """
    raw: sqlite3.Connection = conn._conn
    result: T = await conn._execute(work, raw, *args)  # type: ignore[no-untyped-call]
    return result


def _run_batch(conn: sqlite3.Connection,
               works: list[Callable[[sqlite3.Connection], Any]]) -> list[tuple[bool, Any]]:
    """One transaction for a batch of works (runs on the writer's thread).

    The common case, every work succeeding, costs one BEGIN and one COMMIT for the batch.
    If a work raises, the batch is rolled back and each work runs again in a transaction
    of its own, so that one failure changes nothing and disturbs no other work.
    """
    try:
        conn.execute("BEGIN IMMEDIATE")
        results = [work(conn) for work in works]
        conn.execute("COMMIT")
        return [(True, result) for result in results]
    except Exception:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    return [_run_alone(conn, work) for work in works]


def _run_alone(conn: sqlite3.Connection,
               work: Callable[[sqlite3.Connection], Any]) -> tuple[bool, Any]:
    try:
        conn.execute("BEGIN IMMEDIATE")
        result = work(conn)
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return False, StoreError(f"a write transaction failed: {exc}")
    except Exception as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return False, exc
    return True, result
REBUILDS_TABLES = "-- rebuilds tables"
"""The first line of a migration that rebuilds tables (run with foreign keys off)."""


async def _migrate(conn: aiosqlite.Connection, path: str) -> None:
    version = int((await (await conn.execute("PRAGMA user_version")).fetchone() or [0])[0])
    known = migrations()
    if version > len(known):
        raise StoreError(f"{path} has schema version {version}, newer than this Merknera "
                         f"knows ({len(known)}); upgrade Merknera")
    for number, name, sql in known[version:]:
        statements = _split(sql)
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


def _split(sql: str) -> Iterable[str]:
    """Statements of a migration file (no semicolons inside string literals, by convention)."""
    lines = [line for line in sql.splitlines() if not line.lstrip().startswith("--")]
    return [part.strip() for part in "\n".join(lines).split(";") if part.strip()]

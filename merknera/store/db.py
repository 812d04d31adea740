"""The store's connections: one writer, a pool of readers, numbered migrations, on SQLite
(:mod:`merknera.store.sqlite`, the embedded default) or PostgreSQL
(:mod:`merknera.store.postgres`, for several nodes).

Every query of the store is a short synchronous function of a :class:`Connection`, run on
the connection's own thread: a transaction never waits on the event loop, and several
statements cost one trip to the thread.  So every write is such a function queued on the
one writer (:meth:`Database.transaction`), and one batch at a time runs the queue as one
transaction: nothing else of this process interleaves with it.  Readers use connections of
their own (:data:`READERS`, taken in turn, so that one slow query, a big page or a replay,
holds up no other reader) and always see committed data.

Each query is written once, in the SQL both databases speak; the few pieces that differ
come from the connection's :class:`Dialect`.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import logging
import re
import time
import urllib.parse
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, TypeVar

from merknera.clock import now_ms
from merknera.threads import as_helper

Params = Sequence[Any] | dict[str, Any]
T = TypeVar("T")
C = TypeVar("C")
E = TypeVar("E", bound=enum.Enum)
log = logging.getLogger(__name__)

_MIGRATION_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")

POSTGRESQL_URL = re.compile(r"^postgres(?:ql)?://", re.IGNORECASE)
"""A ``db`` setting that names a PostgreSQL database; any other value is a SQLite path."""


def redacted(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


READERS = 4
"""Read connections of a store: pages, the API and replays read while games are played."""


class Row(Protocol):
    """A row of a query: by position or by column name (``sqlite3.Row`` and the
    PostgreSQL connection's rows alike)."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def keys(self) -> list[str]: ...

    def __iter__(self) -> Iterator[Any]: ...

    def __len__(self) -> int: ...


class Cursor(Protocol):
    """What a query gives back: its rows and the rows it changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """The part of a ``sqlite3.Connection`` the store's queries use, and the database's
    :class:`Dialect`."""

    @property
    def dialect(self) -> Dialect: ...

    def execute(self, sql: str, parameters: Params = (), /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Params], /) -> Cursor: ...


class StoreError(RuntimeError):
    """The database cannot be used (wrong file, newer schema, failed migration)."""


RETRY_AFTER = 5
"""Seconds after which a client refused during a store outage should ask again: a
restart or fail-over of PostgreSQL takes a few seconds, and the store connects again at
its next work after the server is back, so most outages end within one or two such waits;
asking sooner only adds load to a platform that cannot answer."""


class StoreUnavailableError(StoreError):
    """The database cannot be reached for now: the PostgreSQL server is stopped, restarting
    or refusing connections, or the SQLite file is locked or cannot be read or written.

    Raised by the store's reads and writes instead of the driver's own error, once, where
    the driver's errors are classified (:attr:`Dialect.unavailable`); programming errors
    (bad SQL, a broken constraint) are not classified so.  The store connects again by
    itself, so the same call may succeed later: the listeners answer it with 503 and
    ``Retry-After:`` :attr:`retry_after`.  Its message is for the logs (it may name the
    server), not for clients.
    """

    retry_after = RETRY_AFTER
    """Seconds a refused client should wait before it asks again (``Retry-After``)."""
    for_clients = (f"The arena's database cannot be reached just now (it may be restarting); "
                   f"try again in {RETRY_AFTER} s")
    """What a refused client is told (the same words on every listener)."""


_last_ms = 0
_last_stamp = ""
_last_second = -1
_second_text = ""


def now() -> str:
    """The current UTC time as ISO 8601 with milliseconds, as every timestamp is stored.

    Never earlier than the last one this process gave: games are rated in the order of
    their ``finished_at``, and a wall clock stepping back (NTP, a resumed VM) would otherwise
    make each later finish re-rate every game stamped "in the future".
    """
    global _last_ms, _last_stamp, _last_second, _second_text
    ms = now_ms()
    if ms > _last_ms:  # formatted once per millisecond: every move stamps its row
        _last_ms = ms
        seconds, millis = divmod(ms, 1000)
        if seconds != _last_second:  # and the date and time once per second
            _last_second = seconds
            _second_text = time.strftime(_STAMP_SECOND, time.gmtime(seconds))
        _last_stamp = f"{_second_text}.{millis:03d}Z"
    return _last_stamp


_STAMP_SECOND = "%Y-%m-%dT%H:%M:%S"


def stamp_at(seconds: float) -> str:
    """The stamp of :func:`now`'s form for a moment (seconds since the epoch), to the
    millisecond: what stamps are compared with (``created_at >= ...``)."""
    whole, millis = divmod(int(seconds * 1000), 1000)
    return f"{time.strftime(_STAMP_SECOND, time.gmtime(whole))}.{millis:03d}Z"


_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate in it replaced by U+FFFD.

    A Python string may hold one (a JSON escape, an undecodable file name) and neither UTF-8
    nor the databases can: text that quotes what a bot or a client sent is written through
    this, so that no input can make a write fail.
    """
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def enum_or_none(kind: type[E], text: str | None) -> E | None:
    """A nullable text column as a member of its enum (the store's rows hold ``.value``).

    Callers of the store get the enum, so the text is parsed here, where it is read, and
    nowhere else; an unknown value raises ValueError rather than travel on as a string.
    """
    return None if text is None else kind(text)


def migrations(folder_name: str = "") -> list[tuple[int, str, str]]:
    """The numbered migrations shipped with the package: (number, file name, SQL).

    ``folder_name`` is a dialect's :attr:`Dialect.migrations_folder` (``""``: SQLite's):
    every database has the same numbers and names, each written for it.
    """
    found = []
    folder = resources.files("merknera.store.migrations")
    if folder_name:
        folder = folder / folder_name
    for entry in folder.iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text("utf-8")))
    found.sort()
    numbers = [number for number, _, _ in found]
    if numbers != list(range(1, len(found) + 1)):
        raise StoreError(f"migrations must be numbered 001, 002, ... without gaps: {numbers}")
    return found


def split_statements(sql: str) -> list[str]:
    """Statements of a migration file (no semicolons inside string literals, by convention)."""
    lines = [line for line in sql.splitlines() if not line.lstrip().startswith("--")]
    return [part.strip() for part in "\n".join(lines).split(";") if part.strip()]



class Dialect(ABC):
    """What differs between the databases the store runs on, said once: how a write
    transaction begins, which errors are the driver's and what they mean, and the few
    pieces of SQL each writes its own way.  Every other statement is written once, in the
    SQL both speak (with sqlite3's parameter styles, ``?`` and ``:name``).

    A store function reaches it as ``conn.dialect`` (:class:`Connection`)."""

    begin: str
    """The statement that begins a write transaction."""
    shared: bool
    """Whether several nodes may serve the database at once (PostgreSQL); a node serving
    a SQLite file is its only one (:mod:`merknera.store.node_lock`)."""
    migrations_folder: str
    """The folder of its migrations in ``merknera.store.migrations`` (:func:`migrations`)."""
    errors: tuple[type[BaseException], ...]
    """The driver's errors: a work failing with one gets a :class:`StoreError`."""
    share_lock: str = ""
    """Appended to a ``SELECT`` whose rows must not change until the transaction ends (a
    database of one writer needs none)."""
    claim_lock: str = ""
    """Appended to a ``SELECT`` that claims rows: those another transaction holds are
    skipped rather than waited for (a database of one writer needs none)."""

    @abstractmethod
    def ids(self, param: str = "?") -> str:
        """A table of one column, ``value``: the integers of the JSON array given as the
        parameter ``param`` (one SQL variable however many ids; SQLite allows 32,766 to a
        statement).  Used as ``IN`` it or ``FROM`` it."""

    @abstractmethod
    def joined(self, expression: str) -> str:
        """An aggregate: the values of ``expression`` as text, joined with commas."""

    def serialize(self, conn: Connection, key: int) -> None:
        """Hold the lock ``key`` until the transaction ends, so that the works taking it run
        one at a time, whichever node runs them.  A database with one writer runs every
        write transaction alone already: nothing to do."""
        return

    def retry(self, exc: BaseException) -> bool:
        """Whether a work that failed with ``exc`` runs again (conflicts between nodes)."""
        return False

    @abstractmethod
    def unavailable(self, exc: BaseException) -> bool:
        """Whether an error of the driver says that the database cannot be reached now,
        rather than that a statement was wrong: such errors become
        :class:`StoreUnavailableError`."""

    def failure(self, exc: BaseException, doing: str) -> StoreError:
        """``exc``, met while ``doing`` something, as the store's error: a
        :class:`StoreUnavailableError` when it says the database cannot be reached now."""
        error: StoreError
        if isinstance(exc, StoreUnavailableError) or self.unavailable(exc):
            log.warning("the store cannot be reached now: %s: %s", doing, exc)
            error = StoreUnavailableError(f"{doing}: {exc}")
        else:
            error = StoreError(f"{doing}: {exc!r}")
        error.__cause__ = exc
        return error


class Link(ABC):
    """A synchronous connection with a thread of its own, its only user (as SQLite's and
    psycopg's synchronous connections want): a work's several statements cost one trip to
    the thread, and never wait on the event loop.  Each backend says how a work is called
    (:meth:`_call`) and how the connection is closed (:meth:`_disconnect`)."""

    def __init__(self, thread: ThreadPoolExecutor) -> None:
        self._thread = thread

    @staticmethod
    async def on_thread(name: str, connect: Callable[[], C]) -> tuple[ThreadPoolExecutor, C]:
        """A new thread (one of the loop's helpers, :func:`merknera.threads.as_helper`) and
        the connection ``connect`` makes on it.

        :raises: what ``connect`` raises (the thread is let go).
        """
        thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        try:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(thread, as_helper)
            return thread, await loop.run_in_executor(thread, connect)
        except BaseException:
            thread.shutdown(wait=False)
            raise

    def run(self, work: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Queue ``work(connection, *args)`` on the connection's thread; a future at once."""
        return asyncio.get_running_loop().run_in_executor(
            self._thread, functools.partial(self._call, work, *args))

    @abstractmethod
    def _call(self, work: Callable[..., T], *args: Any) -> T:
        """``work(connection, *args)``, on the connection's thread."""

    @abstractmethod
    def _disconnect(self) -> None:
        """Close the connection, on its thread."""

    async def close(self) -> None:
        """Close the connection on its thread, then let the thread go."""
        await asyncio.get_running_loop().run_in_executor(self._thread, self._disconnect)
        self._thread.shutdown(wait=True)


class Database:
    """An open store.  Open with :meth:`open`, close with :meth:`close`.

    * :meth:`transaction` runs a short synchronous function on the writer's thread inside a
      write transaction.  Calls made at about the same time share one transaction (group
      commit); one failing call changes nothing and does not disturb the others.  Every
      write goes this way, from a move to a registration.
    * :meth:`read` runs a synchronous function on a free reader's thread; :meth:`fetchall`,
      :meth:`fetchone` and :meth:`fetchval` are one-query shortcuts.
    """

    dialect: Dialect
    backend = "sqlite"
    """``sqlite`` or ``postgresql``."""

    def __init__(self, target: str, writer: Link, readers: Sequence[Link]) -> None:
        self.path = target
        """The SQLite path or the PostgreSQL URL it was opened with."""
        self._writer = writer
        self._readers = list(readers)
        self._free: asyncio.Queue[Link] = asyncio.Queue()
        for reader in readers:
            self._free.put_nowait(reader)
        self._pending: list[tuple[Callable[[Connection], Any], asyncio.Future[Any]]] = []
        self._batch: asyncio.Future[list[tuple[bool, Any]]] | None = None
        """The batch on the writer's thread now, if any."""
        self.on_batch: Callable[[float, int], None] | None = None
        """Called after each batch of writes with the seconds it took (from being sent to
        the writer's thread to its answer) and its number of works (the metrics); it must
        return at once and not raise."""

    @staticmethod
    async def open(target: str | Path, readers: int = READERS) -> Database:
        """Open (creating if needed) and migrate the store at ``target`` (a SQLite path, or
        a ``postgresql://`` URL), with ``readers`` read connections."""
        target = str(target)
        if POSTGRESQL_URL.match(target):
            from merknera.store.postgres import PostgresDatabase
            return await PostgresDatabase.connect(target, readers)
        from merknera.store.sqlite import SqliteDatabase
        return await SqliteDatabase.connect(target, readers)

    async def schema_version(self) -> int:
        """The number of the last migration applied."""
        raise NotImplementedError

    async def table_names(self) -> list[str]:
        """The store's tables, sorted (the database's own bookkeeping left out)."""
        raise NotImplementedError

    async def close(self) -> None:
        """Close the connections once the writes already queued are done."""
        while self._batch is not None:
            # The batch's own callback runs first (it was added first): it sends the next.
            await asyncio.wait([self._batch])
        await self._writer.close()
        for reader in self._readers:
            await reader.close()

    # -- writes -----------------------------------------------------------------------------

    @property
    def queued(self) -> int:
        """Works waiting for the writer's next batch."""
        return len(self._pending)

    async def transaction(self, work: Callable[[Connection], T]) -> T:
        """Run ``work(connection)`` in a write transaction on the writer's thread.

        ``work`` must be quick, must not block on anything but the database, and must not
        change anything outside it (it may run twice: see :func:`_run_batch`).  Its
        exception, if any, is raised here, and its writes are rolled back.
        """
        return await self.submit(work)

    def submit(self, work: Callable[[Connection], T]) -> asyncio.Future[T]:
        """Queue ``work`` like :meth:`transaction` and return its future at once.

        Works run in the order they were submitted, so a caller may submit its next write
        before the previous one has committed.
        """
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.append((work, future))
        if self._batch is None:
            self._send_batch()
        return future

    def _send_batch(self) -> None:
        """Send the queued works to the writer's thread as one batch.

        Driven by callbacks, not by a task: on the path of every move, a task and a shield
        per batch cost more than the batch's own trip to the thread.  Nothing here can be
        cancelled, so a batch sent always finishes on its thread and answers its works.
        """
        batch, self._pending = self._pending, []
        try:
            running = self._writer.run(_run_batch, [work for work, _ in batch])
        except Exception as exc:  # the writer is closed
            _fail(batch, self.dialect.failure(exc, "the store writer failed"))
            return
        self._batch = running
        sent = time.perf_counter()
        running.add_done_callback(lambda done: self._batch_done(batch, done, sent))

    def _batch_done(self, batch: list[tuple[Callable[[Connection], Any], asyncio.Future[Any]]],
                    done: asyncio.Future[list[tuple[bool, Any]]], sent: float) -> None:
        self._batch = None
        took = time.perf_counter() - sent
        if done.cancelled():
            _fail(batch, StoreError("the store writer stopped"))
        elif (exc := done.exception()) is not None:
            _fail(batch, self.dialect.failure(exc, "the store writer failed"))
        else:
            for (_, future), (ok, value) in zip(batch, done.result(), strict=True):
                if future.done():
                    continue  # its caller was cancelled; the work is done all the same
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(value)
        if self._pending:
            self._send_batch()
        if self.on_batch is not None:
            self.on_batch(took, len(batch))

    async def write_one(self, sql: str, params: Params = ()) -> int:
        """Run one write statement (group-committed); returns the rows it changed."""
        return await self.transaction(lambda conn: conn.execute(sql, params).rowcount)

    # -- reads ------------------------------------------------------------------------------

    async def read(self, work: Callable[[Connection], T]) -> T:
        """Run ``work(connection)`` on a reader's thread (one trip for several queries).

        The reader is given back even if the read is cancelled: a connection runs its calls
        in order on its thread, so the next read waits for the cancelled one's query there.

        :raises StoreUnavailableError: when the database cannot be reached now (other
            errors of the driver, such as a statement's, are raised as they are).
        """
        free = self._free
        reader = free.get_nowait() if free.qsize() else await free.get()
        try:
            return await reader.run(work)
        except self.dialect.errors as exc:
            if self.dialect.unavailable(exc):
                raise self.dialect.failure(exc, "a read failed") from exc
            raise
        finally:
            free.put_nowait(reader)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Rows of a query on a reader."""
        return await self.read(lambda conn: list(conn.execute(sql, params).fetchall()))

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of a query on a reader, or None."""
        row: Row | None = await self.read(lambda conn: conn.execute(sql, params).fetchone())
        return row

    async def fetchval(self, sql: str, params: Params = ()) -> Any:
        """The first column of the first row, or None."""
        row = await self.fetchone(sql, params)
        return None if row is None else row[0]


def _fail(batch: list[tuple[Any, asyncio.Future[Any]]], error: Exception) -> None:
    for _, future in batch:
        if not future.done():
            future.set_exception(error)


class Transactional(Connection, Protocol):
    """A writer's connection: it knows whether a transaction is open."""

    @property
    def in_transaction(self) -> bool: ...


RETRIES = 5
"""Times a work runs again after a conflict with another node's transaction."""


def _run_batch(conn: Transactional,
               works: list[Callable[[Connection], Any]]) -> list[tuple[bool, Any]]:
    """One transaction for a batch of works (runs on the writer's thread).

    The common case, every work succeeding, costs one BEGIN and one COMMIT for the batch.
    If a work raises, the batch is rolled back and each work runs again in a transaction
    of its own, so that one failure changes nothing and disturbs no other work.
    """
    dialect = conn.dialect
    try:
        conn.execute(dialect.begin)
        results = [work(conn) for work in works]
        conn.execute("COMMIT")
        return [(True, result) for result in results]
    except Exception as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if dialect.unavailable(exc):  # no work could run alone either
            return [(False, dialect.failure(exc, "a write transaction failed"))
                    for _ in works]
    return [_run_alone(conn, work) for work in works]


def _run_alone(conn: Transactional, work: Callable[[Connection], Any]) -> tuple[bool, Any]:
    dialect = conn.dialect
    for attempt in range(RETRIES + 1):
        try:
            conn.execute(dialect.begin)
            result = work(conn)
            conn.execute("COMMIT")
        except dialect.errors as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if dialect.retry(exc) and attempt < RETRIES:
                continue
            return False, dialect.failure(exc, "a write transaction failed")
        except Exception as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            return False, exc
        return True, result
    raise AssertionError("unreachable: the last attempt returns")

"""The store on PostgreSQL, for several nodes sharing one database, through psycopg 3.

The store's queries are short synchronous functions of a connection (:mod:`.db`), so each
connection here is a synchronous psycopg connection with a thread of its own, as SQLite's
are: a work's several statements cost one trip to the thread and never wait on the event
loop (:class:`~.db.Link`).  What needs the event loop (the node's session: leases,
advisory locks, ``LISTEN``) uses psycopg's asyncio connection
(:mod:`merknera.scheduler.coordinator`, :mod:`merknera.scheduler.leases`,
:mod:`merknera.relay`).

The store's statements are written once, in the SQL both databases speak; what differs is
:class:`PostgresDialect`'s (:class:`~.db.Dialect`).  psycopg takes its own parameter style,
so each statement's placeholders are rewritten once (:func:`pyformat`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from merknera.store.db import (
    Connection,
    Database,
    Dialect,
    Link,
    Params,
    StoreError,
    StoreUnavailableError,
    migrations,
    redacted,
    split_statements,
)

try:
    import psycopg
    import psycopg.errors
    from psycopg.pq import TransactionStatus
    from psycopg.rows import RowMaker
    from psycopg.types.numeric import FloatLoader
except ModuleNotFoundError as missing:  # PostgreSQL's driver is an extra of the distribution
    if missing.name != "psycopg":
        raise
    raise StoreError("a postgresql:// store needs psycopg, PostgreSQL's driver, which is not "
                     "installed here: install Merknera with its postgresql extra, "
                     "pip install 'merknera[postgresql]'") from missing

T = TypeVar("T")
log = logging.getLogger(__name__)

MIGRATION_LOCK = 0x6D65726B  # "merk"
"""The advisory lock that keeps two nodes starting at once from both migrating."""


UNAVAILABLE_STATES = ("08", "53", "57P01", "57P02", "57P03")
"""SQLSTATEs (classes and codes) of a server that cannot serve now: connection exceptions,
insufficient resources (too many connections, disk full, out of memory), and a server
shutting down, crashed or starting up."""


def unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` says that the server cannot be reached or cannot serve now (stopped,
    restarting, the connection lost), rather than that a statement was wrong.

    psycopg raises OperationalError without a SQLSTATE for the failures of the connection
    itself (refused, closed, lost); a statement's errors carry the server's SQLSTATE.
    """
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate
    return state is None or state.startswith(UNAVAILABLE_STATES)


class PostgresDialect(Dialect):
    """PostgreSQL's SQL and errors.  Several nodes write at once: the works that must not
    interleave take row locks or advisory locks, and a serialization failure or a deadlock
    between them runs the work again."""

    begin = "BEGIN"
    shared = True
    migrations_folder = "postgresql"
    errors = (psycopg.Error,)
    share_lock = " FOR SHARE"
    claim_lock = " FOR UPDATE SKIP LOCKED"

    def ids(self, param: str = "?") -> str:
        return (f"(SELECT elements.value::bigint AS value "
                f"FROM json_array_elements_text(({param})::json) AS elements(value))")

    def joined(self, expression: str) -> str:
        return f"string_agg(({expression})::text, ',')"

    def serialize(self, conn: Connection, key: int) -> None:
        conn.execute(f"SELECT pg_advisory_xact_lock({int(key)})")

    def retry(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.errors.SerializationFailure
                          | psycopg.errors.DeadlockDetected)

    def unavailable(self, exc: BaseException) -> bool:
        return unavailable(exc)


POSTGRESQL = PostgresDialect()


# -- the parameters -------------------------------------------------------------------------

_TOKENS = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|\?|%|(?<!:):([A-Za-z_]\w*)")


def _token(match: re.Match[str]) -> str:
    text = match.group(0)
    if text == "?":
        return "%s"
    if text == "%":
        return "%%"
    if match.group(1) is not None:
        return f"%({match.group(1)})s"
    # A string literal or a quoted name: psycopg reads every % of a statement with
    # parameters, even inside quotes.
    return text.replace("%", "%%")


@functools.lru_cache(maxsize=1024)
def pyformat(sql: str) -> str:
    """A statement with sqlite3's parameter styles (``?``, ``:name``) in psycopg's
    (``%s``, ``%(name)s``), its literal ``%`` doubled (cached: the store's statements are
    a few hundred constants)."""
    return _TOKENS.sub(_token, sql)


def value(item: Any) -> Any:
    """A parameter as PostgreSQL takes it.

    * PostgreSQL keeps booleans apart from integers; the schema's flags are SQLite's
      INTEGER 0/1, and the store passes Python booleans for them now and then.
    * PostgreSQL's text cannot hold NUL, and a bot's reply (kept in the move log), its
      error message or its name may carry one: it is kept as U+FFFD, as the move log keeps
      bytes that are not UTF-8, rather than fail the write (and the game with it).
    """
    if isinstance(item, bool):
        return int(item)
    if isinstance(item, str) and "\x00" in item:
        return item.replace("\x00", "\ufffd")
    return item


def _params(params: Params) -> Params:
    if isinstance(params, dict):
        return {key: value(item) for key, item in params.items()}
    return [value(item) for item in params]


class PgRow(tuple[Any, ...]):
    """A row by position or by column name, as ``sqlite3.Row``."""

    _index: dict[str, int]
    _names: list[str]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, in order."""
        return list(self._names)


@functools.lru_cache(maxsize=1024)
def _row_class(names: tuple[str, ...]) -> type[PgRow]:
    # One class per shape of result (the store's queries are constants): the first of
    # two equal names wins, as in sqlite3.Row.
    return type("Row", (PgRow,), {"_index": {name: i for i, name in
                                             reversed(list(enumerate(names)))},
                                  "_names": list(names)})


def _rows(cursor: psycopg.Cursor[Any]) -> RowMaker[PgRow]:
    row_class = _row_class(tuple(column.name for column in cursor.description or ()))

    def make(values: Sequence[Any]) -> PgRow:
        return row_class(values)
    return make


class PgConnection:
    """A synchronous psycopg connection that takes the store's statements and parameters
    (:func:`pyformat`, :func:`value`)."""

    dialect: Dialect = POSTGRESQL

    def __init__(self, raw: psycopg.Connection[PgRow]) -> None:
        self.raw = raw

    def execute(self, sql: str, parameters: Params = (), /) -> psycopg.Cursor[PgRow]:
        """Run one statement and return its cursor."""
        return self.raw.execute(pyformat(sql), _params(parameters))

    def executemany(self, sql: str, parameters: Iterable[Params], /) -> psycopg.Cursor[PgRow]:
        """Run one statement for each set of parameters."""
        cursor = self.raw.cursor()
        cursor.executemany(pyformat(sql), [_params(p) for p in parameters])
        return cursor

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open (or failed and not rolled back yet)."""
        return self.raw.info.transaction_status != TransactionStatus.IDLE


def connect_sync(url: str) -> PgConnection:
    """A connection in autocommit mode (the store issues BEGIN itself)."""
    try:
        raw: psycopg.Connection[PgRow] = psycopg.connect(url, autocommit=True, row_factory=_rows,
                                                         connect_timeout=30)
    except psycopg.Error as exc:
        failed = StoreUnavailableError if unavailable(exc) else StoreError
        raise failed(f"cannot connect to {redacted(url)}: {exc}") from exc
    # SUM and AVG give NUMERIC, which psycopg reads as Decimal; SQLite gives floats.
    raw.adapters.register_loader("numeric", FloatLoader)
    return PgConnection(raw)


class PgLink(Link):
    """A synchronous psycopg connection on a thread of its own (:class:`~.db.Link`).

    A connection the server closed (a restart, a fail-over, an idle connection killed) is
    made again before the next work: the work that met the closed connection fails (a
    write's batch is retried by its caller, or a game goes on from its stored moves), the
    ones after it do not.
    """

    def __init__(self, url: str, conn: PgConnection, thread: ThreadPoolExecutor) -> None:
        super().__init__(thread)
        self.url = url
        self.conn = conn

    @classmethod
    async def open(cls, url: str) -> PgLink:
        """Connect (on the new thread)."""
        thread, conn = await Link.on_thread("merknera-pg", functools.partial(connect_sync, url))
        return cls(url, conn, thread)

    def _call(self, work: Callable[..., T], *args: Any) -> T:
        if self.conn.raw.closed or self.conn.raw.broken:
            log.warning("a connection to %s was lost; connecting again", redacted(self.url))
            with contextlib.suppress(psycopg.Error):
                self.conn.raw.close()
            self.conn = connect_sync(self.url)
        return work(self.conn, *args)

    def _disconnect(self) -> None:
        self.conn.raw.close()


class PostgresDatabase(Database):
    """A PostgreSQL database opened for the platform (one of several nodes, perhaps)."""

    dialect = POSTGRESQL
    backend = "postgresql"

    @classmethod
    async def connect(cls, url: str, readers: int) -> PostgresDatabase:
        """Connect and migrate the database at ``url``."""
        opened: list[PgLink] = []
        try:
            writer = await PgLink.open(url)
            opened.append(writer)
            await writer.run(_migrate, redacted(url))
            for _ in range(max(1, readers)):
                opened.append(await PgLink.open(url))
        except BaseException:
            for link in opened:
                await link.close()
            raise
        return cls(url, opened[0], opened[1:])

    async def schema_version(self) -> int:
        version = await self.fetchval("SELECT version FROM merknera_schema")
        return int(version or 0)

    async def table_names(self) -> list[str]:
        # merknera_schema is the migrations' bookkeeping, as SQLite's user_version.
        return [row[0] for row in await self.fetchall(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            "AND tablename != 'merknera_schema' ORDER BY tablename")]


def _migrate(conn: PgConnection, where: str) -> None:
    """Apply the migrations not applied yet, each in a transaction that holds the
    migration lock (a node starting at the same time waits, then finds them done)."""
    known = migrations(POSTGRESQL.migrations_folder)
    while True:
        conn.execute("BEGIN")
        try:
            conn.execute(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            conn.execute("CREATE TABLE IF NOT EXISTS merknera_schema "
                         "(version INTEGER NOT NULL)")
            row = conn.execute("SELECT version FROM merknera_schema").fetchone()
            if row is None:
                conn.execute("INSERT INTO merknera_schema (version) VALUES (0)")
            version = 0 if row is None else int(row[0])
            if version > len(known):
                raise StoreError(f"{where} has schema version {version}, newer than this "
                                 f"Merknera knows ({len(known)}); upgrade Merknera")
            if version == len(known):
                conn.execute("COMMIT")
                return
            number, name, sql = known[version]
            try:
                for statement in split_statements(sql):
                    conn.raw.execute(statement)  # a migration's own SQL: PostgreSQL's
            except psycopg.Error as exc:
                raise StoreError(f"{where}: migration {name} failed: {exc}") from exc
            conn.execute("UPDATE merknera_schema SET version = ?", (number,))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

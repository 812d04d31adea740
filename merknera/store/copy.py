"""``merknera db copy``: an arena's SQLite file moved into an empty PostgreSQL database.

Both stores are first brought to this version's schema, so the tables and columns are the
same on both sides (migrations/ and migrations/postgresql/ describe one schema).  Rows go
across with ``COPY`` in one PostgreSQL transaction, keeping their ids; then the identity
sequences move past the copied ids, and the copy is checked: every table's row count, and
the ratings and their history rebuilt from the copied results equal the copied ones, before
the transaction commits (so a copy that does not check out leaves nothing).  The SQLite file is
held with the node lock meanwhile, so no node plays on it while it is copied.
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from merknera.store import node_lock, ratings
from merknera.store.db import Database, StoreError, redacted
from merknera.store.postgres import PgConnection, PostgresDialect, connect_sync, value

TABLES = ("users", "tokens", "bots", "tournaments", "challenges", "duels", "games", "seats",
          "moves", "bot_log",
          "ratings", "rating_history", "rating_queue", "tournament_entrants", "tournament_byes",
          "nodes")
"""Every table of the store, each after the tables its rows refer to."""

IDENTITIES = ("users", "tokens", "bots", "tournaments", "challenges", "duels", "games", "moves",
              "bot_log")
"""Tables whose ``id`` PostgreSQL generates."""

_HISTORY = "SELECT * FROM rating_history ORDER BY game_id, bot_id"


class CopyError(StoreError):
    """The copy cannot be made or did not check out."""


@dataclass(frozen=True)
class CopySummary:
    """What a copy moved."""

    rows: dict[str, int]
    """Rows per table, the same on both sides."""
    rated_games: int
    rated_bots: int


async def copy(source: str, target: str) -> CopySummary:
    """Copy the SQLite store at ``source`` into the empty PostgreSQL database ``target``.

    :raises CopyError: when the source is missing, the target has rows, or the copy does
        not check out (then nothing is left in the target).
    :raises StoreError: when a node serves the source.
    """
    if not await asyncio.to_thread(Path(source).is_file):
        raise CopyError(f"{source}: no such SQLite file")
    with node_lock.serving(source):
        for store in (source, target):  # both to this version's schema
            await (await Database.open(store, readers=1)).close()
        return await asyncio.to_thread(_copy_rows, source, target)


def _copy_rows(source: str, target: str) -> CopySummary:
    reader = sqlite3.connect(f"{Path(source).resolve().as_uri()}?mode=ro", uri=True)
    writer = connect_sync(target)
    try:
        occupied = [table for table in TABLES
                    if _value(writer, f"SELECT EXISTS (SELECT 1 FROM {table})")]
        if occupied:
            raise CopyError(f"{redacted(target)} is not empty (rows in {', '.join(occupied)}): "
                            "db copy moves an arena into a new database")
        writer.execute("BEGIN")
        try:
            counts = {table: _copy_table(reader, writer, table) for table in TABLES}
            for table in IDENTITIES:
                writer.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                               f"COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)")
            for table, count in counts.items():
                copied = _value(writer, f"SELECT COUNT(*) FROM {table}")
                if copied != count:
                    raise CopyError(f"{table}: {count} rows in {source}, {copied} copied")
            # Results the source queued and did not rate (its node stopped between the
            # two) are rated here, as that node's next start would have.
            ratings.rate_queued(writer)
            history = writer.execute(_HISTORY).fetchall()
            rebuilt = ratings.rebuild_in(writer)  # replaces rating_history too
            if rebuilt.changed or writer.execute(_HISTORY).fetchall() != history:
                differ = (f"ratings for {rebuilt.changed} bots" if rebuilt.changed
                          else "rating history")
                raise CopyError(
                    f"the ratings rebuilt from the copied results differ from the copied "
                    f"{differ}; `merknera ratings rebuild --db {source}` brings them in "
                    "step, then copy again")
            writer.execute("COMMIT")
        except BaseException:
            writer.execute("ROLLBACK")
            raise
        return CopySummary(counts, rebuilt.games, rebuilt.bots)
    finally:
        reader.close()
        writer.raw.close()


def _value(conn: PgConnection, sql: str) -> object:
    row = conn.execute(sql).fetchone()
    assert row is not None, "an aggregate gives a row"
    return row[0]


def _copy_table(reader: sqlite3.Connection, writer: PgConnection, table: str) -> int:
    columns = [row[1] for row in reader.execute(f"PRAGMA table_info({table})")]
    names = ", ".join(columns)
    count = 0
    try:
        with writer.raw.cursor().copy(f"COPY {table} ({names}) FROM STDIN") as stream:
            for row in reader.execute(f"SELECT {names} FROM {table} ORDER BY rowid"):
                stream.write_row([value(item) for item in row])  # NUL as U+FFFD
                count += 1
    except PostgresDialect.errors as exc:  # a value PostgreSQL cannot hold
        raise CopyError(f"{table}: a row cannot be copied: {exc}") from exc
    return count

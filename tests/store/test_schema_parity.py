"""SQLite's migrations and PostgreSQL's make one schema: after all of them, both have the
same tables, each with the same columns in the same order (nullability, kind of type,
default), the same indexes (by name, columns, uniqueness and condition), keys, references
and number of CHECKs.  (``merknera db copy`` and the store's queries rely on it.)

Left out: SQLite's ``sqlite_*`` tables and ``sqlite_autoindex_*`` indexes, PostgreSQL's
``merknera_schema`` bookkeeping table and the indexes behind its primary key and unique
constraints (``*_pkey``, ``*_key``), which are compared as keys instead.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from merknera.store import Database
from merknera.store.db import migrations
from merknera.store.postgres import PgConnection, connect_sync
from tests.support.postgres import Cluster

KINDS = {"INTEGER": "integer", "REAL": "real", "TEXT": "text",  # SQLite's declared types
         "bigint": "integer", "integer": "integer", "double precision": "real", "text": "text"}
"""The kind of each column type: SQLite's INTEGER holds PostgreSQL's BIGINT and INTEGER."""


@dataclass(frozen=True)
class Column:
    name: str
    nullable: bool
    kind: str
    default: str | None


@dataclass(frozen=True)
class Index:
    columns: tuple[str, ...]
    unique: bool
    where: str | None


Key = tuple[str, tuple[str, ...]]
"""("primary" or "unique", columns)."""
Reference = tuple[tuple[str, ...], str, tuple[str, ...]]
"""(columns, table referred to, its columns)."""


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    indexes: dict[str, Index]
    keys: frozenset[Key]
    references: frozenset[Reference]
    checks: int


Schema = dict[str, Table]


def default(text: str | None) -> str | None:
    """A column default as both databases write it: ``'x'::text`` is ``'x'``."""
    return None if text is None else re.sub(r"::[a-z ]+$", "", text.strip()).strip("()")


def condition(text: str | None) -> str | None:
    """An index's WHERE without the parentheses PostgreSQL adds."""
    return None if text is None else " ".join(text.replace("(", " ").replace(")", " ").split())


# -- SQLite -------------------------------------------------------------------------------------


def sqlite_schema(path: Path) -> Schema:
    conn = sqlite3.connect(path)
    try:
        return {name: _sqlite_table(conn, name, sql) for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")}
    finally:
        conn.close()


def _sqlite_table(conn: sqlite3.Connection, table: str, sql: str) -> Table:
    info = conn.execute(f"PRAGMA table_info({table})").fetchall()
    # A primary key's columns are never NULL on PostgreSQL; nor is SQLite's INTEGER
    # PRIMARY KEY (the rowid).
    columns = tuple(Column(name, not notnull and not pk, KINDS[declared], default(value))
                    for _, name, declared, notnull, value, pk in info)
    keys = set()
    primary = tuple(row[1] for row in sorted((row for row in info if row[5]),
                                             key=lambda row: row[5]))
    if primary:
        keys.add(("primary", primary))
    indexes = {}
    for _, name, unique, origin, partial in conn.execute(f"PRAGMA index_list({table})"):
        indexed = tuple(row[2] for row in conn.execute(f"PRAGMA index_info({name})"))
        if origin == "u":
            keys.add(("unique", indexed))
        elif origin == "c":
            created = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?",
                                   (name,)).fetchone()[0]
            where = created.split(" WHERE ", 1)[1] if partial else None
            indexes[name] = Index(indexed, bool(unique), condition(where))
    assert not any(name.startswith("sqlite_autoindex_") for name in indexes)
    references: dict[int, tuple[list[str], str, list[str]]] = {}
    for number, _, parent, child_column, parent_column, *_ in conn.execute(
            f"PRAGMA foreign_key_list({table})"):
        reference = references.setdefault(number, ([], parent, []))
        reference[0].append(child_column)
        reference[2].append(parent_column)
    uncommented = "\n".join(line.split("--", 1)[0] for line in sql.splitlines())
    return Table(columns, indexes, frozenset(keys),
                 frozenset((tuple(a), parent, tuple(b)) for a, parent, b in references.values()),
                 len(re.findall(r"\bCHECK\b", uncommented, re.IGNORECASE)))


# -- PostgreSQL ---------------------------------------------------------------------------------


_COLUMNS = """
    SELECT column_name, is_nullable = 'YES', data_type, column_default
    FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?
    ORDER BY ordinal_position"""

_INDEXES = """
    SELECT i.relname, x.indisunique, pg_get_expr(x.indpred, x.indrelid),
           ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(att, n)
                 JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.att
                 ORDER BY k.n)
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
    WHERE x.indrelid = ?::regclass
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid
                      AND c.contype IN ('p', 'u'))"""

_CONSTRAINTS = """
    SELECT contype, confrelid::regclass::text,
           ARRAY(SELECT a.attname::text FROM unnest(conkey) WITH ORDINALITY k(att, n)
                 JOIN pg_attribute a ON a.attrelid = conrelid AND a.attnum = k.att
                 ORDER BY k.n),
           ARRAY(SELECT a.attname::text FROM unnest(confkey) WITH ORDINALITY k(att, n)
                 JOIN pg_attribute a ON a.attrelid = confrelid AND a.attnum = k.att
                 ORDER BY k.n)
    FROM pg_constraint WHERE conrelid = ?::regclass"""


def pg_schema(url: str) -> Schema:
    conn = connect_sync(url)
    try:
        return {row[0]: _pg_table(conn, row[0]) for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            "AND tablename != 'merknera_schema' ORDER BY tablename")}
    finally:
        conn.raw.close()


def _pg_table(conn: PgConnection, table: str) -> Table:
    columns = tuple(Column(name, nullable, KINDS[kind], default(value))
                    for name, nullable, kind, value in conn.execute(_COLUMNS, (table,)))
    indexes = {name: Index(tuple(indexed), unique, condition(where))
               for name, unique, where, indexed in conn.execute(_INDEXES, (table,))}
    keys, references, checks = set(), set(), 0
    for kind, parent, own, theirs in conn.execute(_CONSTRAINTS, (table,)):
        if kind in ("p", "u"):
            keys.add(("primary" if kind == "p" else "unique", tuple(own)))
        elif kind == "f":
            references.add((tuple(own), parent, tuple(theirs)))
        elif kind == "c":
            checks += 1
    return Table(columns, indexes, frozenset(keys), frozenset(references), checks)


# -- the two after every migration --------------------------------------------------------------


@dataclass(frozen=True)
class Schemas:
    sqlite: Schema
    postgresql: Schema
    table_names: tuple[list[str], list[str]]
    """What each store says its tables are (Database.table_names)."""
    versions: tuple[int, int]


async def _migrated(target: str) -> tuple[list[str], int]:
    db = await Database.open(target, readers=1)
    try:
        return await db.table_names(), await db.schema_version()
    finally:
        await db.close()


@pytest.fixture(scope="module")
def schemas(postgres: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Schemas]:
    path = tmp_path_factory.mktemp("parity") / "store.db"
    url = postgres.new_database()
    (sqlite_tables, sqlite_version) = asyncio.run(_migrated(str(path)))
    (pg_tables, pg_version) = asyncio.run(_migrated(url))
    yield Schemas(sqlite_schema(path), pg_schema(url), (sqlite_tables, pg_tables),
                  (sqlite_version, pg_version))


def test_both_have_the_same_migrations() -> None:
    sqlite = [(number, name) for number, name, _ in migrations()]
    postgresql = [(number, name) for number, name, _ in migrations("postgresql")]
    assert sqlite == postgresql
    assert len(sqlite) >= 10


def test_both_are_migrated_to_the_last_one(schemas: Schemas) -> None:
    assert schemas.versions == (len(migrations()), len(migrations("postgresql")))


def test_the_same_tables(schemas: Schemas) -> None:
    assert sorted(schemas.postgresql) == sorted(schemas.sqlite)
    assert schemas.table_names == (sorted(schemas.sqlite), sorted(schemas.sqlite))
    assert {"users", "games", "moves", "ratings", "nodes"} <= set(schemas.sqlite)


def test_the_same_columns_in_the_same_order(schemas: Schemas) -> None:
    for table, made in schemas.sqlite.items():
        sqlite, postgresql = made.columns, schemas.postgresql[table].columns
        assert [c.name for c in postgresql] == [c.name for c in sqlite], table
        assert [(c.name, c.nullable) for c in postgresql] == [
            (c.name, c.nullable) for c in sqlite], table
        assert postgresql == sqlite, table  # and their kinds and defaults


def test_the_same_indexes(schemas: Schemas) -> None:
    for table, made in schemas.sqlite.items():
        assert set(schemas.postgresql[table].indexes) == set(made.indexes), table
        assert schemas.postgresql[table].indexes == made.indexes, table
    # partial and unique indexes are among them
    assert schemas.sqlite["games"].indexes["games_handle"] == Index(
        ("handle", "game"), True, "handle IS NOT NULL")


def test_the_same_keys_references_and_checks(schemas: Schemas) -> None:
    for table, made in schemas.sqlite.items():
        postgresql = schemas.postgresql[table]
        assert postgresql.keys == made.keys, table
        assert postgresql.references == made.references, table
        assert postgresql.checks == made.checks, table

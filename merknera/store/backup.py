"""``merknera db backup``: a copy of the store taken while a platform serves it and plays.

**SQLite.**  Copying the file is unsafe while it is written (the database is the file and
its write-ahead log together, caught at no one moment).  SQLite's online backup
(:meth:`sqlite3.Connection.backup`) copies every page in one step, inside one read
transaction: the copy is the database as one commit left it, and in WAL mode that read
holds up no writer.  The copy is made under a temporary name beside the target, checked
(``PRAGMA integrity_check``), moved to the target's name, and opened as a store, which
migrates it to this version's schema as ``merknera serve`` would: the result is a store
file to serve or to copy (``merknera db copy``) as it is.

**PostgreSQL.**  ``pg_dump`` in its custom format (one consistent snapshot, which
``pg_restore`` reads), when it is on ``PATH``; otherwise :class:`BackupError` says the
command to run where it is.  The password goes to ``pg_dump`` in its environment
(``PGPASSWORD``), never on its command line, where other users of the machine see it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import sqlite3
import tempfile
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from merknera.store.db import POSTGRESQL_URL, Database, StoreError, redacted

PG_DUMP = "pg_dump"
"""PostgreSQL's program that dumps a database (Debian's ``postgresql-client``)."""


class BackupError(StoreError):
    """The backup cannot be made, or did not check out (then nothing is left at the
    target)."""


@dataclass(frozen=True)
class Backup:
    """A backup made."""

    path: Path
    size: int
    """Bytes."""
    schema_version: int | None
    """The copy's schema version (SQLite; None for a dump, which is not a store)."""
    migrated_from: int | None
    """The schema version the copy had before it was migrated (None: it was current)."""
    games: int | None
    """Games in the copy (SQLite)."""


async def backup(db: str, path: Path) -> Backup:
    """Back up the store ``db`` (a SQLite path or a PostgreSQL URL) to the new file ``path``.

    :raises BackupError: when ``path`` exists, the store is missing or is no store, the
        copy does not check out, or ``pg_dump`` is missing or fails.
    """
    if await asyncio.to_thread(os.path.lexists, path):
        raise BackupError(f"{path} exists already; give a new file's name")
    if not await asyncio.to_thread(path.parent.is_dir):
        raise BackupError(f"{path.parent} is not a directory")
    if POSTGRESQL_URL.match(db):
        return await _dump(db, path)
    return await _sqlite(db, path)


# -- SQLite -----------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _written(path: Path) -> AsyncIterator[Path]:
    """A new file beside ``path`` for the backup to be written to: moved to ``path`` when the
    block ends, removed if it raised.

    :raises BackupError: when ``path`` was made meanwhile.
    """
    partial = await asyncio.to_thread(_partial, path)
    try:
        yield partial
        if await asyncio.to_thread(os.path.lexists, path):
            raise BackupError(f"{path} was made meanwhile by another process; give a new "
                              "file's name")
        await asyncio.to_thread(os.replace, partial, path)
    except BaseException:
        await asyncio.to_thread(_remove, partial)
        raise


async def _sqlite(db: str, path: Path) -> Backup:
    async with _written(path) as partial:
        before = await asyncio.to_thread(_copy_pages, db, partial)
    store = await Database.open(str(path))
    try:
        version = await store.schema_version()
        games = int(await store.fetchval("SELECT COUNT(*) FROM games"))
    finally:
        await store.close()
    size = (await asyncio.to_thread(path.stat)).st_size
    return Backup(path, size, version, None if before == version else before, games)


def _partial(path: Path) -> Path:
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    os.close(fd)
    return Path(name)


def _remove(path: Path) -> None:
    for leftover in (path, Path(f"{path}-journal")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()


def _copy_pages(db: str, target: Path) -> int:
    """Copy the SQLite store ``db`` into the empty file ``target`` in one step, and check
    the copy; returns its schema version."""
    if db == ":memory:" or not Path(db).is_file():
        raise BackupError(f"{db}: no such SQLite file")
    try:
        # Read-write, so that SQLite may use the write-ahead log's index as any reader of
        # a WAL database does; this connection writes nothing, and creates no file.
        source = sqlite3.connect(f"{Path(db).resolve().as_uri()}?mode=rw", uri=True,
                                 timeout=30.0)
    except sqlite3.Error as exc:
        raise BackupError(f"{db}: cannot open it: {exc}") from exc
    try:
        try:
            version = int(source.execute("PRAGMA user_version").fetchone()[0])
            tables = {row[0] for row in source.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as exc:
            raise BackupError(f"{db}: cannot open it as a SQLite store: {exc}") from exc
        if version < 1 or "games" not in tables:
            raise BackupError(f"{db} is not a Merknera store (schema version {version}, "
                              f"{len(tables)} tables)")
        copy = sqlite3.connect(target)
        try:
            source.backup(copy)  # every page at once: one snapshot
            problems = [row[0] for row in copy.execute("PRAGMA integrity_check")]
        finally:
            copy.close()
    except sqlite3.Error as exc:
        raise BackupError(f"{db}: the backup failed: {exc}") from exc
    finally:
        source.close()
    if problems != ["ok"]:
        raise BackupError(f"the copy of {db} does not check out: {'; '.join(problems[:5])}")
    return version


# -- PostgreSQL -------------------------------------------------------------------------------


def pg_dump_command(url: str, path: Path, program: str = PG_DUMP) -> list[str]:
    """The ``pg_dump`` command that dumps ``url`` to ``path`` (the URL without its
    password: that goes in ``PGPASSWORD`` or ``~/.pgpass``)."""
    return [program, "--format=custom", f"--file={path}", f"--dbname={_without_password(url)}"]


def _without_password(url: str) -> str:
    """The URL without its password, in its user part or its query (``?password=``)."""
    return _password_apart(url)[0]


def _password_apart(url: str) -> tuple[str, str | None]:
    """The URL without its password, and the password (None if it has none)."""
    parts = urllib.parse.urlsplit(url)
    password = None if parts.password is None else urllib.parse.unquote(parts.password)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", "@", 1)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    kept = [(name, value) for name, value in query if name != "password"]
    if len(kept) != len(query):
        password = next(value for name, value in query if name == "password")
    return urllib.parse.urlunsplit(parts._replace(
        netloc=netloc, query=urllib.parse.urlencode(kept))), password


async def _dump(url: str, path: Path) -> Backup:
    program = shutil.which(PG_DUMP)
    if program is None:
        raise BackupError(
            f"{PG_DUMP} is not on PATH; install PostgreSQL's client programs (Debian: "
            "postgresql-client, of the server's version or newer), or run where they are, "
            "with the password in PGPASSWORD or ~/.pgpass:\n  "
            + shlex.join(pg_dump_command(url, path)))
    env = dict(os.environ)
    password = _password_apart(url)[1]
    if password is not None:
        env["PGPASSWORD"] = password
    async with _written(path) as partial:
        process = await asyncio.create_subprocess_exec(
            *pg_dump_command(url, partial, program), env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE)
        _, errors = await process.communicate()
        if process.returncode != 0:
            said = errors.decode("utf-8", "replace").strip()[-2000:]
            raise BackupError(f"{PG_DUMP} of {redacted(url)} failed (exit "
                              f"{process.returncode}): {said}")
    return Backup(path, (await asyncio.to_thread(path.stat)).st_size, None, None, None)

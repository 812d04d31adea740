"""A PostgreSQL store outlives its connections: after the server ends them (a restart, a
fail-over, an idle connection killed), the work that meets a closed connection fails (as
an outage: StoreUnavailableError, which the listeners answer 503) and the works after it
are served on new connections."""

from __future__ import annotations

import contextlib

from merknera.store import Database, users
from merknera.store.db import StoreUnavailableError
from tests.support.postgres import Cluster


async def test_the_store_connects_again_after_the_server_ended_its_connections(
        postgres: Cluster) -> None:
    url = postgres.new_database()
    database = url.rsplit("/", 1)[1]
    db = await Database.open(url, readers=2)
    try:
        await users.create_user(db, "before")
        ended = postgres.psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "  # noqa: S608
            f"WHERE datname = '{database}' AND pid != pg_backend_pid()")
        assert int(ended) == 3  # the writer and both readers
        for _ in range(3):  # each connection meets its end once at most
            with contextlib.suppress(StoreUnavailableError):
                await db.fetchval("SELECT 1")
            with contextlib.suppress(StoreUnavailableError):
                await db.write_one("UPDATE users SET name = name")
        await users.create_user(db, "after")
        names = {row[0] for row in await db.fetchall("SELECT name FROM users")}
        assert names == {"before", "after"}
        assert await db.fetchval("SELECT COUNT(*) FROM users") == 2
    finally:
        await db.close()

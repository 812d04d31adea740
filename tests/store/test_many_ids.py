"""Queries given many ids bind them as one JSON array: SQLite allows a statement 32,766
variables (999 before 3.32; builds differ), and a query binding one per bot failed past that
many bots.  The test lowers its connections' limit to 999, whatever the build's."""

from __future__ import annotations

import sqlite3

from merknera.store import Database, bots, competition, users
from merknera.store.db import Connection

LIMIT = 999
MANY = 5_000
"""More ids than the limit of variables."""


async def test_queries_of_more_bots_than_sqlite_has_variables(store_target: str) -> None:
    db = await Database.open(store_target, readers=1)  # the limit is lowered on it
    try:
        user, _ = await users.create_user(db, "owner")

        def two_bots(conn: Connection) -> list[int]:
            return [bots.insert(conn, name=f"b{n}", version="1", game="TICTACTOE",
                                user_id=user.id, meta=bots.BotMetadata("http://127.0.0.1:9/"),
                                secret="s").id for n in range(2)]

        made = await db.transaction(two_bots)

        def lower(conn: sqlite3.Connection) -> None:
            conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, LIMIT)

        if db.backend == "sqlite":  # PostgreSQL allows 65,535 parameters, and no fewer
            await db.read(lower)  # type: ignore[arg-type]  # SQLite's own call
            await db.transaction(lower)  # type: ignore[arg-type]
        wanted = [*range(MANY, 2 * MANY), *made]  # mostly ids no bot has
        assert sorted(await db.read(lambda conn: competition.current(conn, wanted))) == made
        assert await db.read(lambda conn: competition.ratings_of(conn, wanted)) == {}
        assert sorted(await bots.get_many(db, wanted)) == made
        await bots.touch(db, wanted)
        seen = await db.fetchall("SELECT last_seen_at FROM bots")
        assert len(seen) == 2 and all(row[0] for row in seen)
    finally:
        await db.close()

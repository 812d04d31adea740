"""The store's readers: a pool, so that one slow read holds up no other read, and a read
that is cancelled gives its reader back."""

from __future__ import annotations

import asyncio
import threading

from merknera.store import Database
from merknera.store.db import READERS, Connection


async def test_a_slow_read_holds_up_no_other_read(store_target: str) -> None:
    db = await Database.open(store_target)
    release = threading.Event()

    def slow(conn: Connection) -> int:
        release.wait(30)  # a safety net: the test sets it
        return int(conn.execute("SELECT 1").fetchone()[0])

    try:
        stuck = [asyncio.ensure_future(db.read(slow)) for _ in range(READERS - 1)]
        # Every reader but one is busy: a quick read still gets the last one.
        assert await asyncio.wait_for(db.fetchval("SELECT 2"), 30) == 2
        assert not any(read.done() for read in stuck)
        release.set()
        assert await asyncio.gather(*stuck) == [1] * (READERS - 1)
    finally:
        release.set()
        await db.close()


async def test_a_cancelled_read_gives_its_reader_back(store_target: str) -> None:
    db = await Database.open(store_target, readers=1)
    release = threading.Event()
    try:
        blocked = asyncio.ensure_future(db.read(lambda conn: release.wait(30)))
        await asyncio.sleep(0)
        blocked.cancel()
        release.set()
        assert await asyncio.wait_for(db.fetchval("SELECT 3"), 30) == 3
    finally:
        release.set()
        await db.close()

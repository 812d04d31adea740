"""``GET /healthz`` (the process answers) and ``GET /readyz`` (the store answers, its schema
is this version's, the node's heartbeat is stored): 503 with the reasons while the
PostgreSQL server is stopped, and 200 again once it is back, without a restart."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from merknera.web.health import latest_schema
from tests.conftest import ArenaFactory
from tests.support import Arena, metric_samples, sample, until
from tests.support.postgres import Cluster, start_cluster


async def answer(arena: Arena, path: str) -> tuple[int, Any]:
    response = await arena.client.get(path)
    assert response.headers["Cache-Control"] == "no-store"
    return response.status, await response.json()


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """A PostgreSQL cluster of this test's own: it is stopped and started again."""
    started = start_cluster()
    try:
        yield started
    finally:
        started.stop()


async def test_a_started_node_is_alive_and_ready(arena: Arena) -> None:
    assert await answer(arena, "/healthz") == (200, {"status": "ok"})
    assert await answer(arena, "/readyz") == (200, {"status": "ready"})


async def test_a_store_of_another_schema_is_not_ready(make_arena: ArenaFactory,
                                                      tmp_path: Path) -> None:
    arena = await make_arena(db=str(tmp_path / "schema.db"))
    db = arena.platform.db
    await db.transaction(lambda conn: conn.execute(
        f"PRAGMA user_version = {latest_schema() - 1}"))
    status, body = await answer(arena, "/readyz")
    assert status == 503 and body["status"] == "unready"
    assert body["reasons"] == [f"the store's schema is at version {latest_schema() - 1}, "
                               f"not at this version's {latest_schema()} (run merknera db "
                               "migrate)"]
    await db.transaction(lambda conn: conn.execute(f"PRAGMA user_version = {latest_schema()}"))
    assert await answer(arena, "/readyz") == (200, {"status": "ready"})


async def test_not_ready_while_postgresql_is_stopped_and_ready_once_it_is_back(
        make_arena: ArenaFactory, cluster: Cluster) -> None:
    lease = 2.0  # a heartbeat every two thirds of a second
    arena = await make_arena(db=cluster.new_database(), lease_seconds=lease)
    assert await answer(arena, "/readyz") == (200, {"status": "ready"})
    await asyncio.to_thread(cluster.pause)
    try:
        seen: dict[str, Any] = {}

        async def unready(*wanted: str) -> bool:
            status, seen["body"] = await answer(arena, "/readyz")
            reasons = " ".join(seen["body"].get("reasons", []))
            return status == 503 and all(word in reasons for word in wanted)

        await until(lambda: unready("the store did not answer"), within=30)
        # Past a lease without a stored heartbeat, the other nodes may take its games.
        await until(lambda: unready("the store", "heartbeat has not been stored"), within=30)
        assert await answer(arena, "/healthz") == (200, {"status": "ok"})
        response = await arena.client.get("/metrics")
        assert response.status == 200
        assert sample(metric_samples(await response.text()), "merknera_store_up") == 0
    finally:
        await asyncio.to_thread(cluster.resume)

    async def ready() -> bool:
        return await answer(arena, "/readyz") == (200, {"status": "ready"})

    await until(ready, within=60)
    response = await arena.client.get("/metrics")
    assert sample(metric_samples(await response.text()), "merknera_store_up") == 1

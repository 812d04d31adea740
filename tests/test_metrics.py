"""``GET /metrics``: Prometheus' text format, read by Prometheus' own parser, whose counters
follow the games played (checked against the store), for the admin token or the clients
in ``metrics_networks`` only, each platform with its own registry.

The metrics of a ``merknera serve`` process as reference bots play:
``tests/e2e/test_e2e_observability.py``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
from pytest_aiohttp import AiohttpServer

from merknera.config import Config
from merknera.games import JSON
from merknera.refused import Limit
from merknera.server import running
from tests.conftest import ArenaFactory
from tests.support import (
    Arena,
    Samples,
    ScriptedBot,
    free_port,
    metric_samples,
    play_first_empty,
    sample,
    until,
)

ADMIN = "the-admin-token"
AS_ADMIN = {"Authorization": f"Bearer {ADMIN}"}


async def metrics(arena: Arena, headers: dict[str, str] | None = None) -> Samples:
    response = await arena.client.get("/metrics", headers=headers)
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    return metric_samples(await response.text())


async def serve(aiohttp_server: AiohttpServer, bot: ScriptedBot) -> str:
    return str((await aiohttp_server(bot.app())).make_url("/rpc"))


async def test_the_counters_follow_the_games_played(arena: Arena,
                                                    aiohttp_server: AiohttpServer) -> None:
    before = await metrics(arena)
    assert sample(before, "merknera_moves_total") == 0
    assert sample(before, "merknera_games_running", game="TICTACTOE") == 0
    assert sample(before, "merknera_store_up") == 1
    assert sample(before, "merknera_leases_held") == 0
    release = asyncio.Event()

    async def held(params: dict[str, Any], call_id: Any) -> JSON:
        await release.wait()
        return await play_first_empty(params, call_id)

    slow, fast = ScriptedBot(next_move=held), ScriptedBot()
    await arena.register("slow", await serve(aiohttp_server, slow))
    await arena.register("fast", await serve(aiohttp_server, fast))
    await slow.wait_for(".NextMove", 1)
    playing = await metrics(arena)
    assert (sample(playing, "merknera_games_running", game="TICTACTOE") or 0) >= 1
    assert (sample(playing, "merknera_leases_held") or 0) >= 1
    release.set()
    await arena.settle()

    # A bot whose every move is off the board: its games end on strikes.
    async def off_the_board(_params: dict[str, Any], _id: Any) -> JSON:
        return {"position": 42}

    await arena.register("wild", await serve(aiohttp_server, ScriptedBot(
        next_move=off_the_board)))
    await arena.settle()

    after = await metrics(arena)
    db = arena.platform.db
    moves = await db.fetchval("SELECT COUNT(*) FROM moves WHERE fault IS NULL AND seat >= 0")
    calls = await db.fetchval("SELECT COUNT(*) FROM moves WHERE latency_ms IS NOT NULL")
    assert moves > 0
    assert sample(after, "merknera_moves_total") == moves
    assert sample(after, "merknera_bot_call_seconds_count", protocol="jsonrpc") == calls
    assert (sample(after, "merknera_bot_call_seconds_bucket", protocol="jsonrpc", le="+Inf")
            == calls)
    faults = {row[0]: row[1] for row in await db.fetchall(
        "SELECT fault, COUNT(*) FROM moves WHERE fault IS NOT NULL GROUP BY fault")}
    assert faults
    for kind, count in faults.items():
        assert sample(after, "merknera_faults_total", kind=kind) == count
    finished = {(row[0], row[1]): row[2] for row in await db.fetchall(
        "SELECT game, reason, COUNT(*) FROM games WHERE status = 'FINISHED' "
        "GROUP BY game, reason")}
    assert finished[("TICTACTOE", "NORMAL")] == 2 and finished[("TICTACTOE", "STRIKES")] == 4
    for (game, reason), count in finished.items():
        assert sample(after, "merknera_games_finished_total", game=game,
                      termination=reason) == count
    assert sample(after, "merknera_games_running", game="TICTACTOE") == 0
    assert sample(after, "merknera_leases_held") == 0
    assert sample(after, "merknera_rating_queue") == 0  # settle waits for the ratings
    assert (sample(after, "merknera_store_writes_total") or 0) > (
        sample(before, "merknera_store_writes_total") or 0)
    assert (sample(after, "merknera_store_batch_seconds_count") or 0) > 0
    assert sample(after, "merknera_store_queue") is not None


async def test_the_metrics_are_for_the_admin_token_or_the_metrics_networks(
        make_arena: ArenaFactory, tmp_path: Path) -> None:
    # The test client comes from 127.0.0.1: loopback is in the default networks...
    inside = await make_arena(admin_token=ADMIN)
    assert sample(await metrics(inside), "merknera_store_up") == 1
    # ...and not in these.
    outside = await make_arena(admin_token=ADMIN, metrics_networks="10.0.0.0/8",
                               db=str(tmp_path / "outside.db"))
    refused = await outside.client.get("/metrics")
    assert refused.status == 403
    assert "metrics_networks" in (await refused.json())["error"]
    wrong = await outside.client.get("/metrics", headers={"Authorization": "Bearer nope"})
    assert wrong.status == 403
    assert sample(await metrics(outside, AS_ADMIN), "merknera_store_up") == 1


async def test_refusals_are_counted_by_limit_on_their_own_platform(
        make_arena: ArenaFactory, tmp_path: Path) -> None:
    counted = await make_arena(admin_token=ADMIN, auth_failure_burst=1)
    other = await make_arena(admin_token=ADMIN, auth_failure_burst=1,
                             db=str(tmp_path / "other.db"))
    for status in (403, 429):  # a wrong token, then one too many
        answer = await counted.client.get("/api/nodes",
                                          headers={"Authorization": "Bearer wrong"})
        assert answer.status == status
    found = await metrics(counted)
    assert sample(found, "merknera_refusals_total", limit=Limit.WRONG_TOKENS.value) == 1
    for limit in Limit:  # every limit is shown, refused or not
        assert sample(found, "merknera_refusals_total", limit=limit.value) is not None
    # Several platforms in one process: each has its own registry and counts.
    assert sample(await metrics(other), "merknera_refusals_total",
                  limit=Limit.WRONG_TOKENS.value) == 0



async def test_connections_are_counted_by_listener_and_the_networks_are_the_clients(
        config: Config) -> None:
    """Served by ``merknera serve``'s guarded listeners; the stranger connects from
    127.0.0.2, outside ``metrics_networks``, the operator's Prometheus from 127.0.0.1."""
    changed = config.replace(port=0, kalaha_port=free_port(), admin_token=ADMIN,
                             max_connections_per_client=2, metrics_networks="127.0.0.1/32")
    async with running(changed) as (live, platform):
        base = live.listeners.base_url
        held = [await asyncio.open_connection("127.0.0.1", live.listeners.port,
                                              local_addr=("127.0.0.2", 0)) for _ in range(2)]
        board = await asyncio.open_connection("127.0.0.1", live.kalaha.port)
        refused_reader, refused_writer = await asyncio.open_connection(
            "127.0.0.1", live.listeners.port, local_addr=("127.0.0.2", 0))
        async with asyncio.timeout(10):  # a safety net: the refusal comes at once
            assert (await refused_reader.read()).startswith(b"HTTP/1.1 429 ")
        refused_writer.close()
        await until(lambda: platform.guard.connections.open == 3)
        async with session("127.0.0.1") as prometheus, prometheus.get(
                f"{base}/metrics") as answer:
            assert answer.status == 200
            found = metric_samples(await answer.text())
        # The stranger's two and the scrape's own; the board's.
        assert sample(found, "merknera_open_connections", listener="main") == 3
        assert sample(found, "merknera_open_connections", listener="kalaha") == 1
        assert sample(found, "merknera_refusals_total",
                      limit=Limit.CONNECTIONS_PER_CLIENT.value) == 1
        for _, writer in [*held, board]:
            writer.close()
        await until(lambda: platform.guard.connections.open_from("127.0.0.2") == 0)
        async with session("127.0.0.2") as stranger:
            async with stranger.get(f"{base}/metrics") as answer:
                assert answer.status == 403
            async with stranger.get(f"{base}/metrics", headers=AS_ADMIN) as answer:
                assert answer.status == 200
                found = metric_samples(await answer.text())
        assert sample(found, "merknera_open_connections", listener="kalaha") == 0


def session(source: str) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(source, 0)))

"""``GET /api/nodes`` on one node: itself, coordinating, with the games it plays."""

from __future__ import annotations

import asyncio
from typing import Any

from pytest_aiohttp import AiohttpServer

from tests.support import Arena, ScriptedBot, play_first_empty, until


async def test_one_node_lists_itself_coordinating_with_its_games(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    leases = arena.platform.leases
    listed: dict[str, Any] = {}

    async def coordinating() -> bool:
        # On PostgreSQL the node takes the coordinator's lock a moment after it starts.
        nonlocal listed
        response = await arena.client.get("/api/nodes")
        assert response.status == 200
        listed = await response.json()
        return any(node["coordinator"] for node in listed["nodes"])

    await until(coordinating)
    assert listed["this"] == leases.node and listed["lease_seconds"] == 15.0
    assert [(node["id"], node["coordinator"], node["playing"], node["games"])
            for node in listed["nodes"]] == [(leases.node, True, 0, [])]
    # A game waiting for its bot's move is played by this node.
    release = asyncio.Event()

    async def held(params: dict[str, Any], call_id: Any) -> Any:
        await release.wait()
        return await play_first_empty(params, call_id)

    slow, fast = ScriptedBot(next_move=held), ScriptedBot()
    for name, bot in (("slow", slow), ("fast", fast)):
        await arena.register(name, str((await aiohttp_server(bot.app())).make_url("/rpc")))
    await slow.wait_for(".NextMove", 1)
    listed = await (await arena.client.get("/api/nodes")).json()
    (node,) = listed["nodes"]
    assert node["playing"] >= 1 and len(node["games"]) == node["playing"]
    release.set()

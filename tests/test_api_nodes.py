"""``GET /api/nodes`` on one node: anybody learns how many nodes serve; the admin learns
which (itself, coordinating, with the games it plays)."""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Any

from pytest_aiohttp import AiohttpServer

from tests.conftest import ArenaFactory
from tests.support import Arena, ScriptedBot, play_first_empty, until

ADMIN = "the-admin-token"
AS_ADMIN = {"Authorization": f"Bearer {ADMIN}"}


async def test_one_node_lists_itself_coordinating_with_its_games(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(admin_token=ADMIN)
    leases = arena.platform.leases
    listed: dict[str, Any] = {}

    async def coordinating() -> bool:
        # On PostgreSQL the node takes the coordinator's lock a moment after it starts.
        nonlocal listed
        response = await arena.client.get("/api/nodes", headers=AS_ADMIN)
        assert response.status == 200
        listed = await response.json()
        return any(node["coordinator"] for node in listed["nodes"])

    await until(coordinating)
    assert listed["this"] == leases.node and listed["lease_seconds"] == 15.0
    assert listed["count"] == 1
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
    listed = await (await arena.client.get("/api/nodes", headers=AS_ADMIN)).json()
    (node,) = listed["nodes"]
    assert node["playing"] >= 1 and len(node["games"]) == node["playing"]
    release.set()


async def test_without_the_admin_token_only_the_count_is_shown(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(admin_token=ADMIN)
    release = asyncio.Event()

    async def held(params: dict[str, Any], call_id: Any) -> Any:
        await release.wait()
        return await play_first_empty(params, call_id)

    slow = ScriptedBot(next_move=held)
    for name, bot in (("slow", slow), ("fast", ScriptedBot())):
        await arena.register(name, str((await aiohttp_server(bot.app())).make_url("/rpc")))
    await slow.wait_for(".NextMove", 1)  # a game is under way on this node
    details = await (await arena.client.get("/api/nodes", headers=AS_ADMIN)).json()
    (node,) = details["nodes"]
    assert node["games"] and node["pid"] == os.getpid()

    public = await arena.client.get("/api/nodes")
    assert public.status == 200
    text = await public.text()
    assert await public.json() == {"count": 1}
    # Nothing of the node is in it: its name, address, pid, start, games.
    for secret in (node["id"], node["address"], socket.gethostname(), node["started_at"],
                   details["this"]):
        assert str(secret) not in text
    # A token that is not the admin's is refused, not taken for none; a user's token too.
    for token in ("wrong", arena.token):
        refused = await arena.client.get("/api/nodes",
                                         headers={"Authorization": f"Bearer {token}"})
        assert refused.status == 403
        assert set(await refused.json()) == {"error"}
    release.set()


async def test_with_no_admin_token_configured_nobody_sees_the_details(
        arena: Arena) -> None:
    assert await (await arena.client.get("/api/nodes")).json() == {"count": 1}
    empty = await arena.client.get("/api/nodes", headers={"Authorization": "Bearer "})
    assert await empty.json() == {"count": 1}  # an empty token is no token
    refused = await arena.client.get("/api/nodes", headers={"Authorization": "Bearer x"})
    assert refused.status == 403
    assert "no admin token is configured" in (await refused.json())["error"]

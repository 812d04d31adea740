"""The results API's competition figures: latency and faults per bot, head-to-head."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pytest_aiohttp import AiohttpServer

from tests.support import Arena, ScriptedBot


async def test_latency_faults_and_head_to_head(arena: Arena,
                                               aiohttp_server: AiohttpServer) -> None:
    seen: set[int] = set()

    async def once_broken(params: dict[str, Any], call_id: Any) -> Any:
        if params["gameid"] not in seen:
            seen.add(params["gameid"])
            return web.Response(status=500)
        return {"position": params["gamestate"].index("")}

    for name, bot in (("steady", ScriptedBot()), ("shaky", ScriptedBot(next_move=once_broken))):
        server = await aiohttp_server(bot.app())
        await arena.register(name, str(server.make_url("/rpc")))
    await arena.settle()
    ids = {row[1]: row[0] for row in await arena.platform.db.fetchall(
        "SELECT id, name FROM bots")}
    shaky = await (await arena.client.get(f"/api/bots/{ids['shaky']}")).json()
    assert shaky["faults"] == {"HTTP_STATUS": 2}
    latency = shaky["latency"]
    assert latency["replies"] >= 8 and 0 <= latency["p50_ms"] <= latency["p95_ms"]
    steady = await (await arena.client.get(f"/api/bots/{ids['steady']}")).json()
    assert steady["faults"] == {}
    both = await (await arena.client.get(
        f"/api/head-to-head?a={ids['steady']}&b={ids['shaky']}")).json()
    assert both["played"] == 2 and both["won"] + both["drawn"] + both["lost"] == 2
    assert {game["seat"] for game in both["games"]} == {0, 1}
    # A bot and itself have played no games (the document lets a == b through).
    alone = await (await arena.client.get(
        f"/api/head-to-head?a={ids['steady']}&b={ids['steady']}")).json()
    assert (alone["played"], alone["no_result"], alone["games"]) == (0, 0, [])
    assert (await arena.client.get("/api/head-to-head?a=1")).status == 400
    assert (await arena.client.get("/api/head-to-head?a=1&b=999")).status == 404

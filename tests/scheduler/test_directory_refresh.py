"""The bot directory kept in step with the store, as nodes on one database need it: a
refresh does not throw away a ping under way, and a node seating a bot it does not know yet
(registered at another node since its last refresh) learns it rather than forfeit it."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from pytest_aiohttp import AiohttpServer

from merknera.store import bots, games
from tests.support import Arena, ScriptedBot


async def test_a_ping_under_way_during_a_refresh_still_counts(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    armed, asked, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def rpc(request: web.Request) -> web.Response:
        call = await request.json()
        if call["method"] == "Status.Ping" and armed.is_set():  # fails, late
            asked.set()
            await release.wait()
            return web.Response(status=500)
        return web.json_response({"jsonrpc": "2.0", "result": {"ping": "OK"},
                                  "id": call["id"]})

    app = web.Application()
    app.router.add_post("/rpc", rpc)
    await arena.register("late", str((await aiohttp_server(app)).make_url("/rpc")))
    presence = arena.platform.scheduler.arena.presence
    (bot,) = await bots.current(arena.platform.db)
    assert presence.is_online(bot.id)
    armed.set()
    ping = asyncio.ensure_future(presence.ping(bot.id))
    async with asyncio.timeout(10):
        await asyncio.shield(asked.wait())
    await presence.refresh()  # the store says ONLINE meanwhile
    release.set()
    assert await ping is False
    assert not presence.is_online(bot.id)  # the failed ping was heard


async def test_a_game_seating_a_bot_the_directory_does_not_know_is_played(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    first, second = ScriptedBot(), ScriptedBot()
    for name, bot in (("first", first), ("second", second)):
        await arena.register(name, str((await aiohttp_server(bot.app())).make_url("/rpc")))
    await arena.settle()
    presence = arena.platform.scheduler.arena.presence
    current = await bots.current(arena.platform.db)
    # As on a node that has not refreshed since "second" registered at another node.
    newcomer = next(bot for bot in current if bot.name == "second")
    presence.retired([newcomer.id])
    game_id = await arena.platform.db.transaction(
        lambda conn: games.create(conn, "TICTACTOE", 3, [bot.id for bot in current]))
    arena.platform.scheduler.submit([game_id])
    await arena.settle()
    played: dict[str, Any] = await arena.game(game_id)
    assert played["status"] == "FINISHED" and played["reason"] == "NORMAL", played
    assert presence.bot(newcomer.id) is not None

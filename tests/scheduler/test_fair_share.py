"""Fair share: one author's slow bots do not take every place in play."""

from __future__ import annotations

import asyncio
from typing import Any

from pytest_aiohttp import AiohttpServer

from merknera.games import JSON
from merknera.store import users
from tests.conftest import ArenaFactory
from tests.support import InFlight, ScriptedBot, first_empty, until


def slow(delay: float) -> Any:
    async def next_move(params: dict[str, Any], _id: Any) -> JSON:
        await asyncio.sleep(delay)
        return {"position": first_empty(params)}

    return next_move


async def test_a_slow_author_holds_its_share_and_others_play_meanwhile(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    # Four places, a quarter of them (one) for each author.
    arena = await make_arena(concurrency=4)
    _, bob = await users.create_user(arena.platform.db, "bob")
    alice_calls = InFlight()
    for name in ("slow-1", "slow-2"):
        bot = ScriptedBot(next_move=slow(0.1), shared=alice_calls)
        await arena.register(name, str((await aiohttp_server(bot.app())).make_url("/rpc")))
    for name in ("quick-1", "quick-2"):
        bot = ScriptedBot()
        await arena.register(name, str((await aiohttp_server(bot.app())).make_url("/rpc")),
                             token=bob)
    db = arena.platform.db
    # bob's games among his own bots were scheduled last, behind every game with alice's
    # slow bots: they are played at once all the same.
    async def bobs_played() -> bool:
        finished: int = await db.fetchval(
            "SELECT COUNT(*) FROM games WHERE status = 'FINISHED' AND id NOT IN ("
            "SELECT game_id FROM seats JOIN bots ON bots.id = seats.bot_id "
            "WHERE bots.name LIKE 'slow-%')")
        return finished == 2

    await until(bobs_played, within=20.0)
    with_alice = await db.fetchall(
        "SELECT DISTINCT games.id, games.status FROM games JOIN seats ON seats.game_id = "
        "games.id JOIN bots ON bots.id = seats.bot_id WHERE bots.name LIKE 'slow-%'")
    assert len(with_alice) == 10
    assert [row["status"] for row in with_alice].count("FINISHED") == 0
    # alice's bots were never in more than one game at a time.
    assert alice_calls.most == 1

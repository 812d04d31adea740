"""The ladder: who it pairs (pure), and passes against real bot servers; the fault rule."""

from __future__ import annotations

import asyncio
import functools
import itertools
from typing import Any

from pytest_aiohttp import AiohttpServer

from merknera.games import JSON
from merknera.scheduler.ladder import Candidate, choose_pairs, quality
from merknera.store import bots
from tests.conftest import ArenaFactory
from tests.support import Arena, ScriptedBot


def test_new_bots_are_paired_first_with_close_or_uncertain_opponents() -> None:
    veteran = [Candidate(i, 20.0 + i, 1.0, 50) for i in range(1, 7)]
    newcomer = Candidate(99, 25.0, 8.3, 0)
    pairs = choose_pairs([*veteran, newcomer], slots=1)
    assert len(pairs) == 1 and 99 in pairs[0]
    # among veterans, the closest rating is chosen
    pairs = choose_pairs([Candidate(1, 30.0, 1.0, 10), Candidate(2, 10.0, 1.0, 10),
                          Candidate(3, 29.0, 1.0, 10)], slots=1)
    assert set(pairs[0]) == {1, 3}
    assert quality(Candidate(1, 30, 1, 0), Candidate(3, 29, 1, 0)) > quality(
        Candidate(1, 30, 1, 0), Candidate(2, 10, 1, 0))


def test_each_bot_at_most_once_and_slots_respected() -> None:
    bots = [Candidate(i, 25.0, 8.0, 0) for i in range(10)]
    pairs = choose_pairs(bots, slots=3)
    assert len(pairs) == 3
    ids = [b for pair in pairs for b in pair]
    assert len(ids) == len(set(ids))
    assert len(choose_pairs(bots, slots=99)) == 5
    assert choose_pairs(bots[:1], slots=5) == []
    assert choose_pairs(bots, slots=0) == []


def test_recent_opponents_count_for_less() -> None:
    a = Candidate(1, 25.0, 2.0, 5, recent=frozenset({2}))
    pairs = choose_pairs([a, Candidate(2, 25.0, 2.0, 5), Candidate(3, 24.0, 2.0, 5)], slots=1)
    assert set(pairs[0]) == {1, 3}


async def register(arena: Arena, aiohttp_server: AiohttpServer, name: str,
                   bot: ScriptedBot | None = None) -> ScriptedBot:
    bot = bot or ScriptedBot()
    server = await aiohttp_server(bot.app())
    await arena.register(name, str(server.make_url("/rpc")))
    return bot


async def test_a_pass_pairs_free_online_bots_and_skips_busy_and_disabled(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(max_games_per_bot=1)
    for name in ("a", "b", "c", "d", "e"):
        await register(arena, aiohttp_server, name)
    await arena.settle()
    db = arena.platform.db
    await arena.platform.discipline.disable(
        await db.fetchval("SELECT id FROM bots WHERE name = 'e'"), "ADMIN", "testing")
    created = await arena.platform.ladder.pass_once()
    assert len(created) == 2  # four free online bots, one game each
    seated = await db.fetchall(
        "SELECT bots.name FROM seats JOIN bots ON bots.id = seats.bot_id "
        "JOIN games ON games.id = seats.game_id WHERE games.origin = 'LADDER'")
    names = [row[0] for row in seated]
    assert sorted(names) == ["a", "b", "c", "d"]
    # every bot has its one game now: a second pass adds nothing
    assert await arena.platform.ladder.pass_once() == []
    await arena.settle()
    reasons = await db.fetchall("SELECT reason FROM games WHERE origin = 'LADDER'")
    assert {row[0] for row in reasons} == {"NORMAL"}


async def test_the_ladder_runs_by_itself_and_can_be_paused(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(ladder=True, ladder_interval=0.05)
    for name in ("a", "b"):
        await register(arena, aiohttp_server, name)
    arena.platform.set_ladder_paused(True)
    await arena.settle()
    db = arena.platform.db
    before = await db.fetchval("SELECT COUNT(*) FROM games WHERE origin = 'LADDER'")
    arena.platform.set_ladder_paused(False)
    async with asyncio.timeout(20):
        while await db.fetchval(  # noqa: ASYNC110 (waiting on the ladder's own timer)
                "SELECT COUNT(*) FROM games WHERE origin = 'LADDER'") < before + 3:
            await asyncio.sleep(0.05)
    arena.platform.set_ladder_paused(True)
    assert arena.platform.ladder_state() == "PAUSED"


async def timing_out(params: dict[str, Any], _id: Any) -> JSON:
    await asyncio.sleep(5)
    return {"position": 0}


async def test_a_bot_whose_games_keep_faulting_is_disabled_and_can_come_back(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(fault_window=2, fault_share=0.5, move_timeout=0.3)
    await register(arena, aiohttp_server, "good")
    bad_bot = ScriptedBot(next_move=timing_out)
    bad_server = await aiohttp_server(bad_bot.app())
    url = str(bad_server.make_url("/rpc"))
    await arena.register("bad", url)
    await arena.settle()
    db = arena.platform.db
    async with asyncio.timeout(10):
        while await db.fetchval(  # noqa: ASYNC110 (the rule runs after the game's event)
                "SELECT status FROM bots WHERE name = 'bad'") != "DISABLED":
            await asyncio.sleep(0.05)
    reason = await db.fetchval("SELECT disabled_reason FROM bots WHERE name = 'bad'")
    assert reason.startswith("2 of its last 2 games had faults of its own")
    log = [row[0] for row in await db.fetchall(
        "SELECT message FROM bot_log JOIN bots ON bots.id = bot_log.bot_id "
        "WHERE bots.name = 'bad' ORDER BY bot_log.id")]
    assert any(line.startswith("Disabled by the fault rule: 2 of its last 2") for line in log)
    again = await arena.register("bad", url)
    assert "already registered" in str(again["result"])
    assert await db.fetchval("SELECT status FROM bots WHERE name = 'bad'") == "ONLINE"
    # Its old games no longer count: one more fault would not disable it at once.
    bad_id = await db.fetchval("SELECT id FROM bots WHERE name = 'bad'")
    assert await db.read(functools.partial(bots.recent_faults, bot_id=bad_id, window=2)) == []


async def test_offline_bots_are_not_paired(make_arena: ArenaFactory,
                                           aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(max_games_per_bot=5)
    for name in ("a", "b"):
        await register(arena, aiohttp_server, name)
    await arena.register("gone", "http://127.0.0.1:9/rpc")  # NewGame cannot reach it
    await arena.settle()
    db = arena.platform.db
    assert await db.fetchval("SELECT status FROM bots WHERE name = 'gone'") == "OFFLINE"
    created = await arena.platform.ladder.pass_once()
    assert len(created) == 1
    names = {row[0] for row in await db.fetchall(
        "SELECT bots.name FROM seats JOIN bots ON bots.id = seats.bot_id "
        "WHERE seats.game_id = ?", (created[0],))}
    assert names == {"a", "b"}


def test_first_seats_even_out_over_passes() -> None:
    """Two equal bots paired pass after pass take turns at moving first."""
    firsts = {1: 0, 2: 0}
    history: list[int] = []
    for _ in range(20):
        recent = {bot: sum(1 for first in history[-10:] if first == bot) for bot in firsts}
        (first, _second), = choose_pairs(
            [Candidate(bot, 25.0, 8.0, 0, first_seats=recent[bot]) for bot in firsts], 1)
        firsts[first] += 1
        history.append(first)
    assert abs(firsts[1] - firsts[2]) <= 2
    assert max(len(list(run)) for _, run in itertools.groupby(history)) <= 2

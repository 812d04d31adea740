"""Tournaments on the platform with real bot servers: rounds, byes, the table."""

from __future__ import annotations

import asyncio
import functools
import sys
from collections import Counter

import pytest
from pytest_aiohttp import AiohttpServer

from merknera.scheduler.tournaments import create_in, table
from merknera.store import tournaments as store
from merknera.store.tournaments import Tournament
from tests.support import Arena, ScriptedBot, until


async def bots(arena: Arena, aiohttp_server: AiohttpServer, count: int) -> list[int]:
    for number in range(count):
        server = await aiohttp_server(ScriptedBot().app())
        await arena.register(f"bot{number}", str(server.make_url("/rpc")))
    await arena.settle()
    return [row[0] for row in await arena.platform.db.fetchall(
        "SELECT id FROM bots ORDER BY id")]


async def finished(arena: Arena, tournament_id: int) -> Tournament:
    async def load() -> Tournament:
        found = await arena.platform.db.read(functools.partial(store.load,
                                                               tournament_id=tournament_id))
        assert found is not None
        return found

    async def over() -> bool:
        return (await load()).status == "FINISHED"

    await until(over, within=30.0)
    return await load()


async def test_a_round_robin_of_three_with_byes(arena: Arena,
                                                aiohttp_server: AiohttpServer) -> None:
    entrants = await bots(arena, aiohttp_server, 3)
    tournament_id = await arena.platform.create_tournament("TICTACTOE", "round-robin", 1, None)
    done = await finished(arena, tournament_id)
    assert done.round == 3 and len(done.games) == 3
    assert sorted(bot for _, bot in done.byes) == sorted(entrants)  # one bye each
    pairs = Counter(frozenset((g.first, g.second)) for g in done.games)
    assert set(pairs.values()) == {1} and len(pairs) == 3
    rows = table(done)
    assert sum(row.points for row in rows) == 3 + 3  # three games and three byes
    assert [row.rank for row in rows] == sorted(row.rank for row in rows)
    origins = await arena.platform.db.fetchall(
        "SELECT DISTINCT origin, tournament_id FROM games WHERE tournament_id IS NOT NULL")
    assert [tuple(row) for row in origins] == [("TOURNAMENT", tournament_id)]


async def test_a_swiss_of_five_over_three_rounds(arena: Arena,
                                                 aiohttp_server: AiohttpServer) -> None:
    entrants = await bots(arena, aiohttp_server, 5)
    tournament_id = await arena.platform.create_tournament("TICTACTOE", "swiss", 3, entrants)
    done = await finished(arena, tournament_id)
    assert done.round == 3
    per_round = Counter(g.round for g in done.games)
    assert per_round == {1: 2, 2: 2, 3: 2}
    assert len(done.byes) == 3 and len({bot for _, bot in done.byes}) == 3
    met = Counter(frozenset((g.first, g.second)) for g in done.games)
    assert max(met.values()) == 1  # no rematch
    firsts = Counter(g.first for g in done.games)
    seconds = Counter(g.second for g in done.games)
    assert all(abs(firsts[b] - seconds[b]) <= 2 for b in entrants)
    assert {row.entrant for row in table(done)} == set(entrants)


async def test_terms_that_cannot_be_played(arena: Arena, aiohttp_server: AiohttpServer) -> None:
    entrants = await bots(arena, aiohttp_server, 3)

    db = arena.platform.db
    for terms, message in [
        (("CHESS", "swiss", 1, None), "unknown game"),
        (("TICTACTOE", "knockout", 1, None), "unknown format"),
        (("TICTACTOE", "swiss", 3, None), "fewer than 3 rounds"),
        (("TICTACTOE", "round-robin", 1, [entrants[0]]), "at least two bots"),
        (("TICTACTOE", "round-robin", 1, [entrants[0], 999]), "not current TICTACTOE bots"),
        (("SCRABBLE", "swiss", 1, None), "at least two bots"),
    ]:
        game, fmt, rounds, chosen = terms
        with pytest.raises(ValueError, match=message):
            await db.transaction(functools.partial(create_in, game=game, fmt=fmt,
                                                   rounds=rounds, bot_ids=chosen))
    assert await db.fetchval("SELECT COUNT(*) FROM tournaments") == 0


async def test_the_command_line_creates_and_shows_a_tournament(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    """`merknera tournament create` on the database a running platform serves."""
    await bots(arena, aiohttp_server, 4)
    db_path = arena.platform.config.store.db
    created = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "tournament", "create", "--game", "TICTACTOE",
        "--format", "swiss", "--rounds", "2", "--bots", "bot0", "bot1", "bot2", "bot3",
        "--db", db_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await created.communicate()
    assert created.returncode == 0, err.decode()
    tournament_id = int(out.decode().split()[2].rstrip(":"))
    done = await finished(arena, tournament_id)
    assert len(done.games) == 4
    shown = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "tournament", "show", str(tournament_id),
        "--db", db_path, stdout=asyncio.subprocess.PIPE)
    text = (await shown.communicate())[0].decode()
    assert f"Tournament {tournament_id}: TICTACTOE, swiss, round 2 of 2, finished" in text
    assert sum(f"bot{n} (1.0)" in text for n in range(4)) == 4
    api = await (await arena.client.get(f"/api/tournaments/{tournament_id}")).json()
    assert api["status"] == "FINISHED" and len(api["table"]) == 4
    assert [row["rank"] for row in api["table"]] == sorted(row["rank"] for row in api["table"])
    assert {row["name"] for row in api["table"]} == {f"bot{n}" for n in range(4)}
    listing = await (await arena.client.get("/api/tournaments")).json()
    assert listing["tournaments"][0]["id"] == tournament_id
    assert (await arena.client.get("/api/tournaments/999")).status == 404
    bad = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "tournament", "create", "--game", "TICTACTOE",
        "--format", "swiss", "--rounds", "9", "--db", db_path,
        stderr=asyncio.subprocess.PIPE)
    assert await bad.wait() == 2


async def test_a_withdrawn_entrant_gives_byes_not_rated_forfeits(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    entrants = await bots(arena, aiohttp_server, 4)
    db = arena.platform.db
    tournament_id = await arena.platform.create_tournament("TICTACTOE", "round-robin", 1, None)
    async def round_number() -> int:
        found = await db.read(functools.partial(store.load, tournament_id=tournament_id))
        return 0 if found is None else found.round

    async def under_way() -> bool:  # paired by the director's own timer
        return await round_number() >= 1

    await until(under_way, within=30.0)
    leaver = entrants[0]
    assert await arena.platform.disable_bot(leaver, "left the tournament")
    done = await finished(arena, tournament_id)
    later = [g for g in done.games if g.round > 1]
    assert later and all(leaver not in (g.first, g.second) for g in later)
    assert any(bot != leaver for _, bot in done.byes)  # its opponents got byes
    rated_forfeits = await db.fetchval(
        "SELECT COUNT(*) FROM games WHERE tournament_id = ? AND reason = 'UNREACHABLE'",
        (tournament_id,))
    assert rated_forfeits == 0

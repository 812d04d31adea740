"""Presence, re-registration, superseding, restarts and the concurrency limit."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from pytest_aiohttp import AiohttpClient, AiohttpServer

from merknera.app import Platform, build_app
from merknera.config import Config
from merknera.events import Event, MovePlayed
from merknera.games import JSON
from merknera.protocol import signing
from merknera.scheduler.registration import RegistrationRequest
from merknera.store import Database, users
from tests.support import Arena, InFlight, ScriptedBot, first_empty, serve_bot, until


def slow(delay: float) -> Any:
    async def next_move(params: dict[str, Any], _id: Any) -> JSON:
        await asyncio.sleep(delay)
        return {"position": first_empty(params)}
    return next_move


async def found_offline(arena: Arena, name: str) -> None:
    """Wait until a call to the bot has failed and it is recorded offline."""
    async def offline() -> bool:
        status: str | None = await arena.platform.db.fetchval(
            "SELECT status FROM bots WHERE name = ?", (name,))
        return status == "OFFLINE"

    await until(offline)


async def moves_played(events: asyncio.Queue[Event], count: int) -> None:
    """Wait until ``count`` moves have been played (or fail after 20 s)."""
    async with asyncio.timeout(20):
        while count > 0:
            if isinstance(await events.get(), MovePlayed):
                count -= 1


async def test_calls_are_signed_with_the_bot_secret(arena: Arena,
                                                    aiohttp_server: AiohttpServer) -> None:
    one, two = ScriptedBot(), ScriptedBot()
    first = await arena.register("one", await serve_bot(aiohttp_server, one))
    await arena.register("two", await serve_bot(aiohttp_server, two))
    await arena.settle()
    result = first["result"]
    assert isinstance(result, dict)
    assert len(one.signed) > 5
    for timestamp, signature, body in one.signed:
        assert signing.verify(str(result["secret"]), timestamp, body, signature)
    # and not with anybody else's secret
    timestamp, signature, body = two.signed[0]
    assert not signing.verify(str(result["secret"]), timestamp, body, signature)


async def test_a_bot_that_comes_online_late_plays_its_games(
        arena: Arena, aiohttp_server: AiohttpServer, unused_tcp_port: int) -> None:
    early, late = ScriptedBot(), ScriptedBot()
    await arena.register("early", await serve_bot(aiohttp_server, early))
    await arena.register("late", f"http://127.0.0.1:{unused_tcp_port}/rpc")
    await found_offline(arena, "late")  # its games now wait for it, within the 1.5 s grace
    await serve_bot(aiohttp_server, late, port=unused_tcp_port)
    await arena.settle()
    for game_id in (1, 2):
        game = await arena.game(game_id)
        assert (game["outcome"], game["reason"]) == ("WIN", "NORMAL"), game["detail"]
    assert len(late.methods("NextMove")) >= 6
    status = await arena.platform.db.fetchval("SELECT status FROM bots WHERE name = 'late'")
    assert status == "ONLINE"


async def test_registering_the_same_version_again_resumes_waiting_games(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    early, moved = ScriptedBot(), ScriptedBot()
    await arena.register("early", await serve_bot(aiohttp_server, early))
    await arena.register("moved", "http://127.0.0.1:9/rpc")  # the wrong port at first
    await found_offline(arena, "moved")
    again = await arena.register("moved", await serve_bot(aiohttp_server, moved))
    assert "already registered" in str(again["result"])
    await arena.settle()
    for game_id in (1, 2):
        assert (await arena.game(game_id))["reason"] == "NORMAL"
    assert await arena.platform.db.fetchval("SELECT COUNT(*) FROM games") == 2


async def test_a_new_version_ends_the_running_games_without_a_result(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    steady, sluggish = ScriptedBot(), ScriptedBot(next_move=slow(0.2))
    await arena.register("steady", await serve_bot(aiohttp_server, steady))
    url = await serve_bot(aiohttp_server, sluggish)
    async with arena.platform.events.listen() as events:
        await arena.register("sluggish", url, version="1")
        await moves_played(events, 2)
    await arena.register("sluggish", url, version="2")
    moves_then = await arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM moves WHERE game_id IN (1, 2)")
    await arena.settle()
    for game_id in (1, 2):
        game = await arena.game(game_id)
        assert (game["outcome"], game["reason"]) == ("NO_RESULT", "SUPERSEDED")
        assert {s["result"] for s in game["seats"]} == {"NONE"}
    assert await arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM moves WHERE game_id IN (1, 2)") == moves_then
    for game_id in (3, 4):
        assert (await arena.game(game_id))["reason"] == "NORMAL"
    # superseded games get no Complete
    assert {c["gameid"] for c in steady.methods("Complete")} == {3, 4}


async def test_the_concurrency_limit_holds(config: Config, aiohttp_client: AiohttpClient,
                                           aiohttp_server: AiohttpServer) -> None:
    config = config.replace(concurrency=2, max_games_per_owner=2)
    platform = Platform(config)
    client = await aiohttp_client(build_app(config, platform))
    _, token = await users.create_user(platform.db, "alice")
    arena = Arena(platform, client, token)
    counter = InFlight()
    bots = [ScriptedBot(next_move=slow(0.02), shared=counter) for _ in range(4)]
    for number, bot in enumerate(bots):
        await arena.register(f"bot{number}", await serve_bot(aiohttp_server, bot))
    await arena.settle()
    assert await platform.db.fetchval(
        "SELECT COUNT(*) FROM games WHERE reason = 'NORMAL'") == 12
    assert 1 <= counter.most <= 2


async def test_a_new_version_is_registered_at_once_while_every_slot_is_busy(
        config: Config, aiohttp_client: AiohttpClient, aiohttp_server: AiohttpServer) -> None:
    """Superseding games that wait for an offline bot must not wait for a free slot."""
    config = config.replace(concurrency=1, offline_grace=30.0)
    platform = Platform(config)
    client = await aiohttp_client(build_app(config, platform))
    _, token = await users.create_user(platform.db, "alice")
    arena = Arena(platform, client, token)
    busy_one, busy_two = ScriptedBot(next_move=slow(0.3)), ScriptedBot(next_move=slow(0.3))
    await arena.register("gone", "http://127.0.0.1:9/rpc")
    async with platform.events.listen() as events:
        await arena.register("busy-one", await serve_bot(aiohttp_server, busy_one))
        await arena.register("busy-two", await serve_bot(aiohttp_server, busy_two))
        await moves_played(events, 1)  # a game between the busy bots holds the only slot
    reply = await arena.register("gone", "http://127.0.0.1:9/rpc", version="2")
    assert "A new version" in str(reply["result"])
    running = await platform.db.fetchval("SELECT COUNT(*) FROM games WHERE status = 'RUNNING'")
    assert running == 1  # registered while the slot was still taken
    superseded = await platform.db.fetchval(
        "SELECT COUNT(*) FROM games WHERE reason = 'SUPERSEDED'")
    with_gone = await platform.db.fetchval(
        "SELECT COUNT(*) FROM seats JOIN bots ON bots.id = seats.bot_id "
        "WHERE bots.name = 'gone' AND bots.version = '1.0'")
    assert superseded == with_gone >= 2


async def test_a_bot_that_dies_mid_game_forfeits_at_its_move(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    steady, fragile = ScriptedBot(), ScriptedBot(next_move=slow(0.1))
    await arena.register("steady", await serve_bot(aiohttp_server, steady))
    server = await aiohttp_server(fragile.app())
    async with arena.platform.events.listen() as events:
        await arena.register("fragile", str(server.make_url("/rpc")))
        await moves_played(events, 3)
    await server.close()
    await arena.settle()
    for game_id in (1, 2):
        game = await arena.game(game_id)
        assert (game["outcome"], game["reason"]) == ("WIN", "UNREACHABLE"), game["detail"]
        assert {s["name"]: s["result"] for s in game["seats"]} == {"steady": "WIN",
                                                                    "fragile": "LOSS"}
        assert game["moves"][-1]["fault"] == "UNREACHABLE"
        assert game["moves"][-1]["seat"] == next(
            s["seat"] for s in game["seats"] if s["name"] == "fragile")


async def test_a_bot_that_drops_new_game_cannot_stall_its_games(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    """It answers pings but closes the connection on NewGame: the game must still end."""
    app = web.Application()

    async def handle(request: web.Request) -> web.StreamResponse:
        call = await request.json()
        if call["method"] == "Status.Ping":
            return web.json_response({"result": {"ping": "OK"}, "id": call["id"]})
        assert request.transport is not None
        request.transport.close()
        return web.Response()

    app.router.add_post("/rpc", handle)
    server = await aiohttp_server(app)
    await arena.register("steady", await serve_bot(aiohttp_server, ScriptedBot()))
    await arena.register("rude", str(server.make_url("/rpc")))
    await arena.settle()
    for game_id in (1, 2):
        game = await arena.game(game_id)
        assert (game["outcome"], game["reason"]) == ("WIN", "UNREACHABLE")
        assert "before the game began" in game["detail"]


async def test_a_stopped_platform_resumes_its_games_from_the_log(
        config: Config, aiohttp_server: AiohttpServer) -> None:
    bots = [ScriptedBot(next_move=slow(0.05)) for _ in range(3)]
    urls = [await serve_bot(aiohttp_server, bot) for bot in bots]
    platform = Platform(config)
    await platform.start()
    _, token = await users.create_user(platform.db, "alice")
    async with platform.events.listen() as events:
        for number, url in enumerate(urls):
            await platform.registrar.register(
                RegistrationRequest(token, f"bot{number}", "1", "TICTACTOE", url))
        await moves_played(events, 8)
    await platform.stop()

    stopped = await Database.open(config.store.db)
    try:
        before = [tuple(row) for row in await stopped.fetchall(
            "SELECT game_id, seq, seat, move FROM moves ORDER BY id")]
        unfinished = await stopped.fetchval(
            "SELECT COUNT(*) FROM games WHERE status != 'FINISHED'")
    finally:
        await stopped.close()
    assert unfinished > 0

    again = Platform(config)
    await again.start()
    try:
        async with asyncio.timeout(30):
            await again.scheduler.wait_idle()
        rows = await again.db.fetchall("SELECT game_id, seq, seat, move FROM moves ORDER BY id")
        after = [tuple(row) for row in rows]
        assert after[: len(before)] == before
        statuses = await again.db.fetchall("SELECT status, reason FROM games")
        assert {tuple(row) for row in statuses} == {("FINISHED", "NORMAL")}
        assert len(statuses) == 6
    finally:
        await again.stop()


async def test_an_http_server_that_is_not_a_bot(arena: Arena,
                                                aiohttp_server: AiohttpServer) -> None:
    """Pings of any HTTP 200 count as alive; the moves then fail as malformed replies."""
    app = web.Application()

    async def anything(request: web.Request) -> web.Response:
        return web.Response(text="<html>hello</html>", content_type="text/html")

    app.router.add_post("/rpc", anything)
    server = await aiohttp_server(app)
    good = ScriptedBot()
    await arena.register("good", await serve_bot(aiohttp_server, good))
    await arena.register("html", str(server.make_url("/rpc")))
    await arena.settle()
    for game_id in (1, 2):
        game = await arena.game(game_id)
        assert (game["outcome"], game["reason"]) == ("WIN", "STRIKES")
        assert {s["name"]: s["result"] for s in game["seats"]} == {"good": "WIN",
                                                                    "html": "LOSS"}

"""/rpc/ws: bots that connect out register on their socket and play every game over it,
against bots of every protocol; drops, replacements and misbehaving sockets."""

from __future__ import annotations

import asyncio
import functools
import json
import re
from typing import Any

import aiohttp
import pytest
from pytest_aiohttp import AiohttpServer

from merknera import rpc_socket
from merknera.app import Platform, build_app
from merknera.games import JSON
from merknera.guard.sockets import CLOSE_REPLACED
from merknera.scheduler.leases import Leases
from merknera.store import users
from tests.support import Arena, ScriptedBot, serve_bot, until
from tests.support.socket_bot import SocketBot


async def finished(arena: Arena) -> list[dict[str, Any]]:
    """Every game, with its reason, once all have ended."""
    await arena.settle()
    rows = await arena.platform.db.fetchall(
        "SELECT id, status, reason FROM games ORDER BY id")
    return [dict(row) for row in rows]


async def faults(arena: Arena) -> list[str]:
    """Every fault written in a bot's log."""
    rows = await arena.platform.db.fetchall(
        "SELECT message FROM bot_log WHERE message LIKE 'Fault %'")
    return [row["message"] for row in rows]


async def test_a_bot_registers_on_its_socket(arena: Arena) -> None:
    bot = SocketBot(arena.client, arena.token, "Outbound")
    reply = await bot.connect()
    assert reply["id"] == "register" and "error" not in reply
    assert reply["result"]["message"] == (
        "Hello, Outbound (version: 1.0), good luck with Tic-Tac-Toe!")
    assert re.fullmatch(r"[0-9a-f]{64}", reply["result"]["secret"])
    row = await arena.platform.db.fetchone("SELECT * FROM bots WHERE name = 'Outbound'")
    assert row is not None
    assert (row["protocol"], row["endpoint"], row["status"]) == (
        "jsonrpc-socket", "", "ONLINE")
    page = await arena.client.get(f"/bots/{row['id']}")
    assert "JSON-RPC over a WebSocket it opens (it connects out)" in await page.text()
    # A ping comes on the socket.
    pinged = arena.platform.scheduler.arena.presence.bot(row["id"])
    assert pinged is not None
    answer = await arena.platform.sockets.ping(pinged)
    assert answer.ok and json.loads(answer.reply or b"")["result"] == {"ping": "OK"}
    assert bot.methods("Status.Ping")


@pytest.mark.parametrize(("params", "wanted"), [
    ({"rpcendpoint": "http://127.0.0.1:9/rpc"}, 'send no "rpcendpoint"'),
    ({"protocol": "jsonrpc"}, 'send no "protocol"'),
    ({"token": "wrong"}, 'User with Token "wrong" is not currently registered'),
    ({"game": "CHESS"}, 'Game "CHESS" is not known'),
])
async def test_a_failed_registration_is_answered_then_closed(
        arena: Arena, params: dict[str, Any], wanted: str) -> None:
    bot = SocketBot(arena.client, arena.token, "Refused")
    reply = await bot.connect(**params)
    assert wanted in reply["error"]["message"]
    assert bot.ws is not None
    frame = await bot.ws.receive(timeout=10)
    assert frame.type is aiohttp.WSMsgType.CLOSE
    assert bot.ws.close_code == 1008
    assert wanted[:20] in str(frame.extra)
    assert await arena.platform.db.fetchval("SELECT COUNT(*) FROM bots") == 0


async def test_over_http_the_socket_protocol_is_refused(arena: Arena) -> None:
    reply = await arena.rpc("RegistrationService.Register", {
        "token": arena.token, "botname": "Sneaky", "botversion": "1", "game": "TICTACTOE",
        "rpcendpoint": "http://127.0.0.1:9/rpc", "protocol": "jsonrpc-socket"})
    assert "registers on the WebSocket it opens to /rpc/ws" in str(reply["error"])


async def test_the_first_frame_must_register(arena: Arena) -> None:
    ws = await arena.client.ws_connect("/rpc/ws")
    await ws.send_json({"jsonrpc": "2.0", "id": 1, "method": "Scrabble.Ready", "params": {}})
    reply = json.loads((await ws.receive(timeout=10)).data)
    assert 'must be "RegistrationService.Register"' in reply["error"]["message"]
    assert (await ws.receive(timeout=10)).type is aiohttp.WSMsgType.CLOSE
    assert ws.close_code == 1008


async def test_a_socket_that_does_not_register_in_time_is_closed(
        arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rpc_socket, "REGISTER_SECONDS", 0.2)
    ws = await arena.client.ws_connect("/rpc/ws")
    reply = json.loads((await ws.receive(timeout=10)).data)
    assert "no registration within 0.2 s" in reply["error"]["message"]
    assert (await ws.receive(timeout=10)).type is aiohttp.WSMsgType.CLOSE
    assert ws.close_code == 1008


async def test_plain_http_to_the_socket_is_told_what_it_is(arena: Arena) -> None:
    response = await arena.client.get("/rpc/ws")
    assert response.status == 426
    assert "bots that connect out" in await response.text()


async def test_connected_and_http_bots_play_a_round_robin(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    http = [ScriptedBot() for _ in range(2)]
    for number, served in enumerate(http):
        await arena.register(f"Served{number}", await serve_bot(aiohttp_server, served))
    out = [SocketBot(arena.client, arena.token, f"Outbound{number}") for number in range(2)]
    for bot in out:
        await bot.connect()
    games = await finished(arena)
    # Each newcomer meets every bot registered before it, both ways round.
    assert len(games) == 2 * (1 + 2 + 3)
    assert {(game["status"], game["reason"]) for game in games} == {("FINISHED", "NORMAL")}
    assert await faults(arena) == []
    for bot in out:
        assert len(bot.methods(".NextMove")) >= 3 * 2 * 2
        assert all(isinstance(call["id"], int) for call in bot.calls)
        assert len({call["id"] for call in bot.calls}) == len(bot.calls)


async def test_one_socket_carries_several_games_at_once(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    release = asyncio.Event()

    async def slow(params: dict[str, Any], _id: Any) -> JSON:
        await release.wait()
        return {"position": params["gamestate"].index("")}

    for number in range(3):
        await arena.register(f"Served{number}", await serve_bot(aiohttp_server, ScriptedBot()))
    bot = SocketBot(arena.client, arena.token, "Busy", next_move=slow)
    await bot.connect()
    await until(lambda: bot.shared.now >= 3)
    release.set()
    games = await finished(arena)
    assert {(game["status"], game["reason"]) for game in games} == {("FINISHED", "NORMAL")}


async def test_a_call_left_unanswered_is_sent_again_after_a_reconnect(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await arena.register("Served", await serve_bot(aiohttp_server, ScriptedBot()))
    bot = SocketBot(arena.client, arena.token, "Flaky", answer=False)
    await bot.connect()
    await until(lambda: bool(bot.methods(".NextMove")))
    unanswered = bot.methods(".NextMove")[0]
    await bot.drop()
    row = await arena.platform.db.fetchone("SELECT id FROM bots WHERE name = 'Flaky'")
    assert row is not None
    await until(lambda: not arena.platform.scheduler.arena.presence.is_online(row["id"]))
    again = SocketBot(arena.client, arena.token, "Flaky")
    reply = await again.connect()
    assert "is already registered" in reply["result"]["message"]
    await until(lambda: bool(again.methods(".NextMove")))
    # The same call, the same id, on the new socket.
    assert again.methods(".NextMove")[0] == unanswered
    games = await finished(arena)
    assert {(game["status"], game["reason"]) for game in games} == {("FINISHED", "NORMAL")}
    assert await faults(arena) == []


async def test_a_bot_that_does_not_come_back_faults_as_unreachable(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await arena.register("Served", await serve_bot(aiohttp_server, ScriptedBot()))
    bot = SocketBot(arena.client, arena.token, "Gone", answer=False)
    await bot.connect()
    await until(lambda: bool(bot.methods(".NextMove")))
    await bot.drop()
    games = await finished(arena)
    assert [game["reason"] for game in games] == ["UNREACHABLE", "UNREACHABLE"]
    found = await faults(arena)
    assert found and all("did not connect again within 1.5 s" in fault for fault in found)


async def test_a_newer_socket_replaces_the_older(arena: Arena) -> None:
    first = SocketBot(arena.client, arena.token, "Twice")
    await first.connect()
    second = SocketBot(arena.client, arena.token, "Twice")
    await second.connect()
    await asyncio.wait_for(first.closed.wait(), 10)
    assert first.ws is not None and first.ws.close_code == CLOSE_REPLACED
    row = await arena.platform.db.fetchone("SELECT id, status FROM bots WHERE name = 'Twice'")
    assert row is not None and row["status"] == "ONLINE"
    connected = arena.platform.sockets.connected(row["id"])
    assert connected is not None and not connected.closed.is_set()


async def test_frames_that_answer_nothing_are_answered_or_ignored(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await arena.register("Served", await serve_bot(aiohttp_server, ScriptedBot()))
    bot = SocketBot(arena.client, arena.token, "Noisy")
    await bot.connect()
    ws = bot.ws
    assert ws is not None
    await ws.send_str("{not json")
    await ws.send_bytes(b"\x00\x01")
    await ws.send_json({"jsonrpc": "2.0", "id": 987654321, "result": {"position": 4}})
    await ws.send_json([{"jsonrpc": "2.0", "id": 1, "method": "Status.Ping"}])
    await ws.send_json({"jsonrpc": "2.0", "id": 5, "method": "Nobody.Knows", "params": {}})
    await ws.send_json({"jsonrpc": "2.0", "id": 6, "method": "RegistrationService.Register",
                        "params": {}})
    games = await finished(arena)
    assert {(game["status"], game["reason"]) for game in games} == {("FINISHED", "NORMAL")}
    assert not ws.closed
    await until(lambda: len(bot.responses) == 5)
    errors = [(response["id"], response["error"]["code"], response["error"]["message"])
              for response in bot.responses]
    assert errors[0][:2] == (None, -32700) and "the frame is not JSON" in errors[0][2]
    assert errors[1][:2] == (None, -32600) and "as text" in errors[1][2]
    assert errors[2][:2] == (None, -32600) and "batches are not supported" in errors[2][2]
    # Requests are answered as they finish: in any order.
    by_id = {error[0]: error[1:] for error in errors[3:]}
    assert by_id[5][0] == -32601 and "Nobody.Knows" in by_id[5][1]
    assert by_id[6][0] == -32600 and "registered on this socket already" in by_id[6][1]


async def test_an_oversized_frame_closes_the_socket(arena: Arena) -> None:
    bot = SocketBot(arena.client, arena.token, "Big")
    await bot.connect()
    assert bot.ws is not None
    limit = arena.platform.config.calls.max_reply_bytes
    await bot.ws.send_str(json.dumps({"jsonrpc": "2.0", "id": 1, "result": "x" * limit}))
    await asyncio.wait_for(bot.closed.wait(), 10)
    assert bot.ws.close_code == 1009
    row = await arena.platform.db.fetchone("SELECT id FROM bots WHERE name = 'Big'")
    assert row is not None
    await until(lambda: arena.platform.sockets.connected(row["id"]) is None)


async def passing(params: dict[str, Any], _id: Any) -> JSON:
    return {"type": "PASS"}


async def test_scrabble_over_the_socket_with_ready_on_it(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    served = ScriptedBot(next_move=passing, new_game={"status": "READY"})
    await arena.register("served", await serve_bot(aiohttp_server, served), game="SCRABBLE")
    bot = SocketBot(arena.client, arena.token, "outbound", game="SCRABBLE",
                    next_move=passing, new_game={"status": "PREPARING"})
    await bot.connect()
    await until(lambda: len(bot.methods(".NewGame")) == 2)
    assert bot.methods(".NextMove") == []
    assert bot.ws is not None
    hashes = {name: entry.sha1
              for name, entry in arena.platform.assets.roles("SCRABBLE").items()}
    for call in bot.methods(".NewGame"):
        params = call["params"]
        # The asset descriptors, as an HTTP bot gets them.
        assert {name: params[name]["sha1"] for name in hashes} == hashes
        await bot.ws.send_json({"jsonrpc": "2.0", "id": f"ready-{params['gameid']}",
                                "method": "Scrabble.Ready", "params": {
                                    "gameid": params["gameid"], **hashes,
                                    "botname": "outbound", "token": arena.token}})
    await until(lambda: len(bot.responses) == 2)
    assert {(r["id"], json.dumps(r["result"])) for r in bot.responses} == {
        ("ready-1", '{"status": "OK"}'), ("ready-2", '{"status": "OK"}')}
    games = await finished(arena)
    assert {(game["status"], game["reason"]) for game in games} == {("FINISHED", "NORMAL")}
    assert len(bot.methods(".NextMove")) == 6
    assert len(bot.methods(".Complete")) == 2


async def test_wrong_tokens_on_sockets_are_throttled(make_arena: Any) -> None:
    arena = await make_arena(auth_failure_burst=2, auth_failure_interval=60.0)
    messages = []
    for _ in range(3):
        bot = SocketBot(arena.client, "wrong-token", "Guesser")
        reply = await bot.connect()
        messages.append((reply["error"]["code"], reply["error"]["message"]))
        assert bot.ws is not None
        await bot.ws.receive(timeout=10)
        assert bot.ws.close_code == 1008
    assert [code for code, _ in messages] == [-32002, -32002, -32008]
    assert "try again in" in messages[2][1]


async def test_replies_to_ignored_calls_answer_them(
        make_arena: Any, aiohttp_server: AiohttpServer) -> None:
    # Three registrations and the socket's upgrade take four of the six requests the
    # address may make; the six Complete replies would close the socket if they counted.
    arena = await make_arena(request_burst=6, request_rate=0.01)
    for number in range(3):
        await arena.register(f"Served{number}", await serve_bot(aiohttp_server, ScriptedBot()))
    bot = SocketBot(arena.client, arena.token, "Polite")
    await bot.connect()
    games = await finished(arena)
    assert {(game["status"], game["reason"]) for game in games} == {("FINISHED", "NORMAL")}
    await until(lambda: len(bot.methods(".Complete")) == 6)
    assert bot.ws is not None and not bot.ws.closed


async def test_reconnects_do_not_use_up_the_registration_allowance(make_arena: Any) -> None:
    arena = await make_arena(registration_burst=2, registration_interval=600.0)
    bot = SocketBot(arena.client, arena.token, "Returning")
    for _ in range(5):
        reply = await bot.connect()
        assert "result" in reply, reply
        await bot.drop()
    # New versions still count: the second is made, the third must wait.
    assert "result" in await SocketBot(arena.client, arena.token, "Returning", "2").connect()
    refused = await SocketBot(arena.client, arena.token, "Returning", "3").connect()
    assert refused["error"]["code"] == -32008


async def test_a_socket_that_only_pongs_is_closed_at_the_register_deadline(
        arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rpc_socket, "REGISTER_SECONDS", 0.3)
    ws = await arena.client.ws_connect("/rpc/ws", autoping=False)
    while True:
        await ws.pong()
        try:
            frame = await ws.receive(timeout=0.05)
        except TimeoutError:
            continue
        break
    assert "no registration within 0.3 s" in json.loads(frame.data)["error"]["message"]
    assert (await ws.receive(timeout=10)).type is aiohttp.WSMsgType.CLOSE


def asked_more(bot: SocketBot, seen: int) -> bool:
    """Whether the bot was sent more NextMove calls than ``seen``."""
    return len(bot.methods(".NextMove")) > seen


async def test_a_bot_that_keeps_reconnecting_cannot_hold_its_game_up(
        make_arena: Any, aiohttp_server: AiohttpServer) -> None:
    """Each NextMove is met with a drop and a reconnect within the grace: the call lasts
    no longer than the move's limit and the grace, then faults."""
    # As many reconnects as the bot likes: the call's own bound must end the game.
    arena = await make_arena(request_burst=1_000_000)
    await arena.register("Served", await serve_bot(aiohttp_server, ScriptedBot()))
    bot = SocketBot(arena.client, arena.token, "Dodger", answer=False)
    await bot.connect()
    row = await arena.platform.db.fetchone("SELECT id FROM bots WHERE name = 'Dodger'")
    assert row is not None
    sent = 0
    # A guard against a hang (the bot would win it), not a measurement.
    async with asyncio.timeout(30):
        while await arena.platform.db.fetchval(
                "SELECT COUNT(*) FROM games WHERE status != 'FINISHED'"):
            try:
                await until(functools.partial(asked_more, bot, sent), within=0.2)
            except TimeoutError:
                continue
            sent = len(bot.methods(".NextMove"))
            await bot.drop()
            await bot.connect()
    games = await finished(arena)
    assert {game["reason"] for game in games} <= {"TIMEOUT", "UNREACHABLE"}
    assert len({call["id"] for call in bot.methods(".NextMove")}) <= 2  # one call per game


async def test_a_call_under_way_goes_to_the_socket_that_replaces_its_own(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await arena.register("Served", await serve_bot(aiohttp_server, ScriptedBot()))
    first = SocketBot(arena.client, arena.token, "Twin", answer=False)
    await first.connect()
    await until(lambda: bool(first.methods(".NextMove")))
    waiting = first.methods(".NextMove")[0]
    second = SocketBot(arena.client, arena.token, "Twin")
    await second.connect()
    await until(lambda: bool(second.methods(".NextMove")))
    assert second.methods(".NextMove")[0] == waiting
    games = await finished(arena)
    assert {(game["status"], game["reason"]) for game in games} == {("FINISHED", "NORMAL")}
    assert first.ws is not None and first.ws.close_code == CLOSE_REPLACED


async def test_a_bot_that_stops_reading_its_socket_times_out(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await arena.register("Served", await serve_bot(aiohttp_server, ScriptedBot()))
    bot = SocketBot(arena.client, arena.token, "Deaf")
    await bot.connect()
    assert bot.reader is not None
    bot.reader.cancel()  # nothing reads the socket from now on
    games = await finished(arena)
    assert [game["reason"] for game in games] == ["TIMEOUT", "TIMEOUT"]
    found = await faults(arena)
    assert found and all("no reply within 1 s" in fault for fault in found)


async def test_an_arena_of_several_nodes_refuses_sockets(
        config: Any, aiohttp_client: Any, postgres: Any) -> None:
    config = config.replace(db=postgres.new_database())
    platform = Platform(config)
    client = await aiohttp_client(build_app(config, platform))
    _, token = await users.create_user(platform.db, "alice")
    other = Leases(platform.db, "node-b", "http://127.0.0.1:8002", 15.0)
    await other.heartbeat()  # another node is live
    await platform.leases.heartbeat()
    reply = await SocketBot(client, token, "Lonely").connect()
    assert reply["error"]["code"] == -32007
    assert "several nodes" in reply["error"]["message"]
    await other.stopped()
    await platform.leases.heartbeat()
    assert "result" in await SocketBot(client, token, "Lonely").connect()

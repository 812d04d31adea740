"""POST /rpc: RegistrationService.Register in both dialects, every error, nothing stored."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pytest_aiohttp import AiohttpServer

from merknera.protocol import jsonrpc
from merknera.store import users
from tests.support import Arena, ScriptedBot

# An endpoint on loopback where nothing listens: registration does not call the bot.
NOWHERE = "http://127.0.0.1:9/rpc"


async def test_register_in_the_2_0_dialect(arena: Arena) -> None:
    reply = await arena.register("Botty", NOWHERE, version="0.0.8")
    assert reply["jsonrpc"] == "2.0" and reply["id"] == 1 and "error" not in reply
    result = reply["result"]
    assert isinstance(result, dict)
    assert result["message"] == "Hello, Botty (version: 0.0.8), good luck with Tic-Tac-Toe!"
    assert re.fullmatch(r"[0-9a-f]{64}", str(result["secret"]))
    row = await arena.platform.db.fetchone("SELECT * FROM bots WHERE name = 'Botty'")
    assert row is not None
    assert (row["version"], row["game"], row["endpoint"], row["status"], row["secret"]) == (
        "0.0.8", "TICTACTOE", NOWHERE, "ONLINE", result["secret"])
    assert (row["language"], row["website"], row["description"]) == (
        "Python", "https://example.org", "a test bot")
    log = await arena.platform.db.fetchall("SELECT message FROM bot_log WHERE bot_id = ?",
                                           (row["id"],))
    assert [r["message"] for r in log] == ["Registered Botty (version: 0.0.8)"]


async def test_register_in_merknera_dialect_with_mixed_case_keys(arena: Arena) -> None:
    reply = await arena.rpc("RegistrationService.Register", {
        "Token": arena.token, "botName": "Gopher", "BotVersion": "1", "GAME": "TICTACTOE",
        "rpcEndpoint": NOWHERE}, dialect2=False, request_id=42)
    assert set(reply) == {"result", "error", "id"}
    assert reply["error"] is None and reply["id"] == 42
    assert isinstance(reply["result"], dict)
    assert reply["result"]["message"] == "Hello, Gopher (version: 1), good luck with Tic-Tac-Toe!"


async def reachable(aiohttp_server: AiohttpServer) -> str:
    """The endpoint of a real, well-behaved bot (it stays online)."""
    server = await aiohttp_server(ScriptedBot().app())
    return str(server.make_url("/rpc"))


async def test_same_version_again_updates_and_schedules_nothing(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    first = await arena.register("Botty", NOWHERE)
    await arena.register("Other", await reachable(aiohttp_server))
    before = await arena.counts()
    again = await arena.register("Botty", "http://127.0.0.1:11/rpc")
    result, first_result = again["result"], first["result"]
    assert isinstance(result, dict) and isinstance(first_result, dict)
    assert result["message"].startswith(
        'Hello, Botty. The version "1.0" of your bot is already registered.')
    assert result["secret"] == first_result["secret"]
    after = await arena.counts()
    assert after["games"] == before["games"] == 2
    assert after["bots"] == before["bots"]
    endpoint = await arena.platform.db.fetchval("SELECT endpoint FROM bots WHERE name = 'Botty'")
    assert endpoint == "http://127.0.0.1:11/rpc"


async def test_new_version_supersedes_the_old_and_its_unfinished_games(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    # Botty cannot be reached, so its games wait for it (within the grace period) while
    # Other stays online.
    await arena.register("Botty", NOWHERE, version="1")
    await arena.register("Other", await reachable(aiohttp_server))
    reply = await arena.register("Botty", await reachable(aiohttp_server), version="2")
    result = reply["result"]
    assert isinstance(result, dict)
    assert result["message"] == ("A new version of your bot has been registered as Botty "
                                 "(version: 2), good luck with Tic-Tac-Toe!")
    db = arena.platform.db
    statuses = {r["version"]: r["status"] for r in await db.fetchall(
        "SELECT version, status FROM bots WHERE name = 'Botty'")}
    assert statuses == {"1": "SUPERSEDED", "2": "ONLINE"}
    old_games = await db.fetchall(
        "SELECT games.* FROM games JOIN seats ON seats.game_id = games.id "
        "JOIN bots ON bots.id = seats.bot_id WHERE bots.name = 'Botty' AND bots.version = '1'")
    assert len(old_games) == 2
    for game in old_games:
        assert (game["status"], game["outcome"], game["reason"]) == (
            "FINISHED", "NO_RESULT", "SUPERSEDED")
    new_games = await db.fetchval(
        "SELECT COUNT(*) FROM seats JOIN bots ON bots.id = seats.bot_id "
        "WHERE bots.name = 'Botty' AND bots.version = '2'")
    assert new_games == 2
    again = await arena.register("Botty", NOWHERE, version="1")
    assert "superseded" in str(again["error"])


async def test_round_robin_seats_each_pair_both_ways(arena: Arena,
                                                     aiohttp_server: AiohttpServer) -> None:
    for name in ("A", "B", "C"):
        await arena.register(name, await reachable(aiohttp_server))
    db = arena.platform.db
    seatings = []
    for game_id in [row["id"] for row in await db.fetchall("SELECT id FROM games ORDER BY id")]:
        seats = await db.fetchall(
            "SELECT b.name FROM seats s JOIN bots b ON b.id = s.bot_id WHERE s.game_id = ? "
            "ORDER BY s.seat", (game_id,))
        seatings.append("".join(s["name"] for s in seats))
    assert seatings == ["AB", "BA", "AC", "CA", "BC", "CB"]
    # Each seat of each game is told in its bot's log, with its opponent and its seat.
    ids = [row["id"] for row in await db.fetchall("SELECT id FROM games ORDER BY id")]
    logged = await db.fetchall(
        "SELECT b.name, l.message, l.game_id FROM bot_log l JOIN bots b ON b.id = l.bot_id "
        "WHERE l.message LIKE 'Scheduled game%'")
    assert sorted(tuple(row) for row in logged) == sorted(
        (name, f"Scheduled game with {seating[1 - seat]}. You are player "
               f"{('one', 'two')[seat]} (gameId: {game_id})", game_id)
        for game_id, seating in zip(ids, seatings, strict=True)
        for seat, name in enumerate(seating))


def _error_of(reply: dict[str, Any]) -> tuple[int | None, str]:
    error = reply["error"]
    if isinstance(error, dict):
        return error["code"], error["message"]
    return None, error


BASE = {"botname": "Botty", "botversion": "1", "game": "TICTACTOE", "rpcendpoint": NOWHERE}


@pytest.mark.parametrize(("params", "code", "message"), [
    ({"game": "CHESS"}, jsonrpc.UNKNOWN_GAME, 'Game "CHESS" is not known'),
    ({"token": "nope"}, jsonrpc.UNKNOWN_TOKEN,
     'User with Token "nope" is not currently registered with Merknera'),
    ({"botname": None}, jsonrpc.INVALID_PARAMS, 'The param "botname" is required'),
    ({"botversion": None}, jsonrpc.INVALID_PARAMS, 'The param "botversion" is required'),
    ({"game": None}, jsonrpc.INVALID_PARAMS, 'The param "game" is required'),
    ({"rpcendpoint": None}, jsonrpc.INVALID_PARAMS, 'The param "rpcendpoint" is required'),
    ({"token": None}, jsonrpc.INVALID_PARAMS, 'The param "token" is required'),
    ({"botname": 5}, jsonrpc.INVALID_PARAMS, 'The param "botname" must be a string'),
    ({"botname": ["a"]}, jsonrpc.INVALID_PARAMS, 'The param "botname" must be a string'),
    ({"description": {"a": 1}}, jsonrpc.INVALID_PARAMS,
     'The param "description" must be a string'),
    ({"botname": "   "}, jsonrpc.INVALID_PARAMS, 'The param "botname" is empty'),
    ({"botname": "x" * 101}, jsonrpc.INVALID_PARAMS,
     "The bot name is 101 characters long; at most 100 are allowed"),
    ({"botname": "a\nb"}, jsonrpc.INVALID_PARAMS,
     "The bot name contains a control character (U+000A)"),
    ({"rpcendpoint": "ftp://127.0.0.1/x"}, jsonrpc.ENDPOINT_REFUSED,
     "must start with http:// or https://"),
    ({"rpcendpoint": "not a url"}, jsonrpc.ENDPOINT_REFUSED, "The rpcendpoint was refused"),
    ({"rpcendpoint": "http://8.8.8.8/rpc"}, jsonrpc.ENDPOINT_REFUSED,
     "8.8.8.8, outside the networks this platform calls"),
    ({"rpcendpoint": "http://no-such-host.invalid/rpc"}, jsonrpc.ENDPOINT_REFUSED,
     "does not resolve"),
    ({"rpcendpoint": "http://user:pw@127.0.0.1/rpc"}, jsonrpc.ENDPOINT_REFUSED,
     "must not carry a user or password"),
])
@pytest.mark.parametrize("dialect2", [True, False])
async def test_registration_errors_store_nothing(arena: Arena, params: dict[str, Any], code: int,
                                                 message: str, dialect2: bool) -> None:
    before = await arena.counts()
    merged: dict[str, Any] = {"token": arena.token, **BASE, **params}
    merged = {key: value for key, value in merged.items() if value is not None}
    reply = await arena.rpc("RegistrationService.Register", merged, dialect2=dialect2)
    got_code, got_message = _error_of(reply)
    assert message in got_message
    assert reply["result"] is None if not dialect2 else "result" not in reply
    assert got_code == (code if dialect2 else None)
    assert await arena.counts() == before


async def test_a_name_taken_by_another_user_is_refused(arena: Arena) -> None:
    await arena.register("Botty", NOWHERE)
    _, bob_token = await users.create_user(arena.platform.db, "bob")
    before = await arena.counts()
    reply = await arena.register("Botty", NOWHERE, token=bob_token)
    assert _error_of(reply) == (
        jsonrpc.NAME_TAKEN,
        'The bot name "Botty" has already been used by another user. '
        "All bot names must be unique, please use another name.")
    assert await arena.counts() == before


@pytest.mark.parametrize(("body", "code"), [
    (b"{not json", jsonrpc.PARSE_ERROR),
    (b"\xff\xfe", jsonrpc.PARSE_ERROR),
    (b"[" * 30000 + b"]" * 30000, jsonrpc.PARSE_ERROR),
    (b'{"jsonrpc": "2.0", "method": "x", "params": NaN, "id": 1}', jsonrpc.PARSE_ERROR),
    (b"[]", jsonrpc.INVALID_REQUEST),
    (b'[{"jsonrpc": "2.0", "method": "RegistrationService.Register", "id": 1}]',
     jsonrpc.INVALID_REQUEST),
    (b'"hello"', jsonrpc.INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": 1}', jsonrpc.INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "method": 7, "id": 1}', jsonrpc.INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "method": "RegistrationService.Register", "id": {"a": 1}}',
     jsonrpc.INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "method": "RegistrationService.Register", "params": [1, 2], "id": 1}',
     jsonrpc.INVALID_PARAMS),
    (b'{"jsonrpc": "2.0", "method": "RegistrationService.Register", "params": "x", "id": 1}',
     jsonrpc.INVALID_PARAMS),
    (b'{"jsonrpc": "2.0", "method": "RegistrationService.register", "params": {}, "id": 1}',
     jsonrpc.METHOD_NOT_FOUND),
    (b'{"jsonrpc": "2.0", "method": "Nope.Nope", "id": 1}', jsonrpc.METHOD_NOT_FOUND),
])
async def test_malformed_requests_get_json_rpc_errors(arena: Arena, body: bytes,
                                                      code: int) -> None:
    before = await arena.counts()
    response = await arena.client.post("/rpc", data=body,
                                       headers={"Content-Type": "application/json"})
    assert response.status == 200
    reply = json.loads(await response.text())
    assert reply["jsonrpc"] == "2.0"
    assert reply["error"]["code"] == code, reply
    assert await arena.counts() == before


@pytest.mark.parametrize(("request_id", "why"), [
    ("1e400", "the body is not JSON: the number 1e400 is too large for a double"),
    ("-1E999", "the body is not JSON: the number -1E999 is too large for a double"),
    ('"\\udead"', "the body is not JSON: it holds an unpaired UTF-16 surrogate escape"),
    ('1, "id": 2', 'the body is not JSON: the member name "id" is given twice in an object'),
], ids=["1e400", "-1E999", "a lone surrogate", "two ids"])
async def test_a_registration_whose_id_cannot_be_written_back_is_refused_first(
        arena: Arena, request_id: str, why: str) -> None:
    # Registered, then answered 500 (the id read as infinity could not be written back):
    # the bot existed, and its author never got its secret.
    params = json.dumps({"token": arena.token, **BASE})
    body = ('{"jsonrpc": "2.0", "method": "RegistrationService.Register", "params": '
            f'{params}, "id": {request_id}}}').encode()
    before = await arena.counts()
    response = await arena.client.post("/rpc", data=body,
                                       headers={"Content-Type": "application/json"})
    assert response.status == 200
    reply = json.loads(await response.text())
    assert reply["id"] is None and reply["error"]["code"] == jsonrpc.PARSE_ERROR
    assert reply["error"]["message"].startswith(f"Parse error: {why}"), reply
    assert await arena.counts() == before


async def test_unknown_method_in_merknera_dialect_is_a_string_error(arena: Arena) -> None:
    reply = await arena.rpc("Nope.Nope", {}, dialect2=False, request_id=3)
    assert reply == {"result": None, "error": 'Method not found: "Nope.Nope"', "id": 3}


async def test_a_notification_gets_no_body(arena: Arena) -> None:
    before = await arena.counts()
    response = await arena.client.post("/rpc", json={
        "jsonrpc": "2.0", "method": "RegistrationService.Register",
        "params": {"token": arena.token, **BASE, "game": "CHESS"}})
    assert response.status == 200
    assert await response.read() == b""
    assert await arena.counts() == before


async def test_a_body_that_arrives_in_pieces_is_read_whole(arena: Arena) -> None:
    body = json.dumps({"jsonrpc": "2.0", "method": "RegistrationService.Register", "id": 7,
                       "params": {"token": arena.token, **BASE,
                                  "description": "x" * 1900}}).encode()

    async def pieces() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 300):
            yield body[start:start + 300]
            await asyncio.sleep(0.01)

    response = await arena.client.post("/rpc", data=pieces(),
                                       headers={"Content-Type": "application/json"})
    reply = await response.json()
    assert reply["id"] == 7 and "error" not in reply, reply
    assert reply["result"]["message"].startswith("Hello, Botty")


async def test_only_post_and_bounded_bodies(arena: Arena) -> None:
    assert (await arena.client.get("/rpc")).status == 405
    response = await arena.client.post("/rpc", data=b"x" * (65 * 1024),
                                       headers={"Content-Type": "application/json"})
    assert response.status == 413
    assert (await response.json())["error"]["code"] == jsonrpc.INVALID_REQUEST

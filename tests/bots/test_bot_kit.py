"""merknera_bots.kit's JSON-RPC server, served for real by aiohttp, and its signatures."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from merknera_bots.kit import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    Bot,
    InvalidParamsError,
    ReplayGuard,
    sign,
    verify,
)
from merknera_bots.tictactoe import make_bot

SECRET = "00112233445566778899aabbccddeeff"
BOARD = ["X", "", "O", "", "X", "", "", "O", ""]


def _call(method: str, params: Any, id_: Any = 1, *, jsonrpc: bool = True) -> dict[str, Any]:
    message: dict[str, Any] = {"method": method, "params": params, "id": id_}
    if jsonrpc:
        message["jsonrpc"] = "2.0"
    return message


async def _post(client: TestClient[Any, Any], message: Any, *,
                secret: str | None = None) -> tuple[int, Any]:
    body = json.dumps(message).encode()
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        timestamp = str(int(time.time()))
        headers[TIMESTAMP_HEADER] = timestamp
        headers[SIGNATURE_HEADER] = sign(secret, timestamp, body)
    response = await client.post("/rpc", data=body, headers=headers)
    text = await response.text()
    return response.status, (json.loads(text) if response.status == 200 else text)


async def test_ping_with_null_params(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("perfect").make_app())
    status, reply = await _post(client, _call("Status.Ping", None, 7))
    assert status == 200
    assert reply == {"jsonrpc": "2.0", "result": {"ping": "OK"}, "id": 7}


async def test_next_move_answers_a_legal_position(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("perfect").make_app())
    params = {"gameid": 3, "mark": "O", "gamestate": BOARD}
    status, reply = await _post(client, _call("TicTacToe.NextMove", params, "m1"))
    assert status == 200
    assert reply["id"] == "m1"
    assert "error" not in reply
    position = reply["result"]["position"]
    assert BOARD[position] == ""
    # O must block X's diagonal 0-4-8.
    assert position == 8


async def test_any_path_and_extra_params_and_key_case(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("random", seed=1).make_app())
    params = {"gameId": 3, "Mark": "X", "gamestate": BOARD, "round": 2}
    response = await client.post("/some/other/path", json=_call("TicTacToe.NextMove", params))
    reply = await response.json()
    assert response.status == 200
    assert BOARD[reply["result"]["position"]] == ""


async def test_dialects(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("perfect").make_app())
    params = {"gameid": 1, "mark": "X", "gamestate": [None] * 9}
    # 1.0 style (Merknera's): no "jsonrpc" member; the reply speaks the same dialect.
    status, reply = await _post(client, _call("TicTacToe.NextMove", params, 5, jsonrpc=False))
    assert status == 200
    assert reply == {"result": {"position": 0}, "error": None, "id": 5}
    status, reply = await _post(client, _call("Nope.Nothing", None, 6, jsonrpc=False))
    assert status == 200
    assert reply["result"] is None
    assert reply["id"] == 6
    assert isinstance(reply["error"], str)
    assert "Method not found" in reply["error"]
    # 2.0: a 2.0 reply.
    status, reply = await _post(client, _call("TicTacToe.NextMove", params, 5))
    assert reply == {"jsonrpc": "2.0", "result": {"position": 0}, "id": 5}


async def test_unknown_method(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("perfect").make_app())
    status, reply = await _post(client, _call("Chess.NextMove", {"gameid": 1}, 9))
    assert status == 200
    assert reply["id"] == 9
    assert reply["error"]["code"] == -32601
    assert "result" not in reply


async def test_lifecycle_defaults(aiohttp_client: AiohttpClient,
                                  caplog: pytest.LogCaptureFixture) -> None:
    client = await aiohttp_client(make_bot("perfect").make_app())
    _, reply = await _post(client, _call("TicTacToe.NewGame", {"gameid": 4, "players": 2}))
    assert reply["result"] == {"status": "READY"}
    with caplog.at_level(logging.INFO, logger="merknera_bots.kit"):
        _, reply = await _post(client, _call(
            "TicTacToe.Complete", {"gameid": 4, "winner": True, "mark": "X", "gamestate": BOARD}))
        assert reply["result"] is None
        _, reply = await _post(client, _call(
            "TicTacToe.Error", {"gameid": 4, "message": "too slow", "errorcode": "timeout"}))
        assert reply["result"] is None
    assert "TicTacToe.Complete" in caplog.text
    assert "too slow" in caplog.text


async def test_bad_params(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("perfect").make_app())
    # A missing param: jsonrpcserver checks the handler's own signature.
    _, reply = await _post(client, _call("TicTacToe.NextMove", {"gameid": 1, "mark": "X"}))
    assert reply["error"]["code"] == -32602
    # A malformed board: the handler says what is wrong.
    _, reply = await _post(client, _call(
        "TicTacToe.NextMove", {"gameid": 1, "mark": "X", "gamestate": ["X"] * 9}))
    assert reply["error"]["code"] == -32602
    assert "full" in reply["error"]["data"]
    _, reply = await _post(client, _call(
        "TicTacToe.NextMove", {"gameid": 1, "mark": "X", "gamestate": {"0": "X"}}))
    assert reply["error"]["code"] == -32602


async def test_a_crashing_handler_leaks_nothing(aiohttp_client: AiohttpClient,
                                                caplog: pytest.LogCaptureFixture) -> None:
    async def next_move(**extra: Any) -> None:
        raise RuntimeError("secret path /etc/x")

    client = await aiohttp_client(Bot("TicTacToe", next_move).make_app())
    with caplog.at_level(logging.ERROR, logger="merknera_bots.kit"):
        _, reply = await _post(client, _call("TicTacToe.NextMove", {"gameid": 1}))
    assert reply["error"] == {"code": -32603, "message": "Internal error"}
    assert "/etc/x" not in json.dumps(reply)
    assert "/etc/x" in caplog.text  # but the bot's own log has it


def test_handlers_must_be_async_and_take_extra() -> None:
    async def strict(*, gameid: int) -> None:
        return None

    def sync(**extra: Any) -> None:
        return None

    with pytest.raises(TypeError, match="extra"):
        Bot("TicTacToe", strict)
    with pytest.raises(TypeError, match="async"):
        Bot("TicTacToe", sync)  # type: ignore[arg-type]


async def test_invalid_params_error_from_a_custom_method(aiohttp_client: AiohttpClient) -> None:
    async def next_move(**extra: Any) -> None:
        return None

    async def echo(*, word: str, **extra: Any) -> str:
        if not word:
            raise InvalidParamsError("word must not be empty")
        return word

    bot = Bot("Echo", next_move)
    bot.method("Echo.Say", echo)
    client = await aiohttp_client(bot.make_app())
    _, reply = await _post(client, _call("Echo.Say", {"word": "hi"}))
    assert reply["result"] == "hi"
    _, reply = await _post(client, _call("Echo.Say", {"word": ""}))
    assert reply["error"] == {"code": -32602, "message": "Invalid params",
                              "data": "word must not be empty"}


async def test_signatures_once_the_secret_is_known(aiohttp_client: AiohttpClient) -> None:
    bot = make_bot("perfect")
    client = await aiohttp_client(bot.make_app())
    ping = _call("Status.Ping", None)
    # Before registration has brought the secret, unsigned calls are accepted.
    status, _ = await _post(client, ping)
    assert status == 200

    bot.secret = SECRET
    status, _ = await _post(client, ping)
    assert status == 401
    status, _ = await _post(client, ping, secret="not-the-secret")
    assert status == 401
    status, reply = await _post(client, ping, secret=SECRET)
    assert status == 200
    assert reply["result"] == {"ping": "OK"}

    # A signature of some other body does not pass.
    timestamp = str(int(time.time()))
    response = await client.post("/rpc", data=json.dumps(ping), headers={
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: sign(SECRET, timestamp, b'{"method": "Status.Ping"}')})
    assert response.status == 401


async def test_a_signed_call_is_taken_once_and_only_while_fresh(
        aiohttp_client: AiohttpClient) -> None:
    bot = make_bot("perfect")
    bot.secret = SECRET
    client = await aiohttp_client(bot.make_app())
    body = json.dumps(_call("TicTacToe.NextMove", {"gameid": 1, "mark": "X",
                                                   "gamestate": BOARD})).encode()

    async def send(timestamp: int) -> tuple[int, str]:
        response = await client.post("/rpc", data=body, headers={
            TIMESTAMP_HEADER: str(timestamp),
            SIGNATURE_HEADER: sign(SECRET, str(timestamp), body)})
        return response.status, await response.text()

    now = int(time.time())
    assert (await send(now))[0] == 200
    # The same bytes with the same signature, recorded and sent again: a replay.
    assert await send(now) == (401, "this call was taken before (a replay)\n")
    # The platform's own second attempt carries a later timestamp, hence is taken.
    assert (await send(now + 1))[0] == 200
    # A call signed more than 60 s ago (or ahead) is refused whatever its signature.
    # (Whole seconds, read again just before: however long the calls above took.)
    assert (await send(math.floor(time.time()) - 61))[0] == 401
    assert (await send(math.ceil(time.time()) + 61))[0] == 401


def test_the_replay_guard_forgets_what_the_window_refuses_anyway() -> None:
    guard = ReplayGuard(max_age=60.0, memory=3)
    assert guard.first_time("a", "1000", now=1000)
    assert not guard.first_time("a", "1000", now=1059)
    assert guard.first_time("a", "1000", now=1061)  # verify() refuses it by now anyway
    for signature in ("b", "c", "d", "e"):
        assert guard.first_time(signature, "1100", now=1100)
    assert guard.first_time("b", "1100", now=1100)  # the oldest went beyond the memory


def test_sign_and_verify() -> None:
    body = b'{"jsonrpc":"2.0","method":"Status.Ping","params":null,"id":1}'
    signature = sign(SECRET, "1700000000", body)
    assert signature.startswith("sha256=")
    assert len(signature) == len("sha256=") + 64
    assert verify(SECRET, "1700000000", body, signature, now=1700000000)
    # The window is 60 s either way (README, "Check signatures").
    assert verify(SECRET, "1700000000", body, signature, now=1700000000 + 60)
    assert verify(SECRET, "1700000000", body, signature, now=1700000000 - 60)
    assert not verify(SECRET, "1700000000", body, signature, now=1700000000 + 61)
    assert not verify(SECRET, "1700000000", body, signature, now=1700000000 - 61)
    assert not verify(SECRET, "1700000000", body + b" ", signature, now=1700000000)
    assert not verify(SECRET, "1700000001", body, signature, now=1700000000)
    assert not verify(SECRET + "0", "1700000000", body, signature, now=1700000000)
    assert not verify(SECRET, "1.7e9", body, signature, now=1700000000)
    assert not verify(SECRET, "", body, signature, now=1700000000)
    assert not verify(SECRET, "1700000000", body, signature.upper(), now=1700000000)


def test_sign_matches_the_protocol_formula() -> None:
    import hashlib
    import hmac

    body = b'{"a":1}'
    expected = hmac.new(SECRET.encode(), b"1700000000." + body, hashlib.sha256).hexdigest()
    assert sign(SECRET, "1700000000", body) == "sha256=" + expected


async def test_repeated_call_gets_the_cached_reply(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("random", seed=3).make_app())
    params = {"gameid": 8, "mark": "X", "gamestate": [""] * 9}
    first = [await _post(client, _call("TicTacToe.NextMove", params, i)) for i in range(30)]
    positions = {reply["result"]["position"] for _, reply in first}
    assert len(positions) > 1  # different ids: the bot really plays at random
    again = [await _post(client, _call("TicTacToe.NextMove", params, i)) for i in range(30)]
    assert again == first
    # The key includes the params: the same id on another board is a new question.
    other = {**params, "gamestate": ["X", "O", "X", "O", "X", "O", "O", "X", ""]}
    _, reply = await _post(client, _call("TicTacToe.NextMove", other, 0))
    assert reply["result"] == {"position": 8}


async def test_concurrent_retries_share_one_answer(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("random", delay=0.05).make_app())
    params = {"gameid": 8, "mark": "O", "gamestate": [""] * 9}
    replies = await asyncio.gather(
        *(_post(client, _call("TicTacToe.NextMove", params, "same")) for _ in range(20)))
    assert len({json.dumps(reply) for _, reply in replies}) == 1


async def test_cache_is_bounded(aiohttp_client: AiohttpClient) -> None:
    calls = 0

    async def next_move(**extra: Any) -> int:
        nonlocal calls
        calls += 1
        return calls

    client = await aiohttp_client(Bot("Count", next_move, cache_size=2).make_app())
    for id_ in (1, 2, 1, 2):
        await _post(client, _call("Count.NextMove", {}, id_))
    assert calls == 2
    await _post(client, _call("Count.NextMove", {}, 3))  # evicts id 1, the least recent
    _, reply = await _post(client, _call("Count.NextMove", {}, 2))
    assert reply["result"] == 2
    _, reply = await _post(client, _call("Count.NextMove", {}, 1))
    assert reply["result"] == 4


async def test_notification_gets_204(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("perfect").make_app())
    response = await client.post("/rpc", json={
        "jsonrpc": "2.0", "method": "TicTacToe.Complete",
        "params": {"gameid": 1, "winner": False, "mark": "O", "gamestate": BOARD}})
    assert response.status == 204
    assert await response.read() == b""


async def test_garbage_gets_a_jsonrpc_error(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("perfect").make_app())
    response = await client.post("/rpc", data=b"{not json")
    reply = await response.json()
    assert reply["error"]["code"] == -32700
    response = await client.post("/rpc", data=b"[1, 2]")
    reply = await response.json()
    assert reply["error"]["code"] == -32600

"""``python -m merknera_bots.tictactoe`` as a real process: READY line, moves, registration,
signals."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from typing import Any

import aiohttp
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from merknera_bots.kit import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from tests.support.bot_process import PATIENCE, bot_process, ready_line

SECRET = "cd" * 32


async def _stop(process: asyncio.subprocess.Process, signum: signal.Signals) -> int:
    process.send_signal(signum)
    return await asyncio.wait_for(process.wait(), PATIENCE)


async def _next_move(port: int, headers: dict[str, str] | None = None,
                     *, secret: str | None = None) -> tuple[int, Any]:
    body = json.dumps({"jsonrpc": "2.0", "method": "TicTacToe.NextMove", "id": 1, "params": {
        "gameid": 1, "mark": "O", "gamestate": ["X", "", "", "", "", "", "", "", ""]}}).encode()
    headers = {"Content-Type": "application/json", **(headers or {})}
    if secret is not None:
        timestamp = str(int(time.time()))
        headers[TIMESTAMP_HEADER] = timestamp
        headers[SIGNATURE_HEADER] = sign(secret, timestamp, body)
    async with aiohttp.ClientSession() as session, session.post(
        f"http://127.0.0.1:{port}/rpc", data=body, headers=headers
    ) as response:
        text = await response.text()
        return response.status, (json.loads(text) if response.status == 200 else text)


async def test_serve_only_answers_moves_and_stops_on_sigterm() -> None:
    async with bot_process("merknera_bots.tictactoe", "--no-register", "--port", "0",
                           "--strategy", "perfect") as process:
        word, port, name = await ready_line(process)
        assert word == "READY"
        assert name == "tictactoe-perfect"
        status, reply = await _next_move(int(port))
        assert status == 200
        assert reply["result"] == {"position": 4}  # the only non-losing answer to a corner
        assert await _stop(process, signal.SIGTERM) == 0


async def test_registers_then_checks_signatures_and_stops_on_sigint(
        aiohttp_server: AiohttpServer) -> None:
    seen: list[dict[str, Any]] = []

    async def rpc(request: web.Request) -> web.Response:
        call = await request.json()
        seen.append(call)
        return web.json_response({"jsonrpc": "2.0", "id": call["id"], "result": {
            "message": "Hello, ttt (version: 2.0.0), good luck with Tic-Tac-Toe!",
            "secret": SECRET}})

    app = web.Application()
    app.router.add_post("/rpc", rpc)
    platform = await aiohttp_server(app)
    async with bot_process("merknera_bots.tictactoe", "--platform", str(platform.make_url("/")),
                           "--token", "t0k3n", "--port", "0", "--strategy", "random",
                           "--seed", "1", "--name", "ttt", "--version", "2.0.0") as process:
        word, port, name = await ready_line(process)
        assert (word, name) == ("READY", "ttt")
        [call] = seen
        assert call["params"]["rpcendpoint"] == f"http://127.0.0.1:{port}/rpc"
        assert call["params"]["botname"] == "ttt"
        assert call["params"]["botversion"] == "2.0.0"
        assert call["params"]["game"] == "TICTACTOE"
        assert call["params"]["token"] == "t0k3n"
        status, _ = await _next_move(int(port))
        assert status == 401
        status, reply = await _next_move(int(port), secret=SECRET)
        assert status == 200
        assert reply["result"]["position"] in range(1, 9)
        assert await _stop(process, signal.SIGINT) == 0


async def test_a_refused_registration_exits_2(aiohttp_server: AiohttpServer) -> None:
    async def rpc(request: web.Request) -> web.Response:
        call = await request.json()
        return web.json_response({"result": None, "id": call["id"], "error":
                                  'User with Token "nope" is not currently registered'})

    app = web.Application()
    app.router.add_post("/rpc", rpc)
    platform = await aiohttp_server(app)
    async with bot_process("merknera_bots.tictactoe", "--platform", str(platform.make_url("/rpc")),
                           "--token", "nope", "--port", "0") as process:
        code = await asyncio.wait_for(process.wait(), PATIENCE)
        assert process.stdout is not None and process.stderr is not None
        stdout, stderr = await process.stdout.read(), await process.stderr.read()
    assert code == 2
    assert b"READY" not in stdout
    assert b'registration failed: User with Token "nope" is not currently registered' in stderr

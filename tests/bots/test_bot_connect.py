"""Reference bots run with ``--connect`` as real processes, against a real aiohttp WebSocket
server that plays the platform's ``/rpc/ws`` as the test scripts it: the registration on
the socket, calls answered by id (several at once), the bot's reconnection after a drop,
and the two closes that end it (4000: replaced, 1008: refused).

The real platform's side is in test_bot_connect_platform.py; here the test decides exactly
what the platform says and when.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import WSMsgType, web
from pytest_aiohttp import AiohttpServer

from merknera_bots.launcher import platform_ws_url
from tests.support import free_port
from tests.support.bot_process import PATIENCE, bot_process, ready_line

EMPTY = [""] * 9


class Peer:
    """One socket a bot opened: what it sent, and the platform's side of it."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.ended = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        """The bot's next message."""
        return await asyncio.wait_for(self.inbox.get(), PATIENCE)

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_str(json.dumps(message))

    async def call(self, call_id: int, method: str, params: Any) -> None:
        """Send the bot a request."""
        await self.send({"jsonrpc": "2.0", "method": method, "params": params, "id": call_id})

    async def accept(self) -> dict[str, Any]:
        """Read the bot's first message, the registration, and answer it as the platform
        does; returns that message."""
        register = await self.receive()
        await self.send({"jsonrpc": "2.0", "id": register["id"], "result": {
            "message": f"Hello, {register['params']['botname']}!", "secret": "ab" * 32}})
        return register


class SocketPlatform:
    """``GET /rpc/ws``: each socket a bot opens is queued as a :class:`Peer` for the test."""

    def __init__(self) -> None:
        self.peers: asyncio.Queue[Peer] = asyncio.Queue()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/rpc/ws", self._handle)
        return app

    async def next_peer(self) -> Peer:
        return await asyncio.wait_for(self.peers.get(), PATIENCE)

    async def _handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        peer = Peer(ws)
        await self.peers.put(peer)
        async for message in ws:
            if message.type is WSMsgType.TEXT:
                await peer.inbox.put(json.loads(message.data))
        peer.ended.set()
        return ws


@pytest.fixture
async def platform(aiohttp_server: AiohttpServer) -> AsyncIterator[tuple[SocketPlatform, str]]:
    """The scripted platform and its base URL."""
    scripted = SocketPlatform()
    server = await aiohttp_server(scripted.app())
    yield scripted, str(server.make_url("/"))


async def _exit_code(process: asyncio.subprocess.Process) -> int:
    return await asyncio.wait_for(process.wait(), PATIENCE)


async def _stderr(process: asyncio.subprocess.Process) -> str:
    assert process.stderr is not None
    return (await process.stderr.read()).decode()


def test_the_socket_url_follows_the_platform_url() -> None:
    assert platform_ws_url("http://127.0.0.1:8080") == "ws://127.0.0.1:8080/rpc/ws"
    assert platform_ws_url("https://arena.example/") == "wss://arena.example/rpc/ws"
    assert platform_ws_url("https://arena.example/merknera/rpc") == \
        "wss://arena.example/merknera/rpc/ws"
    assert platform_ws_url("http://h:1/rpc/ws") == "ws://h:1/rpc/ws"


async def test_registers_on_the_socket_and_answers_calls_by_id_several_at_once(
        platform: tuple[SocketPlatform, str]) -> None:
    scripted, url = platform
    async with bot_process("merknera_bots.tictactoe", "--connect", "--platform", url,
                           "--token", "t0k3n", "--strategy", "perfect", "--name", "ttt",
                           "--version", "2.0.0", "--delay", "1") as process:
        peer = await scripted.next_peer()
        register = await peer.accept()
        assert await ready_line(process) == ["READY", "0", "ttt"]
        assert register["jsonrpc"] == "2.0"
        assert register["method"] == "RegistrationService.Register"
        params = register["params"]
        assert {key: params[key] for key in ("token", "botname", "botversion", "game")} == {
            "token": "t0k3n", "botname": "ttt", "botversion": "2.0.0", "game": "TICTACTOE"}
        assert "rpcendpoint" not in params and "protocol" not in params

        # A move that takes the bot its --delay, then a ping: the ping is answered first,
        # so the move did not hold it up.
        await peer.call(41, "TicTacToe.NextMove", {"gameid": 7, "mark": "O",
                                                    "gamestate": ["X", *EMPTY[1:]]})
        await peer.call(42, "Status.Ping", None)
        await peer.call(43, "TicTacToe.NextMove", {"gameid": 8, "mark": "X",
                                                    "gamestate": EMPTY})
        first, second, third = [await peer.receive() for _ in range(3)]
        assert first == {"jsonrpc": "2.0", "result": {"ping": "OK"}, "id": 42}
        answers = {second["id"]: second, third["id"]: third}
        assert answers[41]["result"] == {"position": 4}
        assert answers[43]["result"] == {"position": 0}
        # Announcements whose replies the platform ignores are taken (the bot logs them)
        # but not answered: the next message is the answer to the ping after them.
        await peer.call(44, "TicTacToe.Complete", {"gameid": 7, "winner": False,
                                                    "mark": "O", "gamestate": EMPTY})
        await peer.call(45, "TicTacToe.Error", {"gameid": 8, "message": "late",
                                                 "errorcode": "TIMEOUT"})
        await peer.call(46, "Status.Ping", None)
        assert await peer.receive() == {"jsonrpc": "2.0", "result": {"ping": "OK"}, "id": 46}

        process.send_signal(signal.SIGTERM)
        assert await _exit_code(process) == 0
        await asyncio.wait_for(peer.ended.wait(), PATIENCE)
        assert peer.ws.close_code == 1000
        assert peer.inbox.empty()
    stderr = await _stderr(process)
    assert 'TicTacToe.Complete {"gameid": 7' in stderr and "TicTacToe.Error" in stderr, stderr


async def test_after_a_drop_it_registers_again_and_answers_the_resent_calls_alike(
        platform: tuple[SocketPlatform, str]) -> None:
    scripted, url = platform
    async with bot_process("merknera_bots.tictactoe", "--connect", "--platform", url,
                           "--token", "t", "--strategy", "random", "--seed", "3",
                           "--name", "rnd") as process:
        peer = await scripted.next_peer()
        first_register = await peer.accept()
        await ready_line(process)
        boards = {id_: ["X", "O", *EMPTY[2:]] if id_ % 2 else EMPTY for id_ in range(1, 7)}
        for id_, board in boards.items():
            await peer.call(id_, "TicTacToe.NextMove",
                            {"gameid": id_, "mark": "X", "gamestate": board})
        before = {(m := await peer.receive())["id"]: m["result"] for _ in boards}

        await peer.ws.close(code=1001, message=b"the platform is stopping")
        again = await scripted.next_peer()
        second_register = await again.accept()
        assert second_register["params"] == first_register["params"]
        for id_, board in boards.items():
            await again.call(id_, "TicTacToe.NextMove",
                             {"gameid": id_, "mark": "X", "gamestate": board})
        after = {(m := await again.receive())["id"]: m["result"] for _ in boards}
        assert after == before
        assert process.returncode is None

        # The same id with other params is another call: a move on that board, the one
        # free cell (the answer cached for id 1 was another cell).
        await again.call(1, "TicTacToe.NextMove", {"gameid": 1, "mark": "O", "gamestate": [
            "", "X", "O", "X", "O", "X", "O", "O", "X"]})
        assert (await again.receive())["result"] == {"position": 0}
    stderr = await _stderr(process)
    assert stderr.count("Hello, rnd!") == 2, stderr


async def test_a_platform_not_up_yet_is_tried_until_it_is(aiohttp_server: AiohttpServer) -> None:
    port = free_port()
    async with bot_process("merknera_bots.numberwang", "--connect", "--token", "t",
                           "--platform", f"http://127.0.0.1:{port}") as process:
        assert process.stderr is not None
        # Two refused connections, to see it keeps trying.
        for _ in range(2):
            while b"cannot connect to ws://127.0.0.1:" not in await asyncio.wait_for(
                    process.stderr.readline(), PATIENCE):
                pass
        scripted = SocketPlatform()
        await aiohttp_server(scripted.app(), port=port)
        peer = await scripted.next_peer()
        register = await peer.accept()
        assert register["params"]["game"] == "NUMBERWANG"
        assert await ready_line(process) == ["READY", "0", "numberwang-random"]


async def test_a_rate_limited_registration_is_tried_again(
        platform: tuple[SocketPlatform, str]) -> None:
    scripted, url = platform
    async with bot_process("merknera_bots.tictactoe", "--connect", "--platform", url,
                           "--token", "t") as process:
        peer = await scripted.next_peer()
        register = await peer.receive()
        await peer.send({"jsonrpc": "2.0", "id": register["id"], "error": {
            "code": -32008, "message": "Too many registrations; wait 6 s"}})
        await peer.ws.close(code=1008, message=b"Too many registrations; wait 6 s")
        await (await scripted.next_peer()).accept()
        assert await ready_line(process) == ["READY", "0", "tictactoe-random"]


async def test_a_refused_registration_exits_2_with_the_reason(
        platform: tuple[SocketPlatform, str]) -> None:
    scripted, url = platform
    async with bot_process("merknera_bots.tictactoe", "--connect", "--platform", url,
                           "--token", "nope") as process:
        peer = await scripted.next_peer()
        register = await peer.receive()
        refusal = 'User with Token "nope" is not currently registered with Merknera'
        await peer.send({"jsonrpc": "2.0", "id": register["id"],
                         "error": {"code": -32001, "message": refusal}})
        await peer.ws.close(code=1008, message=refusal.encode())
        assert await _exit_code(process) == 2
        assert process.stdout is not None
        assert b"READY" not in await process.stdout.read()
        assert f"registration failed: {refusal}" in await _stderr(process)


async def test_a_close_1008_without_an_answer_exits_2_with_its_reason(
        platform: tuple[SocketPlatform, str]) -> None:
    scripted, url = platform
    async with bot_process("merknera_bots.tictactoe", "--connect", "--platform", url,
                           "--token", "t") as process:
        peer = await scripted.next_peer()
        await peer.receive()
        await peer.ws.close(code=1008, message=b"no registration within 10 s")
        assert await _exit_code(process) == 2
        assert ("registration failed: the platform closed the connection (code 1008): "
                "no registration within 10 s") in await _stderr(process)


async def test_replaced_by_a_newer_connection_it_stops_with_0(
        platform: tuple[SocketPlatform, str]) -> None:
    scripted, url = platform
    async with bot_process("merknera_bots.squelch", "--connect", "--platform", url,
                           "--token", "t", "--strategy", "random") as process:
        peer = await scripted.next_peer()
        await peer.accept()
        await ready_line(process)
        await peer.ws.close(code=4000, message=b"replaced by a newer connection of the bot")
        assert await _exit_code(process) == 0
        assert "a newer connection of this bot replaced this one" in await _stderr(process)
        assert scripted.peers.empty()  # it did not connect again


async def test_connect_is_not_offered_where_the_platform_must_call_the_bot() -> None:
    async with bot_process("merknera_bots.squelch_rest", "--connect", "--token", "t") as process:
        assert await _exit_code(process) == 2
        assert "unrecognized arguments: --connect" in await _stderr(process)
    async with bot_process("merknera_bots.tictactoe", "--connect", "--no-register") as process:
        assert await _exit_code(process) == 2
        assert ("argument --no-register: not allowed with argument --connect"
                in await _stderr(process))

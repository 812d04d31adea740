"""A real bot that connects out: it opens a WebSocket to the platform's ``/rpc/ws``,
registers, and answers the calls that come on it with a scripted NextMove, recording every
frame.  Tests drive its socket by hand where a misbehaving bot is the subject."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import aiohttp
from aiohttp.test_utils import TestClient

from tests.support import InFlight, Reply, play_first_empty


@dataclasses.dataclass
class SocketBot:
    """A tic-tac-toe bot (or any game's, with ``next_move``) on a socket to ``/rpc/ws``."""

    client: TestClient  # type: ignore[type-arg]
    token: str
    name: str
    version: str = "1.0"
    game: str = "TICTACTOE"
    next_move: Reply = play_first_empty
    new_game: Any = None
    """NewGame's result (None: a method-not-found error, as Merknera's bots did)."""
    answer: bool = True
    """Whether calls are answered at all (False: they are recorded, never answered)."""
    calls: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Every request the platform sent, as it came."""
    responses: list[Any] = dataclasses.field(default_factory=list)
    """Every other frame the platform sent (responses to the bot's own frames)."""
    shared: InFlight = dataclasses.field(default_factory=InFlight)
    """NextMove calls being answered at the same time."""
    ws: aiohttp.ClientWebSocketResponse | None = None
    reader: asyncio.Task[None] | None = None
    registered: dict[str, Any] | None = None
    """The Register response."""
    closed: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    async def connect(self, **extra: Any) -> dict[str, Any]:
        """Open a socket, register on it (with ``extra`` params), start answering; the
        Register response."""
        self.closed = asyncio.Event()
        self.ws = await self.client.ws_connect("/rpc/ws")
        params = {"token": self.token, "botname": self.name, "botversion": self.version,
                  "game": self.game, "programminglanguage": "Python", **extra}
        await self.ws.send_json({"jsonrpc": "2.0", "id": "register",
                                 "method": "RegistrationService.Register", "params": params})
        frame = await self.ws.receive(timeout=10)
        assert frame.type is aiohttp.WSMsgType.TEXT, frame
        reply: dict[str, Any] = json.loads(frame.data)
        self.registered = reply
        if "result" in reply:
            self.reader = asyncio.create_task(self._read(self.ws))
        return reply

    def methods(self, suffix: str) -> list[dict[str, Any]]:
        """The requests whose method ends with ``suffix``."""
        return [call for call in self.calls if call["method"].endswith(suffix)]

    async def drop(self) -> None:
        """Close the socket from the bot's side."""
        assert self.ws is not None
        await self.ws.close()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        tasks: set[asyncio.Task[None]] = set()
        try:
            async for frame in ws:
                if frame.type is not aiohttp.WSMsgType.TEXT:
                    break
                message = json.loads(frame.data)
                if "method" not in message:
                    self.responses.append(message)
                    continue
                self.calls.append(message)
                if self.answer:
                    task = asyncio.create_task(self._answer(ws, message))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
        finally:
            self.closed.set()
            for task in tasks:
                task.cancel()

    async def _answer(self, ws: aiohttp.ClientWebSocketResponse,
                      message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "Status.Ping":
            reply["result"] = {"ping": "OK"}
        elif method.endswith(".NextMove"):
            self.shared.enter()
            try:
                reply["result"] = await self.next_move(params, message["id"])
            finally:
                self.shared.now -= 1
        elif method.endswith(".NewGame") and self.new_game is not None:
            reply["result"] = self.new_game
        elif method.endswith((".Complete", ".Error")) or "." in method:
            reply["result"] = None
        if not ws.closed:
            await ws.send_json(reply)

"""Bots that connect out: the platform's JSON-RPC calls as frames on the WebSocket a bot
opened to ``/rpc/ws`` (docs/bots/protocol.md section 7), for a bot the platform cannot
reach at an endpoint.

The calls, their time limits and the faults are those of a bot that serves HTTP: only the
line differs.  A bot has at most one socket (a newer one replaces it).  A call whose
socket closes before its reply is sent again, with the same id, on the bot's next socket
if one comes within ``offline_grace``; so is a call made while the bot has none.  Only
then does it fault as unreachable.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from merknera.botclient import PING_METHOD, CallResult, Fault, next_request_id
from merknera.games import JSON, JSONObject
from merknera.guard.sockets import ClientSocket
from merknera.protocol import jsonrpc
from merknera.protocol.excerpt import excerpt
from merknera.protocol.faults import FaultKind
from merknera.seats.jsonrpc import JsonRpcLine
from merknera.store.bots import Bot

CLOSE_REPLACED = 4000
"""The close code of a bot's socket that a newer socket of the same bot replaced."""

TOLD_KEPT = 1024
"""Ids of calls whose replies are ignored that a socket remembers, the latest."""

Reply = tuple[JSONObject, bytes]
"""A response as read (the JSON object) and as it came (the frame, for the move log)."""


class BotSocket:
    """A registered bot's open WebSocket: the platform's calls sent on it that wait for
    their replies."""

    def __init__(self, socket: ClientSocket, bot: Bot) -> None:
        self.socket = socket
        self.bot = bot
        self._waiting: dict[int, asyncio.Future[Reply]] = {}
        self._told: OrderedDict[int, None] = OrderedDict()
        """Ids of the latest calls whose replies are ignored: a reply to one answers a
        call, as the protocol allows, and is not counted as a frame that answers none."""

    @property
    def closed(self) -> asyncio.Event:
        """Set once the socket is closing or closed."""
        return self.socket.closed

    def send(self, request_id: int, body: bytes) -> asyncio.Future[Reply]:
        """Send a request; the future is its reply's (:meth:`replied`)."""
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self.socket.send(body)
        return future

    def tell(self, request_id: int, body: bytes) -> None:
        """Send a request whose reply is ignored."""
        self._told[request_id] = None
        while len(self._told) > TOLD_KEPT:
            self._told.popitem(last=False)
        self.socket.send(body)

    def forget(self, request_id: int) -> None:
        """No reply to ``request_id`` is awaited any longer (it came, or time ran out)."""
        self._waiting.pop(request_id, None)

    def replied(self, message: JSONObject, frame: bytes) -> bool:
        """A response came: True if a call waits for its id (the call takes it, whatever
        it holds), False if none does (a reply late, repeated, or to a call whose reply
        is ignored)."""
        request_id = message.get("id")
        if isinstance(request_id, bool) or not isinstance(request_id, int):
            return False
        if request_id in self._told:
            del self._told[request_id]
            return True
        future = self._waiting.pop(request_id, None)
        if future is None or future.done():
            return False
        future.set_result((message, frame))
        return True


class Sockets(JsonRpcLine):
    """Every connected bot's socket, by bot: the line of the bots that connect out."""

    def __init__(self, grace: float, ping_timeout: float) -> None:
        self._grace = grace
        self._ping_timeout = ping_timeout
        self._open: dict[int, BotSocket] = {}
        self._arrivals: dict[int, asyncio.Event] = {}

    def connected(self, bot_id: int) -> BotSocket | None:
        """The bot's socket, if it has one open."""
        found = self._open.get(bot_id)
        return None if found is None or found.closed.is_set() else found

    def attach(self, socket: BotSocket) -> BotSocket | None:
        """A bot registered on ``socket``: its calls go there from now on.  Returns the
        socket it replaces (still to be closed), if any."""
        bot_id = socket.bot.id
        old = self._open.get(bot_id)
        self._open[bot_id] = socket
        arrival = self._arrivals.pop(bot_id, None)
        if arrival is not None:
            arrival.set()
        return old if old is not socket else None

    def detach(self, socket: BotSocket) -> bool:
        """The socket closed: True if it was its bot's socket (not one replaced)."""
        if self._open.get(socket.bot.id) is socket:
            del self._open[socket.bot.id]
            return True
        return False

    def sockets(self) -> list[BotSocket]:
        """Every open socket."""
        return [socket for socket in self._open.values() if not socket.closed.is_set()]

    async def _arrival(self, bot_id: int, wait: float) -> BotSocket | None:
        """The bot's socket, waiting up to ``wait`` seconds for one to be attached."""
        found = self.connected(bot_id)
        if found is not None or wait <= 0:
            return found
        arrival = self._arrivals.setdefault(bot_id, asyncio.Event())
        try:
            async with asyncio.timeout(wait):
                await arrival.wait()
        except TimeoutError:
            pass
        return self.connected(bot_id)

    async def call(self, bot: Bot, method: str, params: JSON, time_limit: float,
                   idle: Callable[[], AbstractAsyncContextManager[None]]) -> CallResult:
        request_id = next_request_id()
        body = jsonrpc.encode_call(method, params, request_id)
        loop = asyncio.get_running_loop()
        grace_until = loop.time() + self._grace
        socket = self.connected(bot.id)
        while True:
            if socket is None:
                async with idle():
                    socket = await self._arrival(bot.id, grace_until - loop.time())
                if socket is None:
                    return CallResult(request=body, fault=Fault(
                        FaultKind.UNREACHABLE,
                        f"not connected, and did not connect again within {self._grace:g} s"))
            started = time.perf_counter()
            try:
                reply = await _exchange(socket, request_id, body, time_limit)
            except TimeoutError:
                return CallResult(request=body, fault=Fault(
                    FaultKind.TIMEOUT, f"no reply within {time_limit:g} s"),
                    latency=time.perf_counter() - started)
            if reply is None:
                # The socket closed first: the call goes again on the bot's next socket.
                grace_until = loop.time() + self._grace
                socket = self.connected(bot.id)
                continue
            return _judged(body, request_id, reply, time.perf_counter() - started)

    async def notify(self, bot: Bot, method: str, params: JSON,
                     time_limit: float) -> CallResult:
        """Sent on the bot's socket (waiting up to ``time_limit`` for one), its reply not
        waited for: the frames after it on the socket come after it."""
        request_id = next_request_id()
        body = jsonrpc.encode_call(method, params, request_id)
        socket = await self._arrival(bot.id, time_limit)
        if socket is not None:
            socket.tell(request_id, body)
        return CallResult(request=body)

    async def ping(self, bot: Bot) -> CallResult:
        """Any response within the ping timeout means online; a bot not connected within
        it is not."""
        request_id = next_request_id()
        body = jsonrpc.encode_call(PING_METHOD, None, request_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._ping_timeout
        socket = await self._arrival(bot.id, self._ping_timeout)
        if socket is None:
            return CallResult(request=body, fault=Fault(FaultKind.UNREACHABLE,
                                                        f"{bot.name} is not connected"))
        started = time.perf_counter()
        try:
            reply = await _exchange(socket, request_id, body, deadline - loop.time())
        except TimeoutError:
            return CallResult(request=body, fault=Fault(
                FaultKind.TIMEOUT, f"no reply within {self._ping_timeout:g} s"))
        if reply is None:
            return CallResult(request=body, fault=Fault(
                FaultKind.UNREACHABLE, "its socket closed before the reply"))
        return CallResult(request=body, reply=reply[1], latency=time.perf_counter() - started)


async def _exchange(socket: BotSocket, request_id: int, body: bytes,
                    time_limit: float) -> Reply | None:
    """Send a request on the socket and wait for its reply; None if the socket closed
    first.

    :raises TimeoutError: when no reply came within ``time_limit`` seconds.
    """
    answer = socket.send(request_id, body)
    closed = asyncio.ensure_future(socket.closed.wait())
    waits: set[asyncio.Future[Any]] = {answer, closed}
    try:
        async with asyncio.timeout(time_limit):
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        closed.cancel()
        socket.forget(request_id)
    if answer.done() and not answer.cancelled():
        return answer.result()
    answer.cancel()
    return None


def _judged(body: bytes, request_id: int, reply: Reply, latency: float) -> CallResult:
    """A reply read as :meth:`merknera.botclient.BotClient.call` reads an HTTP one."""
    message, frame = reply
    try:
        result = jsonrpc.read_reply(message, request_id)
    except jsonrpc.MalformedReplyError as exc:
        fault = Fault(FaultKind.MALFORMED_REPLY, excerpt(str(exc)))
    except jsonrpc.BotRpcError as exc:
        fault = Fault(FaultKind.RPC_ERROR, f"the bot answered an error: {excerpt(str(exc))}")
    else:
        return CallResult(request=body, result=result, reply=frame, latency=latency)
    return CallResult(request=body, fault=fault, reply=frame, latency=latency)

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

from merknera.botclient import PING_METHOD, CallResult, Fault, next_request_id
from merknera.games import JSON, JSONObject
from merknera.guard.sockets import ClientSocket
from merknera.protocol import jsonrpc
from merknera.protocol.excerpt import excerpt
from merknera.protocol.faults import FaultKind
from merknera.seats.jsonrpc import JsonRpcLine
from merknera.store.bots import Bot

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
        self._waiting: dict[int, asyncio.Future[Reply | None]] = {}
        self._told: OrderedDict[int, None] = OrderedDict()
        """Ids of the latest calls whose replies are ignored: a reply to one answers a
        call, as the protocol allows, and is not counted as a frame that answers none."""
        socket.on_close(self._closed)

    def _closed(self) -> None:
        """The socket closes: every call waiting on it gets None (it goes again on the
        bot's next socket)."""
        waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_result(None)

    @property
    def closed(self) -> asyncio.Event:
        """Set once the socket is closing or closed."""
        return self.socket.closed

    def send(self, request_id: int, body: bytes) -> asyncio.Future[Reply | None]:
        """Send a request; the future is its reply's (:meth:`replied`), or None once the
        socket closes first."""
        future: asyncio.Future[Reply | None] = asyncio.get_running_loop().create_future()
        if self.closed.is_set():
            future.set_result(None)
            return future
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

    knows_liveness = True

    def __init__(self, grace: float, ping_timeout: float) -> None:
        self._grace = grace
        self._ping_timeout = ping_timeout
        self._open: dict[int, BotSocket] = {}
        self._arrivals: dict[int, _Arrival] = {}

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
        arrival = self._arrivals.get(bot_id)
        if arrival is not None:
            arrival.event.set()
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
        arrival = self._arrivals.get(bot_id)
        if arrival is None or arrival.event.is_set():
            arrival = self._arrivals[bot_id] = _Arrival()
        arrival.waiters += 1
        try:
            async with asyncio.timeout(wait):
                await arrival.event.wait()
        except TimeoutError:
            pass
        finally:
            arrival.waiters -= 1
            if not arrival.waiters and self._arrivals.get(bot_id) is arrival:
                del self._arrivals[bot_id]
        return self.connected(bot_id)

    async def call(self, bot: Bot, method: str, params: JSON, time_limit: float,
                   idle: Callable[[], AbstractAsyncContextManager[None]]) -> CallResult:
        """The call, on the bot's socket; sent again on its next socket if this one closes
        first.  However often the bot connects again, the call lasts at most
        ``time_limit`` plus ``offline_grace``: the bot may be away ``offline_grace`` in
        all, and each sending has the whole of ``time_limit`` within that bound."""
        request_id = next_request_id()
        body = jsonrpc.encode_call(method, params, request_id)
        loop = asyncio.get_running_loop()
        begun = loop.time()
        last_call = begun + time_limit + self._grace
        away = 0.0
        socket = self.connected(bot.id)
        while True:
            if socket is None:
                left_away = self._grace - away
                gone_at = loop.time()
                async with idle():
                    socket = await self._arrival(bot.id, min(left_away, last_call - gone_at))
                away += loop.time() - gone_at
                if socket is None:
                    return CallResult(request=body, fault=Fault(
                        FaultKind.UNREACHABLE,
                        f"not connected, and did not connect again within {self._grace:g} s"))
            started = time.perf_counter()
            limit = min(time_limit, last_call - loop.time())
            try:
                reply = await _exchange(socket, request_id, body, limit)
            except TimeoutError:
                return CallResult(request=body, fault=Fault(
                    FaultKind.TIMEOUT, f"no reply within {time_limit:g} s"
                    if limit >= time_limit else
                    f"no reply within {time_limit:g} s (and {self._grace:g} s away, at "
                    "most, while it connected again)"),
                    latency=time.perf_counter() - started)
            if reply is None:
                # The socket closed first: the call goes again on the bot's next socket.
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
        """Any response within the ping timeout means online; a bot without a socket is
        offline (its socket says whether it is there: games wait for it in their calls,
        not in pings)."""
        request_id = next_request_id()
        body = jsonrpc.encode_call(PING_METHOD, None, request_id)
        socket = self.connected(bot.id)
        if socket is None:
            return CallResult(request=body, fault=Fault(FaultKind.UNREACHABLE,
                                                        f"{bot.name} is not connected"))
        started = time.perf_counter()
        try:
            reply = await _exchange(socket, request_id, body, self._ping_timeout)
        except TimeoutError:
            return CallResult(request=body, fault=Fault(
                FaultKind.TIMEOUT, f"no reply within {self._ping_timeout:g} s"))
        if reply is None:
            return CallResult(request=body, fault=Fault(
                FaultKind.UNREACHABLE, "its socket closed before the reply"))
        return CallResult(request=body, reply=reply[1], latency=time.perf_counter() - started)


class _Arrival:
    """Calls waiting for a bot's next socket: set when one is attached."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.waiters = 0


async def _exchange(socket: BotSocket, request_id: int, body: bytes,
                    time_limit: float) -> Reply | None:
    """Send a request on the socket and wait for its reply; None if the socket closed
    first.

    :raises TimeoutError: when no reply came within ``time_limit`` seconds.
    """
    answer = socket.send(request_id, body)
    try:
        async with asyncio.timeout(time_limit):
            return await answer
    finally:
        socket.forget(request_id)


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

"""``/rpc/ws``: the WebSocket a bot that connects out opens to the platform
(docs/bots/protocol.md section 7).

The bot's first frame registers it (``RegistrationService.Register`` without
``rpcendpoint``); from then on the platform's calls to it go on the socket
(:mod:`merknera.seats.sockets`) and its frames are replies to them or its own requests
(``Scrabble.Ready``), answered as on ``POST /rpc``.  Every frame is JSON-RPC 2.0, and so is
every answer.  The socket shares the listener's per-client limits: it is one of the client's
connections, a frame is at most ``max_reply_bytes`` (a reply's cap; a request of the bot's
at most a ``POST /rpc`` body's), a registration must come within :data:`REGISTER_SECONDS`,
wrong tokens are throttled as on ``/rpc``, frames that answer no call count against the
client's request rate, and a bot that does not read its socket is cut off
(:class:`~merknera.guard.sockets.ClientSocket`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import TypeGuard

from aiohttp import WSMsgType, web

from merknera.games import JSON, JSONObject
from merknera.guard import Caller, Guard
from merknera.guard.sockets import (
    CLOSE_GOING_AWAY,
    CLOSE_POLICY,
    CLOSE_REPLACED,
    HEARTBEAT_SECONDS,
    ClientSocket,
)
from merknera.protocol import jsonrpc, strict_json
from merknera.refused import Limit
from merknera.rpc import MAX_REQUEST_BYTES, REGISTER, RpcService
from merknera.scheduler.leases import Leases
from merknera.scheduler.presence import Presence
from merknera.seats.sockets import BotSocket, Sockets
from merknera.tasks import TaskSet

log = logging.getLogger(__name__)

REGISTER_SECONDS = 10.0
"""How long a new socket has to register."""
MAX_REQUESTS_AT_ONCE = 8
"""A bot's own requests under way on one socket, at most."""

_ENDED = (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR)


class RpcSocketService:
    """Bots' sockets to ``/rpc/ws``: registration, then their replies and requests."""

    def __init__(self, rpc: RpcService, sockets: Sockets, presence: Presence,
                 leases: Leases | None, guard: Guard) -> None:
        """``leases``: the node's, on a store that several nodes may share (None on one
        that only one node serves)."""
        self._rpc = rpc
        self._sockets = sockets
        self._presence = presence
        self._leases = leases
        self._guard = guard
        self._max_frame = guard.config.calls.max_reply_bytes
        self._stopping = False

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """The aiohttp handler of ``GET /rpc/ws``."""
        ws = web.WebSocketResponse(max_msg_size=self._max_frame, heartbeat=HEARTBEAT_SECONDS,
                                   compress=False)
        if not ws.can_prepare(request).ok:
            return web.Response(
                status=426, headers={"Upgrade": "websocket", "Connection": "Upgrade"},
                text="/rpc/ws is a WebSocket for bots that connect out "
                     "(docs/bots/protocol.md section 7); POST JSON-RPC calls to /rpc\n")
        await ws.prepare(request)
        transport = request.transport
        socket = ClientSocket(ws, self._guard.client(request),
                              transport.abort if transport is not None else lambda: None, "rpc")
        caller = self._guard.caller(request)
        registered: BotSocket | None = None
        requests = TaskSet()
        try:
            if self._stopping:
                socket.close(CLOSE_GOING_AWAY, "the platform is stopping; connect again")
            else:
                registered = await self._register(ws, socket, caller)
            if registered is not None:
                await self._read(ws, registered, caller, requests)
        except Exception:
            log.exception("a socket to /rpc/ws failed")
        finally:
            await requests.close()
            if registered is not None and self._sockets.detach(registered):
                why = socket.ended or f"the bot closed it ({ws.close_code})"
                self._presence.went_unreachable(registered.bot.id,
                                                f"its socket to /rpc/ws closed: {why}")
            await socket.finish()
        return ws

    def close_all(self) -> None:
        """Close every bot's socket and take no more (the platform stops, once its games
        have): each bot connects again, to the platform that comes back."""
        self._stopping = True
        for registered in self._sockets.sockets():
            registered.socket.close(CLOSE_GOING_AWAY, "the platform is stopping; connect again")

    async def _register(self, ws: web.WebSocketResponse, socket: ClientSocket,
                        caller: Caller) -> BotSocket | None:
        """Read and run the registration: the bot's socket, or None after telling the bot
        why it failed and closing."""
        # asyncio.timeout, not receive(timeout=...): aiohttp restarts that timer at each
        # ping or pong it answers itself, so a socket could stay without registering.
        try:
            async with asyncio.timeout(REGISTER_SECONDS):
                frame = await ws.receive()
        except TimeoutError:
            late = jsonrpc.RpcError(jsonrpc.INVALID_REQUEST,
                                    f"no registration within {REGISTER_SECONDS:g} s")
            _refused(socket, jsonrpc.error_reply(jsonrpc.Dialect.V2, None, late), late)
            return None
        if frame.type in _ENDED:
            return None
        if frame.type is not WSMsgType.TEXT:
            _refused(socket, jsonrpc.error_reply(jsonrpc.Dialect.V2, None, _NOT_TEXT),
                     _NOT_TEXT)
            return None
        try:
            call = _spoken(jsonrpc.parse_request(frame.data.encode()))
        except jsonrpc.RequestError as exc:
            _refused(socket, jsonrpc.error_reply(jsonrpc.Dialect.V2, exc.request_id, exc), exc)
            return None
        refusal = self._refusal(call)
        if refusal is not None:
            _refused(socket, jsonrpc.error_reply(call.dialect, call.id, refusal), refusal)
            return None
        answer, enrolment = await self._rpc.enrol(call, caller)
        if enrolment is None:
            assert answer.error is not None
            _refused(socket, answer.reply, answer.error)
            return None
        registered = BotSocket(socket, enrolment.bot)
        socket.send(strict_json.dumps(answer.reply))
        replaced = self._sockets.attach(registered)
        if replaced is not None:
            replaced.socket.close(CLOSE_REPLACED, "replaced by a newer connection of the bot")
        return registered

    def _refusal(self, call: jsonrpc.Request) -> jsonrpc.RpcError | None:
        """Why a socket's first request cannot register it, if it cannot."""
        if call.method != REGISTER:
            return jsonrpc.RpcError(jsonrpc.INVALID_REQUEST,
                                    f'The first message on /rpc/ws must be "{REGISTER}", '
                                    f'not "{call.method[:100]}"')
        if call.is_notification:
            return jsonrpc.RpcError(jsonrpc.INVALID_REQUEST,
                                    f'"{REGISTER}" must carry an "id" (it is answered)')
        if self._leases is not None and self._leases.live_nodes > 1:
            return jsonrpc.RpcError(
                jsonrpc.NOT_ALLOWED, "This arena runs on several nodes, and bots that connect "
                                     "out are served only by an arena of one node; serve HTTP "
                                     "at an rpcendpoint instead")
        return None

    async def _read(self, ws: web.WebSocketResponse, registered: BotSocket, caller: Caller,
                    requests: TaskSet) -> None:
        """Take the bot's frames until either side closes the socket."""
        socket = registered.socket
        async for frame in ws:
            if frame.type is not WSMsgType.TEXT:
                if frame.type in _ENDED:
                    return
                if not self._unsolicited(socket):
                    return
                socket.send(_error(None, _NOT_TEXT))
                continue
            data = frame.data.encode()
            try:
                message = strict_json.loads(data)
            except strict_json.BadJSONError as exc:
                if self._unsolicited(socket):
                    socket.send(_error(None, jsonrpc.RpcError(
                        jsonrpc.PARSE_ERROR, f"Parse error: the frame is not JSON: {exc}")))
                    continue
                return
            if _is_reply(message) and registered.replied(message, data):
                continue
            if not self._unsolicited(socket):
                return
            if _is_reply(message):
                continue  # to no call under way (late, or repeated)
            self._request(registered, data, caller, requests)

    def _request(self, registered: BotSocket, data: bytes, caller: Caller,
                 requests: TaskSet) -> None:
        """A request of the bot's: answered on the socket as ``POST /rpc`` would."""
        socket = registered.socket
        if len(data) > MAX_REQUEST_BYTES:
            socket.send(_error(None, jsonrpc.RpcError(
                jsonrpc.INVALID_REQUEST, f"Invalid request: larger than {MAX_REQUEST_BYTES} "
                                         "bytes")))
            return
        try:
            call = _spoken(jsonrpc.parse_request(data))
        except jsonrpc.RequestError as exc:
            socket.send(_error(exc.request_id, exc))
            return
        if call.method == REGISTER:
            socket.send(_error(call.id, jsonrpc.RpcError(
                jsonrpc.INVALID_REQUEST, f"{registered.bot.name} is registered on this socket "
                                         "already; open another socket to register again")))
            return
        if len(requests) >= MAX_REQUESTS_AT_ONCE:
            socket.send(_error(call.id, jsonrpc.RpcError(
                jsonrpc.RATE_LIMITED, f"more than {MAX_REQUESTS_AT_ONCE} of your requests at "
                                      "once on this socket; wait for their answers")))
            return

        async def run() -> None:
            answer = await self._rpc.answer(call, caller)
            if not call.is_notification:
                socket.send(strict_json.dumps(answer.reply))

        requests.spawn(run())

    def _unsolicited(self, socket: ClientSocket) -> bool:
        """Count a frame that answers no call against the client's request rate: False
        (and the socket closed) beyond it."""
        if self._guard.requests.take(socket.peer) <= 0:
            return True
        self._guard.refusals.count(Limit.REQUEST_RATE)
        socket.close(CLOSE_POLICY, "too many messages from your address; slow down")
        return False


_NOT_TEXT = jsonrpc.RpcError(jsonrpc.INVALID_REQUEST,
                             "Invalid request: every frame is a JSON-RPC message as text")


def _spoken(call: jsonrpc.Request) -> jsonrpc.Request:
    """A request on a socket, answered in JSON-RPC 2.0 whatever its dialect."""
    return dataclasses.replace(call, dialect=jsonrpc.Dialect.V2)


def _is_reply(message: JSON) -> TypeGuard[JSONObject]:
    """Whether a frame is a response (it has no method, and a result or an error)."""
    return isinstance(message, dict) and "method" not in message and (
        "result" in message or "error" in message)


def _error(request_id: jsonrpc.RequestId, error: jsonrpc.RpcError) -> bytes:
    return strict_json.dumps(jsonrpc.error_reply(jsonrpc.Dialect.V2, request_id, error))


def _refused(socket: ClientSocket, reply: JSONObject, error: jsonrpc.RpcError) -> None:
    """A registration refused: the error response, then the socket closed (1008) with the
    error's message as its reason."""
    socket.send(strict_json.dumps(reply))
    socket.close(CLOSE_POLICY, error.message)

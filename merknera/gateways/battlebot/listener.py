"""The Battlebot listener: Battlebot's paths at the root of their own port (its clients
build every URL from a bare ``host:port``), for both of its protocols at once.

* ``POST /bots/<game>`` registers a salted-login bot; ``POST /graphql`` runs GraphQL
  (``registerBot`` registers a GraphQL-era bot);
* ``GET /bots/<game>``, ``GET /games/<game>``, ``GET /games/<game>/<id>`` and
  ``GET /games/<game>/contests/<contest>`` answer as Battlebot's server did;
* a WebSocket at ``/`` is a client.  A GraphQL-era client sends its login first; a
  salted-login client waits for a salt.  So the listener waits ``battlebot_first_message_wait``
  seconds for a first message, and sends a salt if none comes.

The listener shares the platform's per-client limits (:class:`merknera.guard.Guard`):
connections per address, messages per second (a socket's messages count as requests),
failed logins, and request bodies.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
import struct
from typing import Any

from aiohttp import WSMsgType, web

from merknera import openapi
from merknera.games import JSONObject
from merknera.gateways.battlebot import accounts, records, wire
from merknera.gateways.battlebot.accounts import LoginRefusedError, RegistrationRefusedError
from merknera.gateways.battlebot.clients import Client, Hub
from merknera.gateways.battlebot.graphql_api import SDL, GraphQLApi
from merknera.gateways.battlebot.holds import refuse
from merknera.gateways.battlebot.openapi import DOCUMENT, DOCUMENT_PATH
from merknera.gateways.battlebot.wire import Era, LoginError
from merknera.guard import BodyError, Guard, RateLimitedError, crosssite
from merknera.guard.sockets import CLOSE_POLICY, HEARTBEAT_SECONDS, ClientSocket
from merknera.guard.throttle import Buckets
from merknera.protocol import strict_json
from merknera.refused import retry_after_header
from merknera.scheduler.arena import Arena
from merknera.scheduler.discipline import Discipline
from merknera.seats.turns import Received
from merknera.store.bots import BotStatus
from merknera.store.db import StoreUnavailableError

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024
"""The largest registration or GraphQL request body."""


class BattlebotListener:
    """The listener's application, and what its clients need of the platform."""

    def __init__(self, arena: Arena, hub: Hub, guard: Guard, discipline: Discipline) -> None:
        self._arena = arena
        self._hub = hub
        self._guard = guard
        self._discipline = discipline
        self._config = arena.config
        self._graphql = GraphQLApi(self._register_graphql, self._bots_of)
        self._registrations = Buckets(self._config.accounts.registration_burst,
                                      self._config.accounts.registration_interval)

    def app(self) -> web.Application:
        """The aiohttp application to serve on ``battlebot_port``."""
        # Both eras' clients post with requests' json= (application/json).
        cross_site = crosssite.middleware(crosssite.Body.JSON, crosssite.json_refusal)
        app = web.Application(client_max_size=MAX_BODY, middlewares=[
            self._guard.forwarded, self._guard.middleware, cross_site, _json_errors])
        app.router.add_get("/", self._root)
        app.router.add_get(DOCUMENT_PATH, openapi.route(DOCUMENT))
        app.router.add_post("/graphql", self._graphql_request)
        app.router.add_get("/graphql", self._graphql_schema)
        app.router.add_post("/bots/{game}", self._register_salted)
        app.router.add_get("/bots/{game}", self._bots)
        app.router.add_get("/games/{game}", self._games)
        app.router.add_get("/games/{game}/contests/{contest}", self._contest)
        app.router.add_get("/games/{game}/{id}", self._game)
        return app

    # -- HTTP -----------------------------------------------------------------------------

    async def _json_body(self, request: web.Request) -> JSONObject:
        try:
            body = await self._guard.read_body(request, MAX_BODY)
        except BodyError as exc:
            raise _RefusedError(exc.status, exc.message) from None
        try:
            value = strict_json.loads(body)
        except strict_json.BadJSONError as exc:
            raise _bad(f"The body is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise _bad("The body must be a JSON object")
        return value

    async def _register_salted(self, request: web.Request) -> web.Response:
        game = wire.game_named(request.match_info["game"], Era.SALT)
        if game is None:
            raise _bad("Game not recognised")
        body = await self._json_body(request)
        unknown = sorted(set(body) - {"bot_id", "owner"})
        if unknown:
            raise _bad(f"Unknown keys: {', '.join(unknown[:5])} (send bot_id and owner)")
        bot_id, owner = body.get("bot_id"), body.get("owner")
        if not isinstance(bot_id, str):
            raise _bad("No ID set")
        if not isinstance(owner, str):
            raise _bad("No owner set")
        too_soon = self._too_soon(self._guard.client(request))
        if too_soon is not None:
            raise _RefusedError(429, too_soon)
        try:
            done = await accounts.register(self._arena, Era.SALT, game, bot_id.strip(),
                                           owner.strip())
        except RegistrationRefusedError as exc:
            raise _bad(str(exc)) from None
        return web.json_response({"game": game.path_name, "bot_id": done.bot.name,
                                  "pass_hash": done.credential}, status=201)

    async def _register_graphql(self, game: wire.BattlebotGame, name: str, owner: str,
                                client: str) -> accounts.Registered:
        too_soon = self._too_soon(client)
        if too_soon is not None:
            raise RegistrationRefusedError(too_soon)
        return await accounts.register(self._arena, Era.GRAPHQL, game, name.strip(),
                                       owner.strip())

    def _too_soon(self, client: str) -> str | None:
        """Why ``client`` may not register now, if it may not: an address may make a
        burst of registrations, then one every interval (the limits of a user's over
        ``/rpc``; here nobody is signed in)."""
        wait = self._registrations.take(client)
        if wait <= 0:
            return None
        return f"Too many registrations from your address; try again in {max(1, round(wait))} s"

    async def _bots_of(self, game: wire.BattlebotGame,
                       most: int | None = None) -> list[JSONObject]:
        return await self._arena.db.read(lambda conn: records.game_bots(conn, game, most))

    async def _graphql_request(self, request: web.Request) -> web.Response:
        body = await self._json_body(request)
        query, variables, operation = (body.get("query"), body.get("variables"),
                                       body.get("operationName"))
        if not isinstance(query, str):
            raise _bad('"query" must be a GraphQL document (a string)')
        if variables is not None and not isinstance(variables, dict):
            raise _bad('"variables" must be an object')
        if operation is not None and not isinstance(operation, str):
            raise _bad('"operationName" must be a string')
        return web.json_response(await self._graphql.execute(query, variables, operation,
                                                              self._guard.client(request)))

    async def _graphql_schema(self, request: web.Request) -> web.Response:
        """The GraphQL schema as SDL (introspection is off: see
        :mod:`merknera.gateways.battlebot.graphql_api`)."""
        return web.Response(text=SDL, content_type="text/plain")

    def _game_of(self, request: web.Request) -> wire.BattlebotGame:
        game = wire.game_named(request.match_info["game"], Era.SALT)
        if game is None:
            raise _bad("Game not recognised")
        return game

    async def _bots(self, request: web.Request) -> web.Response:
        return web.json_response(await self._bots_of(self._game_of(request)))

    async def _games(self, request: web.Request) -> web.Response:
        game = self._game_of(request)
        return web.json_response(
            await self._arena.db.read(lambda conn: records.recent_games(conn, game)))

    async def _game(self, request: web.Request) -> web.Response:
        game = self._game_of(request)
        raw = request.match_info["id"]
        if not raw.isdigit() or len(raw) > 18:
            raise _bad(f"No game {raw[:40]!r}: game ids are numbers")
        found = await self._arena.db.read(
            lambda conn: records.game_document(conn, game, int(raw)))
        if found is None:
            raise _RefusedError(404, f"No finished game {raw}")
        return web.json_response(found)

    async def _contest(self, request: web.Request) -> web.Response:
        game = self._game_of(request)
        contest = request.match_info["contest"]
        return web.json_response(await self._arena.db.read(
            lambda conn: records.contest_table(conn, game, contest)))

    async def _root(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await self._socket(request)
        return web.Response(text=_ROOT_TEXT, content_type="text/plain")

    # -- the WebSocket ------------------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        config = self._config
        first_wait = self._first_wait(request)
        ws = web.WebSocketResponse(max_msg_size=config.battlebot.max_message, autoping=True,
                                   heartbeat=HEARTBEAT_SECONDS)
        await ws.prepare(request)
        transport = request.transport
        connection = ClientSocket(ws, self._guard.client(request),
                                  transport.abort if transport is not None else lambda: None,
                                  "battlebot")
        client: Client | None = None
        try:
            client = await self._log_in(ws, connection, first_wait)
            if client is not None:
                await self._read(ws, client)
        except Exception:
            log.exception("a Battlebot connection failed")
        finally:
            if client is not None:
                self._hub.remove(client)
            await connection.finish()
        return ws

    async def _log_in(self, ws: web.WebSocketResponse, connection: ClientSocket,
                      first_wait: float) -> Client | None:
        """Read the login (the era is the first speaker's): the client, or None after
        telling it that the login failed."""
        config = self._config
        limit = config.battlebot.login_timeout
        salt: str | None = None
        # asyncio.timeout, not receive(timeout=...): aiohttp restarts that timer at each
        # ping or pong it answers itself, so a client could stay without logging in.
        try:
            async with asyncio.timeout(min(first_wait, limit)):
                first = await ws.receive()
        except TimeoutError:
            # A salted-login client has the whole limit from its salt (Battlebot sent the
            # salt at once, and its 10 s ran from then).
            salt = secrets.token_hex(32)
            connection.send({"salt": salt})
            try:
                async with asyncio.timeout(limit):
                    first = await ws.receive()
            except TimeoutError:
                return _failed(connection, f"no login within {limit:g} s")
        if first.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED,
                          WSMsgType.ERROR):
            return None
        era = Era.SALT if salt is not None else Era.GRAPHQL
        if first.type is not WSMsgType.TEXT:
            return _failed(connection, "a login is a JSON text frame")
        try:
            value = strict_json.loads(first.data)
            if era is Era.SALT and isinstance(value, dict) and "password" in value:
                raise LoginError(
                    "a GraphQL-era login came after the salt was sent (more than "
                    f"{first_wait:.2f} s after the connection opened); connect again")
            login = wire.read_login(value, era)
        except strict_json.BadJSONError as exc:
            return _failed(connection, f"the login is not JSON: {exc}")
        except LoginError as exc:
            return _failed(connection, str(exc))
        try:
            async with self._guard.auth.attempt(connection.peer):
                try:
                    bot = await accounts.log_in(self._arena.db, login, salt)
                except LoginRefusedError as exc:
                    self._guard.auth.failed(connection.peer)
                    return _failed(connection, str(exc))
            if bot.status is BotStatus.DISABLED:
                # Disabled by the fault rule: logging in brings it back, as registering
                # again does for a bot that is called.
                enabled = await self._discipline.enable(bot.id)
                bot = enabled or bot
        except RateLimitedError as exc:
            return _failed(connection, exc.message.replace("tokens", "logins"))
        except StoreUnavailableError as exc:
            return _failed(connection, exc.for_clients)
        client = Client(connection, bot, login)
        presence = self._arena.presence
        if presence.bot(bot.id) is None:
            presence.restored(bot)
        if not self._hub.add(client):
            return _failed(connection, f"{bot.name} is connected already (one connection "
                                       "per bot: it reconnects after each game)")
        presence.heard(bot.id)
        connection.send(login.reply())
        return client

    def _first_wait(self, request: web.Request) -> float:
        """How long to wait for a GraphQL-era login before sending a salt: its login comes
        one round trip after the handshake, so a few of the connection's round trips (as
        the kernel measured them during the TCP handshake), at most
        ``battlebot_first_message_wait`` (all of it when the round trip is not known)."""
        most = self._config.battlebot.first_message_wait
        rtt = round_trip(request.transport)
        return most if rtt is None else min(most, FIRST_WAIT_FLOOR + RTT_MARGIN * rtt)

    async def _read(self, ws: web.WebSocketResponse, client: Client) -> None:
        """Take the client's messages until it or the platform closes the socket."""
        requests, peer = self._guard.requests, client.connection.peer

        def answer(message: Received) -> None:
            refuse(client, message, message.problem or "sent while it was not your turn")

        async for frame in ws:
            if requests.take(peer) > 0:
                client.connection.send({"error": "too many messages from your address"})
                client.connection.close(CLOSE_POLICY)
                return
            if frame.type is WSMsgType.TEXT:
                message = Received.text_frame(frame.data)
            elif frame.type is WSMsgType.BINARY:
                message = Received.binary_frame(len(frame.data))
            else:
                return
            client.received(message, answer)


FIRST_WAIT_FLOOR = 0.2
"""Seconds a first message is waited for at least: a client's own start-up, and a busy
event loop here (which reads the message late)."""
RTT_MARGIN = 4
"""Round trips a first message is waited for (a round trip varies)."""
_TCP_INFO_RTT = struct.Struct("=I")
_TCP_INFO_RTT_OFFSET = 68
"""Where Linux's ``struct tcp_info`` keeps ``tcpi_rtt`` (microseconds): after 8 one-byte
fields and 15 four-byte ones (rto, ato, mss..., rcv_ssthresh)."""


def round_trip(transport: asyncio.BaseTransport | None) -> float | None:
    """The connection's smoothed round-trip time in seconds, as the kernel keeps it for
    the TCP socket (Linux), or None where it cannot be read."""
    sock = transport.get_extra_info("socket") if transport is not None else None
    tcp_info = getattr(socket, "TCP_INFO", None)
    if sock is None or tcp_info is None:
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, tcp_info, 104)
    except OSError:
        return None
    if len(info) < _TCP_INFO_RTT_OFFSET + _TCP_INFO_RTT.size:
        return None
    micros: int = _TCP_INFO_RTT.unpack_from(info, _TCP_INFO_RTT_OFFSET)[0]
    return micros / 1_000_000


def _failed(connection: ClientSocket, why: str) -> Client | None:
    """Battlebot's failed login (with why, which Battlebot did not say), then close: no
    client."""
    connection.send({**wire.FAILED, "error": why})
    connection.close(CLOSE_POLICY)
    return None


class _RefusedError(Exception):
    """A request refused with a status and Battlebot's ``{"error": message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _bad(message: str) -> _RefusedError:
    """Battlebot's client error: 400 with ``{"error": message}``."""
    return _RefusedError(400, message)


@web.middleware
async def _json_errors(request: web.Request, handler: Any) -> web.StreamResponse:
    """Every error as Battlebot's JSON ``{"error": message}`` (404s and 405s too; 503 with
    ``Retry-After`` while the store cannot be reached)."""
    try:
        response: web.StreamResponse = await handler(request)
        return response
    except _RefusedError as exc:
        return web.json_response({"error": exc.message}, status=exc.status)
    except StoreUnavailableError as exc:
        return web.json_response({"error": exc.for_clients}, status=503,
                                 headers={"Retry-After": retry_after_header(exc.retry_after)})
    except web.HTTPException as exc:
        if exc.status < 400 or exc.content_type == "application/json":
            raise
        headers = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
        return web.json_response({"error": exc.reason}, status=exc.status, headers=headers)


_ROOT_TEXT = """Merknera's Battlebot listener.

Battlebot's clients play here unchanged, in either of its protocols:
  register: POST /bots/<game> {"bot_id", "owner"}
              (salted login; games noughtsandcrosses, numberwang)
            POST /graphql  mutation registerBot(gameType, name, owner)
              (GraphQL era; NOUGHTS_AND_CROSSES, NUMBERWANG)
  play:     a WebSocket to this address
  read:     GET /bots/<game>, /games/<game>, /games/<game>/<id>,
            GET /games/<game>/contests/<contest>
"""

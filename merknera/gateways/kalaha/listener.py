"""The Kalaha listener: the Kalaha board API (research d.1) on ``kalaha_port``, for its
Angular front end unchanged and for the platform's play page.  Boards are readable by a page
of any origin (CORS, the original's ``@CrossOrigin("*")``); only the front ends the operator
lists (``kalaha_origins``) and the play page may create boards and move on them from their
pages (:meth:`KalahaListener.cors`, :mod:`merknera.guard.crosssite`).

===================================  ==========================================================
``POST /api/boards``                 201 and a new board's BoardState; anyone may move for
                                     either player (the original's hot seat)
``POST /api/boards``                 the extension: that Kalaha bot is player TWO, the person
``{"opponent": id, "name"?: str}``   (named, or anonymous) player ONE
``PUT /api/boards/{uuid}``           ``{"pitIndex", "player"}``: 200 and the BoardState once
                                     it is a person's turn again (the bot's moves made) or
                                     the game is over; 400/404 with the original's messages,
                                     in its order, in Spring's error body
``GET /api/boards/{uuid}``           200 and the BoardState; 404 ``Board not found``
===================================  ==========================================================

Every board is a platform game; one with an anonymous seat (every hot-seat board) rates
nobody.  A board whose player to move makes no move within ``person_turn_limit`` is lost
by that player on time, so an abandoned board ends by itself.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable

from aiohttp import web

from merknera import openapi
from merknera.games import JSON, JSONObject, SeatResult
from merknera.games.kalaha import PLAYERS, Board
from merknera.gateways.guests import (
    SECRET_HEADER,
    GuestNameTakenError,
    GuestRefusedError,
    GuestThrottledError,
    telling,
)
from merknera.gateways.kalaha.api import (
    NOT_FOUND,
    ApiError,
    board_state,
    check_play,
    read_board_id,
    read_play,
)
from merknera.gateways.kalaha.openapi import BOARDS, DOCUMENT, DOCUMENT_PATH
from merknera.gateways.tables import Table, Tables
from merknera.guard import Guard, crosssite
from merknera.guard.bodies import BodyError
from merknera.guard.clients import requested_host
from merknera.hosts import host_port, parse_origin
from merknera.names import Claim, ClaimFieldError, Unnamed, read_claim
from merknera.protocol import strict_json
from merknera.refused import RefusedError, retry_after_header
from merknera.seats.polled import PolledHold
from merknera.store.db import StoreUnavailableError
from merknera.web.params import json_integer

GAME = "KALAHA"
MAX_BODY = 4096
"""Largest request body (a PUT is a few dozen bytes)."""
LONGEST_WAIT = 3600.0
"""A held PUT's longest wait (each move of the game has a turn limit well below)."""
METHODS = "GET,POST,PUT"
READING = frozenset({"GET", "HEAD"})
"""The methods any origin's pages may use..."""
WRITING = frozenset({"POST", "PUT"})
"""...and those only the front ends' pages may (:meth:`KalahaListener.front_ends`)."""
OPENING_WAIT = 10.0
"""Seconds a PUT waits for a new board's game to show its first state."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class KalahaListener:
    """The routes of the Kalaha listener."""

    def __init__(self, tables: Tables, guard: Guard) -> None:
        self._tables = tables
        self._arena = tables.arena
        self._guard = guard
        self._origins = frozenset(
            origin for origin in map(parse_origin, self._arena.config.kalaha.origins)
            if origin is not None)

    def app(self) -> web.Application:
        """The aiohttp application to serve on ``kalaha_port``."""
        # A POST without a body is the front end's new board (kalaha-fe sends no type).
        cross_site = crosssite.middleware(
            lambda request: crosssite.Body.JSON_OR_NONE if request.method == "POST"
            else crosssite.Body.JSON, _cross_site_refusal, self.front_ends)
        app = web.Application(client_max_size=MAX_BODY, middlewares=[
            self._guard.forwarded, self.cors, self._guard.middleware, cross_site, _errors])
        app.router.add_post(BOARDS, self._create)
        app.router.add_put(BOARDS + "/{id}", self._play)
        app.router.add_get(BOARDS + "/{id}", self._view)
        app.router.add_get(DOCUMENT_PATH, openapi.route(DOCUMENT))
        return app

    # -- CORS -------------------------------------------------------------------------------

    def front_ends(self, request: web.BaseRequest) -> frozenset[str]:
        """The origins (parsed) whose pages may create boards and move: ``kalaha_origins``,
        and the platform's play page, wherever a browser may have loaded it from: the
        public URL's origin, and the main port at the host this request was sent to (the
        page calls the listener at its own host, :func:`merknera.web.play.kalaha_url`)."""
        config = self._arena.config
        pages = [config.listeners.public_url] if config.listeners.public_url else []
        host = requested_host(request)
        if host:
            pages.append(f"{config.listeners.scheme}://{host_port(host, config.listeners.port)}")
        return self._origins | {origin for origin in map(parse_origin, pages)
                                if origin is not None}

    @web.middleware
    async def cors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """CORS: a page of any origin may read boards (``GET``, as the original's
        ``@CrossOrigin("*")``); only the pages of :meth:`front_ends` may send ``POST`` and
        ``PUT``: a preflight for them from another origin gets no allow headers (403), and
        their answers are readable by the front ends only."""
        if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
            self._guard.count_request(request)  # answered here, before the guard's middleware
            return self._preflight(request)
        headers = self._readable_by(request)
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            exc.headers.update(headers)
            raise
        response.headers.update(headers)
        return response

    def _readable_by(self, request: web.Request) -> dict[str, str]:
        """The CORS headers of an answer to ``request`` (none: no other origin's page may
        read it); a front end may also read the headers that tell a player a new name's
        secret and when to ask again."""
        if request.method not in crosssite.STATE_CHANGING:
            return {"Access-Control-Allow-Origin": "*"}
        if "Origin" in request.headers and not crosssite.is_trusted(
                request, self.front_ends(request)):
            return {"Vary": "Origin"}
        return {"Access-Control-Allow-Origin": "*", "Vary": "Origin",
                "Access-Control-Expose-Headers": f"{SECRET_HEADER}, Retry-After"}

    def _preflight(self, request: web.Request) -> web.Response:
        """A preflight's answer (Spring's ``Invalid CORS request`` for one refused)."""
        method = request.headers["Access-Control-Request-Method"].strip().upper()
        on_boards = request.path == BOARDS or request.path.startswith(BOARDS + "/")
        front_end = crosssite.is_trusted(request, self.front_ends(request))
        vary = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
        if not on_boards or method not in READING | WRITING or (
                method in WRITING and not front_end):
            return web.Response(status=403, text="Invalid CORS request", headers={"Vary": vary})
        # A browser keeps the methods allowed here for its origin (Max-Age): another
        # origin's pages are told of the reading ones only.
        headers = {"Access-Control-Allow-Origin": "*",
                   "Access-Control-Allow-Methods": METHODS if front_end else "GET",
                   "Access-Control-Max-Age": "1800", "Vary": vary}
        asked = request.headers.get("Access-Control-Request-Headers")
        if asked:
            headers["Access-Control-Allow-Headers"] = asked
        return web.Response(status=200, headers=headers)

    # -- boards -----------------------------------------------------------------------------

    async def _create(self, request: web.Request) -> web.Response:
        body = await self._guard.read_body(request, MAX_BODY)
        handle = str(uuid.uuid4())
        opponent, claim = _opponent_request(body)
        client = self._guard.client(request)
        self._tables.room_for(client)  # before a guest is made for the request
        bot = None if opponent is None else await self._tables.opponent(GAME, opponent)
        if opponent is not None and bot is None:
            raise ApiError(409, f"Bot {opponent} is not an online Kalaha bot with room for "
                                "another game")
        try:
            player = await self._tables.guest(claim, GAME, client)
        except GuestThrottledError as exc:
            raise ApiError(429, str(exc), retry_after=exc.retry_after) from None
        except GuestNameTakenError as exc:
            raise ApiError(409, f"Invalid name: {exc}") from None
        except GuestRefusedError as exc:  # a string, but no name (see the document)
            raise ApiError(422, f"Invalid name: {exc}") from None
        person = player.bot
        seated, polled = ([person, person], [0, 1]) if bot is None else ([person, bot], [0])
        try:
            await self._tables.start(client, GAME, handle, seated, polled,
                                     self._arena.config.guests.person_turn_limit,
                                     addresses=[client if seat in polled else None
                                                for seat in range(len(seated))])
        except RefusedError as exc:
            raise telling(exc, player) from None
        return web.json_response(board_state(handle, Board()), status=201,
                                 headers=player.headers)

    async def _play(self, request: web.Request) -> web.Response:
        # The original reads the body (its media type, checked by the cross-site
        # middleware first, then the JSON, then @Valid) before the path's id.
        play = read_play(await self._guard.read_body(request, MAX_BODY))
        handle = read_board_id(request.match_info["id"])
        table = self._tables.find(GAME, handle)
        if table is None:
            if await self._tables.stored(GAME, handle) is None:
                raise NOT_FOUND
            raise ApiError(400, "Game is over")  # a board of a game no longer under way
        seat = await self._ready(table)
        board = _board(table)
        if table.ended or board is None:
            raise ApiError(400, "Game is over")
        check_play(board, play)
        mover = table.polled.get(play.seat)
        if mover is None:
            raise ApiError(400, f"Incorrect player order, {PLAYERS[play.seat]} is the bot "
                                f"{table.bots[play.seat].name}, which makes its own moves")
        version = seat.version
        if not mover.send({"pitIndex": play.pit, "player": PLAYERS[play.seat]},
                          json.dumps({"pitIndex": play.pit, "player": PLAYERS[play.seat]})):
            raise ApiError(400, "A move of this board is being played; try again")
        await _persons_turn(table, seat, version)
        return web.json_response(self._state(table, handle))

    async def _view(self, request: web.Request) -> web.Response:
        handle = read_board_id(request.match_info["id"])
        table = self._tables.find(GAME, handle)
        if table is not None:
            return web.json_response(self._state(table, handle))
        found = await self._tables.replayed(GAME, handle, self._guard.client(request))
        if found is None:
            raise NOT_FOUND
        record, board = found.record, found.state
        assert isinstance(board, Board)
        winner = next((s.seat for s in record.seats if s.result is SeatResult.WIN), None)
        return web.json_response(_document(handle, board, record.termination is not None,
                                           winner))

    async def _ready(self, table: Table) -> PolledHold:
        """A polled seat of the board once the game shows its first state.

        :raises ApiError: 503 if it has not begun within :data:`OPENING_WAIT` (its bot
            is slow to answer NewGame, or the platform is busy): ask again.
        """
        seat = table.any_seat()
        if seat.seen is None and not table.ended:
            await seat.changed(0, OPENING_WAIT)
        if seat.seen is None and not table.ended:
            raise ApiError(503, "The game has not begun yet (its players are being asked to "
                                "open it); try again", retry_after=1.0)
        return seat

    def _state(self, table: Table, handle: str) -> JSONObject:
        board = _board(table) or Board()
        if not table.ended or board.over:
            return board_state(handle, board)
        # Over without a full board: a forfeit (the loser took too long), or no result.
        seat = table.any_seat()
        winner = None  # no result (the runner stopped)
        if seat.final is not None:  # Complete tells each seat whether it won
            winner = seat.seat if seat.final.get("winner") is True else 1 - seat.seat
        return _document(handle, board, True, winner)


def _document(handle: str, board: Board, over: bool, winner: int | None) -> JSONObject:
    """A BoardState for a board whose game ended otherwise than the rules end it."""
    state = board_state(handle, board)
    if over and not board.over:
        state["gameOver"] = True
        state["winner"] = None if winner is None else PLAYERS[winner]
    return state


def _board(table: Table) -> Board | None:
    seen = table.any_seat().seen
    state = None if seen is None else seen.state
    return state if isinstance(state, Board) else None


async def _persons_turn(table: Table, seat: PolledHold, after: int) -> None:
    """Wait until a person of the board has the move after version ``after`` of ``seat``,
    or the game is over (the bot's moves are made meanwhile)."""
    version = after
    while not table.ended:
        if seat.version > after and any(s.to_move for s in table.polled.values()):
            return
        await seat.changed(version, LONGEST_WAIT)
        version = seat.version


def _opponent_request(body: bytes) -> tuple[int | None, Claim]:
    """The extension's ``{"opponent": <bot id>, "name": ..., "secret": ...}`` (the name's
    secret, :func:`merknera.gateways.guests.guest`); no opponent and no name for the
    original's body-less request (or any body without ``opponent``)."""
    anonymous = Claim(None)
    if not body.strip():
        return None, anonymous
    try:
        value: JSON = strict_json.loads(body)
    except strict_json.BadJSONError as exc:
        raise ApiError(400, f"JSON parse error: {exc}") from None
    if not isinstance(value, dict) or value.get("opponent") is None:
        return None, anonymous
    opponent = json_integer(value.get("opponent"))
    if opponent is None:
        raise ApiError(400, "opponent must be a bot's id (an integer)")
    try:
        return opponent, read_claim(value, Unnamed.LEFT_OUT_OR_NULL)
    except ClaimFieldError as exc:
        raise ApiError(400, str(exc)) from None


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refusals in Spring Boot's error body (and aiohttp's own 404 and 405 too)."""
    try:
        try:
            return await handler(request)
        except RefusedError as exc:  # the platform's limits, in the original's words
            raise ApiError(exc.status, exc.message, retry_after=exc.retry_after,
                           headers=tuple(exc.headers.items())) from None
        except BodyError as exc:  # too large, or too slow
            raise ApiError(exc.status, exc.message) from None
        except StoreUnavailableError as exc:
            raise ApiError(503, exc.for_clients, retry_after=exc.retry_after) from None
    except ApiError as exc:
        headers = dict(exc.headers)
        if exc.retry_after is not None:
            headers["Retry-After"] = retry_after_header(exc.retry_after)
        return web.json_response(exc.body(request.path), status=exc.status, headers=headers)
    except web.HTTPMethodNotAllowed as exc:
        refusal = ApiError(405, f"Request method '{request.method}' is not supported")
        return web.json_response(refusal.body(request.path), status=405,
                                 headers={"Allow": ",".join(sorted(exc.allowed_methods))})
    except web.HTTPNotFound:
        return web.json_response(ApiError(404, "Not Found").body(request.path), status=404)


def _cross_site_refusal(request: web.Request,
                        refusal: crosssite.CrossSiteRefusal) -> web.Response:
    """A request a page of another origin could have sent unasked, refused in Spring's
    words and error body: 415 as the original answers a body of another type; 403 for a
    page that is not one of the front ends."""
    if refusal.status == 415:
        sent = refusal.content_type or "application/octet-stream"
        message = f"Content-Type '{crosssite.shown(sent, 100)}' is not supported"
    else:
        message = (f"Invalid CORS request: a page of {crosssite.shown(refusal.origin or '', 200)}"
                   f" may not {request.method} here (kalaha_origins lists the front ends "
                   "that may)")
    return web.json_response(ApiError(refusal.status, message).body(request.path),
                             status=refusal.status)

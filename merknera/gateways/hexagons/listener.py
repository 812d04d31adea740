"""The hexagons listener: the MebiPenny 2011 hexagons server's HTTP API at its root
(research c.2), for its clients unchanged.

======================================  ==============================================
``GET /``                               the games: ``[{"id", "state"}]``
``POST /`` ``{"rows", "cols"}``         201, ``Location: /<id>`` (403 ``invalid game data``)
``GET /match``                          201 and ``Location`` once another client (or, after
                                        ``hexagons_match_wait``, an online bot) is found
``GET /<id>``                           the Game (the delta since an observer's last, with
                                        ``X-Observer-Token``)
``POST /<id>/players`` ``{"name"}``     held until the player's first turn: 200, the Game,
                                        ``X-Turn-Token`` (410 once the game has two players)
``POST /<id>/moves``                    with the token, ``[{"row","col"},{"row","col"}]``:
                                        held until the mover's next turn, then the Game Delta
                                        since the request and a new token; 403 ``invalid
                                        move: <why>. disqualified!``; 403 ``invalid/missing
                                        turn token``; 410 ``game finished``
``POST /<id>/observers``                ``application/x-multi-json``: the Game, then a delta
                                        after every change, until the end
======================================  ==============================================

When the game ends every held request is answered with the final delta and no token.
Refusals are ``text/plain`` with the original's words.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import uuid
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web

from merknera import openapi
from merknera.games import JSON
from merknera.games.hexagons import HexagonsState, Line
from merknera.gateways.hexagons import wire
from merknera.gateways.hexagons.openapi import (
    DOCUMENT,
    DOCUMENT_PATH,
    OBSERVER_TOKEN,
    TURN_TOKEN,
)
from merknera.gateways.hexagons.rooms import Room, Rooms
from merknera.gateways.hexagons.wire import COMPLETED, MULTI_JSON, RequestRefusedError
from merknera.guard import Guard, Stream, crosssite
from merknera.guard.bodies import BodyError
from merknera.guard.holdings import FullError
from merknera.guard.throttle import RateLimitedError
from merknera.protocol import strict_json
from merknera.protocol.faults import FaultKind
from merknera.refused import RefusedError, retry_after_header
from merknera.seats.polled import PolledHold
from merknera.store.db import StoreUnavailableError

MAX_BODY = 4096
"""Largest request body: every request of the API is a few dozen bytes."""
LONGEST_WAIT = 3600.0
"""A held request's longest wait (the runner ends every game well before: each move has
``hexagons_turn_limit``)."""
MAX_DELAY = 5.0
"""Longest ``delay_time`` a game may ask for, in seconds."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class HexagonsListener:
    """The routes of the hexagons listener."""

    def __init__(self, rooms: Rooms, guard: Guard) -> None:
        self._rooms = rooms
        self._guard = guard

    def app(self) -> web.Application:
        """The aiohttp application to serve on ``hexagons_port``."""
        # Its Ruby clients post JSON typed as a form, or untyped (research c.7).
        cross_site = crosssite.middleware(crosssite.Body.ANY, crosssite.text_refusal)
        app = web.Application(client_max_size=MAX_BODY,
                              middlewares=[self._guard.forwarded, self._guard.middleware,
                                           cross_site, _refusals])
        app.router.add_get("/", self._list)
        app.router.add_post("/", self._create)
        app.router.add_get("/match", self._match)
        app.router.add_get(DOCUMENT_PATH, openapi.route(DOCUMENT))
        app.router.add_get("/{id}", self._view)
        app.router.add_post("/{id}/players", self._join)
        app.router.add_post("/{id}/moves", self._move)
        app.router.add_post("/{id}/observers", self._observe)
        return app

    # -- games ------------------------------------------------------------------------------

    async def _list(self, request: web.Request) -> web.Response:
        return web.json_response(self._rooms.listing())

    async def _create(self, request: web.Request) -> web.Response:
        body = await self._guard.read_body(request, MAX_BODY)
        try:
            size = wire.read_new_game(body)
        except RequestRefusedError as exc:
            raise RefusedError(403, str(exc)) from None
        room = await self._rooms.create(self._guard.client(request), size.rows, size.cols,
                                        _delay(body))
        return _created(room.handle)

    async def _match(self, request: web.Request) -> web.Response:
        if crosssite.sent_by_foreign_page(request):
            # A GET that makes a game: a page of another site must not make its visitors'
            # browsers ask for games.
            raise RefusedError(403, "refused: a game asked for by a page of another site "
                                    "(Sec-Fetch-Site: cross-site)")

        def gone() -> bool:
            return request.transport is None or request.transport.is_closing()

        handle = await self._rooms.match(self._guard.client(request), gone)
        return _created(handle)

    async def _view(self, request: web.Request) -> web.Response:
        handle = request.match_info["id"]
        try:
            room = self._rooms.get(handle)
        except RefusedError:
            stored = await self._rooms.stored(handle, self._guard.client(request))
            if stored is None:
                raise
            return _json(stored)
        shown = self._rooms.shown(room)
        token = request.headers.get(OBSERVER_TOKEN)
        if token and token in room.observers:
            return _json(room.observed(token, shown))
        return _json(shown.game)

    # -- players ----------------------------------------------------------------------------

    async def _room(self, request: web.Request, ended: str) -> Room:
        """The game of the request's path; one that ended a while ago (in the store only)
        is 410 with ``ended``, as while it was in memory."""
        handle = request.match_info["id"]
        try:
            return self._rooms.get(handle)
        except RefusedError:
            if await self._rooms.stored_id(handle) is not None:
                raise RefusedError(410, ended) from None
            raise

    async def _join(self, request: web.Request) -> web.Response:
        room = await self._room(request, "game already started")
        try:
            claim = wire.read_player(await self._guard.read_body(request, MAX_BODY))
        except RequestRefusedError as exc:
            raise RefusedError(403, str(exc)) from None
        player, seat = await self._rooms.join(room, claim, self._guard.client(request))
        await _turn(seat, 0)
        return self._answer(room, seat, self._rooms.shown(room).game, player.headers)

    async def _move(self, request: web.Request) -> web.Response:
        room = await self._room(request, "game finished")
        body = await self._guard.read_body(request, MAX_BODY)
        table = room.table
        if table is None:
            raise RefusedError(403, "game not yet started")
        if room.state == COMPLETED:
            raise RefusedError(410, "game finished")
        token = request.headers.get(TURN_TOKEN, "")
        seat = next((held for number, held in table.polled.items()
                     if token and room.tokens.get(number) == token), None)
        if seat is None or not seat.to_move:
            raise RefusedError(403, "invalid/missing turn token")
        del room.tokens[seat.seat]
        since = self._rooms.shown(room).snapshot
        text = body.decode("utf-8", "replace")
        judged = _judge(body, room.current())
        if isinstance(judged, str):
            message = f"invalid move: {judged}. disqualified!"
            room.disqualified.add(seat.bot.name)
            seat.send(None, text, message, FaultKind.DISQUALIFIED)
            raise RefusedError(403, message)
        after = seat.version
        seat.send(wire.line_request(judged), text)
        await _turn(seat, after)
        if room.delay:
            await asyncio.sleep(room.delay)
            if seat.to_move and seat.turns.deadline is not None:
                # The turn runs from the token's delivery, not from the state's.
                seat.turns.deadline += room.delay
        return self._answer(room, seat, self._rooms.shown(room).delta(since))

    def _answer(self, room: Room, seat: PolledHold, document: wire.Encoded,
                told: Mapping[str, str] | None = None) -> web.Response:
        """200 with ``document``, and a new turn token if the seat has the move (none
        once the game is over: the clients play while the header comes), and ``told``
        (a guest's new secret)."""
        headers = {}
        if seat.to_move and room.state != COMPLETED:
            token = room.tokens[seat.seat] = uuid.uuid4().hex
            headers[TURN_TOKEN] = token
        headers.update(told or {})
        return _json(document, headers)

    # -- observers --------------------------------------------------------------------------

    async def _observe(self, request: web.Request) -> web.StreamResponse:
        room = self._rooms.get(request.match_info["id"])
        try:
            wrapper = wire.read_wrapper(await self._guard.read_body(request, MAX_BODY))
        except RequestRefusedError as exc:
            raise RefusedError(403, str(exc)) from None
        with contextlib.ExitStack() as place:
            try:
                stream = place.enter_context(self._guard.stream(request))
            except RateLimitedError as exc:
                raise RefusedError(429, exc.message, exc.retry_after) from None
            except FullError as exc:
                raise RefusedError(503, str(exc), 5.0) from None
            return await self._stream(request, room, wrapper, stream)

    async def _stream(self, request: web.Request, room: Room, wrapper: str | None,
                      stream: Stream) -> web.StreamResponse:
        """The Game, then a delta after every change to the end, unless the stream must
        end first (its client left or does not read, or its place went to a newcomer)."""
        shown = self._rooms.shown(room)
        token = room.new_observer(shown.snapshot)
        response = web.StreamResponse(headers={"Content-Type": MULTI_JSON,
                                               OBSERVER_TOKEN: token})
        await response.prepare(request)
        with contextlib.suppress(ConnectionResetError):
            await stream.send(response, shown.game.line(wrapper))
            try:
                async with asyncio.timeout(self._rooms.join_wait()):
                    await stream.wait(room.started.wait())
            except TimeoutError:
                pass
            table = room.table
            seat = None if table is None else table.any_seat()
            version = -1
            while seat is not None and shown.state != COMPLETED:
                if version >= 0 and not await stream.wait(seat.changed(version, LONGEST_WAIT)):
                    break
                version = seat.version
                # The same Game object and delta line for every observer of this moment.
                now = self._rooms.shown(room)
                await stream.send(response, now.delta(shown.snapshot).line(wrapper))
                room.observers.put(token, now.snapshot)
                shown = now
        await stream.end(response)
        return response


async def _turn(seat: PolledHold, after: int) -> None:
    """Wait until the seat has the move after version ``after``, or the game is over."""
    while not await seat.wait(after, LONGEST_WAIT):
        pass


def _judge(body: bytes, state: HexagonsState | None) -> Line | str:
    """A move's line, or why it is refused (and its player disqualified), in the
    original's words."""
    try:
        line = wire.read_line(body)
    except RequestRefusedError as exc:
        return str(exc)
    why = None if state is None else state.why_illegal(line)
    return line if why is None else why


def _delay(body: bytes) -> float:
    """The game's ``delay_time`` (0 when not given: the original's 0.3 s only paced its
    viewers), at most :data:`MAX_DELAY`."""
    try:
        value: JSON = strict_json.loads(body)
    except strict_json.BadJSONError:
        return 0.0
    delay = value.get("delay_time") if isinstance(value, dict) else None
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not math.isfinite(delay):
        return 0.0
    return min(MAX_DELAY, max(0.0, float(delay)))


def _json(document: wire.Encoded, headers: Mapping[str, str] | None = None) -> web.Response:
    """200 with ``document``, as :func:`aiohttp.web.json_response` answers it (its text
    made once, for every request that asks for it)."""
    return web.Response(text=document.body, content_type="application/json", headers=headers)


def _created(handle: str) -> web.Response:
    return web.Response(status=201, headers={"Location": f"/{handle}"})


@web.middleware
async def _refusals(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A refusal as the original answered it: the status and its words, as plain text
    (and 503 with ``Retry-After`` while the store cannot be reached)."""
    try:
        return await handler(request)
    except BodyError as exc:  # too large, or too slow
        return web.Response(status=exc.status, text=exc.message)
    except StoreUnavailableError as exc:
        return web.Response(status=503, text=exc.for_clients,
                            headers={"Retry-After": retry_after_header(exc.retry_after)})
    except RefusedError as exc:
        return web.Response(status=exc.status, text=exc.message, headers=exc.answer_headers())

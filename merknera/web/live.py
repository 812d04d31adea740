"""Server-sent events: a running game's new moves, and the home page's running games.

A stream listens to the platform's event bus only to know *when* to look: it then reads the
store, which is the source of truth, so an event the bus dropped (a slow listener loses its
oldest) costs nothing but a little delay, and a stream resumed with ``Last-Event-ID`` picks
up exactly where it stopped.  Streams also look every :data:`POLL_SECONDS` and send a
comment as a heartbeat, so that proxies keep them open and dead clients are noticed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp_jinja2
from aiohttp import web

from merknera.events import Event, EventBus
from merknera.guard import GUARD_KEY, FullError, RateLimitedError, Stream, too_many
from merknera.store import Database
from merknera.store.games import GameStatus
from merknera.store.results import (
    GameFilter,
    bot_counts,
    game_status,
    list_games,
    running_games,
)
from merknera.web import replay
from merknera.web.api import (
    DB_KEY,
    REPLAYS_KEY,
    WORK_KEY,
    _path_id,
    busy,
    load_replay_header,
    replay_states,
    still_building,
)
from merknera.web.params import MAX_DIGITS, whole_number
from merknera.web.query import BadQueryError, IntParam
from merknera.web.replays import Replays, Shared
from merknera.work import BusyError, Place, TimeLimitError

routes = web.RouteTableDef()

EVENTS_KEY: web.AppKey[EventBus] = web.AppKey("events", EventBus)
STREAMS_KEY: web.AppKey[Streams] = web.AppKey("streams")

POLL_SECONDS = 5.0
"""How often a stream looks at the store without being told (and sends a heartbeat)."""
HOME_COALESCE = 1.0
"""The home page's stream sends at most one update a second, however busy the arena."""


class Streams:
    """The open event streams: told to end when the platform stops, and sharing one
    rendering of the home page's live part.  How many a client may hold, and all together,
    is the guard's (:attr:`merknera.guard.Guard.streams`)."""

    def __init__(self) -> None:
        self.closing = asyncio.Event()
        self._home: tuple[float, str] | None = None
        self._home_lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def slot(self, request: web.Request) -> AsyncIterator[Ends]:
        """One stream's place, and what ends it: the platform stopping, the client leaving
        (noticed at once, so the place is free again at once), or its place given to
        another network's newcomer when every place is taken.

        429 when the client holds its share (``max_streams_per_client``), 503 when every
        place is taken and nobody can make room.
        """
        with contextlib.ExitStack() as place:
            try:
                stream = place.enter_context(request.app[GUARD_KEY].stream(request))
            except RateLimitedError as exc:
                raise too_many(exc) from None
            except FullError:
                raise web.HTTPServiceUnavailable(
                    text=json.dumps({"error": "too many live streams open; try again later"}),
                    content_type="application/json", headers={"Retry-After": "10"}) from None
            closing = asyncio.ensure_future(self.closing.wait())
            try:
                yield Ends((closing, *stream.ends), stream)
            finally:
                closing.cancel()

    async def home(self, request: web.Request, db: Database) -> str:
        """The home page's live part, rendered at most once per :data:`HOME_COALESCE`
        seconds for all the streams that send it."""
        async with self._home_lock:
            if self._home is None or time.monotonic() - self._home[0] >= HOME_COALESCE:
                html = aiohttp_jinja2.render_string("_home_live.html", request,
                                                    await home_live_context(db))
                self._home = (time.monotonic(), html)
            return self._home[1]

    async def close_all(self, _app: web.Application) -> None:
        """End every stream (``on_shutdown``: the server waits for open handlers)."""
        self.closing.set()


async def _open_stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={
        "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store",
        "X-Accel-Buffering": "no"})
    await response.prepare(request)
    return response


def _event(name: str, data: str) -> bytes:
    """One SSE message; every line of ``data`` gets its own ``data:`` field (a game's
    frames, with their ids, are :func:`_frame_event`'s)."""
    lines = [f"event: {name}", *(f"data: {line}" for line in data.split("\n"))]
    return ("\n".join(lines) + "\n\n").encode("utf-8")


class Ends:
    """What ends a stream: futures that are done when the platform stops, the client has
    gone or the stream's place went to a newcomer; and the stream's writes."""

    def __init__(self, futures: tuple[asyncio.Future[Any], ...], stream: Stream) -> None:
        self.futures = futures
        self.stream = stream

    def done(self) -> bool:
        """Whether the stream should end."""
        return any(future.done() for future in self.futures)


async def _wait(queue: asyncio.Queue[Event], ends: Ends, within: float) -> bool:
    """Wait for an event, for ``within`` seconds at most; False if the stream should end.
    Events that came meanwhile are taken too: one look covers them all."""
    getter = asyncio.ensure_future(queue.get())
    waited: set[asyncio.Future[Any]] = {getter, *ends.futures}
    try:
        await asyncio.wait(waited, timeout=within,
                           return_when=asyncio.FIRST_COMPLETED)
    finally:
        getter.cancel()
    while not queue.empty():
        queue.get_nowait()
    return not ends.done()


AFTER = IntParam("after", "Resume after this move number", low=0, default=0)
LAST_EVENT_ID = "Last-Event-ID"
"""The header a reconnecting EventSource sends: the id of the last event it had."""
LAST_EVENT_ID_PATTERN = f"^[0-9]{{0,{MAX_DIGITS}}}$"
"""What that header may hold here (a move number; empty is none)."""


def _resume_point(request: web.Request) -> int:
    """The last frame the client has: ``Last-Event-ID`` (a reconnecting EventSource) or
    ``?after=``; 0 for all."""
    raw = request.headers.get(LAST_EVENT_ID)
    if raw:
        found = whole_number(raw)
        if found is None:
            raise BadQueryError(f'the {LAST_EVENT_ID} header must be a move number, '
                                f'got "{raw[:20]}"')
        return found
    after = AFTER.read(request)
    assert after is not None
    return after


@routes.get("/api/games/{id}/live", allow_head=False)
async def game_live(request: web.Request) -> web.StreamResponse:
    """A game's frames as they are stored (``frame`` events, id = the move number), then
    one ``end`` event.  Resumes after ``Last-Event-ID`` or ``?after=``.  Frames are as the
    replay's (``?states=`` likewise), and the first a stream sends is a keyframe, so that a
    client needs nothing from before it.  Every stream of a game follows one shared log of
    its frames (:mod:`merknera.web.replays`), and is sent a piece of its events at a time."""
    game_id = _path_id(request)
    after = _resume_point(request)
    states = replay_states(request)
    db: Database = request.app[DB_KEY]()
    header = await load_replay_header(request, game_id)
    replays, work = request.app[REPLAYS_KEY], request.app[WORK_KEY]
    client = request.app[GUARD_KEY].client(request)
    streams = request.app[STREAMS_KEY]
    # The place first: catching up what the client has not seen is work a refused client
    # must not make the platform do.
    async with streams.slot(request) as ends, \
            request.app[EVENTS_KEY].listen(game_id) as queue:
        # Frames shown live hide what players may not know, to the end of the stream.
        with replays.following(replays.shared(header, reveal=False)) as shared:
            follower = _Follower(replays, shared, after, states)
            try:  # the first look is the request's: refused (503, 429) if it cannot be had
                async with work.place(client) as place:
                    status = await game_status(db, game_id)
                    await follower.look(db, status, place)
                    piece = await follower.piece(place)
            except BusyError as exc:
                raise busy(exc) from None
            except TimeLimitError:
                raise still_building() from None
            response = await _open_stream(request)
            # A client that went away ends the stream at its next write.
            with contextlib.suppress(ConnectionResetError):
                while True:
                    sent = piece is not None
                    try:
                        while piece is not None:
                            await ends.stream.send(response, piece)
                            piece = await follower.piece(None)
                    except BusyError:
                        pass  # the platform is busy: the next look goes on from there
                    if follower.ended:
                        await ends.stream.send(response, _event("end", json.dumps(
                            {"status": None if status is None else status.value,
                             "error": shared.log.error})))
                        break
                    if not sent:
                        await ends.stream.send(response, b": still here\n\n")
                    if not await _wait(queue, ends, POLL_SECONDS):
                        break
                    # The status first: rows read after it was FINISHED are all the rows.
                    status = await game_status(db, game_id)
                    try:
                        async with work.place(None) as place:
                            await follower.look(db, status, place)
                        piece = await follower.piece(None)
                    except (BusyError, TimeLimitError):
                        piece = None  # the platform is busy: the next look catches up
            await ends.stream.end(response)
    return response


class _Follower:
    """Where a live stream is in its game's shared frames."""

    def __init__(self, replays: Replays, shared: Shared, after: int,
                 states: replay.States) -> None:
        self._replays = replays
        self._shared = shared
        self._after = after
        self._states = states
        self._next: int | None = None
        """The index of the next frame to send (known once the log is caught up)."""
        self._sent = False
        self._over = False

    @property
    def ended(self) -> bool:
        """Every frame is sent: the game is over, or its frames stopped early."""
        return self._over and self._next is not None and self._next >= self._shared.log.count

    async def look(self, db: Database, status: GameStatus | None, place: Place) -> None:
        """Catch the log up with the rows stored since the last look (read after
        ``status``), in ``place``."""
        shared = self._shared
        over = status is GameStatus.FINISHED
        await self._replays.catch_up(shared, db, place, final=over)
        if self._next is None:
            self._next = shared.log.after(self._after)
        self._over = over or shared.log.error is not None

    async def piece(self, place: Place | None) -> bytes | None:
        """The next piece of ``frame`` events of the frames not sent yet (None: all are
        sent), made in ``place`` (in one of the platform's own when None)."""
        start = self._next
        if start is None or start >= self._shared.log.count:
            return None
        count, events = await self._replays.cut(self._shared, start, self._states,
                                                not self._sent, _frame_event, place)
        self._next, self._sent = start + count, True
        return events


def _frame_event(seq: int, frame: bytes) -> bytes:
    """A ``frame`` event: compact JSON is one line (a line break in a string is escaped),
    so its ``data`` is too."""
    return b"event: frame\nid: %d\ndata: %s\n\n" % (seq, frame)


@routes.get("/api/live", allow_head=False)
async def home_live(request: web.Request) -> web.StreamResponse:
    """The home page's live part (``home`` events: HTML of the games running now and the
    latest results), sent when games move, finish or bots come and go, at most once a
    second."""
    db: Database = request.app[DB_KEY]()
    streams = request.app[STREAMS_KEY]
    async with streams.slot(request) as ends, request.app[EVENTS_KEY].listen() as queue:
        response = await _open_stream(request)
        with contextlib.suppress(ConnectionResetError):
            while True:
                await ends.stream.send(response, _event("home", await streams.home(request, db)))
                if not await _wait(queue, ends, POLL_SECONDS * 6):
                    break
                await asyncio.sleep(HOME_COALESCE)  # what comes meanwhile joins this update
        await ends.stream.end(response)
    return response


async def home_live_context(db: Database,
                            counts: dict[str, tuple[int, int]] | None = None) -> dict[str, Any]:
    """What the live part of the home page shows (``counts``: :func:`bot_counts`, when the
    caller has read them already)."""
    counts = await bot_counts(db) if counts is None else counts
    return {"running": await running_games(db, limit=20),
            "recent": await list_games(db, GameFilter(status="FINISHED", limit=15)),
            "online": sum(online for _, online in counts.values())}

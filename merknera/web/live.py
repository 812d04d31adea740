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
import functools
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp_jinja2
from aiohttp import web

from merknera.events import Event, EventBus
from merknera.guard import GUARD_KEY, FullError, RateLimitedError, too_many
from merknera.store import Database
from merknera.store.games import GameStatus
from merknera.store.results import (
    GameFilter,
    bot_counts,
    game_status,
    list_games,
    move_log,
    running_games,
)
from merknera.web import replay
from merknera.web.api import (
    DB_KEY,
    _path_id,
    load_replay_header,
    replay_states,
)
from merknera.web.params import MAX_DIGITS, whole_number
from merknera.web.query import BadQueryError, IntParam

routes = web.RouteTableDef()

EVENTS_KEY: web.AppKey[EventBus] = web.AppKey("events", EventBus)
STREAMS_KEY: web.AppKey[Streams] = web.AppKey("streams")

POLL_SECONDS = 5.0
"""How often a stream looks at the store without being told (and sends a heartbeat)."""
HOME_COALESCE = 1.0
"""The home page's stream sends at most one update a second, however busy the arena."""
WRITE_SECONDS = 15.0
"""How long a stream waits for its client to take what it was sent."""


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
        guard = request.app[GUARD_KEY]
        loop = asyncio.get_running_loop()
        stream, turned_out = object(), loop.create_future()
        try:
            guard.streams.take(guard.client(request), stream,
                               functools.partial(turned_out.set_result, None))
        except RateLimitedError as exc:
            raise too_many(exc) from None
        except FullError:
            raise web.HTTPServiceUnavailable(
                text=json.dumps({"error": "too many live streams open; try again later"}),
                content_type="application/json", headers={"Retry-After": "10"}) from None
        closing = asyncio.ensure_future(self.closing.wait())
        try:
            yield Ends((closing, guard.connections.gone(request), turned_out))
        finally:
            closing.cancel()
            guard.streams.give_back(stream)

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


def _event(name: str, data: str, event_id: int | None = None) -> bytes:
    """One SSE message; every line of ``data`` gets its own ``data:`` field."""
    lines = [f"event: {name}"]
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.extend(f"data: {line}" for line in data.split("\n"))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


class Ends:
    """What ends a stream: futures that are done when the platform stops or the client
    has gone."""

    def __init__(self, futures: tuple[asyncio.Future[Any], ...]) -> None:
        self.futures = futures

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


async def _send(response: web.StreamResponse, data: bytes) -> None:
    """Write to a stream; a client that does not read what it is sent is let go
    (:class:`ConnectionResetError`) rather than hold the stream's place for ever."""
    try:
        async with asyncio.timeout(WRITE_SECONDS):
            await response.write(data)
    except TimeoutError:
        raise ConnectionResetError("the client does not read its stream") from None


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
    client needs nothing from before it."""
    game_id = _path_id(request)
    after = _resume_point(request)
    states = replay_states(request)
    db: Database = request.app[DB_KEY]()
    header = await load_replay_header(request, game_id)
    # Frames shown live hide what players may not know, to the end of the stream.
    replayer = replay.Replayer(header, reveal=False, states=states)
    streams = request.app[STREAMS_KEY]
    # The place first: replaying what the client has seen is work a refused client must
    # not make the platform do.
    async with streams.slot(request) as ends, \
            request.app[EVENTS_KEY].listen(game_id) as queue:
        if after:  # the rows the client has seen already: applied, not sent
            seen = await db.read(functools.partial(move_log, game_id=game_id, upto=after))
            await asyncio.to_thread(replayer.skip, seen)
        response = await _open_stream(request)
        # A client that went away ends the stream at its next write.
        with contextlib.suppress(ConnectionResetError):
            while True:
                # The status first: rows read after it was FINISHED are all the rows.
                status = await game_status(db, game_id)
                rows = await db.read(functools.partial(move_log, game_id=game_id,
                                                       after=replayer.seq))
                frames = await asyncio.to_thread(replayer.frames, rows)
                for row, frame in zip(rows, frames, strict=False):
                    await _send(response, _event(
                        "frame", json.dumps(frame, ensure_ascii=False), row["seq"]))
                if status is GameStatus.FINISHED or replayer.error is not None:
                    await _send(response, _event("end", json.dumps(
                        {"status": None if status is None else status.value,
                         "error": replayer.error})))
                    break
                if not frames:
                    await _send(response, b": still here\n\n")
                if not await _wait(queue, ends, POLL_SECONDS):
                    break
    return response


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
                await _send(response, _event("home", await streams.home(request, db)))
                if not await _wait(queue, ends, POLL_SECONDS * 6):
                    break
                await asyncio.sleep(HOME_COALESCE)  # what comes meanwhile joins this update
    return response


async def home_live_context(db: Database,
                            counts: dict[str, tuple[int, int]] | None = None) -> dict[str, Any]:
    """What the live part of the home page shows (``counts``: :func:`bot_counts`, when the
    caller has read them already)."""
    counts = await bot_counts(db) if counts is None else counts
    return {"running": await running_games(db, limit=20),
            "recent": await list_games(db, GameFilter(status="FINISHED", limit=15)),
            "online": sum(online for _, online in counts.values())}

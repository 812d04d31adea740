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

from merknera.events import BotStatusChanged, Event, EventBus, GameFinished, MovePlayed
from merknera.store import Database
from merknera.store.results import GameFilter, list_games, move_log, running_games
from merknera.web import replay
from merknera.web.api import DB_KEY, GAMES_KEY, _not_found, _path_id

routes = web.RouteTableDef()

EVENTS_KEY: web.AppKey[EventBus] = web.AppKey("events", EventBus)
STREAMS_KEY: web.AppKey[Streams] = web.AppKey("streams")

POLL_SECONDS = 5.0
"""How often a stream looks at the store without being told (and sends a heartbeat)."""
HOME_COALESCE = 1.0
"""The home page's stream sends at most one update a second, however busy the arena."""
MAX_STREAMS = 256
"""Open streams at most; more are refused with 503 rather than starve the platform."""


class Streams:
    """The open event streams: counted, and told to end when the platform stops."""

    def __init__(self, limit: int = MAX_STREAMS) -> None:
        self.limit = limit
        self.open = 0
        self.closing = asyncio.Event()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """One stream's place; 503 when every place is taken."""
        if self.open >= self.limit:
            raise web.HTTPServiceUnavailable(
                text=json.dumps({"error": "too many live streams open; try again later"}),
                content_type="application/json", headers={"Retry-After": "10"})
        self.open += 1
        try:
            yield
        finally:
            self.open -= 1

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


async def _wait(queue: asyncio.Queue[Event], closing: asyncio.Event,
                wanted: Any, within: float) -> bool:
    """Wait for an event ``wanted(event)`` accepts, for ``within`` seconds; False if the
    platform is stopping."""
    deadline = time.monotonic() + within
    while not closing.is_set():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True
        getter = asyncio.ensure_future(queue.get())
        stopper = asyncio.ensure_future(closing.wait())
        try:
            done, _ = await asyncio.wait({getter, stopper}, timeout=remaining,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            getter.cancel()
            stopper.cancel()
        if getter in done and wanted(getter.result()):
            return True
    return False


def _resume_point(request: web.Request) -> int:
    """The last frame the client has: ``Last-Event-ID`` (a reconnecting EventSource) or
    ``?after=``; 0 for all."""
    raw = request.headers.get("Last-Event-ID") or request.query.get("after") or "0"
    if not raw.isdigit() or len(raw) > 9:
        raise web.HTTPBadRequest(text=json.dumps({"error": f'"after" must be a move number, '
                                                           f'got "{raw[:20]}"'}),
                                 content_type="application/json")
    return int(raw)


@routes.get("/api/games/{id}/live")
async def game_live(request: web.Request) -> web.StreamResponse:
    """A game's frames as they are stored (``frame`` events, id = the move number), then
    one ``end`` event with how it ended.  Resumes after ``Last-Event-ID`` or ``?after=``."""
    game_id = _path_id(request)
    after = _resume_point(request)
    db: Database = request.app[DB_KEY]()
    header = await db.read(functools.partial(replay.load_header, game_id=game_id,
                                             games=request.app[GAMES_KEY]()))
    if header is None:
        raise _not_found(f"no game with id {game_id}")
    streams = request.app[STREAMS_KEY]
    async with streams.slot(), request.app[EVENTS_KEY].listen() as queue:
        response = await _open_stream(request)
        # Frames shown live hide what players may not know, to the end of the stream.
        replayer = replay.Replayer(header, reveal=False)
        if after:  # the rows the client has seen already: applied, not sent
            replayer.frames(await db.read(functools.partial(
                move_log, game_id=game_id, upto=after)))
        def about_this_game(event: Event) -> bool:
            return isinstance(event, MovePlayed | GameFinished) and event.game_id == game_id

        # A client that went away ends the stream at its next write.
        with contextlib.suppress(ConnectionResetError):
            while True:
                rows = await db.read(functools.partial(move_log, game_id=game_id,
                                                       after=replayer.seq))
                frames = replayer.frames(rows)
                for row, frame in zip(rows, frames, strict=False):
                    await response.write(_event(
                        "frame", json.dumps(frame, ensure_ascii=False), row["seq"]))
                status = await db.fetchval("SELECT status FROM games WHERE id = ?", (game_id,))
                if status == "FINISHED":
                    await response.write(_event("end", json.dumps({"status": status})))
                    break
                if not frames:
                    await response.write(b": still here\n\n")
                if not await _wait(queue, streams.closing, about_this_game, POLL_SECONDS):
                    break
    return response


@routes.get("/api/live")
async def home_live(request: web.Request) -> web.StreamResponse:
    """The home page's live part (``home`` events: HTML of the games running now and the
    latest results), sent when games move, finish or bots come and go, at most once a
    second."""
    db: Database = request.app[DB_KEY]()
    streams = request.app[STREAMS_KEY]
    async with streams.slot(), request.app[EVENTS_KEY].listen() as queue:
        response = await _open_stream(request)

        def anything(event: Event) -> bool:
            return isinstance(event, MovePlayed | GameFinished | BotStatusChanged)

        with contextlib.suppress(ConnectionResetError):
            while True:
                await response.write(_event("home", await render_home_live(request, db)))
                if not await _wait(queue, streams.closing, anything, POLL_SECONDS * 6):
                    break
                await asyncio.sleep(HOME_COALESCE)
                while not queue.empty():  # everything that came meanwhile is in this update
                    queue.get_nowait()
    return response


async def home_live_context(db: Database) -> dict[str, Any]:
    """What the live part of the home page shows."""
    online = await db.fetchval("SELECT COUNT(*) FROM bots WHERE status = 'ONLINE'")
    return {"running": await running_games(db, limit=20),
            "recent": await list_games(db, GameFilter(status="FINISHED", limit=15)),
            "online": online}


async def render_home_live(request: web.Request, db: Database) -> str:
    """The live part of the home page as HTML (the same template the page includes)."""
    return aiohttp_jinja2.render_string("_home_live.html", request,
                                        await home_live_context(db))

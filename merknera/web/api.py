"""The JSON results API: bots and their ratings, games with their move logs, leaderboards,
a bot's own log.

Bad query values get 400 and unknown ids 404, each with ``{"error": "<what was wrong>"}``.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from merknera.games import REGISTRY, AnyGame
from merknera.guard import GUARD_KEY
from merknera.guard.streams import PIECE, in_time
from merknera.store import Database, logs, stats, users
from merknera.store import bots as bot_store
from merknera.store import tournaments as tournament_store
from merknera.store.games import GameStatus
from merknera.store.results import (
    BodiesTooLongError,
    GameFilter,
    StoredGame,
    calls_size,
    get_bot,
    leaderboard,
    list_bots,
    list_games,
    read_game,
    seat_owners,
)
from merknera.web import replay, views
from merknera.web.admin import OPS_KEY, is_admin_token
from merknera.web.params import accepts_gzip, bearer_token, whole_number
from merknera.web.query import FLAG, ChoiceParam, IntParam, error_text
from merknera.web.replays import Replays, RunningFullError
from merknera.work import UNLIMITED, BusyError, Deadline, TimeLimitError, Work

DB_KEY: web.AppKey[Callable[[], Database]] = web.AppKey("database")
"""How handlers reach the store: set once when the app is built, before the store opens."""
GAMES_KEY: web.AppKey[Callable[[], dict[str, AnyGame]]] = web.AppKey("games")
"""The hosted games set up with their assets (known once the platform has started)."""
PUBLIC_URL_KEY: web.AppKey[str] = web.AppKey("public_url", str)
"""The configured public base URL ("" when bots and people reach the platform as they
address it)."""
REPLAYS_KEY: web.AppKey[Replays] = web.AppKey("replays", Replays)
"""The games' replays, shared by every request and live stream."""
WORK_KEY: web.AppKey[Work] = web.AppKey("work", Work)
"""Where answers that cost more than a few milliseconds of CPU are made (off the loop)."""

routes = web.RouteTableDef()


def _not_found(message: str) -> web.HTTPNotFound:
    return web.HTTPNotFound(text=error_text(message), content_type="application/json")


# The query parameters, each read by its handler and described by the OpenAPI document
# from the same object (merknera.web.query).
GAME = ChoiceParam("game", "Only this game", tuple(sorted(REGISTRY)))
GAME_REQUIRED = ChoiceParam("game", "The game", tuple(sorted(REGISTRY)), required=True)
ALL_VERSIONS = ChoiceParam("all", "1: superseded versions too", FLAG, default="0")
GAMES_LIMIT = IntParam("limit", "At most this many", high=500, default=50)
LOG_LIMIT = IntParam("limit", "At most this many entries", high=1000, default=200)
BEFORE = IntParam("before", "Only those with a smaller id")
BOT = IntParam("bot", "Only games of this bot id")
STATUS = ChoiceParam("status", "Only games in this status", tuple(GameStatus.__members__))
MOVES_AFTER = IntParam("after", "Only the calls after this move number", low=0, default=0)
MOVES_LIMIT = IntParam("limit", "At most this many calls (all when left out)")
BOT_A = IntParam("a", "A bot id", required=True)
BOT_B = IntParam("b", "Another bot id (the same one: no games)", required=True)
STATES = ChoiceParam(
    "states", f"How frames carry their states: delta (keyframes every "
              f"{replay.KEYFRAME_EVERY} frames, JSON Patches between them; what the game page "
              "loads) or full (every frame's state whole: larger, for clients that would not "
              "apply patches)", tuple(form.value for form in replay.States),
    default=replay.States.DELTA.value)


def _path_id(request: web.Request) -> int:
    raw = request.match_info["id"]
    found = whole_number(raw)
    if found is None:
        raise _not_found(f'no such id "{raw[:40]}"')
    return found


@routes.get("/api/bots")
async def bots_index(request: web.Request) -> web.Response:
    """Bots (current versions unless ``all=1``) with their records; filter ``game``."""
    include_retired = ALL_VERSIONS.read(request) == "1"
    found = await list_bots(request.app[DB_KEY](), GAME.read(request), include_retired)
    return web.json_response({"bots": found})


@routes.get("/api/bots/{id}")
async def bot_detail(request: web.Request) -> web.Response:
    """One bot version with its record, its rating and rating history, its other versions
    and its latest games."""
    db = request.app[DB_KEY]()
    bot_id = _path_id(request)
    bot = await get_bot(db, bot_id)
    if bot is None:
        raise _not_found(f"no bot with id {bot_id}")
    bot["games"] = await list_games(db, GameFilter(bot=bot_id, limit=20))
    bot.update(await stats.bot_figures(db, bot_id))
    return web.json_response(bot)


@routes.get("/api/bots/{id}/log")
async def bot_log(request: web.Request) -> web.Response:
    """A bot's log, for its owner only (``Authorization: Bearer <token>``)."""
    bot_id = _path_id(request)
    if not bearer_token(request):
        raise web.HTTPUnauthorized(
            text=error_text("send your token as Authorization: Bearer <token>"),
            content_type="application/json", headers={"WWW-Authenticate": "Bearer"})
    # The token first: a wrong one learns nothing, not even whether the bot exists.
    asking = await viewer(request, refusal="only the bot's owner may read its log")
    db = request.app[DB_KEY]()
    bot = await bot_store.get(db, bot_id)
    if bot is None:
        raise _not_found(f"no bot with id {bot_id}")
    if asking.user_id != bot.user_id:
        raise web.HTTPForbidden(text=error_text("only the bot's owner may read its log"),
                                content_type="application/json")
    limit = LOG_LIMIT.read(request)
    assert limit is not None
    entries = await logs.for_bot(db, bot_id, limit, BEFORE.read(request))
    return web.json_response({"bot_id": bot_id, "log": [
        {"id": e.id, "game_id": e.game_id, "message": e.message, "created_at": e.created_at}
        for e in entries]})


@routes.get("/api/games")
async def games_index(request: web.Request) -> web.Response:
    """Games newest first; filters ``game``, ``bot``, ``status``; paging ``limit``, ``before``."""
    limit = GAMES_LIMIT.read(request)
    assert limit is not None
    query = GameFilter(game=GAME.read(request), bot=BOT.read(request),
                       status=STATUS.read(request), limit=limit, before=BEFORE.read(request))
    return web.json_response({"games": await list_games(request.app[DB_KEY](), query)})


@dataclass(frozen=True)
class Viewer:
    """Who is asking, by the token they sent (``Authorization: Bearer``)."""

    user_id: int | None = None
    """The user whose token it is (None: nobody's, or no token)."""
    admin: bool = False
    """The admin token."""

    def sees_calls_of(self, owner_id: int | None) -> bool:
        """Whether the bodies of the calls to a bot of ``owner_id`` are theirs to see."""
        return self.admin or (self.user_id is not None and self.user_id == owner_id)


async def viewer(request: web.Request,
                 refusal: str = "that token is not a current token") -> Viewer:
    """The viewer a request's token makes it (anybody without one).

    A wrong token is answered 403 with ``refusal``, and counts against the client: one
    that sends many is slowed down (429).  The token of a suspended user is answered 403
    saying so (it is theirs, so it does not count as a wrong one).
    """
    token = bearer_token(request)
    if not token:
        return Viewer()
    admin_token, db = request.app[OPS_KEY]().admin_token, request.app[DB_KEY]()

    async def lookup(given: str) -> Viewer | users.User | None:
        if is_admin_token(admin_token, given):
            return Viewer(admin=True)
        return await users.find_user_by_token(db, given)

    found: Viewer | users.User | None = await request.app[GUARD_KEY].verify_token(
        request, token, lookup)
    if found is None:
        raise web.HTTPForbidden(text=error_text(refusal), content_type="application/json")
    if isinstance(found, Viewer):
        return found
    if found.suspended:
        raise web.HTTPForbidden(text=error_text(
            f'User "{found.name}" is suspended by an admin ({found.suspended_reason}); '
            "their token is refused until the suspension is lifted"),
            content_type="application/json")
    return Viewer(user_id=found.id)


@routes.get("/api/games/{id}")
async def game_detail(request: web.Request) -> web.StreamResponse:
    """A game: seats, outcome and reason, and every move with its latency and fault (those
    after move ``after``, at most ``limit`` of them).

    The bodies of the calls (``request``, ``reply``) are shown only to the owner of the
    bot called (``Authorization: Bearer <token>``) and to the admin: a bot's endpoint may
    be anything that answers HTTP, and the platform must not publish what it answered.
    Anybody sees ``reply_excerpt``, the start of a faulty reply.  The bodies of the
    others' calls are not even read, and one answer carries at most
    :data:`ANSWER_BODY_CHARS` characters of bodies (422 beyond, saying how many calls
    fit).  A short log is read and answered at once; a long one, or long bodies, take the
    request's place (:class:`~merknera.work.Place`) before their bodies are read, are
    decoded and encoded off the event loop, and sent a piece at a time.
    """
    game_id = _path_id(request)
    after, limit = MOVES_AFTER.read(request), MOVES_LIMIT.read(request)
    assert after is not None
    asking = await viewer(request)
    db = request.app[DB_KEY]()
    calls_of = None
    if not asking.admin:
        owners = await seat_owners(db, game_id)
        calls_of = frozenset(seat for seat, owner in owners.items()
                             if asking.sees_calls_of(owner))
    try:
        size = None if calls_of == frozenset() else await db.read(functools.partial(
            calls_size, game_id=game_id, calls_of=calls_of, most_chars=ANSWER_BODY_CHARS,
            after=after, limit=limit))
        read = functools.partial(read_game, game_id=game_id, calls_of=calls_of, after=after,
                                 limit=limit, size=size)
        if size is None or (size.calls <= INLINE_CALLS and size.chars <= INLINE_BODY_CHARS):
            stored = await db.read(read)  # no bodies, or short ones: a short read
            if stored is None:
                raise _not_found(f"no game with id {game_id}")
            made = functools.partial(_game_json, stored, asking.admin)
            if len(stored.move_rows) <= INLINE_CALLS:
                return await send(request, made(UNLIMITED), charset="utf-8")
            async with request.app[WORK_KEY].place(_client(request)) as place:
                return await send(request, await place.run(made), charset="utf-8")
        async with request.app[WORK_KEY].place(_client(request)) as place:
            async with place.reading():
                stored = await db.read(read)
            if stored is None:
                raise _not_found(f"no game with id {game_id}")
            made = functools.partial(_game_json, stored, asking.admin)
            return await send(request, await place.run(made), charset="utf-8")
    except BodiesTooLongError as exc:
        raise web.HTTPUnprocessableEntity(text=error_text(str(exc)),
                                          content_type="application/json") from None
    except BusyError as exc:
        raise busy(exc) from None
    except TimeLimitError:
        raise web.HTTPServiceUnavailable(
            text=error_text(f"game {game_id}'s calls take longer to decode than one "
                            "request may make the platform work: ask for fewer at a "
                            "time (limit, after)"),
            content_type="application/json", headers={"Retry-After": "1"}) from None


INLINE_CALLS = 200
"""Calls of a move log few enough to decode and encode on the event loop itself (a 9x9
Hexagons game's, without their bodies)."""
INLINE_BODY_CHARS = 64 * 1024
"""Characters of the calls' bodies few enough to decode on the event loop itself: a game's
answer that is larger, or has more calls, is made by a worker."""
ANSWER_BODY_CHARS = 4 * 1024 * 1024
"""Characters of the calls' bodies one answer may carry (every call of a 9x9 Hexagons game,
requests and replies, or 64 of the longest replies a bot may send)."""


def _game_json(stored: StoredGame, admin: bool, deadline: Deadline) -> list[bytes]:
    """The game as JSON, in pieces of at most :data:`~merknera.guard.streams.PIECE` bytes
    (but for a single call longer than that), hiding from others what only the bots'
    owners (and the admin) may see (CPU work for a long game: done by a worker)."""
    game = stored.summary()
    if stored.running and not admin:
        game["seed"] = None  # it gives the dice and the tile bag to come
    game["moves"] = []
    # Move by move, as json.dumps(game) would write it: no one call holds the GIL long.
    head = json.dumps(game)
    pieces: list[bytes] = []
    piece = [head[:-len("[]}")] + "["]
    size = len(piece[0])  # characters: bytes too (json.dumps writes ASCII)
    for number, move in enumerate(stored.moves(deadline)):
        if stored.running and not stored.shows_calls_of(move["seat"]):
            _hide_secrets(game["game"], move)
        part = (", " if number else "") + json.dumps(move)
        if piece and size + len(part) > PIECE:
            pieces.append("".join(piece).encode("utf-8"))
            piece, size = [], 0
        piece.append(part)
        size += len(part)
    piece.append("]}")
    pieces.append("".join(piece).encode("utf-8"))
    return pieces


def _in_pieces(data: bytes) -> list[memoryview]:
    """``data`` cut into pieces of :data:`~merknera.guard.streams.PIECE` bytes for
    :func:`send` (views of it: nothing is copied)."""
    view = memoryview(data)
    return [view[at:at + PIECE] for at in range(0, len(view), PIECE)]


async def send(request: web.Request, pieces: Sequence[bytes | memoryview],
               charset: str | None = None, headers: Mapping[str, str] | None = None
               ) -> web.StreamResponse:
    """An answer of JSON made of ``pieces``: at once when short, else a piece at a time,
    each within the send timeout (:func:`~merknera.guard.streams.in_time`): a client that
    does not take its answer has its connection reset, so that what is queued for it goes
    with it."""
    size = sum(len(piece) for piece in pieces)
    if size <= PIECE:
        return web.Response(body=b"".join(pieces), content_type="application/json",
                            charset=charset, headers=headers)
    response = web.StreamResponse(headers=headers)
    response.content_type = "application/json"
    if charset is not None:
        response.charset = charset
    response.content_length = size
    await response.prepare(request)
    if request.method == "HEAD":
        return response
    timeout = request.app[GUARD_KEY].config.limits.stream_send_timeout
    with contextlib.suppress(ConnectionResetError):  # the client has gone, or was cut off
        for piece in pieces:
            await in_time(response.write(piece), timeout, request.transport)
    return response


def _client(request: web.Request) -> str:
    return request.app[GUARD_KEY].client(request)


def busy(exc: BusyError) -> web.HTTPException:
    """The answer to a request whose work was refused: 429 (the client has its share of
    such work under way) or 503 (the platform has as much as it may), with
    ``Retry-After``."""
    kind = web.HTTPTooManyRequests if exc.status == 429 else web.HTTPServiceUnavailable
    return kind(text=error_text(exc.message), content_type="application/json",
                headers=exc.answer_headers())


def _hide_secrets(mnemonic: str, move: dict[str, Any]) -> None:
    """While a game runs, nobody may learn what its players cannot: what a move hid (the
    tiles of an exchange), what a refused move said (it may name the bot's rack)."""
    rules = REGISTRY.get(mnemonic)
    if move["fault"] is not None:
        move["fault_detail"] = replay.fault_summary(move["fault"])
        move["reply_excerpt"] = None
    elif rules is not None:
        move["move"] = rules.public_move(move["move"])


@routes.get("/api/leaderboard")
async def leaderboard_index(request: web.Request) -> web.Response:
    """Current bots of one game ranked by rating (the conservative estimate mu - 3 sigma),
    each with its 95% interval, its statistically tied band, and its W/D/L record and score
    (a win is 1 point, a draw 1/2)."""
    game = GAME_REQUIRED.read(request)
    assert game is not None
    return web.json_response({"game": game, "bots": await leaderboard(request.app[DB_KEY](), game)})


@routes.get("/api/head-to-head")
async def head_to_head_index(request: web.Request) -> web.Response:
    """Two bots' finished games against each other: ``?a=ID&b=ID`` (a's view; a bot and
    itself have played none)."""
    first, second = BOT_A.read(request), BOT_B.read(request)
    assert first is not None and second is not None
    db = request.app[DB_KEY]()
    for bot_id in (first, second):
        if await bot_store.get(db, bot_id) is None:
            raise _not_found(f"no bot with id {bot_id}")
    return web.json_response(await stats.head_to_head(db, first, second))


@routes.get("/api/tournaments")
async def tournaments_index(request: web.Request) -> web.Response:
    """Every tournament, newest first."""
    found = await request.app[DB_KEY]().read(tournament_store.listing)
    return web.json_response({"tournaments": found})


@routes.get("/api/tournaments/{id}")
async def tournament_detail(request: web.Request) -> web.Response:
    """A tournament: entrants, games by round, byes, and the table."""
    tournament_id = _path_id(request)
    found = await views.tournament_detail(request.app[DB_KEY](), tournament_id)
    if found is None:
        raise _not_found(f"no tournament with id {tournament_id}")
    return web.json_response(found)


@routes.get("/api/games/{id}/replay")
async def game_replay(request: web.Request) -> web.StreamResponse:
    """A game move by move for viewers: the starting state, then a frame per row of the
    move log with the state after it (while the game runs, what players may not know is
    hidden): keyframes and patches, or every state whole with ``?states=full`` (of a
    running game, while it has at most :data:`~merknera.web.replays.FULL_RUNNING_FRAMES`
    frames: 409 beyond).  The frames are made once per game and extended as it goes on
    (:mod:`merknera.web.replays`), off the event loop when there are more than a few; a
    replay not kept already is made and sent in the request's place
    (:class:`~merknera.work.Place`)."""
    game_id = _path_id(request)
    states = replay_states(request)
    replays = request.app[REPLAYS_KEY]
    encoded = replays.cached(game_id, states)
    if encoded is not None:
        return await _send_replay(request, encoded)
    header = await load_replay_header(request, game_id)
    try:
        async with request.app[WORK_KEY].place(_client(request)) as place:
            encoded = await replays.replay(request.app[DB_KEY](), header, states, place)
            return await _send_replay(request, encoded)
    except BusyError as exc:
        raise busy(exc) from None
    except TimeLimitError:
        raise still_building() from None
    except RunningFullError as exc:
        raise web.HTTPConflict(text=error_text(str(exc)),
                               content_type="application/json") from None


async def _send_replay(request: web.Request, encoded: replay.EncodedReplay
                       ) -> web.StreamResponse:
    if accepts_gzip(request):
        return await send(request, _in_pieces(encoded.gzipped),
                          headers={"Content-Encoding": "gzip", "Vary": "Accept-Encoding"})
    return await send(request, _in_pieces(encoded.plain), headers={"Vary": "Accept-Encoding"})


def still_building() -> web.HTTPServiceUnavailable:
    """The answer to a request whose replay took longer to build than one request may
    make the platform work (what was built is kept, so asking again goes on from there)."""
    return web.HTTPServiceUnavailable(
        text=error_text("the game's replay is still being built; ask again"),
        content_type="application/json", headers={"Retry-After": "1"})


def replay_states(request: web.Request) -> replay.States:
    """How the frames asked for carry their states: ``?states=delta`` (the default) or
    ``full``."""
    return replay.States(STATES.read(request))


async def load_replay_header(request: web.Request, game_id: int) -> replay.GameHeader:
    """The game's replay header; 404 when there is no such game or it is not hosted."""
    try:
        header = await request.app[DB_KEY]().read(functools.partial(
            replay.load_header, game_id=game_id, games=request.app[GAMES_KEY]()))
    except replay.NotHostedError as exc:
        raise _not_found(str(exc)) from None
    if header is None:
        raise _not_found(f"no game with id {game_id}")
    return header


@routes.get("/api/games-hosted")
async def games_hosted(request: web.Request) -> web.Response:
    """The games this platform hosts."""
    return web.json_response({"games": [
        {"mnemonic": g.mnemonic, "name": g.name, "prefix": g.calls.prefix, "min_seats": g.min_seats,
         "max_seats": g.max_seats} for g in REGISTRY.values()]})

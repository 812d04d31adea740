"""The JSON results API: bots and their ratings, games with their move logs, leaderboards,
a bot's own log.

Bad query values get 400 and unknown ids 404, each with ``{"error": "<what was wrong>"}``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from merknera.games import REGISTRY, AnyGame
from merknera.guard import GUARD_KEY
from merknera.store import Database, logs, stats, users
from merknera.store import bots as bot_store
from merknera.store import tournaments as tournament_store
from merknera.store.games import GameStatus
from merknera.store.results import (
    GameFilter,
    get_bot,
    get_game,
    leaderboard,
    list_bots,
    list_games,
    move_log,
    seat_owners,
)
from merknera.web import replay, views
from merknera.web.admin import OPS_KEY, is_admin_token
from merknera.web.params import bearer_token, whole_number
from merknera.web.query import FLAG, ChoiceParam, IntParam, error_text

DB_KEY: web.AppKey[Callable[[], Database]] = web.AppKey("database")
"""How handlers reach the store: set once when the app is built, before the store opens."""
GAMES_KEY: web.AppKey[Callable[[], dict[str, AnyGame]]] = web.AppKey("games")
"""The hosted games set up with their assets (known once the platform has started)."""
PUBLIC_URL_KEY: web.AppKey[str] = web.AppKey("public_url", str)
"""The configured public base URL ("" when bots and people reach the platform as they
address it)."""
REPLAYS_KEY: web.AppKey[replay.ReplayCache] = web.AppKey("replays", replay.ReplayCache)
"""Finished games' replays, encoded."""

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
    viewer = await _viewer(request, refusal="only the bot's owner may read its log")
    db = request.app[DB_KEY]()
    bot = await bot_store.get(db, bot_id)
    if bot is None:
        raise _not_found(f"no bot with id {bot_id}")
    if viewer.user_id != bot.user_id:
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


async def _viewer(request: web.Request,
                  refusal: str = "that token is not a current token") -> Viewer:
    """The viewer a request's token makes it (anybody without one).

    A wrong token is answered 403 with ``refusal``, and counts against the client: one
    that sends many is slowed down (429).
    """
    token = bearer_token(request)
    if not token:
        return Viewer()
    admin_token, db = request.app[OPS_KEY]().admin_token, request.app[DB_KEY]()

    async def lookup(given: str) -> Viewer | None:
        if is_admin_token(admin_token, given):
            return Viewer(admin=True)
        user = await users.find_user_by_token(db, given)
        return None if user is None else Viewer(user_id=user.id)

    viewer = await request.app[GUARD_KEY].verify_token(request, token, lookup)
    if viewer is None:
        raise web.HTTPForbidden(text=error_text(refusal), content_type="application/json")
    return viewer


@routes.get("/api/games/{id}")
async def game_detail(request: web.Request) -> web.Response:
    """A game: seats, outcome and reason, and every move with its latency and fault.

    The bodies of the calls (``request``, ``reply``) are shown only to the owner of the
    bot called (``Authorization: Bearer <token>``) and to the admin: a bot's endpoint may
    be anything that answers HTTP, and the platform must not publish what it answered.
    Anybody sees ``reply_excerpt``, the start of a faulty reply.
    """
    game_id = _path_id(request)
    viewer = await _viewer(request)
    db = request.app[DB_KEY]()
    game = await get_game(db, game_id)
    if game is None:
        raise _not_found(f"no game with id {game_id}")
    owners = await seat_owners(db, game_id)
    running = game["status"] != "FINISHED"
    if running and not viewer.admin:
        game["seed"] = None  # it gives the dice and the tile bag to come
    for move in game["moves"]:
        if viewer.sees_calls_of(owners.get(move["seat"])):
            continue
        move["request"] = move["reply"] = None
        if running:
            _hide_secrets(game["game"], move)
    return web.json_response(game)


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
async def game_replay(request: web.Request) -> web.Response:
    """A game move by move for viewers: the starting state, then a frame per row of the
    move log with the state after it (while the game runs, what players may not know is
    hidden): keyframes and patches, or every state whole with ``?states=full``.  Finished
    games' replays are cached; replays are built off the event loop."""
    game_id = _path_id(request)
    states = replay_states(request)
    cache = request.app[REPLAYS_KEY]
    encoded = cache.get((game_id, states))
    if encoded is None:
        db = request.app[DB_KEY]()
        header = await load_replay_header(request, game_id)
        rows = await db.read(functools.partial(move_log, game_id=game_id))
        encoded = await asyncio.to_thread(replay.encode, header, rows, states)
        if header.start.status is GameStatus.FINISHED:
            cache.put((game_id, states), encoded)
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        return web.Response(body=encoded.gzipped, content_type="application/json",
                            headers={"Content-Encoding": "gzip", "Vary": "Accept-Encoding"})
    return web.Response(body=encoded.plain, content_type="application/json",
                        headers={"Vary": "Accept-Encoding"})


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

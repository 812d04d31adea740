"""People play bots in the browser: a JSON API on the main site for two-seat games whose
moves are the game's own move JSON (what a bot replies to ``NextMove``), used by the play
page (``/play``) for tic-tac-toe.

==========================================  ===============================================
``GET /api/play/opponents?game=G``          the bots a person may play at ``G`` now
                                            (online, called: not guests nor connected
                                            clients)
``POST /api/play``                          ``{"game", "opponent": <bot id>, "name"?,
                                            "seat"?}``: 201 and the game (:func:`_view`)
                                            once it is the person's turn or over; the
                                            person is seat 0 (moves first) unless ``seat``
                                            is 1
``GET /api/play/{token}``                   the game now; with ``?wait=1`` once it is the
                                            person's turn or over
``POST /api/play/{token}/moves``            ``{"move": <move JSON>}``: 200 and the game once
                                            it is the person's turn again or over; a move
                                            that is malformed or illegal is 400 and never
                                            reaches the game
``GET /api/play/kalaha/{board}``            the game of a Kalaha board made at the Kalaha
                                            listener (its id, its moves, its end): read only
==========================================  ===============================================

Every game is a platform game (stored, listed, replayed on ``/games/<id>``), rated unless
the person gives no name and plays as ``anonymous``.  The token is a secret UUID; the game
is stored under its SHA-256 (the handle), so neither the store nor any log holds the token,
and only who holds it can move.  A waiting request returns after :data:`WAIT` seconds at
most (the game is then not the person's turn yet: ask again with ``?wait=1``).  A person
who makes no move within ``person_turn_limit`` loses on time.  What one address may keep
open is bounded by :class:`~merknera.gateways.tables.Tables` (429).
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Callable
from typing import Any

import aiohttp_jinja2
from aiohttp import web
from yarl import URL

from merknera.config import Config
from merknera.games import CHANCE, REGISTRY, AnyGame, JSONObject, MoveError, Seat
from merknera.gateways.guests import (
    GuestNameTakenError,
    GuestRefusedError,
    GuestThrottledError,
    is_anonymous,
    telling,
)
from merknera.gateways.tables import Table, Tables
from merknera.guard import GUARD_KEY
from merknera.guard.clients import requested_host
from merknera.names import (
    LONGEST_NAME,
    LONGEST_SECRET,
    SHORTEST_SECRET,
    ClaimFieldError,
    Unnamed,
    read_claim,
)
from merknera.protocol.bot_protocols import BotProtocol
from merknera.refused import RefusedError
from merknera.seats.polled import PolledHold
from merknera.store.results import game_summary
from merknera.web.params import BodyRefusedError, json_integer, json_object
from merknera.web.query import FLAG, ChoiceParam, error_text
from merknera.web.site import CSP

TABLES_KEY: web.AppKey[Callable[[], Tables]] = web.AppKey("tables")
"""How handlers reach the platform's tables (known once the platform has started)."""

PLAYABLE = ("TICTACTOE", "KALAHA")
"""The games a person may play through this API: two seats, no assets, a guest protocol
that carries them."""
KALAHA = "KALAHA"
MAX_BODY = 4096
"""Largest request body (a move is a few dozen bytes)."""
WAIT = 25.0
"""The longest a request waits for the person's turn (a browser's request must not hang
for the minutes a bot may take in all)."""
OUTCOMES = {"WIN": "won", "LOSS": "lost", "DRAW": "draw"}
_ORIGIN = re.compile(r"https?://[A-Za-z0-9.\-]+(:\d+)?|https?://\[[0-9A-Fa-f:.]+\](:\d+)?")
"""What a Kalaha listener's origin may look like (it goes into a page's CSP)."""
_DESCRIBED = "play.described"
"""Where a table keeps its moves described so far (:func:`_moves`)."""

routes = web.RouteTableDef()

PLAY_GAME = ChoiceParam("game", "The game", PLAYABLE, required=True)
WAIT_PARAM = ChoiceParam("wait", f"1: once it is your turn or over (at most {WAIT:.0f} s)",
                         FLAG, default="0")
UNUSABLE_NAME = ("A string that is no name: characters that show nothing or reorder text, "
                 f"letters of scripts that can look alike mixed, more than {LONGEST_NAME} "
                 "characters (a name must be one a bot could have); or a secret shorter than "
                 f"{SHORTEST_SECRET} characters or longer than {LONGEST_SECRET}, or given "
                 "twice (after # and on its own) and not the same")
"""Why a name the document's schema lets through may still be refused (422)."""


class _Refusal(web.HTTPError):
    """A refusal of any status with ``{"error": message}`` (the API's error body)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None
                 ) -> None:
        self.status_code = status
        super().__init__(text=error_text(message),
                         content_type="application/json", headers=headers)


def _refused(exc: RefusedError) -> _Refusal:
    """A gateway's refusal in the API's error body, with its headers (Retry-After)."""
    return _Refusal(exc.status, exc.message, exc.answer_headers() or None)


def token_handle(token: str) -> str:
    """The handle a game played with ``token`` is stored under (the token's SHA-256)."""
    return "play-" + hashlib.sha256(token.encode("ascii")).hexdigest()


def _uuid(raw: str, what: str) -> str:
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise _Refusal(404, f"no game is played with that {what}") from None


def _tables(request: web.Request) -> Tables:
    return request.app[TABLES_KEY]()


def _game(tables: Tables, mnemonic: object) -> AnyGame:
    if not isinstance(mnemonic, str) or mnemonic not in PLAYABLE:
        raise _Refusal(400, f"game must be one of {', '.join(PLAYABLE)}, not "
                            f"{json.dumps(mnemonic)[:40]}")
    return tables.arena.games[mnemonic]


async def _body(request: web.Request) -> JSONObject:
    try:
        return await json_object(request, MAX_BODY)
    except BodyRefusedError as exc:
        raise _Refusal(exc.status, exc.message) from None


# -- the page -------------------------------------------------------------------------------


@routes.get("/play", name="play")
async def page(request: web.Request) -> web.StreamResponse:
    """The play page: tic-tac-toe through this API, Kalaha through the Kalaha listener (when
    it is served), whose origin the page's Content-Security-Policy then lets it call."""
    config = _tables(request).arena.config
    kalaha = kalaha_url(config, request)
    games = [{"mnemonic": "TICTACTOE", "name": REGISTRY["TICTACTOE"].name, "via": "api"}]
    if kalaha is not None:
        games.append({"mnemonic": KALAHA, "name": REGISTRY[KALAHA].name, "via": "kalaha"})
    response = aiohttp_jinja2.render_template(
        "play.html", request, {"games": games, "kalaha_url": kalaha,
                               "turn_limit": config.guests.person_turn_limit})
    if kalaha is not None:
        response.headers["Content-Security-Policy"] = CSP.replace(
            "connect-src 'self'", f"connect-src 'self' {kalaha}")
    return response


def kalaha_url(config: Config, request: web.BaseRequest) -> str | None:
    """The Kalaha listener's base URL as a browser reaches it: the public URL's host, or
    else the host the page was asked for, on ``kalaha_port`` (over TLS when the listeners
    speak it); None when there is no listener."""
    if not config.kalaha.port:
        return None
    try:
        listeners = config.listeners
        host = URL(listeners.public_url).host if listeners.public_url else requested_host(request)
        url = str(URL.build(scheme=listeners.scheme, host=host or listeners.host,
                            port=config.kalaha.port))
    except ValueError:
        return None
    return url if _ORIGIN.fullmatch(url) else None


# -- the API ----------------------------------------------------------------------------------


@routes.get("/api/play/opponents")
async def opponents(request: web.Request) -> web.Response:
    """The bots of a game a person may play now, by name."""
    tables = _tables(request)
    mnemonic = PLAY_GAME.read(request)
    assert mnemonic is not None
    game = tables.arena.games[mnemonic]
    presence = tables.arena.presence
    found = sorted((bot for bot_id in presence.online_bots(game.mnemonic)
                    if (bot := presence.bot(bot_id)) is not None
                    and not bot.protocol.connects), key=lambda bot: (bot.name.casefold(), bot.id))
    return web.json_response({"game": game.mnemonic, "bots": [
        {"id": bot.id, "name": bot.name, "version": bot.version, "owner": bot.owner}
        for bot in found]})


@routes.post("/api/play")
async def start(request: web.Request) -> web.Response:
    """Start a game of a person against a bot."""
    tables = _tables(request)
    body = await _body(request)
    game = _game(tables, body.get("game"))
    opponent = json_integer(body.get("opponent"))
    chosen = json_integer(body.get("seat", 0))
    if opponent is None:
        raise _Refusal(400, "opponent must be a bot's id (an integer)")
    try:
        claim = read_claim(body, Unnamed.LEFT_OUT)
    except ClaimFieldError as exc:
        raise _Refusal(400, str(exc)) from None
    if chosen not in (0, 1):
        raise _Refusal(400, "seat must be 0 (you move first) or 1 (the bot moves first)")
    seat: Seat = 0 if chosen == 0 else 1
    bot = await tables.opponent(game.mnemonic, opponent)
    if bot is None:
        raise _Refusal(409, f"bot {opponent} is not an online {game.name} bot that "
                            "people may play now")
    client = request.app[GUARD_KEY].client(request)
    try:
        tables.room_for(client)  # before a guest is made for the request
        player = await tables.guest(claim, game.mnemonic, client)
    except RefusedError as exc:
        raise _refused(exc) from None
    except GuestThrottledError as exc:
        raise _refused(RefusedError(429, str(exc), exc.retry_after)) from None
    except GuestNameTakenError as exc:
        raise _Refusal(409, f"that name cannot be used now: {exc}") from None
    except GuestRefusedError as exc:  # a string, but not a name (see UNUSABLE_NAME)
        raise _Refusal(422, f"that name cannot be used: {exc}") from None
    token = str(uuid.uuid4())
    seated = [player.bot, bot] if seat == 0 else [bot, player.bot]
    try:
        table = await tables.start(client, game.mnemonic,
                                   token_handle(token), seated, [seat],
                                   tables.arena.config.guests.person_turn_limit,
                                   data={"play": seat},
                                   addresses=[client if s == seat else None for s in (0, 1)])
    except RefusedError as exc:
        raise _refused(telling(exc, player)) from None
    await table.polled[seat].wait(-1, WAIT)
    started = await _view(tables, game, table, seat, token)
    # Told once: only its hash is kept (see merknera.gateways.guests.guest).
    started["secret"] = player.new_secret
    return web.json_response(started, status=201, headers=player.headers)


@routes.get("/api/play/kalaha/{board}")
async def kalaha_board(request: web.Request) -> web.Response:
    """A Kalaha board's game (the board made at the Kalaha listener), for its page."""
    tables = _tables(request)
    handle = _uuid(request.match_info["board"], "board")
    game = tables.arena.games[KALAHA]
    table = tables.find(KALAHA, handle)
    if table is None:
        return web.json_response(await _stored(tables, game, handle, None,
                                               request.app[GUARD_KEY].client(request)))
    return web.json_response(await _view(tables, game, table, min(table.polled), None))


@routes.get("/api/play/{token}")
async def status(request: web.Request) -> web.Response:
    """The game now (``?wait=1``: once it is the person's turn, or over)."""
    tables = _tables(request)
    token = _uuid(request.match_info["token"], "token")
    found = _table(tables, token)
    if found is None:
        for mnemonic in PLAYABLE:
            game = tables.arena.games[mnemonic]
            if await tables.stored(mnemonic, token_handle(token)) is not None:
                return web.json_response(await _stored(
                    tables, game, token_handle(token), token,
                    request.app[GUARD_KEY].client(request)))
        raise _Refusal(404, "no game is played with that token")
    game, table, seat = found
    if WAIT_PARAM.read(request) == "1":
        await table.polled[seat].wait(-1, WAIT)
    return web.json_response(await _view(tables, game, table, seat, token))


@routes.post("/api/play/{token}/moves")
async def move(request: web.Request) -> web.Response:
    """The person's move, checked by the game's rules before the game is given it."""
    tables = _tables(request)
    token = _uuid(request.match_info["token"], "token")
    body = await _body(request)
    found = _table(tables, token)
    if found is None:
        if any([await tables.stored(m, token_handle(token)) for m in PLAYABLE]):
            raise _Refusal(409, "the game is over")
        raise _Refusal(404, "no game is played with that token")
    game, table, seat = found
    if "move" not in body:
        raise _Refusal(400, 'the body must be {"move": <your move as a bot would send it>}')
    mine = table.polled[seat]
    state = None if mine.seen is None else mine.seen.state
    if mine.ended or table.ended:
        raise _Refusal(409, "the game is over")
    if state is None or not mine.to_move:
        raise _Refusal(409, "it is not your turn: wait for the bot's move (GET with "
                            "?wait=1)")
    # The document cannot say what a move of the token's game looks like: a value that is
    # no move of it is 422 (the body was well formed), a move the position forbids 409.
    try:
        parsed = game.parse_move(body["move"])
    except MoveError as exc:
        raise _Refusal(422, f"not a move of {game.name}: {exc}") from None
    try:
        game.step(state, seat, parsed)
    except MoveError as exc:
        raise _Refusal(409, f"an illegal move: {exc}") from None
    wire = game.move_to_wire(parsed)
    version = mine.version
    if not mine.send(wire, json.dumps(wire)):
        raise _Refusal(409, "it is not your turn: wait for the bot's move")
    await mine.wait(version, WAIT)
    return web.json_response(await _view(tables, game, table, seat, token))


def _table(tables: Tables, token: str) -> tuple[AnyGame, Table, Seat] | None:
    """The game played with ``token``, while it is in memory."""
    handle = token_handle(token)
    for mnemonic in PLAYABLE:
        table = tables.find(mnemonic, handle)
        if table is not None and isinstance(table.data.get("play"), int):
            return tables.arena.games[mnemonic], table, table.data["play"]
    return None


# -- what the person is shown ----------------------------------------------------------------


async def _view(tables: Tables, game: AnyGame, table: Table, seat: Seat,
                token: str | None) -> dict[str, Any]:
    """The game for the person at ``seat``:

    ``game`` and ``name`` (the game's mnemonic and name), ``game_id`` and ``url`` (its page),
    ``token``, ``seat``, ``players`` (each seat's ``name``, ``bot_id``, ``version`` and
    whether it is ``you``), ``rated``, ``turn_limit`` (seconds per move), ``view`` (the
    game's NextMove params for the seat: what a bot would be shown; null before the game
    opens), ``board`` (the spectator's view of the position, as replays draw it),
    ``to_move`` (the seat to move, null when nobody is), ``your_turn``, ``legal`` (your
    legal moves as move JSON, when it is your turn), ``moves`` (every move so far: ``seat``,
    ``move``, ``text``), ``over``, and once it is over ``outcome`` (``won``, ``lost``,
    ``draw``, or ``none`` for a game that ended without a result), ``reason`` and
    ``detail``.
    """
    mine = table.polled[seat]
    seen = mine.seen
    state = None if seen is None else seen.state
    over = mine.ended or table.ended
    your_turn = mine.to_move and not over and state is not None
    view: dict[str, Any] = {
        **_header(game, table.game_id, token, seat, table.bots, tables),
        "view": mine.view,
        "board": None if state is None else game.spectator_view(state, over),
        "to_move": None if state is None or over else _seat_or_none(game.to_move(state)),
        "your_turn": your_turn,
        "legal": [game.move_to_wire(m) for m in game.legal_moves(state, seat)]
        if your_turn else [],
        "moves": _moves(game, table, mine),
        "over": over,
        "outcome": None, "reason": None, "detail": None,
    }
    if over:
        view.update(await _outcome(tables, table.game_id, seat))
    return view


def _header(game: AnyGame, game_id: int, token: str | None, seat: Seat,
            seated: tuple[Any, ...], tables: Tables) -> dict[str, Any]:
    return {"game": game.mnemonic, "name": game.name, "game_id": game_id,
            "url": f"/games/{game_id}", "token": token, "seat": seat,
            "players": [{"seat": s, "name": bot.name, "bot_id": bot.id,
                         "version": bot.version, "you": s == seat}
                        for s, bot in enumerate(seated)],
            "rated": not any(is_anonymous(bot) for bot in seated),
            "turn_limit": tables.arena.config.guests.person_turn_limit}


def _seat_or_none(seat: Seat | None) -> Seat | None:
    return None if seat is None or seat == CHANCE else seat


def _moves(game: AnyGame, table: Table, seat: PolledHold) -> list[dict[str, Any]]:
    """Every move the seat was shown, each described by the game (worked out once: the
    table keeps them with the state after the last)."""
    if seat.opening is None:
        return []  # the game has not opened yet
    done: tuple[int, object, list[dict[str, Any]]] = table.data.get(
        _DESCRIBED, (0, seat.opening, []))
    count, state, described = done
    for mover, wire in seat.moves[count:]:
        played = CHANCE if mover is None else mover
        text = json.dumps(wire)
        if state is not None:
            try:
                parsed = game.parse_logged(played, wire)
                text = game.describe_move(state, played, parsed)
                state = game.step(state, played, parsed).state
            except (MoveError, ValueError):
                state = None  # described no further than as JSON
        described.append({"seat": mover, "move": wire, "text": text})
    table.data[_DESCRIBED] = (len(seat.moves), state, described)
    return list(described)


async def _outcome(tables: Tables, game_id: int, seat: Seat) -> dict[str, Any]:
    """How the stored game ended for the seat (``none`` while the store has no result)."""
    summary = await game_summary(tables.arena.db, game_id)
    if summary is None or summary["status"] != "FINISHED":
        return {"outcome": "none", "reason": None,
                "detail": "the game stopped before it ended (the platform is stopping)"}
    result = next((s["result"] for s in summary["seats"] if s["seat"] == seat), None)
    return {"outcome": OUTCOMES.get(result or "", "none"), "reason": summary["reason"],
            "detail": summary["detail"]}


async def _stored(tables: Tables, game: AnyGame, handle: str, token: str | None,
                  client: str) -> dict[str, Any]:
    """A game no longer in memory (over for a while, or from before a restart), from the
    store (rebuilt in ``client``'s place)."""
    try:
        found = await tables.replayed(game.mnemonic, handle, client)
    except RefusedError as exc:  # the address's share, or the platform, is busy
        raise _refused(exc) from None
    if found is None:
        raise _Refusal(404, "no game is played with that " + ("token" if token else "board"))
    record, state, bots = found.record, found.state, found.bots
    seat = next((s for s, bot in enumerate(bots) if bot.protocol is BotProtocol.GUEST), 0)
    view = {**_header(game, record.id, token, seat, bots, tables), "view": None,
            "board": game.spectator_view(state, True), "to_move": None, "your_turn": False,
            "legal": [], "moves": [], "over": True}
    view.update(await _outcome(tables, record.id, seat))
    return view

"""The OpenAPI 3.1 document of the JSON API, served at ``/api/openapi.json``.

Written by hand, next to the handlers it describes; the query parameters come from the
objects the handlers read them with (:mod:`merknera.web.query`).  A test checks that every
route under ``/api/`` is in it with its method, and nothing else is; schemathesis checks
the rest against a running platform (``tests/e2e/test_e2e_openapi.py``): every bound, enum
and refusal, every answer's shape, every event of the event streams.
"""

from __future__ import annotations

from aiohttp import web

from merknera import work
from merknera.names import LONGEST_SECRET, SHORTEST_SECRET
from merknera.openapi import JSONSchema, answer, document, refusals
from merknera.scheduler.tournaments import FORMATS, MAX_CYCLES
from merknera.store.db import StoreUnavailableError
from merknera.store.games import GameStatus
from merknera.web import api, live, play, replays
from merknera.web.openapi_schemas import GAME as GAME_ENUM
from merknera.web.openapi_schemas import PLAYABLE_GAME, SCHEMAS, ref
from merknera.web.play import UNUSABLE_NAME
from merknera.web.query import MAX_ID
from merknera.web.replay import States

routes = web.RouteTableDef()



_ID = {"name": "id", "in": "path", "required": True,
       "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ID}}
_NAME = {"name": "name", "in": "path", "required": True, "schema": {"type": "string"},
         "description": "The user's name"}
_TOKEN = {"name": "token", "in": "path", "required": True,
          "schema": {"type": "string", "format": "uuid"},
          "description": "The secret token POST /api/play gave"}


def _ok(description: str, schema: JSONSchema) -> JSONSchema:
    return answer(200, description, schema)


def _errors(*statuses: int) -> JSONSchema:
    return refusals(_API_REFUSALS, ref("Error"), statuses)


def _play_errors(*statuses: int) -> JSONSchema:
    return refusals(_PLAY_REFUSALS, ref("Error"), statuses)


_UNAVAILABLE = ("the arena's database cannot be reached (it may be restarting: "
                f"Retry-After is {StoreUnavailableError.retry_after} s)")


_NOT_JSON = ("The body is not typed application/json (Content-Type): a page of another origin "
             "cannot send that without asking first (CORS), and this site allows none")
_API_REFUSALS = {400: "A query value is not usable", 401: "No token was sent",
            403: "The token may not do this, or its user is suspended; or (a call without a "
                 "body) a page of another origin sent it (Origin)", 404: "No such id",
            409: "The change is not possible now",
            413: "The body is larger than the call takes",
            415: "A body not typed application/json (Content-Type; a call without a body "
                 "is fine)",
            422: "The terms are well formed but cannot be met (see the summary)",
            429: "Too many attempts (wrong tokens, open streams, answers that take a while "
                 f"to make: {work.PER_CLIENT} at once) from your address; Retry-After says "
                 "when to try again",
            503: f"Not now: {_UNAVAILABLE}; or (a live stream) too many live streams are "
                 "open; or the platform is making as many answers that take a while (a "
                 "replay, a game's calls) as it may at once, or this one waited longer for "
                 f"its turn ({work.WAIT_LIMIT:g} s) or took longer to make than one request "
                 "may (a replay goes on from there when asked again; a game's calls: ask "
                 "for fewer with limit)"}
_PLAY_REFUSALS = {400: "The request or the move is not usable (the move is not played)",
            404: "No game is played with that token",
            409: "Not now: not your turn, the game is over, or the bot is not online",
            413: "The body is too large",
            415: _NOT_JSON,
            422: "The name is a string but no name (see the name's description)",
            429: "Too many requests or open games from your address; Retry-After says when",
            503: f"Not now: too many games are open, or {_UNAVAILABLE}; Retry-After says "
                 "when"}


def _get(summary: str, ok: JSONSchema, *, parameters: list[JSONSchema] | None = None,
         errors: tuple[int, ...] = (), tag: str = "results",
         links: JSONSchema | None = None, reads_store: bool = True,
         conflict: str | None = None) -> JSONSchema:
    # Any request may be slowed down (429): the guard's rate applies to every client; and
    # one that reads the store is refused (503) while the store cannot be reached.
    # ``conflict``: when the request is refused with 409.
    ok = _linked(ok, links)
    always = (429, 503) if reads_store else (429,)
    responses = {**ok, **_errors(*sorted({*errors, *always}))}
    if conflict is not None:
        responses.update(answer(409, f"Not while the game runs: {conflict}", ref("Error")))
    return {"get": {"summary": summary, "tags": [tag], "parameters": parameters or [],
                    "responses": dict(sorted(responses.items()))}}


def _linked(ok: JSONSchema, links: JSONSchema | None) -> JSONSchema:
    """``ok`` (one response) with OpenAPI links: where the ids it gives lead."""
    if not links:
        return ok
    ((status, response),) = ok.items()
    return {status: {**response, "links": links}}


def _operation_id(method: str, path: str) -> str:
    """An operation's id, made of its method and path: ``get /api/bots/{id}`` is
    ``get-bots-id`` (what the document's links name)."""
    return "-".join([method, *(part.strip("{}") for part in path.split("/")[2:])])


BOT, BOT_LOG = _operation_id("get", "/api/bots/{id}"), _operation_id("get", "/api/bots/{id}/log")
GAMES, GAME = _operation_id("get", "/api/games"), _operation_id("get", "/api/games/{id}")
REPLAY = _operation_id("get", "/api/games/{id}/replay")
LIVE = _operation_id("get", "/api/games/{id}/live")
HEAD_TO_HEAD = _operation_id("get", "/api/head-to-head")
TOURNAMENT = _operation_id("get", "/api/tournaments/{id}")
CHALLENGE = _operation_id("get", "/api/challenges/{id}")
DUEL = _operation_id("get", "/api/duels/{id}")
PLAY_STATUS = _operation_id("get", "/api/play/{token}")
PLAY_MOVE = _operation_id("post", "/api/play/{token}/moves")
DISABLE = _operation_id("post", "/api/admin/bots/{id}/disable")
ENABLE = _operation_id("post", "/api/admin/bots/{id}/enable")
SUSPEND = _operation_id("post", "/api/admin/users/{name}/suspend")
UNSUSPEND = _operation_id("post", "/api/admin/users/{name}/unsuspend")


_PLAYED_WITH = "$response.body#/token"
"""Where a started game's token is in POST /api/play's answer."""


def _link(operation: str, **parameters: str) -> JSONSchema:
    """A link to ``operation`` (an operationId) with parameters taken from this response
    (runtime expressions such as ``$response.body#/bots/0/id``)."""
    return {"operationId": operation, "parameters": parameters}


def _event_stream(description: str, event: JSONSchema) -> JSONSchema:
    # Before OpenAPI 3.2's itemSchema, a text/event-stream's schema describes each event:
    # its fields (event, id, data), data's own media type and schema as JSON Schema's
    # contentMediaType and contentSchema.  Comment lines (": still here") are no events.
    return {"200": {"description": description,
                    "content": {"text/event-stream": {"schema": event}}}}


def _sse(name: str, data: JSONSchema, *, media_type: str = "application/json",
         with_id: bool = False) -> JSONSchema:
    """One kind of server-sent event: its name, an id when it has one, its data."""
    fields: JSONSchema = {
        "event": {"const": name},
        "data": {"type": "string", "contentMediaType": media_type, "contentSchema": data}}
    if with_id:
        fields["id"] = {"type": "string", "pattern": "^[0-9]+$",
                        "description": "The move number (what Last-Event-ID resumes after)"}
    return {"type": "object", "required": ["event", "data", *(["id"] if with_id else [])],
            "properties": fields}


def _admin(summary: str, *, method: str = "post", body: JSONSchema | None = None,
           parameters: list[JSONSchema] | None = None, created: bool = False,
           body_required: bool = True, unprocessable: bool = False,
           links: JSONSchema | None = None) -> JSONSchema:
    done = _linked(_ok("Done", {"type": "object"}), links)
    if created:
        done = {"201": {**done["200"], "description": "Created"}}
    refusals = (400, 401, 403, 404, 409, *((415,) if method == "post" else ()),
                *((422,) if unprocessable else ()), 429, 503)
    operation: JSONSchema = {
        "summary": summary, "tags": ["admin"], "security": [{"admin": []}],
        "parameters": parameters or [], "responses": {**done, **_errors(*refusals)}}
    if body is not None:
        operation["requestBody"] = {"required": body_required,
                                    "content": {"application/json": {"schema": body}}}
    return {method: operation}



def _owned(summary: str, *, body: JSONSchema | None, parameters: list[JSONSchema] | None = None,
           created: bool = False, links: JSONSchema | None = None) -> JSONSchema:
    """An operation an owner asks for with their API token."""
    done = _linked(_ok("Done", {"type": "object"}), links)
    if created:
        done = {"201": {**done["200"], "description": "Created"}}
    refusals = (400, 401, 403, 404, 409, *((413, 415) if body is not None else ()), 429, 503)
    operation: JSONSchema = {
        "summary": summary, "tags": ["challenges"], "security": [{"owner": []}],
        "parameters": parameters or [], "responses": {**done, **_errors(*refusals)}}
    if body is not None:
        operation["requestBody"] = {"required": True,
                                    "content": {"application/json": {"schema": body}}}
    return operation


_REASON: JSONSchema = {"type": "object", "properties": {
    "reason": {"type": "string", "description": "Why (kept to 500 characters; shown to the "
                                                "owner)"}}}

_GAME_EVENT: JSONSchema = {"oneOf": [
    _sse("frame", ref("Frame"), with_id=True),
    _sse("end", {"type": "object", "required": ["status", "error"], "properties": {
        "status": {"type": ["string", "null"], "enum": [*GameStatus.__members__, None]},
        "error": {"type": ["string", "null"],
                  "description": "Why the frames stopped early (a move that no longer "
                                 "replays), else null"}}})]}
_HOME_EVENT = _sse("home", {"type": "string"}, media_type="text/html")

DOCUMENT = document(
    "Merknera",
    "The results API of a Merknera arena: bots, games with their move logs and replays, "
    "ratings, tournaments, live events, and the admin calls. Bots speak JSON-RPC at POST "
    "/rpc (see /protocol).",
    tags=[{"name": "results"}, {"name": "live"}, {"name": "play"}, {"name": "challenges"},
          {"name": "admin"}, {"name": "nodes"}],
    components={
        "schemas": SCHEMAS,
        "securitySchemes": {
            "owner": {"type": "http", "scheme": "bearer",
                      "description": "A user's API token (merknera user add)"},
            "admin": {"type": "http", "scheme": "bearer",
                      "description": "The admin_token of the platform's config"}}},
    paths={
        "/api/bots": _get(
            "Bots with their records and ratings",
            _ok("Bots", {"type": "object", "properties": {
                "bots": {"type": "array", "items": ref("Bot")}}}),
            parameters=[api.GAME.parameter(), api.ALL_VERSIONS.parameter()], errors=(400,),
            links={"bot": _link(BOT, id="$response.body#/bots/0/id"),
                   "log": _link(BOT_LOG, id="$response.body#/bots/0/id"),
                   "headToHead": _link(HEAD_TO_HEAD, a="$response.body#/bots/0/id",
                                       b="$response.body#/bots/1/id"),
                   "games": _link(GAMES, bot="$response.body#/bots/0/id")}),
        "/api/bots/{id}": _get(
            "One bot version: record, rating history, versions, latest games, latency, "
            "faults by kind", _ok("The bot", ref("Bot")), parameters=[_ID], errors=(404,),
            links={"game": _link(GAME, id="$response.body#/games/0/id"),
                   "disable": _link(DISABLE, id="$request.path.id"),
                   "enable": _link(ENABLE, id="$request.path.id"),
                   "suspend": _link(SUSPEND, name="$response.body#/owner"),
                   "unsuspend": _link(UNSUSPEND, name="$response.body#/owner")}),
        "/api/bots/{id}/log": {"get": {
            "summary": "The bot's log, for its owner", "tags": ["results"],
            "security": [{"owner": []}],
            "parameters": [_ID, api.LOG_LIMIT.parameter(), api.BEFORE.parameter()],
            "responses": {**_ok("The log", {"type": "object"}),
                          **_errors(400, 401, 403, 404, 429, 503)}}},
        "/api/games": _get(
            "Games, newest first",
            _ok("Games", {"type": "object", "properties": {
                "games": {"type": "array", "items": ref("GameSummary")}}}),
            parameters=[api.GAME.parameter(), api.BOT.parameter(), api.STATUS.parameter(),
                        api.GAMES_LIMIT.parameter(), api.BEFORE.parameter()],
            errors=(400,),
            links={"game": _link(GAME, id="$response.body#/games/0/id"),
                   "replay": _link(REPLAY, id="$response.body#/games/0/id"),
                   "live": _link(LIVE, id="$response.body#/games/0/id"),
                   "bot": _link(BOT, id="$response.body#/games/0/seats/0/bot_id"),
                   "older": _link(GAMES, before="$response.body#/games/0/id")}),
        "/api/games/{id}": {"get": {
            "summary": "A game with every call of its move log, or those after a move "
                       "(after) and at most limit of them (the calls' bodies only for the "
                       "owner of the bot called and the admin; while it runs the seed and "
                       "the details of faults are hidden)",
            "tags": ["results"], "security": [{}, {"owner": []}, {"admin": []}],
            "parameters": [_ID, api.MOVES_AFTER.parameter(), api.MOVES_LIMIT.parameter()],
            "responses": dict(sorted({
                **_ok("The game", {"allOf": [ref("GameSummary"), {
                    "type": "object", "properties": {
                        "moves": {"type": "array", "items": ref("Move")}}}]}),
                **_errors(400, 403, 404, 429, 503),
                **answer(422, f"The calls asked for carry more than {api.ANSWER_BODY_CHARS:,} "
                              "characters of bodies (only the owner and the admin are sent "
                              "bodies): the error says how many fit; ask for those with "
                              "limit, then for the rest with after", ref("Error"))}.items()))}},
        "/api/games/{id}/replay": _get(
            "A game move by move for viewers: the starting state and a frame per move "
            "(a frame's state is the nearest whole one at or before it with the patches "
            "after it applied)",
            _ok("The replay", {"type": "object", "properties": {
                "id": {"type": "integer"}, "game": GAME_ENUM, "name": {"type": "string"},
                "status": {"type": "string"},
                "players": {"type": "array", "items": {"type": "string"}},
                "setup": {"type": "object"}, "reveal": {"type": "boolean"},
                "states": {"type": "string", "enum": [form.value for form in States],
                           "description": "How the frames carry their states"},
                "state": {"description": "The starting state, whole"},
                "frames": {"type": "array", "items": ref("Frame")},
                "error": {"type": ["string", "null"]}}}),
            parameters=[_ID, api.STATES.parameter()], errors=(400, 404),
            conflict=f"states=full of a running game with more than "
                     f"{replays.FULL_RUNNING_FRAMES} frames (its replay is made afresh for "
                     "each request while it runs): ask for states=delta, follow it live "
                     "(/live, states=full too), or ask again once it is over"),
        "/api/games/{id}/live": _get(
            "Server-sent events: the game's frames as they are stored (event 'frame', id = "
            "the move number; the first one sent is whole, so a stream needs nothing from "
            "before it), then 'end'",
            _event_stream("An event stream", _GAME_EVENT),
            parameters=[_ID, api.STATES.parameter(), live.AFTER.parameter(),
                        {"name": live.LAST_EVENT_ID, "in": "header", "required": False,
                         "description": "Resume after this move number (what a reconnecting "
                                        "EventSource sends; it wins over after)",
                         "schema": {"type": "string",
                                    "pattern": live.LAST_EVENT_ID_PATTERN}}],
            errors=(400, 404), tag="live"),
        "/api/live": _get(
            "Server-sent events: the home page's running games and latest results as HTML "
            "(event 'home')", _event_stream("An event stream", _HOME_EVENT), tag="live"),
        "/api/leaderboard": _get(
            "The current bots of a game ranked by rating, with intervals and tie bands",
            _ok("The leaderboard", {"type": "object", "properties": {
                "game": GAME_ENUM, "bots": {"type": "array", "items": {"allOf": [
                    ref("Bot"), {"type": "object", "properties": {
                        "rank": {"type": "integer"}, "band": {"type": "integer"},
                        "tied_with_next": {"type": "boolean"}}}]}}}}),
            parameters=[api.GAME_REQUIRED.parameter()], errors=(400,)),
        "/api/head-to-head": _get(
            "Two bots' finished games against each other, from a's view",
            _ok("The record", {"type": "object"}),
            parameters=[api.BOT_A.parameter(), api.BOT_B.parameter()], errors=(400, 404)),
        "/api/tournaments": _get("Tournaments, newest first", _ok("Tournaments", {
            "type": "object", "properties": {"tournaments": {"type": "array"}}}),
            links={"tournament": _link(TOURNAMENT, id="$response.body#/tournaments/0/id")}),
        "/api/tournaments/{id}": _get(
            "A tournament: entrants, games by round, byes and the table",
            _ok("The tournament", {"type": "object"}), parameters=[_ID], errors=(404,)),
        "/api/games-hosted": _get("The games this platform hosts",
                                  _ok("Games", {"type": "object"}), reads_store=False),
        "/api/openapi.json": _get("This document", _ok("OpenAPI 3.1", {"type": "object"}),
                                  reads_store=False),
        "/api/play/opponents": _get(
            "The bots of a game a person may play in the browser now",
            _ok("Bots", {"type": "object", "properties": {
                "game": PLAYABLE_GAME, "bots": {"type": "array", "items": {
                    "type": "object", "properties": {
                        "id": {"type": "integer"}, "name": {"type": "string"},
                        "version": {"type": "string"}, "owner": {"type": "string"}}}}}}),
            parameters=[play.PLAY_GAME.parameter()], errors=(400,), tag="play"),
        "/api/play": {"post": {
            "summary": "Start a game against a bot; answered once it is your turn or over",
            "tags": ["play"],
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["game", "opponent"], "properties": {
                    "game": PLAYABLE_GAME, "opponent": {"type": "integer"},
                    "name": {"type": "string", "minLength": 1, "pattern": r"\S",
                             "description": "Play as this guest (rated, as the README's "
                                            "Guests says); without: anonymous, unrated. "
                                            "It may end in #secret. 422: " + UNUSABLE_NAME
                                            + "; 409: another's name, or spelt like it, or "
                                              "a name played with another secret"},
                    "secret": {"type": "string", "minLength": SHORTEST_SECRET,
                               "maxLength": LONGEST_SECRET,
                               "description": "The name's secret: the name is bound to "
                                              "the secret it first plays with (one is "
                                              "made for a name first played without); "
                                              "without a name, nothing"},
                    "seat": {"type": "integer", "enum": [0, 1], "default": 0,
                             "description": "0: you move first"}}}}}},
            "responses": {"201": {"description": "Started",
                                  "content": {"application/json": {"schema": ref("Play")}},
                                  "links": {"status": _link(PLAY_STATUS,
                                                            token=_PLAYED_WITH),
                                            "move": _link(PLAY_MOVE,
                                                          token=_PLAYED_WITH)}},
                          **_play_errors(400, 409, 413, 415, 422, 429, 503)}}},
        "/api/play/{token}": _get(
            "The game played with this token", _ok("The game", ref("Play")),
            parameters=[_TOKEN, play.WAIT_PARAM.parameter()], errors=(404,), tag="play"),
        "/api/play/{token}/moves": {"post": {
            "summary": "Your move, as a bot would reply to NextMove; answered once it is "
                       "your turn again or over",
            "tags": ["play"], "parameters": [_TOKEN],
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["move"], "properties": {"move": {}}}}}},
            "responses": {**_ok("The game", ref("Play")),
                          **_play_errors(400, 404, 409, 413, 415, 429, 503)}}},
        "/api/nodes": {"get": {
            "summary": "How many nodes (processes) serve the arena; with the admin token, "
                       "each live node too and the games it plays (a token that is not the "
                       "admin's is refused)",
            "tags": ["nodes"], "security": [{}, {"admin": []}], "parameters": [],
            "responses": {
                **_ok("Without a token, the count alone (NodeCount); with the admin token, "
                      "every live node too (Nodes)",
                      {"oneOf": [ref("NodeCount"), ref("Nodes")]}),
                **_errors(403, 429, 503)}}},
        "/api/play/kalaha/{board}": _get(
            "The game of a Kalaha board made at the Kalaha listener (read only)",
            _ok("The game", ref("Play")),
            parameters=[{"name": "board", "in": "path", "required": True,
                         "schema": {"type": "string", "format": "uuid"}}],
            errors=(404,), tag="play"),
        "/api/challenges": {"post": _owned(
            "Ask for unrated games between a bot of yours and another bot online (paired: "
            "one seed, seats swapped); 409: the opponent is offline", created=True,
            body={"type": "object", "required": ["bot", "opponent"], "properties": {
                "bot": {"type": "string"}, "version": {"type": "string"},
                "opponent": {"type": "string"},
                "games": {"type": "integer", "minimum": 1, "maximum": 100, "default": 2}}},
            links={"challenge": _link(CHALLENGE, id="$response.body#/id")})},
        "/api/challenges/{id}": _get(
            "A challenge: its status, games, and the challenger's wins, draws, losses",
            _ok("The challenge", {"type": "object"}), parameters=[_ID], errors=(404,),
            tag="challenges"),
        "/api/duels": {"post": _owned(
            "Start a duel: game pairs between a candidate and a baseline version of a bot "
            "of yours until a sequential probability ratio test decides", created=True,
            body={"type": "object", "required": ["bot", "candidate"], "properties": {
                "bot": {"type": "string"}, "candidate": {"type": "string"},
                "baseline": {"type": "string"}, "elo0": {"type": "number", "default": 0},
                "elo1": {"type": "number", "default": 5},
                "alpha": {"type": "number", "default": 0.05},
                "beta": {"type": "number", "default": 0.05},
                "max_pairs": {"type": "integer", "minimum": 1, "default": 1000}}},
            links={"duel": _link(DUEL, id="$response.body#/id")})},
        "/api/duels/{id}": {
            **_get("A duel: pairs, the test's LLR and bounds, the Elo estimate and interval",
                   _ok("The duel", {"type": "object"}), parameters=[_ID], errors=(404,),
                   tag="challenges"),
            "delete": _owned("Stop a duel of yours", parameters=[_ID], body=None)},
        "/api/duels/{id}/promote": {"post": _owned(
            "Make a duel's candidate the current version of its bot", parameters=[_ID],
            body=None)},
        "/api/admin/bots/{id}/disable": _admin(
            "Take a bot out of play", parameters=[_ID], body=_REASON, body_required=False),
        "/api/admin/bots/{id}/enable": _admin("Put a disabled bot back", parameters=[_ID]),
        "/api/admin/users/{name}/suspend": _admin(
            "Suspend a user: registrations refused, current bots disabled",
            parameters=[_NAME], body=_REASON, body_required=False),
        "/api/admin/users/{name}/unsuspend": _admin(
            "Lift a user's suspension; the bots it disabled play again", parameters=[_NAME]),
        "/api/admin/ladder": _admin("The ladder's state", method="get"),
        "/api/admin/ladder/pause": _admin("Pause the ladder"),
        "/api/admin/ladder/resume": _admin("Resume the ladder"),
        "/api/admin/tournaments": _admin(
            "Create a tournament (409: the current bots do not allow it: fewer than two, "
            "bots that are not current ones, or as many Swiss rounds as entrants; 422: more "
            f"than {MAX_CYCLES} round-robin cycles)", created=True, unprocessable=True,
            body={"type": "object", "required": ["game", "format", "rounds"], "properties": {
                "game": GAME_ENUM, "format": {"type": "string", "enum": list(FORMATS)},
                "rounds": {"type": "integer", "minimum": 1},
                "bots": {"type": "array", "items": {"type": "integer"},
                         "description": "The entrants (every current bot of the game "
                                        "without)"}}},
            links={"tournament": _link(TOURNAMENT, id="$response.body#/id")}),
    },
)


for _path, _item in DOCUMENT["paths"].items():
    for _method, _operation in _item.items():
        _operation["operationId"] = _operation_id(_method, _path)


@routes.get("/api/openapi.json")
async def openapi_document(_request: web.Request) -> web.Response:
    """The OpenAPI document of this API."""
    return web.json_response(DOCUMENT)

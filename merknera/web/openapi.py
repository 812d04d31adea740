"""The OpenAPI 3.1 document of the JSON API, served at ``/api/openapi.json``.

Written by hand, next to the handlers it describes; a test checks that every route under
``/api/`` is in it with its method, and nothing else is.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from merknera import __version__
from merknera.games import REGISTRY
from merknera.protocol.bot_protocols import BotProtocol
from merknera.store.games import GameStatus
from merknera.web.play import PLAYABLE
from merknera.web.replay import KEYFRAME_EVERY, States

routes = web.RouteTableDef()

JSONSchema = dict[str, Any]


def _ref(name: str) -> JSONSchema:
    return {"$ref": f"#/components/schemas/{name}"}


def _query(name: str, description: str, schema: JSONSchema,
           required: bool = False) -> JSONSchema:
    return {"name": name, "in": "query", "required": required, "description": description,
            "schema": schema}


_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
_NAME = {"name": "name", "in": "path", "required": True, "schema": {"type": "string"},
         "description": "The user's name"}
_GAME = {"type": "string", "enum": sorted(REGISTRY)}
_LIMIT = {"type": "integer", "minimum": 1}
_PLAYABLE = {"type": "string", "enum": list(PLAYABLE)}
_TOKEN = {"name": "token", "in": "path", "required": True,
          "schema": {"type": "string", "format": "uuid"},
          "description": "The secret token POST /api/play gave"}


_STAMP: JSONSchema = {"type": "string", "format": "date-time"}


def _ok(description: str, schema: JSONSchema) -> JSONSchema:
    return {"200": {"description": description,
                    "content": {"application/json": {"schema": schema}}}}


def _errors(*statuses: int) -> JSONSchema:
    what = {400: "A query value is not usable", 401: "No token was sent",
            403: "The token may not do this", 404: "No such id",
            409: "The change is not possible now",
            429: "Too many attempts (wrong tokens, open streams) from your address; "
                 "Retry-After says when to try again",
            503: "Too many live streams are open"}
    return {str(status): {"description": what[status],
                          "content": {"application/json": {"schema": _ref("Error")}}}
            for status in statuses}


def _play_errors(*statuses: int) -> JSONSchema:
    what = {400: "The request or the move is not usable (the move is not played)",
            404: "No game is played with that token",
            409: "Not now: not your turn, the game is over, or the bot is not online",
            413: "The body is too large",
            429: "Too many requests or open games from your address; Retry-After says when",
            503: "Too many games are open; Retry-After says when"}
    return {str(status): {"description": what[status],
                          "content": {"application/json": {"schema": _ref("Error")}}}
            for status in statuses}


def _get(summary: str, ok: JSONSchema, *, parameters: list[JSONSchema] | None = None,
         errors: tuple[int, ...] = (), tag: str = "results") -> JSONSchema:
    return {"get": {"summary": summary, "tags": [tag], "parameters": parameters or [],
                    "responses": {**ok, **_errors(*errors)}}}


def _event_stream(description: str) -> JSONSchema:
    return {"200": {"description": description,
                    "content": {"text/event-stream": {"schema": {"type": "string"}}}}}


def _admin(summary: str, *, method: str = "post", body: JSONSchema | None = None,
           parameters: list[JSONSchema] | None = None, created: bool = False) -> JSONSchema:
    done = _ok("Done", {"type": "object"})
    if created:
        done = {"201": {**done["200"], "description": "Created"}}
    operation: JSONSchema = {
        "summary": summary, "tags": ["admin"], "security": [{"admin": []}],
        "parameters": parameters or [],
        "responses": {**done, **_errors(400, 401, 403, 404, 409, 429)}}
    if body is not None:
        operation["requestBody"] = {"required": True,
                                    "content": {"application/json": {"schema": body}}}
    return {method: operation}


_SCHEMAS: dict[str, JSONSchema] = {
    "Error": {"type": "object", "required": ["error"],
              "properties": {"error": {"type": "string", "description": "What was wrong"}}},
    "Rating": {"type": "object", "description": "OpenSkill Plackett-Luce rating",
               "properties": {"mu": {"type": "number"}, "sigma": {"type": "number"},
                              "conservative": {"type": "number",
                                               "description": "mu - 3 sigma (ranks bots)"},
                              "low": {"type": "number", "description": "mu - 1.96 sigma"},
                              "high": {"type": "number", "description": "mu + 1.96 sigma"},
                              "rated_games": {"type": "integer"}}},
    "Bot": {"type": "object", "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "version": {"type": "string"},
        "game": _GAME, "owner": {"type": "string"},
        "status": {"type": "string", "enum": ["ONLINE", "OFFLINE", "SUPERSEDED", "DISABLED"]},
        "language": {"type": "string"}, "website": {"type": "string"},
        "description": {"type": "string"}, "created_at": {"type": "string"},
        "protocol": {"type": "string", "enum": [p.value for p in BotProtocol],
                     "description": "how the platform calls the bot"},
        "self_name": {"type": ["string", "null"],
                      "description": "the name the bot gives itself (Squelch's /bot/info)"},
        "last_seen_at": {"type": ["string", "null"]}, "played": {"type": "integer"},
        "won": {"type": "integer"}, "drawn": {"type": "integer"}, "lost": {"type": "integer"},
        "score": {"type": "number", "description": "percent: a win 1, a draw 1/2"},
        "rating": _ref("Rating")}},
    "Seat": {"type": "object", "properties": {
        "seat": {"type": "integer"}, "bot_id": {"type": "integer"}, "name": {"type": "string"},
        "version": {"type": "string"},
        "protocol": {"type": "string", "description": "How the bot plays: jsonrpc, "
                     "squelch-rest, battlebot-salt, battlebot-graphql, or guest (a player "
                     "without an account: a hexagons client, a Kalaha board, a person)"},
        "result": {"type": ["string", "null"], "enum": ["WIN", "DRAW", "LOSS", "NONE", None]},
        "rank": {"type": ["integer", "null"]}, "score": {"type": ["number", "null"]}}},
    "GameSummary": {"type": "object", "properties": {
        "id": {"type": "integer"}, "game": _GAME,
        "status": {"type": "string", "enum": list(GameStatus.__members__)},
        "outcome": {"type": ["string", "null"], "enum": ["WIN", "DRAW", "NO_RESULT", None]},
        "reason": {"type": ["string", "null"]}, "detail": {"type": ["string", "null"]},
        "created_at": {"type": "string"}, "started_at": {"type": ["string", "null"]},
        "finished_at": {"type": ["string", "null"]},
        "seats": {"type": "array", "items": _ref("Seat")}}},
    "Move": {"type": "object", "description": "One call for a move: a move or a fault",
             "properties": {
                 "seq": {"type": "integer"}, "seat": {"type": "integer",
                                                      "description": "-1 for chance"},
                 "move": {},
                 "request": {"description": "The call as sent: only to the owner of the bot "
                                            "called and to the admin (else null)"},
                 "reply": {"description": "The bot's reply as received: only to its owner "
                                          "and to the admin (else null)"},
                 "reply_excerpt": {"type": ["string", "null"],
                                   "description": "The start of a faulty reply, for anybody "
                                                  "once the game is over"},
                 "latency_ms": {"type": ["number", "null"]},
                 "fault": {"type": ["string", "null"]},
                 "fault_detail": {"type": ["string", "null"]},
                 "created_at": {"type": "string"}}},
    "Play": {"type": "object", "description": "A game a person plays in the browser",
             "properties": {
                 "game": _PLAYABLE, "name": {"type": "string"},
                 "game_id": {"type": "integer"}, "url": {"type": "string"},
                 "token": {"type": ["string", "null"]},
                 "seat": {"type": "integer", "description": "Your seat"},
                 "players": {"type": "array", "items": {"type": "object", "properties": {
                     "seat": {"type": "integer"}, "name": {"type": "string"},
                     "bot_id": {"type": "integer"}, "version": {"type": "string"},
                     "you": {"type": "boolean"}}}},
                 "rated": {"type": "boolean"},
                 "turn_limit": {"type": "number", "description": "Seconds you have a move"},
                 "view": {"description": "What a bot in your seat would be shown (NextMove's "
                                         "params); null before the game opens"},
                 "board": {"description": "The position as replays draw it"},
                 "to_move": {"type": ["integer", "null"]},
                 "your_turn": {"type": "boolean"},
                 "legal": {"type": "array", "description": "Your legal moves, on your turn"},
                 "moves": {"type": "array", "items": {"type": "object", "properties": {
                     "seat": {"type": ["integer", "null"]}, "move": {},
                     "text": {"type": "string"}}}},
                 "over": {"type": "boolean"},
                 "outcome": {"type": ["string", "null"],
                             "enum": ["won", "lost", "draw", "none", None]},
                 "reason": {"type": ["string", "null"]},
                 "detail": {"type": ["string", "null"]}}},
    "Frame": {"type": "object",
              "description": "A row of the move log and the state after it: whole ('state') "
                             "on a keyframe, else as the JSON Patch from the state of the "
                             "frame before ('patch'). A frame has one of the two.",
              "oneOf": [{"required": ["state"]}, {"required": ["patch"]}],
              "properties": {
                  "seq": {"type": "integer"}, "seat": {"type": "integer"}, "move": {},
                  "text": {"type": "string"}, "latency_ms": {"type": ["number", "null"]},
                  "fault": {"type": ["string", "null"]},
                  "fault_detail": {"type": ["string", "null"]}, "at": {"type": "string"},
                  "state": {"description": "The spectator's view after this row, whole: "
                                           f"every {KEYFRAME_EVERY}th frame of the game, "
                                           "every frame with states=full, and the first "
                                           "frame a live stream sends"},
                  "patch": {"type": "array", "items": _ref("PatchOperation"),
                            "description": "JSON Patch (RFC 6902) that turns the previous "
                                           "frame's state (or the replay's starting state) "
                                           "into this one; [] after a fault, which changes "
                                           "nothing"}}},
    "PatchOperation": {"type": "object", "required": ["op", "path"],
                       "description": "One operation of a JSON Patch; any RFC 6902 library "
                                      "applies them",
                       "properties": {
                           "op": {"type": "string", "enum": ["add", "remove", "replace"]},
                           "path": {"type": "string",
                                    "description": "A JSON Pointer (RFC 6901); a last "
                                                   "segment '-' appends to an array"},
                           "value": {"description": "For add and replace"}}},
}

_STATES = _query(
    "states", f"How frames carry their states: delta (keyframes every {KEYFRAME_EVERY} "
              "frames, JSON Patches between them; what the game page loads) or full (every "
              "frame's state whole: larger, for clients that would not apply patches)",
    {"type": "string", "enum": [form.value for form in States], "default": "delta"})

DOCUMENT: JSONSchema = {
    "openapi": "3.1.0",
    "info": {"title": "Merknera", "version": __version__,
             "description": "The results API of a Merknera arena: bots, games with their move "
                            "logs and replays, ratings, tournaments, live events, and the "
                            "admin calls. Bots speak JSON-RPC at POST /rpc (see /protocol)."},
    "tags": [{"name": "results"}, {"name": "live"}, {"name": "play"}, {"name": "admin"},
             {"name": "nodes"}],
    "components": {
        "schemas": _SCHEMAS,
        "securitySchemes": {
            "owner": {"type": "http", "scheme": "bearer",
                      "description": "A user's API token (merknera user add)"},
            "admin": {"type": "http", "scheme": "bearer",
                      "description": "The admin_token of the platform's config"}}},
    "paths": {
        "/api/bots": _get(
            "Bots with their records and ratings",
            _ok("Bots", {"type": "object", "properties": {
                "bots": {"type": "array", "items": _ref("Bot")}}}),
            parameters=[_query("game", "Only this game", _GAME),
                        _query("all", "1: superseded versions too", {"type": "string"})],
            errors=(400,)),
        "/api/bots/{id}": _get(
            "One bot version: record, rating history, versions, latest games, latency, "
            "faults by kind", _ok("The bot", _ref("Bot")), parameters=[_ID], errors=(404,)),
        "/api/bots/{id}/log": {"get": {
            "summary": "The bot's log, for its owner", "tags": ["results"],
            "security": [{"owner": []}],
            "parameters": [_ID, _query("limit", "At most this many entries", _LIMIT),
                           _query("before", "Entries older than this id", _LIMIT)],
            "responses": {**_ok("The log", {"type": "object"}),
                          **_errors(400, 401, 403, 404, 429)}}},
        "/api/games": _get(
            "Games, newest first",
            _ok("Games", {"type": "object", "properties": {
                "games": {"type": "array", "items": _ref("GameSummary")}}}),
            parameters=[_query("game", "Only this game", _GAME),
                        _query("bot", "Only games of this bot id", _LIMIT),
                        _query("status", "Only games in this status",
                               {"type": "string", "enum": list(GameStatus.__members__)}),
                        _query("limit", "At most this many (500)", _LIMIT),
                        _query("before", "Games with a smaller id", _LIMIT)],
            errors=(400,)),
        "/api/games/{id}": {"get": {
            "summary": "A game with every call of its move log (the calls' bodies only for "
                       "the owner of the bot called and the admin; while it runs the seed "
                       "and the details of faults are hidden)",
            "tags": ["results"], "security": [{}, {"owner": []}, {"admin": []}],
            "parameters": [_ID],
            "responses": {
                **_ok("The game", {"allOf": [_ref("GameSummary"), {
                    "type": "object", "properties": {
                        "moves": {"type": "array", "items": _ref("Move")}}}]}),
                **_errors(403, 404, 429)}}},
        "/api/games/{id}/replay": _get(
            "A game move by move for viewers: the starting state and a frame per move "
            "(a frame's state is the nearest whole one at or before it with the patches "
            "after it applied)",
            _ok("The replay", {"type": "object", "properties": {
                "id": {"type": "integer"}, "game": _GAME, "name": {"type": "string"},
                "status": {"type": "string"},
                "players": {"type": "array", "items": {"type": "string"}},
                "setup": {"type": "object"}, "reveal": {"type": "boolean"},
                "states": {"type": "string", "enum": [form.value for form in States],
                           "description": "How the frames carry their states"},
                "state": {"description": "The starting state, whole"},
                "frames": {"type": "array", "items": _ref("Frame")},
                "error": {"type": ["string", "null"]}}}),
            parameters=[_ID, _STATES], errors=(400, 404)),
        "/api/games/{id}/live": _get(
            "Server-sent events: the game's frames as they are stored (event 'frame', id = "
            "the move number; the first one sent is whole, so a stream needs nothing from "
            "before it), then 'end'",
            _event_stream("An event stream"),
            parameters=[_ID, _STATES, _query("after", "Resume after this move number",
                                             {"type": "integer"}),
                        {"name": "Last-Event-ID", "in": "header", "required": False,
                         "description": "Resume after this move number (what a reconnecting "
                                        "EventSource sends)", "schema": {"type": "string"}}],
            errors=(400, 404, 429, 503), tag="live"),
        "/api/live": _get(
            "Server-sent events: the home page's running games and latest results as HTML "
            "(event 'home')", _event_stream("An event stream"), errors=(429, 503), tag="live"),
        "/api/leaderboard": _get(
            "The current bots of a game ranked by rating, with intervals and tie bands",
            _ok("The leaderboard", {"type": "object", "properties": {
                "game": _GAME, "bots": {"type": "array", "items": {"allOf": [
                    _ref("Bot"), {"type": "object", "properties": {
                        "rank": {"type": "integer"}, "band": {"type": "integer"},
                        "tied_with_next": {"type": "boolean"}}}]}}}}),
            parameters=[_query("game", "The game", _GAME, required=True)], errors=(400,)),
        "/api/head-to-head": _get(
            "Two bots' finished games against each other, from a's view",
            _ok("The record", {"type": "object"}),
            parameters=[_query("a", "A bot id", _LIMIT, required=True),
                        _query("b", "Another bot id", _LIMIT, required=True)],
            errors=(400, 404)),
        "/api/tournaments": _get("Tournaments, newest first", _ok("Tournaments", {
            "type": "object", "properties": {"tournaments": {"type": "array"}}})),
        "/api/tournaments/{id}": _get(
            "A tournament: entrants, games by round, byes and the table",
            _ok("The tournament", {"type": "object"}), parameters=[_ID], errors=(404,)),
        "/api/games-hosted": _get("The games this platform hosts",
                                  _ok("Games", {"type": "object"})),
        "/api/openapi.json": _get("This document", _ok("OpenAPI 3.1", {"type": "object"})),
        "/api/play/opponents": _get(
            "The bots of a game a person may play in the browser now",
            _ok("Bots", {"type": "object", "properties": {
                "game": _PLAYABLE, "bots": {"type": "array", "items": {
                    "type": "object", "properties": {
                        "id": {"type": "integer"}, "name": {"type": "string"},
                        "version": {"type": "string"}, "owner": {"type": "string"}}}}}}),
            parameters=[_query("game", "The game", _PLAYABLE, required=True)],
            errors=(400, 429), tag="play"),
        "/api/play": {"post": {
            "summary": "Start a game against a bot; answered once it is your turn or over",
            "tags": ["play"],
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["game", "opponent"], "properties": {
                    "game": _PLAYABLE, "opponent": {"type": "integer"},
                    "name": {"type": "string", "description": "Play as this guest (rated); "
                                                          "without: anonymous, unrated"},
                    "seat": {"type": "integer", "enum": [0, 1], "default": 0,
                             "description": "0: you move first"}}}}}},
            "responses": {"201": {"description": "Started",
                                  "content": {"application/json": {"schema": _ref("Play")}}},
                          **_play_errors(400, 409, 413, 429, 503)}}},
        "/api/play/{token}": _get(
            "The game played with this token", _ok("The game", _ref("Play")),
            parameters=[_TOKEN, _query("wait", "1: once it is your turn or over (at most "
                                               "25 s)", {"type": "string"})],
            errors=(404, 429), tag="play"),
        "/api/play/{token}/moves": {"post": {
            "summary": "Your move, as a bot would reply to NextMove; answered once it is "
                       "your turn again or over",
            "tags": ["play"], "parameters": [_TOKEN],
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["move"], "properties": {"move": {}}}}}},
            "responses": {**_ok("The game", _ref("Play")),
                          **_play_errors(400, 404, 409, 413, 429)}}},
        "/api/nodes": _get(
            "The live nodes (processes) of the arena and the games each plays",
            _ok("Nodes", {"type": "object", "properties": {
                "this": {"type": "string", "description": "The node that answered"},
                "lease_seconds": {"type": "number"},
                "nodes": {"type": "array", "items": {"type": "object", "properties": {
                    "id": {"type": "string"}, "address": {"type": "string"},
                    "pid": {"type": "integer"}, "started_at": _STAMP, "seen_at": _STAMP,
                    "coordinator": {"type": "boolean", "description":
                                    "Runs the ladder, the tournaments and the pinger"},
                    "playing": {"type": "integer"},
                    "games": {"type": "array", "items": {"type": "integer"},
                              "description": "Ids of its games (the first 100)"}}}}}}),
            errors=(429,), tag="nodes"),
        "/api/play/kalaha/{board}": _get(
            "The game of a Kalaha board made at the Kalaha listener (read only)",
            _ok("The game", _ref("Play")),
            parameters=[{"name": "board", "in": "path", "required": True,
                         "schema": {"type": "string", "format": "uuid"}}],
            errors=(404, 429), tag="play"),
        "/api/admin/bots/{id}/disable": _admin(
            "Take a bot out of play", parameters=[_ID],
            body={"type": "object", "properties": {"reason": {"type": "string"}}}),
        "/api/admin/bots/{id}/enable": _admin("Put a disabled bot back", parameters=[_ID]),
        "/api/admin/users/{name}/suspend": _admin(
            "Suspend a user: registrations refused, current bots disabled",
            parameters=[_NAME],
            body={"type": "object", "properties": {"reason": {"type": "string"}}}),
        "/api/admin/users/{name}/unsuspend": _admin(
            "Lift a user's suspension; the bots it disabled play again", parameters=[_NAME]),
        "/api/admin/ladder": _admin("The ladder's state", method="get"),
        "/api/admin/ladder/pause": _admin("Pause the ladder"),
        "/api/admin/ladder/resume": _admin("Resume the ladder"),
        "/api/admin/tournaments": _admin(
            "Create a tournament", created=True,
            body={"type": "object", "required": ["game", "format", "rounds"], "properties": {
                "game": _GAME, "format": {"type": "string", "enum": ["round-robin", "swiss"]},
                "rounds": {"type": "integer", "minimum": 1},
                "bots": {"type": "array", "items": {"type": "integer"}}}}),
    },
}


@routes.get("/api/openapi.json")
async def openapi_document(_request: web.Request) -> web.Response:
    """The OpenAPI document of this API."""
    return web.json_response(DOCUMENT)

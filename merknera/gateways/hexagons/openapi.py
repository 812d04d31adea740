"""The OpenAPI 3.1 document of the hexagons listener: the MebiPenny 2011 hexagons server's
HTTP API (``instructure/contests``) as this platform answers it, served by the listener at
``/openapi.json``.

The original refuses with 403 (``invalid game data``, ``invalid player data``, an invalid
move, which also disqualifies) and 410 (the game started or finished), in plain text; a
join, a move and ``/match`` are held until the player's turn comes (or a match is found),
and an observer's answer is a stream of JSON documents, one a line, until the game ends.
"""

from __future__ import annotations

from merknera.games.hexagons import MAX_SIZE, MIN_SIZE
from merknera.gateways.guests import SECRET_HEADER
from merknera.gateways.hexagons.wire import (
    COMPLETED,
    DISQUALIFIED,
    IN_PLAY,
    INITIATING,
    MULTI_JSON,
)
from merknera.openapi import JSONSchema, answer, document
from merknera.openapi import refusals as _described

DOCUMENT_PATH = "/openapi.json"
TURN_TOKEN = "X-Turn-Token"  # noqa: S105 (a header's name)
OBSERVER_TOKEN = "X-Observer-Token"  # noqa: S105 (a header's name)

_STATE: JSONSchema = {"type": "string", "enum": [INITIATING, IN_PLAY, COMPLETED]}
_POINT: JSONSchema = {"type": "object", "required": ["row", "col"],
                      "properties": {"row": {"type": "integer"}, "col": {"type": "integer"}}}
_PLAYER: JSONSchema = {"type": "object", "required": ["name", "score"], "properties": {
    "name": {"type": "string"},
    "score": {"anyOf": [{"type": "integer"}, {"const": DISQUALIFIED}]}}}
_LINE: JSONSchema = {"type": "object", "required": ["endpoints", "owner"], "properties": {
    "endpoints": {"type": "array", "items": _POINT, "minItems": 2, "maxItems": 2},
    "owner": _PLAYER}}
_HEXAGON: JSONSchema = {"type": "object", "required": ["center", "owner"],
                        "properties": {"center": _POINT, "owner": _PLAYER}}
_DRAWN: JSONSchema = {
    "lines": {"type": "array", "items": _LINE},
    "hexagons": {"type": "array", "items": _HEXAGON},
    "players": {"type": "array", "items": _PLAYER}, "state": _STATE}
_GAME: JSONSchema = {"type": "object", "description": "The original's Game object",
                     "required": ["lines", "hexagons", "players", "state"],
                     "properties": {"rows": {"type": "integer"}, "cols": {"type": "integer"},
                                    **_DRAWN}}
_DELTA: JSONSchema = {"type": "object", "description": "A Game Delta: what changed since the "
                      "client's last answer", "required": ["lines", "hexagons", "players",
                                                           "state"], "properties": _DRAWN}
_ID: JSONSchema = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"},
                   "description": "A game's id (8 hex digits)"}
_WHY = {403: "Refused, in the original's words (text/plain): invalid data, a missing or "
             "stale turn token, an invalid move (which disqualifies its player); or a "
             "request a page of another origin sent (its Origin header)",
        404: "no such game", 410: "The game has started (a join) or finished (a move)",
        413: "The body is too large", 429: "Too many requests from your address",
        503: "Too many games or streams, or the arena's database cannot be reached now (it "
             "may be restarting); Retry-After says when"}


def _refusals(*statuses: int) -> JSONSchema:
    return _described(_WHY, {"type": "string"}, statuses, media_type="text/plain")


def _body(schema: JSONSchema, required: bool = True) -> JSONSchema:
    # JSON whatever its Content-Type: the original clients (Ruby's Net::HTTP) type it as a
    # form, or not at all.
    return {"required": required, "description": "JSON, whatever the Content-Type says",
            "content": {"application/json": {"schema": schema}}}


_CREATED: JSONSchema = {"201": {
    "description": "The game's place", "headers": {"Location": {
        "required": True, "schema": {"type": "string", "pattern": "^/[0-9a-f]{8}$"}}}}}
_TOKEN_HEADER: JSONSchema = {TURN_TOKEN: {
    "description": "The token of the player's next move (none once the game is over)",
    "schema": {"type": "string"}}}
_SECRET_HEADER: JSONSchema = {SECRET_HEADER: {
    "description": "The secret made for a name played for the first time without one (only "
                   "then: told once)", "schema": {"type": "string"}}}
_SEE_GAME = {"game": {"operationId": "game", "parameters": {
    "id": "$response.body#/0/id"}}}

DOCUMENT = document(
    "Merknera: the MebiPenny hexagons API",
    "The hexagons server's API of MebiPenny 2011, for its clients unchanged, on the "
    "platform's hexagons listener.", {
        "/": {
            "get": {"operationId": "games", "summary": "Every game known, with its state",
                    "responses": {**answer(200, "The games", {"type": "array", "items": {
                        "type": "object", "required": ["id", "state"], "properties": {
                            "id": {"type": "string"}, "state": _STATE}}}, links=_SEE_GAME),
                        **_refusals(429)}},
            "post": {"operationId": "create", "summary": "A new game, waiting for players",
                     "requestBody": _body({"type": "object", "required": ["rows", "cols"],
                                           "properties": {
                         "rows": {"type": "integer", "minimum": MIN_SIZE, "maximum": MAX_SIZE,
                                  "description": "Odd (403 for an even number)"},
                         "cols": {"type": "integer", "minimum": MIN_SIZE, "maximum": MAX_SIZE},
                         "delay_time": {"description": "Seconds between turns, at most "
                                                       "5 (a value that is no number: 0)"}}}),
                     "responses": {**_CREATED, **_refusals(403, 413, 429, 503)}}},
        "/match": {"get": {
            "operationId": "match", "summary": "Held until another client asks too (or, after "
                                               "a while, an online bot is found): a new game",
            "responses": {**_CREATED, **_refusals(429, 503)}}},
        "/{id}": {"get": {
            "operationId": "game", "summary": "The game (with X-Observer-Token: the delta "
                                              "since that observer's last answer)",
            "parameters": [_ID, {"name": OBSERVER_TOKEN, "in": "header", "required": False,
                                 "schema": {"type": "string"}}],
            "responses": {**answer(200, "The game", {"anyOf": [_GAME, _DELTA]}),
                          **_refusals(404, 429, 503)}}},
        "/{id}/players": {"post": {
            "operationId": "join", "summary": "Join; held until the player's first turn",
            "parameters": [_ID],
            "requestBody": _body({"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "pattern": r"\S",
                         "description": "The player's name; it may end in #secret"},
                "secret": {"type": "string", "description": "The name's secret (a name is "
                                                           "bound to the secret it first "
                                                           "plays with)"}}}),
            "responses": {**answer(200, "The game", _GAME,
                                   headers={**_TOKEN_HEADER, **_SECRET_HEADER}),
                          **_refusals(403, 404, 410, 413, 429, 503)}}},
        "/{id}/moves": {"post": {
            "operationId": "move", "summary": "A move, with the turn token; held until the "
                                              "mover's next turn: the delta since the move",
            "parameters": [_ID, {"name": TURN_TOKEN, "in": "header", "required": True,
                                 "schema": {"type": "string"}}],
            "requestBody": _body({"type": "array", "items": _POINT, "minItems": 2,
                                  "maxItems": 2}),
            "responses": {**answer(200, "What changed", _DELTA, headers=_TOKEN_HEADER),
                          **_refusals(403, 404, 410, 413, 429)}}},
        "/{id}/observers": {"post": {
            "operationId": "observe", "summary": "Watch: the game, then a delta after every "
                                                 "change, a JSON document a line, to the end",
            "parameters": [_ID],
            "requestBody": _body({"type": "object", "properties": {"wrapper": {
                "type": "string", "pattern": "^(?:(?!%s)[\\s\\S])*%s(?:(?!%s)[\\s\\S])*$",
                "description": "Each line put into this text at its one %s"}}},
                required=False),
            "responses": {**answer(200, "The stream", {"type": "string"},
                                   media_type=MULTI_JSON, headers={OBSERVER_TOKEN: {
                                       "required": True, "schema": {"type": "string"}}}),
                          **_refusals(403, 404, 413, 429, 503)}}},
        DOCUMENT_PATH: {"get": {
            "operationId": "document", "summary": "This document",
            "responses": {**answer(200, "OpenAPI 3.1", {"type": "object"}), **_refusals(429)}}},
    })

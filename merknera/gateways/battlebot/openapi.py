"""The OpenAPI 3.1 document of the Battlebot listener's HTTP routes (``dprgarner/battlebot``
as this platform answers them), served by the listener at ``/openapi.json``: the salted
era's registration, its results routes, and the GraphQL era's endpoint (whose own schema,
``registerBot`` and ``bots``, ``GET /graphql`` gives as SDL).  The WebSocket at ``/``
is the bots' protocol, not an HTTP API.

As the original, a registration its rules refuse (a name taken, or not a name) is 400 like
a malformed one; its contract test accepts that 400 for a well-formed registration only
(``tests/e2e/schemathesis.toml``).
"""

from __future__ import annotations

from merknera.gateways.battlebot.graphql_api import (
    LARGEST,
    LONGEST_DOCUMENT,
    MOST_RESOLVED,
    MOST_TOKENS,
)
from merknera.gateways.battlebot.wire import GAMES
from merknera.openapi import JSONSchema, answer, document
from merknera.openapi import refusals as _described

DOCUMENT_PATH = "/openapi.json"
REGISTER = "registerSalted"
"""The registration's operationId (the contract test's settings name it)."""

_ERROR: JSONSchema = {"type": "object", "required": ["error"],
                      "properties": {"error": {"type": "string"}}}
_GAME_PATH: JSONSchema = {"name": "game", "in": "path", "required": True,
                          "schema": {"type": "string", "enum": [g.path_name for g in GAMES]}}
_GAME: JSONSchema = {
    "type": "object", "description": "A finished game as Battlebot stored it",
    "required": ["_id", "game", "players", "victor", "reason", "startTime"],
    "properties": {
        "_id": {"type": "string"}, "game": {"type": "string"},
        "contest": {"type": "string"},
        "players": {"type": "array", "items": {"type": "string"}},
        "board": {}, "marks": {},
        "victor": {"type": ["string", "null"]}, "reason": {"type": "string"},
        "startTime": {"type": "string"},
        "turns": {"type": "array", "items": {"type": "object"},
                  "description": "Every turn (one game only)"}}}
_WHY = {400: "Refused, in Battlebot's words: a game it does not know, a body it cannot "
             "read, a registration its rules refuse (a name taken, or not a name)",
        404: "No such game", 413: "The body is too large",
        415: "A body not typed application/json (Content-Type), which a page of another "
             "origin could send",
        429: "Too many requests or registrations from your address; Retry-After says when",
        503: "The arena's database cannot be reached now (it may be restarting); "
             "Retry-After says when to try again"}


def _refusals(*statuses: int) -> JSONSchema:
    return _described(_WHY, _ERROR, statuses)


DOCUMENT = document(
    "Merknera: the Battlebot listener",
    "Battlebot's HTTP routes, for its clients unchanged; its bots play over the WebSocket "
    "at / (see the README).", {
        "/": {"get": {
            "operationId": "root", "summary": "What this listener is (a WebSocket upgrade "
                                              "here is a bot's connection)",
            "responses": {**answer(200, "Plain text", {"type": "string"},
                                   media_type="text/plain"), **_refusals(429)}}},
        "/bots/{game}": {
            "post": {
                "operationId": REGISTER, "summary": "Register a bot (the salted era): its "
                                                    "password hash, once",
                "parameters": [_GAME_PATH],
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"type": "object", "required": ["bot_id", "owner"],
                               "additionalProperties": False, "properties": {
                                   "bot_id": {"type": "string"},
                                   "owner": {"type": "string"}}}}}},
                "responses": {**answer(201, "Registered", {
                    "type": "object", "required": ["game", "bot_id", "pass_hash"],
                    "properties": {"game": {"type": "string"}, "bot_id": {"type": "string"},
                                   "pass_hash": {"type": "string"}}}),
                    **_refusals(400, 413, 415, 429, 503)}},
            "get": {
                "operationId": "bots", "summary": "The game's bots", "parameters": [_GAME_PATH],
                "responses": {**answer(200, "The bots", {"type": "array", "items": {
                    "type": "object", "required": ["bot_id", "owner", "date_registered"],
                    "properties": {"bot_id": {"type": "string"}, "owner": {"type": "string"},
                                   "date_registered": {"type": "string"}}}}),
                    **_refusals(400, 429, 503)}}},
        "/games/{game}": {"get": {
            "operationId": "games", "summary": "The game's last finished games, newest first",
            "parameters": [_GAME_PATH],
            "responses": {**answer(200, "The games", {"type": "array", "items": _GAME}, links={
                "game": {"operationId": "game", "parameters": {
                    "game": "$request.path.game", "id": "$response.body#/0/_id"}}}),
                **_refusals(400, 429, 503)}}},
        "/games/{game}/{id}": {"get": {
            "operationId": "game", "summary": "One finished game, with its turns",
            "parameters": [_GAME_PATH, {"name": "id", "in": "path", "required": True,
                                        "schema": {"type": "string",
                                                   "pattern": "^[0-9]{1,18}$"}}],
            "responses": {**answer(200, "The game", _GAME), **_refusals(400, 404, 429, 503)}}},
        "/games/{game}/contests/{contest}": {"get": {
            "operationId": "contest", "summary": "A contest's table and games",
            "parameters": [_GAME_PATH, {"name": "contest", "in": "path", "required": True,
                                        "schema": {"type": "string"}}],
            "responses": {**answer(200, "The table (3 points a win, 1 a draw)", {
                "type": "object", "required": ["bots", "games"], "properties": {
                    "bots": {"type": "array", "items": {
                        "type": "object",
                        "required": ["bot_id", "wins", "losses", "draws", "score"],
                        "properties": {"bot_id": {"type": "string"},
                                       "wins": {"type": "integer"},
                                       "losses": {"type": "integer"},
                                       "draws": {"type": "integer"},
                                       "score": {"type": "integer"}}}},
                    "games": {"type": "array", "items": _GAME}}}),
                **_refusals(400, 429, 503)}}},
        "/graphql": {"get": {
            "operationId": "graphqlSchema", "summary": "The GraphQL schema, as SDL "
                                                      "(introspection is off)",
            "responses": {**answer(200, "The schema", {"type": "string"},
                                   media_type="text/plain"), **_refusals(429)}},
                     "post": {
            "operationId": "graphql", "summary": "The GraphQL era: registerBot and bots",
            "description": f"Documents of at most {LONGEST_DOCUMENT} characters and "
                           f"{MOST_TOKENS} tokens, {LARGEST.fields} fields (fragments "
                           f"counted where spread), {LARGEST.depth} levels, "
                           f"{LARGEST.aliases} aliases and {LARGEST.widest} fields side by "
                           f"side; answers of at most {MOST_RESOLVED} fields.  Larger ones, "
                           "and introspection, are answered with GraphQL errors.",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["query"], "properties": {
                    "query": {"type": "string"},
                    "variables": {"type": ["object", "null"]},
                    "operationName": {"type": ["string", "null"]}}}}}},
            "responses": {**answer(200, "GraphQL's answer: data, or errors", {
                "type": "object", "properties": {"data": {"type": ["object", "null"]},
                                                 "errors": {"type": "array"}}}),
                **_refusals(400, 413, 415, 429, 503)}}},
        DOCUMENT_PATH: {"get": {
            "operationId": "document", "summary": "This document",
            "responses": {**answer(200, "OpenAPI 3.1", {"type": "object"}),
                          **_refusals(429)}}},
    })

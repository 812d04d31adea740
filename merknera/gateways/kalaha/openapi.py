"""The OpenAPI 3.1 document of the Kalaha listener's board API, served by the listener at
``/api/openapi.json``: the original's three routes (``Anna87/kalaha``) as this platform
answers them, and the extension that seats a bot.

The original answers a move its rules refuse (``Game is over``, ``Current pit is empty``,
``Incorrect player order``) with 400 like a malformed one, and its front end reads them so:
the document says so, and its contract test accepts that 400 for a well-formed PUT only
(``tests/e2e/schemathesis.toml``).
"""

from __future__ import annotations

from merknera.games.kalaha import PITS, PLAYERS
from merknera.gateways.guests import SECRET_HEADER
from merknera.names import LONGEST_NAME, LONGEST_SECRET, SHORTEST_SECRET
from merknera.openapi import JSONSchema, answer, document
from merknera.openapi import refusals as _described

DOCUMENT_PATH = "/api/openapi.json"
BOARDS = "/api/boards"

_PLAYER: JSONSchema = {"type": "string", "enum": list(PLAYERS)}
_ROW: JSONSchema = {"type": "object", "required": ["pits", "kalahaStones"], "properties": {
    "pits": {"type": "array", "minItems": PITS, "maxItems": PITS, "items": {
        "type": "object", "required": ["stones"],
        "properties": {"stones": {"type": "integer", "minimum": 0}}}},
    "kalahaStones": {"type": "integer", "minimum": 0}}}
_BOARD_STATE: JSONSchema = {
    "type": "object", "description": "The original's BoardState",
    "required": ["boardId", "nextPlayer", "rowOne", "rowTwo", "gameOver", "winner"],
    "properties": {
        "boardId": {"type": "string", "format": "uuid"}, "nextPlayer": _PLAYER,
        "rowOne": _ROW, "rowTwo": _ROW, "gameOver": {"type": "boolean"},
        "winner": {"type": ["string", "null"], "enum": [*PLAYERS, None],
                   "description": "null while the game runs, and for a draw or no result"}}}
_ERROR: JSONSchema = {
    "type": "object", "description": "Spring Boot's error body",
    "required": ["timestamp", "status", "error", "message", "path"],
    "properties": {"timestamp": {"type": "string"}, "status": {"type": "integer"},
                   "error": {"type": "string"}, "message": {"type": "string"},
                   "path": {"type": "string"},
                   "errors": {"type": "array", "items": {"type": "object"},
                              "description": "Spring's binding errors (a PUT's body)"}}}
_BOARD_ID: JSONSchema = {"name": "id", "in": "path", "required": True,
                         "schema": {"type": "string", "format": "uuid"},
                         "description": "The board's id (400 for one that is no UUID)"}
_WHY: dict[int, str] = {
    400: "Refused, in the original's words: an unreadable body or id, a value out of range",
    403: "A board asked for without a body by a page of an origin that is no listed front "
         "end (Origin; kalaha_origins)",
    404: "Board not found",
    409: "That bot cannot play now, or that name is another's",
    413: "The body is too large",
    415: "A body not typed application/json (Content-Type): a page of another origin "
         "sends JSON only after a CORS preflight, which the listener allows the listed "
         "front ends only",
    422: "The name is a string but no name: characters that show nothing or reorder text, "
         f"letters of scripts that can look alike mixed, more than {LONGEST_NAME} characters; "
         f"or its secret is shorter than {SHORTEST_SECRET} characters or longer than "
         f"{LONGEST_SECRET}, or given twice and not the same",
    429: "Too many requests or boards from your address; Retry-After says when",
    503: "Too many games, the game has not begun yet, or the arena's database cannot be "
         "reached now (it may be restarting); Retry-After says when"}


def _refusals(*statuses: int) -> JSONSchema:
    return _described(_WHY, _ERROR, statuses)


def _state(status: int, description: str, links: JSONSchema | None = None,
           headers: JSONSchema | None = None) -> JSONSchema:
    return answer(status, description, _BOARD_STATE, links=links, headers=headers)


_NEW_BOARD_LINKS: JSONSchema = {
    "board": {"operationId": "getBoard", "parameters": {"id": "$response.body#/boardId"}},
    "play": {"operationId": "play", "parameters": {"id": "$response.body#/boardId"}}}
"""A new board's id leads to the board and to its moves."""


# pitIndex as Jackson reads it into a Java int: absent or null is 0; a whole number; a
# number written as text.
_PIT_INDEX: JSONSchema = {
    "description": f"The pit, 0 to {PITS - 1}, in the row of the player to move (0 when left "
                   "out)",
    "anyOf": [{"type": "integer", "minimum": 0, "maximum": PITS - 1},
              {"type": "string", "pattern": rf"^\s*\+?0*[0-{PITS - 1}]\s*$"},
              {"type": "null"}]}
_NEW_BOARD: JSONSchema = {
    "description": "No body (or any body without an opponent): the original's board, on "
                   "which anyone moves for either player. With an opponent: that bot is "
                   "player TWO, the person (named, or anonymous) player ONE",
    "if": {"type": "object", "required": ["opponent"],
           "properties": {"opponent": {"not": {"type": "null"}}}},
    "then": {"properties": {
        "opponent": {"type": "integer", "description": "An online Kalaha bot's id"},
        "name": {"type": ["string", "null"], "pattern": r"\S",
                 "description": "Play under this name (rated); null or left out: "
                                "anonymously. It may end in #secret"},
        "secret": {"type": "string", "minLength": SHORTEST_SECRET,
                   "maxLength": LONGEST_SECRET,
                   "description": "The name's secret (a name is bound to the secret it "
                                  "first plays with; one made for a name first played "
                                  "without comes back in X-Guest-Secret); without a name, "
                                  "nothing"}}}}

DOCUMENT = document(
    "Merknera: the Kalaha board API",
    "The board API of Anna87/kalaha (its Angular front end plays here unchanged), on the "
    "platform's Kalaha listener. Every board is a platform game; a person who does not move "
    "in time loses. A page of any origin may read boards (CORS); only the front ends the "
    "operator lists (kalaha_origins) and the platform's play page may create boards and "
    "move: a body must be typed application/json, and a POST without one is refused (403) "
    "when a page of another origin sends it.", {
        BOARDS: {"post": {
            "operationId": "createBoard", "summary": "A new board",
            "requestBody": {"required": False,
                            "content": {"application/json": {"schema": _NEW_BOARD}}},
            "responses": {**_state(201, "The new board", _NEW_BOARD_LINKS, {SECRET_HEADER: {
                "description": "The secret made for a name played for the first time "
                               "without one (only then: told once)",
                "schema": {"type": "string"}}}),
                          **_refusals(400, 403, 409, 413, 415, 422, 429, 503)}}},
        BOARDS + "/{id}": {
            "get": {"operationId": "getBoard", "summary": "A board",
                    "parameters": [_BOARD_ID],
                    "responses": {**_state(200, "The board"), **_refusals(400, 404, 429, 503)}},
            "put": {"operationId": "play", "summary": "A move; answered once it is a "
                                                      "person's turn again or the game is over",
                    "parameters": [_BOARD_ID],
                    "requestBody": {"required": True, "content": {"application/json": {
                        "schema": {"type": "object", "required": ["player"], "properties": {
                            "pitIndex": _PIT_INDEX, "player": _PLAYER}}}}},
                    "responses": {
                        **_state(200, "The board after the move (and the bot's, if any)"),
                        "400": {"description": "As the original: an unreadable body or id, a "
                                               "value out of range, and a move its rules "
                                               "refuse now: Game is over, Current pit is "
                                               "empty, Incorrect player order",
                                "content": {"application/json": {"schema": _ERROR}}},
                        **_refusals(404, 413, 415, 429, 503)}}},
        DOCUMENT_PATH: {"get": {
            "operationId": "document", "summary": "This document",
            "responses": {**answer(200, "OpenAPI 3.1", {"type": "object"}),
                          **_refusals(429)}}},
    })

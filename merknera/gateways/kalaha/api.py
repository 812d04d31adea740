"""The Kalaha board API's wire (``Anna87/kalaha``; ``research/seed-systems.md`` part (d)):
BoardStates, the PUT body read as Spring and Jackson read it, the original's checks in its
order, and Spring Boot's error bodies.  Pure: no I/O.

How the original answers, from its code (Spring Boot 3.0.5, ``include-message`` and
``include-binding-errors: always``):

* the body is read before the path's id: unreadable JSON, or a ``player`` that is not
  ``ONE``/``TWO``, is 400 ``JSON parse error: ...``; a missing body is 400 ``Required request
  body is missing``.  ``pitIndex`` is a Java ``int``: absent means 0, and Jackson takes a
  numeric string (``"0"``) and a whole float (``1.0``) for it;
* then ``@Valid``: ``pitIndex`` outside 0-5 is ``Pit index should be between 0 and 5
  inclusive``, a null ``player`` ``must not be null``; 400 ``Validation failed for
  object='playRequest'. Error count: N`` with an ``errors`` list;
* then the id: not a UUID is 400 ``Failed to convert value ...``; no such board 404 ``Board
  not found``;
* then ``RoundValidator``, in this order: ``Game is over``; ``Current pit is empty`` (the pit
  ``pitIndex`` of the row of the player *to move*, whoever asks); ``Incorrect player order,
  next is ONE``.

Error bodies are Spring's ``{timestamp, status, error, message, path}``.  Where Jackson's own
wording of a parse error cannot be had, the message says the same in Python's words after
``JSON parse error: ``.
"""

from __future__ import annotations

import datetime
import json
import math
import re
import uuid
from dataclasses import dataclass

from merknera.games import JSON, JSONObject
from merknera.games.kalaha import PITS, PLAYERS, Board
from merknera.protocol import strict_json

REASONS = {400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
           409: "Conflict", 413: "Payload Too Large", 415: "Unsupported Media Type",
           422: "Unprocessable Entity", 429: "Too Many Requests",
           500: "Internal Server Error", 503: "Service Unavailable"}
"""The reason phrases Spring puts in ``error``."""

PIT_RANGE = "Pit index should be between 0 and 5 inclusive"
NUMERIC_TEXT = re.compile(r"\s*[+-]?[0-9]+\s*")
"""A ``pitIndex`` given as text that Jackson reads as a number."""


@dataclass(frozen=True)
class ApiError(Exception):
    """A refusal: the status, Spring's ``message``, and binding errors if any."""

    status: int
    message: str
    errors: tuple[JSONObject, ...] = ()
    retry_after: float | None = None
    """Seconds to wait before asking again (429, 503: the platform's limits)."""
    headers: tuple[tuple[str, str], ...] = ()
    """What the client must hear whatever the answer (a guest's new secret)."""

    def body(self, path: str, now: datetime.datetime | None = None) -> JSONObject:
        """Spring Boot's error body for a request to ``path``."""
        stamp = (now or datetime.datetime.now(datetime.UTC)).isoformat(timespec="milliseconds")
        body: JSONObject = {"timestamp": stamp,
                            "status": self.status, "error": REASONS.get(self.status, "Error"),
                            "message": self.message}
        if self.errors:
            body["errors"] = list(self.errors)
        body["path"] = path
        return body


@dataclass(frozen=True)
class Play:
    """A PUT's body, read: the pit and the player (a seat: 0 is ONE)."""

    pit: int
    seat: int


def board_state(board_id: str, board: Board) -> JSONObject:
    """The original's BoardState of a board (``winner`` is null for a draw, which the
    platform's rules have where the original named TWO)."""
    winner = board.winner()
    return {
        "boardId": board_id,
        "nextPlayer": PLAYERS[board.next_seat],
        "rowOne": _row(board, 0),
        "rowTwo": _row(board, 1),
        "gameOver": board.over,
        "winner": None if winner is None else PLAYERS[winner],
    }


def _row(board: Board, seat: int) -> JSONObject:
    return {"pits": [{"stones": n} for n in board.rows[seat]],
            "kalahaStones": board.stores[seat]}


def read_play(body: bytes) -> Play:
    """Read a PUT's body as the original's controller does (see the module docstring).

    :raises ApiError: 400, with the original's message.
    """
    if not body.strip():
        raise ApiError(400, "Required request body is missing")
    try:
        value: JSON = strict_json.loads(body)
    except strict_json.BadJSONError as exc:
        raise ApiError(400, f"JSON parse error: {exc}") from None
    if not isinstance(value, dict):
        raise ApiError(400, "JSON parse error: Cannot construct instance of PlayRequest "
                            f"from {_json_kind(value)}")
    pit = _pit(value.get("pitIndex", 0))
    player = value.get("player")
    if player is not None and player not in PLAYERS:
        raise ApiError(400, "JSON parse error: Cannot deserialize value of type Player from "
                            f"{json.dumps(player)}: not one of the values accepted for Enum "
                            "class: [ONE, TWO]")
    errors = []
    if not 0 <= pit < PITS:
        errors.append(_binding_error("pitIndex", "Max" if pit >= PITS else "Min", PIT_RANGE,
                                     pit))
    if player is None:
        errors.append(_binding_error("player", "NotNull", "must not be null", None))
    if errors:
        raise ApiError(400, "Validation failed for object='playRequest'. Error count: "
                            f"{len(errors)}", tuple(errors))
    assert isinstance(player, str)
    return Play(pit, PLAYERS.index(player))


def _pit(value: JSON) -> int:
    """``pitIndex`` as Jackson reads it into an ``int``."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise ApiError(400, "JSON parse error: Cannot coerce boolean value to int")
    if isinstance(value, int):
        if not -(2 ** 31) <= value < 2 ** 31:
            raise ApiError(400, f"JSON parse error: Numeric value ({value}) out of range "
                                "of int")
        return value
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ApiError(400, f"JSON parse error: Cannot coerce Floating-point value "
                                f"({value}) to int")
        return _pit(int(value))
    if isinstance(value, str):
        try:
            # ASCII digits only (Java's parseInt would take other scripts' digits too):
            # what the document's pattern says (merknera.gateways.kalaha.openapi).
            if not NUMERIC_TEXT.fullmatch(value):
                raise ValueError(value)
            return _pit(int(value.strip()))
        except ValueError:
            raise ApiError(400, f"JSON parse error: Cannot deserialize value of type int "
                                f"from String {json.dumps(value)}: not a valid int "
                                "value") from None
    raise ApiError(400, f"JSON parse error: Cannot deserialize value of type int from "
                        f"{_json_kind(value)}")


def _json_kind(value: JSON) -> str:
    return "Array value" if isinstance(value, list) else (
        "Object value" if isinstance(value, dict) else f"value {json.dumps(value)}")


def _binding_error(field: str, code: str, message: str, rejected: JSON) -> JSONObject:
    """One entry of Spring's ``errors``, as ``include-binding-errors`` shows it."""
    java_type = "int" if field == "pitIndex" else "com.bol.kalaha.repository.model.Player"
    codes: list[JSON] = [f"{code}.playRequest.{field}", f"{code}.{field}",
                         f"{code}.{java_type}", code]
    return {"codes": codes,
            "arguments": [{"codes": [f"playRequest.{field}", field], "arguments": None,
                           "defaultMessage": field, "code": field}],
            "defaultMessage": message, "objectName": "playRequest", "field": field,
            "rejectedValue": rejected, "bindingFailure": False, "code": code}


def read_board_id(text: str) -> str:
    """A board id: a UUID, written as Java writes it (lower case).

    :raises ApiError: 400 for anything else, in Spring's words.
    """
    # Java's UUID.fromString wants the dashed form; Python's would also read 32 bare hex
    # digits, braces and a URN.
    if _DASHED.fullmatch(text) is None:
        raise ApiError(400, "Failed to convert value of type 'java.lang.String' to required "
                            f"type 'java.util.UUID'; Invalid UUID string: {text}")
    return str(uuid.UUID(text))


_DASHED = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def check_play(board: Board, play: Play) -> None:
    """The original's ``RoundValidator``, in its order.

    :raises ApiError: 400 ``Game is over``, ``Current pit is empty`` (of the player to
        move's row, whoever asks) or ``Incorrect player order, next is ONE``.
    """
    if board.over:
        raise ApiError(400, "Game is over")
    if board.rows[board.next_seat][play.pit] == 0:
        raise ApiError(400, "Current pit is empty")
    if play.seat != board.next_seat:
        raise ApiError(400, f"Incorrect player order, next is {PLAYERS[board.next_seat]}")


NOT_FOUND = ApiError(404, "Board not found")

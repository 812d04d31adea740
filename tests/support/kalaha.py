"""The Kalaha board API's end-to-end tests' parts (``tests/e2e/test_e2e_kalaha_*.py``): a
small copy of the rules written from research d.2 (not the platform's), to check boards
move by move; the platform with its Kalaha listener; the reference Kalaha bot; and what
Spring's refusals look like."""

from __future__ import annotations

import datetime
import json
import uuid
from dataclasses import dataclass
from typing import Any

from multidict import CIMultiDictProxy

from tests.e2e.harness import E2E
from tests.support import free_port, json_or_text

GAME = "KALAHA"
PLAYERS = ("ONE", "TWO")
PITS = 6
REASONS = {400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           409: "Conflict", 415: "Unsupported Media Type", 422: "Unprocessable Entity"}
PIT_RANGE = "Pit index should be between 0 and 5 inclusive"
FRONT_END = "http://localhost:4200"
"""The origin of the original's Angular front end (``Anna87/kalaha-fe``)."""
SPRING_KEYS = {"timestamp", "status", "error", "message", "path"}


# --- the rules, from research d.2 (an oracle independent of the platform's) ----------------


@dataclass(frozen=True)
class Position:
    """A board: ONE's and TWO's pits (each 0-5 from its owner's left), their stores, the
    seat to move, and whether the game is over."""

    rows: tuple[tuple[int, ...], tuple[int, ...]] = ((6,) * PITS, (6,) * PITS)
    stores: tuple[int, int] = (0, 0)
    next: int = 0
    over: bool = False

    @classmethod
    def of(cls, state: dict[str, Any]) -> Position:
        """The position a BoardState shows."""
        rows = tuple(tuple(pit["stones"] for pit in state[row]["pits"])
                     for row in ("rowOne", "rowTwo"))
        assert len(rows) == 2 and all(len(row) == PITS for row in rows), state
        return cls((rows[0], rows[1]),
                   (state["rowOne"]["kalahaStones"], state["rowTwo"]["kalahaStones"]),
                   PLAYERS.index(state["nextPlayer"]), state["gameOver"])

    @property
    def winner(self) -> str | None:
        """ONE or TWO by the stores once over; None while it goes on, and for a draw (the
        platform's one difference from the original, which named TWO)."""
        if not self.over or self.stores[0] == self.stores[1]:
            return None
        return PLAYERS[0 if self.stores[0] > self.stores[1] else 1]

    def state(self, board_id: str) -> dict[str, Any]:
        """The original's BoardState of this position."""
        return {"boardId": board_id, "nextPlayer": PLAYERS[self.next],
                "rowOne": {"pits": [{"stones": n} for n in self.rows[0]],
                           "kalahaStones": self.stores[0]},
                "rowTwo": {"pits": [{"stones": n} for n in self.rows[1]],
                           "kalahaStones": self.stores[1]},
                "gameOver": self.over, "winner": self.winner}

    def legal(self) -> list[int]:
        """The pits the player to move may sow."""
        return [] if self.over else [i for i in range(PITS) if self.rows[self.next][i]]


@dataclass(frozen=True)
class Sowing:
    """A move's result, and what happened on the way."""

    after: Position
    extra_turn: bool
    captured: bool


STORE = -1
"""The own store's place in a lap."""


def sow(position: Position, pit: int) -> Sowing:
    """Research d.2: the mover's pits after ``pit``, its store, the opponent's pits (never
    the opponent's store), its own pits again; the last stone in the own store moves again;
    in an own pit that was empty it goes to the store with the opposite pit (5 - i), even an
    empty one; when either row is empty each row goes to its own store and nextPlayer stays.
    """
    mover = position.next
    assert not position.over and position.rows[mover][pit] > 0, (position, pit)
    rows = [list(position.rows[0]), list(position.rows[1])]
    stores = list(position.stores)
    lap = ([(mover, i) for i in range(PITS)] + [(mover, STORE)]
           + [(1 - mover, i) for i in range(PITS)])
    stones, rows[mover][pit] = rows[mover][pit], 0
    at = pit
    for _ in range(stones):
        at = (at + 1) % len(lap)
        side, index = lap[at]
        if index == STORE:
            stores[side] += 1
        else:
            rows[side][index] += 1
    side, index = lap[at]
    captured = side == mover and index != STORE and rows[mover][index] == 1
    if captured:
        opposite = PITS - 1 - index
        stores[mover] += 1 + rows[1 - mover][opposite]
        rows[mover][index] = rows[1 - mover][opposite] = 0
    extra = index == STORE
    if not any(rows[0]) or not any(rows[1]):
        stores = [stores[0] + sum(rows[0]), stores[1] + sum(rows[1])]
        after = Position(((0,) * PITS, (0,) * PITS), (stores[0], stores[1]), mover, True)
    else:
        after = Position((tuple(rows[0]), tuple(rows[1])), (stores[0], stores[1]),
                         mover if extra else 1 - mover)
    return Sowing(after, extra, captured)


def play_out(moves: list[tuple[int, int]]) -> Position:
    """The position after ``(seat, pit)`` moves from the start (each by the seat to move)."""
    position = Position()
    for seat, pit in moves:
        assert position.next == seat, (position, seat, pit)
        position = sow(position, pit).after
    return position



@dataclass
class Answer:
    """An HTTP answer: status, headers, and the body (JSON when it is JSON)."""

    status: int
    headers: CIMultiDictProxy[str]
    body: Any


@dataclass
class Boards:
    """A client of the Kalaha listener."""

    e2e: E2E
    url: str
    """``http://127.0.0.1:<kalaha_port>``."""

    async def call(self, method: str, path: str, body: bytes | None = None,
                   content_type: str | None = "application/json",
                   headers: dict[str, str] | None = None) -> Answer:
        sent = {"Origin": FRONT_END, **(headers or {})}
        if content_type is not None:
            sent["Content-Type"] = content_type
        async with self.e2e.session.request(method, self.url + path, data=body,
                                            headers=sent) as response:
            return Answer(response.status, response.headers,
                          json_or_text(await response.text()))

    async def create(self, request: dict[str, Any] | None = None) -> dict[str, Any]:
        """POST /api/boards: 201 and a new board's BoardState."""
        body = None if request is None else json.dumps(request).encode()
        answer = await self.call("POST", "/api/boards", body)
        assert answer.status == 201, answer
        assert answer.headers.get("Access-Control-Allow-Origin") == "*", answer.headers
        state: dict[str, Any] = answer.body
        assert str(uuid.UUID(state["boardId"])) == state["boardId"], state
        assert state == Position().state(state["boardId"]), state
        return state

    async def put(self, board_id: str, pit: Any, player: Any) -> Answer:
        body = json.dumps({"pitIndex": pit, "player": player}).encode()
        return await self.call("PUT", f"/api/boards/{board_id}", body)

    async def play(self, board_id: str, pit: Any, player: str) -> dict[str, Any]:
        """A PUT that must be answered 200 with a BoardState."""
        answer = await self.put(board_id, pit, player)
        assert answer.status == 200, (pit, player, answer)
        assert answer.headers.get("Access-Control-Allow-Origin") == "*", answer.headers
        state: dict[str, Any] = answer.body
        assert state["boardId"] == board_id, state
        return state

    async def view(self, board_id: str) -> dict[str, Any]:
        """GET /api/boards/{uuid}: 200 and the BoardState."""
        answer = await self.call("GET", f"/api/boards/{board_id}", content_type=None)
        assert answer.status == 200, answer
        state: dict[str, Any] = answer.body
        return state

    async def moves(self, board_id: str, moves: list[tuple[int, int]]) -> dict[str, Any]:
        """Hot-seat ``(seat, pit)`` moves on a board; the last BoardState, which must be
        the oracle's after each move."""
        state: dict[str, Any] = {}
        position = Position()
        for seat, pit in moves:
            position = sow(position, pit).after
            state = await self.play(board_id, pit, PLAYERS[seat])
            assert state == position.state(board_id), (seat, pit, state)
        return state


async def start_kalaha(e2e: E2E, person_turn_limit: str, **options: str) -> Boards:
    """The platform with its Kalaha listener on a free port."""
    port = free_port()
    await e2e.start_platform(None, kalaha_port=str(port), person_turn_limit=person_turn_limit,
                             **{"max_open_games_per_client": "100", **options})
    return Boards(e2e, f"http://127.0.0.1:{port}")


def refusal(answer: Answer, status: int, message: str, path: str, *,
            prefix: bool = False) -> dict[str, Any]:
    """Check Spring Boot's error body (and CORS) of a refusal; returns the body."""
    assert answer.status == status, (status, message, answer)
    assert answer.headers.get("Access-Control-Allow-Origin") == "*", answer.headers
    assert answer.headers.get("Content-Type", "").startswith("application/json"), answer.headers
    body = answer.body
    assert isinstance(body, dict), body
    assert set(body) - {"errors"} == SPRING_KEYS, body
    assert (body["status"], body["error"], body["path"]) == (status, REASONS[status], path), body
    stamp = datetime.datetime.fromisoformat(body["timestamp"])
    assert stamp.tzinfo is not None, body
    if prefix:
        assert body["message"].startswith(message), (message, body)
    else:
        assert body["message"] == message, body
    return body


def binding_errors(body: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """``errors`` of a validation failure as (field, defaultMessage, rejectedValue)."""
    errors = body["errors"]
    assert all(e["objectName"] == "playRequest" for e in errors), errors
    return sorted((e["field"], e["defaultMessage"], e["rejectedValue"]) for e in errors)


def invalid_uuid(text: str) -> str:
    return ("Failed to convert value of type 'java.lang.String' to required type "
            f"'java.util.UUID'; Invalid UUID string: {text}")


async def kalaha_bot(e2e: E2E, token: str, name: str, strategy: str = "good") -> int:
    """A reference Kalaha bot, registered; its id."""
    await e2e.start_bot(strategy, name, token, module="merknera_bots.kalaha", seed=7)
    found = [b for b in (await e2e.get(f"/api/bots?game={GAME}"))["bots"] if b["name"] == name]
    assert len(found) == 1, found
    assert found[0]["status"] == "ONLINE", found
    return int(found[0]["id"])


def game_of(e2e: E2E, board: str) -> dict[str, Any]:
    rows = e2e.read_db("SELECT id, game, status, outcome, reason, rated FROM games "
                       "WHERE handle = ?", (board,))
    assert len(rows) == 1, rows
    return dict(rows[0])


# --- the original's refusals ----------------------------------------------------------------


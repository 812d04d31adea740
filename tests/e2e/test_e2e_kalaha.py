"""The Kalaha board API (``Anna87/kalaha``, research part (d)) end to end: ``merknera serve``
with its Kalaha listener, and the reference Kalaha bot as real processes.

Every answer is checked against the original: its statuses and messages in its check order
(the media type, the body, ``@Valid``, the path's id, the board, then ``RoundValidator``:
game over, pit empty, player order), Spring's error body and CORS for any origin.  The
boards' states are checked against a small copy of the rules written here from research
d.2 (not the platform's), move by move.  Then what the platform adds: a board is a platform
game (listed, handled by its UUID, unrated while the anonymous guest holds a seat), a
person plays a Kalaha bot through PUTs, a person who stops moving loses on time, and a
finished board is rebuilt from the store after a restart.
"""

from __future__ import annotations

import datetime
import json
import random
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from multidict import CIMultiDictProxy

from tests.e2e.harness import ADMIN_TOKEN, E2E
from tests.support import free_port

GAME = "KALAHA"
PLAYERS = ("ONE", "TWO")
PITS = 6
REASONS = {400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           415: "Unsupported Media Type"}
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


def test_the_oracle_plays_researchs_worked_cases() -> None:
    """The copy of the rules against research d.2's worked cases (``GameIT``'s files)."""
    played = sow(Position(), 1)  # should-play.json
    assert played.after == Position(((6, 0, 7, 7, 7, 7), (7, 6, 6, 6, 6, 6)), (1, 0), 1)
    extra = sow(Position(), 0)  # extra-round-response.json
    assert extra.extra_turn and extra.after.next == 0
    steal = sow(Position(((1, 0, 6, 6, 6, 6), (6,) * PITS), (0, 0), 0), 0)
    assert steal.captured and steal.after.stores[0] == 7 and steal.after.rows[1][4] == 0
    skip = sow(Position(((6, 6, 6, 6, 6, 10), (6,) * PITS), (0, 0), 0), 5)
    assert skip.after.rows[0][:3] == (7, 7, 7) and skip.after.stores == (1, 0)
    # The last stone in the store empties the row: over even so, each row to its own
    # store, nextPlayer left as it was.
    last = sow(Position(((5, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 1)), (30, 36), 1), 5)
    assert last.extra_turn and last.after == Position(
        ((0,) * PITS, (0,) * PITS), (35, 37), 1, True)
    assert last.after.winner == "TWO"
    assert Position(((0,) * PITS, (0,) * PITS), (36, 36), 0, True).winner is None


# --- the listener --------------------------------------------------------------------------


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
            text = await response.text()
            try:
                decoded: Any = json.loads(text) if text else None
            except ValueError:
                decoded = text
            return Answer(response.status, response.headers, decoded)

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
                             max_open_games_per_client="100", **options)
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
    await e2e.start_bot(strategy, name, token, module="bots.kalaha", seed=7)
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

THERE = "<board>"
"""Stands for the id of a board under way (ONE to move, nothing played)."""
UNKNOWN = str(uuid.UUID(int=0x1234))
"""A UUID no board has."""
NO_DASHES = UNKNOWN.replace("-", "")
GOOD = b'{"pitIndex": 2, "player": "ONE"}'

# (name, content type, body, id, status, message, message is a prefix, binding errors)
BODY_AND_ID_CASES: list[tuple[str, str | None, bytes | None, str, int, str, bool,
                              list[tuple[str, str, Any]]]] = [
    ("text/plain", "text/plain", GOOD, THERE, 415,
     "Content-Type 'text/plain' is not supported", False, []),
    ("the media type before the body and the id", "text/plain", b"{nope", "x", 415,
     "Content-Type 'text/plain' is not supported", False, []),
    ("form", "application/x-www-form-urlencoded", b"pitIndex=1&player=ONE", THERE, 415,
     "Content-Type 'application/x-www-form-urlencoded' is not supported", False, []),
    ("no body", "application/json", None, THERE, 400,
     "Required request body is missing", False, []),
    ("unreadable JSON", "application/json", b"{nope", THERE, 400, "JSON parse error: ", True,
     []),
    ("not a player", "application/json", b'{"pitIndex": 1, "player": "THREE"}', THERE, 400,
     "JSON parse error: ", True, []),
    ("pit 6", "application/json", b'{"pitIndex": 6, "player": "ONE"}', THERE, 400,
     "Validation failed for object='playRequest'. Error count: 1", False,
     [("pitIndex", PIT_RANGE, 6)]),
    ("pit -1", "application/json", b'{"pitIndex": -1, "player": "TWO"}', THERE, 400,
     "Validation failed for object='playRequest'. Error count: 1", False,
     [("pitIndex", PIT_RANGE, -1)]),
    ("no player", "application/json", b'{"pitIndex": 1}', THERE, 400,
     "Validation failed for object='playRequest'. Error count: 1", False,
     [("player", "must not be null", None)]),
    ("two errors", "application/json", b'{"pitIndex": 9, "player": null}', THERE, 400,
     "Validation failed for object='playRequest'. Error count: 2", False,
     [("pitIndex", PIT_RANGE, 9), ("player", "must not be null", None)]),
    ("the body before the id", "application/json", b'{"pitIndex": 7, "player": "ONE"}',
     "not-a-uuid", 400, "Validation failed for object='playRequest'. Error count: 1", False,
     [("pitIndex", PIT_RANGE, 7)]),
    ("the body before the board", "application/json", b'{"player": "SIX"}', UNKNOWN, 400,
     "JSON parse error: ", True, []),
    ("not a UUID", "application/json", GOOD, "not-a-uuid", 400, invalid_uuid("not-a-uuid"),
     False, []),
    ("a number", "application/json", GOOD, "12345", 400, invalid_uuid("12345"), False, []),
    # Forms Python's uuid reads but Java's UUID.fromString does not: no dashes, a URN.
    ("no dashes", "application/json", GOOD, NO_DASHES, 400, invalid_uuid(NO_DASHES), False,
     []),
    ("a URN", "application/json", GOOD, f"urn:uuid:{UNKNOWN}", 400,
     "Failed to convert value of type 'java.lang.String' to required type 'java.util.UUID'; ",
     True, []),
    ("no such board", "application/json", GOOD, UNKNOWN, 404, "Board not found", False, []),
]


async def test_put_refusals_are_the_originals_in_its_order(e2e: E2E) -> None:
    boards = await start_kalaha(e2e, person_turn_limit="60")
    board = (await boards.create())["boardId"]
    for name, content_type, body, target, status, message, prefix, errors in BODY_AND_ID_CASES:
        path = f"/api/boards/{board if target == THERE else target}"
        answer = await boards.call("PUT", path, body, content_type)
        found = refusal(answer, status, message, path, prefix=prefix)
        assert ("errors" in found) == bool(errors), (name, found)
        if errors:
            assert binding_errors(found) == sorted(errors), (name, found)
    # None of them moved: the board is as new.
    assert await boards.view(board) == Position().state(board)


# (name, hot-seat moves played first, pit, player, message)
ROUND_CASES: list[tuple[str, list[tuple[int, int]], int, str, str]] = [
    # After ONE's pit 0 (an extra turn), ONE is to move with pit 0 empty.
    ("own empty pit", [(0, 0)], 0, "ONE", "Current pit is empty"),
    # TWO's pit 0 is full, but the pit checked is the player to move's (ONE's).
    ("the wrong player's full pit", [(0, 0)], 0, "TWO", "Current pit is empty"),
    ("the wrong player", [(0, 0)], 1, "TWO", "Incorrect player order, next is ONE"),
    ("the wrong player at the start", [], 3, "TWO", "Incorrect player order, next is ONE"),
    # After ONE 1, TWO 1, ONE 0: TWO to move, TWO [8,0,7,7,7,7], ONE [0,1,8,8,8,8].
    ("TWO's empty pit", [(0, 1), (1, 1), (0, 0)], 1, "TWO", "Current pit is empty"),
    ("ONE asks for TWO's empty pit", [(0, 1), (1, 1), (0, 0)], 1, "ONE",
     "Current pit is empty"),
    ("ONE asks for its own empty pit", [(0, 1), (1, 1), (0, 0)], 0, "ONE",
     "Incorrect player order, next is TWO"),
    ("ONE out of turn", [(0, 1), (1, 1), (0, 0)], 2, "ONE",
     "Incorrect player order, next is TWO"),
]


async def test_round_refusals_are_checked_in_the_originals_order(e2e: E2E) -> None:
    boards = await start_kalaha(e2e, person_turn_limit="60")
    prepared: dict[tuple[tuple[int, int], ...], tuple[str, dict[str, Any]]] = {}
    for name, moves, pit, player, message in ROUND_CASES:
        key = tuple(moves)
        if key not in prepared:
            board = (await boards.create())["boardId"]
            state = await boards.moves(board, moves) if moves else await boards.view(board)
            prepared[key] = board, state
        board, state = prepared[key]
        position = Position.of(state)
        # The case is what its name says (the oracle agrees with the board, see moves()).
        mover = position.rows[position.next][pit]
        asked = position.rows[PLAYERS.index(player)][pit]
        if message == "Current pit is empty":
            assert mover == 0, (name, position)
        else:
            assert mover > 0 and PLAYERS[position.next] != player, (name, position)
        if name.endswith("full pit") or name == "ONE asks for TWO's empty pit":
            assert asked > 0, (name, position)
        if name == "ONE asks for its own empty pit":
            assert asked == 0, (name, position)
        path = f"/api/boards/{board}"
        refusal(await boards.put(board, pit, player), 400, message, path)
        assert await boards.view(board) == state, name  # a refusal changes nothing


async def test_get_405_and_cors_are_the_originals(e2e: E2E) -> None:
    boards = await start_kalaha(e2e, person_turn_limit="60")
    board = (await boards.create())["boardId"]
    path = f"/api/boards/{board}"

    # GET: the board, 404 and a non-UUID id.
    assert await boards.view(board) == Position().state(board)
    assert await boards.view(board.upper()) == Position().state(board)
    bare = board.replace("-", "")  # the board's UUID as Java's UUID.fromString refuses it
    for target, status, message in ((UNKNOWN, 404, "Board not found"),
                                    ("nope", 400, invalid_uuid("nope")),
                                    (bare, 400, invalid_uuid(bare))):
        refusal(await boards.call("GET", f"/api/boards/{target}"), status, message,
                f"/api/boards/{target}")

    # Methods the original does not map.
    for method, where, allowed in (("DELETE", path, {"GET", "PUT"}),
                                   ("PATCH", path, {"GET", "PUT"}),
                                   ("GET", "/api/boards", {"POST"}),
                                   ("PUT", "/api/boards", {"POST"})):
        answer = await boards.call(method, where, b"{}")
        refusal(answer, 405, f"Request method '{method}' is not supported", where)
        allow = {m.strip() for m in answer.headers.get("Allow", "").split(",")}
        assert allowed <= allow and method not in allow, (method, where, answer.headers)

    # The front end's preflights, from another origin.
    for method, where, asked in (("PUT", path, "content-type"),
                                 ("POST", "/api/boards", "Content-Type, X-Requested-With")):
        answer = await boards.call("OPTIONS", where, headers={
            "Access-Control-Request-Method": method, "Access-Control-Request-Headers": asked})
        assert answer.status == 200, answer
        headers = answer.headers
        assert headers.get("Access-Control-Allow-Origin") == "*", headers
        methods = {m.strip() for m in headers.get("Access-Control-Allow-Methods", "").split(",")}
        assert methods == {"GET", "POST", "PUT"}, headers
        assert headers.get("Access-Control-Allow-Headers", "").lower() == asked.lower(), headers
        assert headers.get("Access-Control-Max-Age") == "1800", headers

    # Answers a page of another origin may read: 201, 200, 400, 404.
    refused = await boards.put(board, 9, "ONE")
    refusal(refused, 400, "Validation failed for object='playRequest'. Error count: 1", path)
    missing = await boards.put(UNKNOWN, 0, "ONE")
    refusal(missing, 404, "Board not found", f"/api/boards/{UNKNOWN}")
    played = await boards.play(board, "0", "ONE")  # the README sends the pit as a string
    assert played == sow(Position(), 0).after.state(board)


# --- a hot-seat game, the platform's game -------------------------------------------------


async def test_a_hot_seat_game_to_the_end_is_an_unrated_platform_game(e2e: E2E) -> None:
    boards = await start_kalaha(e2e, person_turn_limit="60")
    board = (await boards.create())["boardId"]
    rng = random.Random(2026)
    position, state = Position(), await boards.view(board)
    played: list[dict[str, Any]] = []
    extra_turns = captures = 0
    while not position.over:
        assert len(played) < 500, "the game does not end"
        pit = rng.choice(position.legal())
        player = PLAYERS[position.next]
        sowing = sow(position, pit)
        extra_turns += sowing.extra_turn
        captures += sowing.captured
        position = sowing.after
        state = await boards.play(board, pit, player)
        assert state == position.state(board), (len(played), pit, player, state)
        played.append({"pitIndex": pit, "player": player})
    # The game shows the rules' corners: extra turns and captures.
    assert extra_turns and captures, (extra_turns, captures)
    assert state["gameOver"] is True
    stores = (state["rowOne"]["kalahaStones"], state["rowTwo"]["kalahaStones"])
    assert sum(stores) == 72
    assert state["winner"] == (None if stores[0] == stores[1]
                               else "ONE" if stores[0] > stores[1] else "TWO"), state
    assert await boards.view(board) == state
    # Game over comes before an empty pit (every pit is empty now).
    refusal(await boards.put(board, 0, "ONE"), 400, "Game is over", f"/api/boards/{board}")

    # The platform's game: stored with the board's UUID as its handle, the anonymous guest
    # in both seats.
    stored = game_of(e2e, board)
    assert stored["game"] == GAME, stored
    game_id = stored["id"]

    async def finished() -> tuple[dict[str, Any] | None, str]:
        game = await e2e.game(game_id)
        return (game if game["status"] == "FINISHED" else None), game["status"]

    game = await e2e.wait_until("the board's game to be finished", finished)
    assert game["reason"] == "NORMAL", game
    assert game_of(e2e, board)["rated"] == 0  # the anonymous guest's games rate nobody
    listed = await e2e.get(f"/api/games?game={GAME}")
    assert [g["id"] for g in listed["games"]] == [game_id], listed
    seats = sorted(game["seats"], key=lambda s: s["seat"])
    assert [s["name"] for s in seats] == ["anonymous", "anonymous"], seats
    assert seats[0]["bot_id"] == seats[1]["bot_id"], seats
    winner = state["winner"]
    expected = (["DRAW", "DRAW"] if winner is None else
                ["WIN" if PLAYERS[seat] == winner else "LOSS" for seat in (0, 1)])
    assert [s["result"] for s in seats] == expected, (seats, winner)
    assert game["outcome"] == ("DRAW" if winner is None else "WIN"), game
    assert [m["move"] for m in game["moves"]] == played
    assert [m["seat"] for m in game["moves"]] == [PLAYERS.index(m["player"]) for m in played]
    assert game["final_state"] == {
        "nextPlayer": PLAYERS[position.next],
        "rowOne": {"pits": list(position.rows[0]), "kalahaStones": position.stores[0]},
        "rowTwo": {"pits": list(position.rows[1]), "kalahaStones": position.stores[1]}}

    guest = await e2e.get(f"/api/bots/{seats[0]['bot_id']}")
    assert (guest["name"], guest["protocol"], guest["owner"], guest["game"]) == (
        "anonymous", "guest", "(guests)", GAME), guest
    assert guest["rating"]["rated_games"] == 0 and guest["rating_history"] == [], guest
    assert e2e.read_db("SELECT * FROM ratings") == []  # nobody's rating changed
    leaders = await e2e.get(f"/api/leaderboard?game={GAME}")
    assert "anonymous" not in [row["name"] for row in leaders["bots"]], leaders

    # A board left half-played when the platform stops; then a restart.
    half = (await boards.create())["boardId"]
    half_state = await boards.moves(half, [(0, 1)])
    assert e2e.platform is not None
    assert await e2e.processes.stop(e2e.platform.child) == 0
    again = await start_kalaha(e2e, person_turn_limit="60")

    # The finished board, rebuilt from the store.
    assert await again.view(board) == state
    refusal(await again.put(board, 0, "ONE"), 400, "Game is over", f"/api/boards/{board}")
    # The half-played one ended without a result when the platform stopped.
    shown = await again.view(half)
    assert shown == {**half_state, "gameOver": True, "winner": None}, shown
    refusal(await again.put(half, 0, "TWO"), 400, "Game is over", f"/api/boards/{half}")
    aborted = game_of(e2e, half)
    assert (aborted["status"], aborted["outcome"], aborted["reason"]) == (
        "FINISHED", "NO_RESULT", "ABORTED"), aborted
    refusal(await again.call("GET", f"/api/boards/{UNKNOWN}"), 404, "Board not found",
            f"/api/boards/{UNKNOWN}")


# --- people against the reference bot -------------------------------------------------------


async def test_a_named_person_plays_the_reference_bot_to_the_end(e2e: E2E) -> None:
    token = await e2e.add_user("alice")
    boards = await start_kalaha(e2e, person_turn_limit="60")
    bot_id = await kalaha_bot(e2e, token, "kalaha-good")
    first = await boards.create({"opponent": bot_id, "name": "Petra"})
    board = first["boardId"]
    rng = random.Random(5)
    shown = [first]  # every state the person was given, in order
    while not shown[-1]["gameOver"]:
        assert len(shown) < 500, "the game does not end"
        position = Position.of(shown[-1])
        assert position.next == 0, shown[-1]
        state = await boards.play(board, rng.choice(position.legal()), "ONE")
        # The answer waits for the bot: ONE is to move again, or the game is over.
        assert state["nextPlayer"] == "ONE" or state["gameOver"], state
        if not state["gameOver"]:
            assert await boards.view(board) == state
        shown.append(state)
    final = shown[-1]
    stores = (final["rowOne"]["kalahaStones"], final["rowTwo"]["kalahaStones"])
    assert final["winner"] == (None if stores[0] == stores[1]
                               else "ONE" if stores[0] > stores[1] else "TWO"), final

    # The move log replays, by the rules, through exactly the states the person was shown.
    game_id = game_of(e2e, board)["id"]

    async def finished() -> tuple[dict[str, Any] | None, str]:
        game = await e2e.game(game_id)
        return (game if game["status"] == "FINISHED" else None), game["status"]

    game = await e2e.wait_until("the game to be finished", finished)
    assert game["reason"] == "NORMAL", game
    assert game_of(e2e, board)["rated"] == 1  # a named person's game is rated
    seats = sorted(game["seats"], key=lambda s: s["seat"])
    assert [(s["name"], s["bot_id"] == bot_id) for s in seats] == [
        ("Petra", False), ("kalaha-good", True)], seats
    position, waiting = Position(), list(shown)
    for move in game["moves"]:
        assert move["fault"] is None, move
        assert move["seat"] == position.next, (move, position)
        # The person's moves name the player; the bot's reply need not.
        assert move["move"].get("player", PLAYERS[move["seat"]]) == PLAYERS[move["seat"]], move
        assert ("player" in move["move"]) == (move["seat"] == 0), move
        if move["seat"] == 0:
            assert waiting and waiting.pop(0) == position.state(board), (move, position)
        position = sow(position, move["move"]["pitIndex"]).after
    assert waiting == [final] and position.state(board) == final
    assert any(m["seat"] == 1 for m in game["moves"]), "the bot never moved"

    # Named, the person is rated and ranked with the bot.
    async def ranked() -> tuple[dict[str, Any] | None, str]:
        rows = (await e2e.get(f"/api/leaderboard?game={GAME}"))["bots"]
        names = {row["name"]: row for row in rows}
        done = "Petra" in names and names["kalaha-good"]["rating"]["rated_games"] == 1
        return (names if done else None), str(sorted(names))

    leaders = await e2e.wait_until("Petra on the leaderboard", ranked)
    petra = leaders["Petra"]
    assert (petra["protocol"], petra["owner"], petra["rating"]["rated_games"]) == (
        "guest", "(guests)", 1), petra
    record = {"ONE": "won", "TWO": "lost", None: "drawn"}[final["winner"]]
    assert petra[record] == 1 and petra["played"] == 1, petra
    assert "anonymous" not in leaders

    # The same name plays as the same guest.
    second = await boards.create({"opponent": bot_id, "name": "Petra"})
    rows = e2e.read_db("SELECT seats.bot_id FROM seats JOIN games ON games.id = seats.game_id "
                       "WHERE games.handle = ? AND seats.seat = 0", (second["boardId"],))
    assert [row[0] for row in rows] == [seats[0]["bot_id"]]


async def test_opponents_that_cannot_play_are_refused(e2e: E2E) -> None:
    token = await e2e.add_user("alice")
    boards = await start_kalaha(e2e, person_turn_limit="60", ping_interval="1")
    kalaha_id = await kalaha_bot(e2e, token, "kalaha-one", "random")
    await e2e.start_bot("random", "noughts", token)
    ttt = [b for b in (await e2e.get("/api/bots?game=TICTACTOE"))["bots"]
           if b["name"] == "noughts"]
    assert len(ttt) == 1 and ttt[0]["status"] == "ONLINE", ttt
    ttt_id = ttt[0]["id"]

    def offline(bot: int) -> str:
        return f"Bot {bot} is not an online Kalaha bot with room for another game"

    cases: list[tuple[str, bytes, str, bool]] = [
        ("unknown bot", json.dumps({"opponent": 999_999}).encode(), offline(999_999), False),
        ("another game's bot", json.dumps({"opponent": ttt_id, "name": "Petra"}).encode(),
         offline(ttt_id), False),
        ("not an id", b'{"opponent": "kalaha-one"}', "opponent must be a bot's id", True),
        ("a boolean", b'{"opponent": true}', "opponent must be a bot's id", True),
        ("an empty name", json.dumps({"opponent": kalaha_id, "name": " "}).encode(),
         "name must be a non-empty string", True),
        ("anonymous by name", json.dumps({"opponent": kalaha_id, "name": "Anonymous"}).encode(),
         'Invalid name: the name "anonymous" is kept', True),
        ("a name of another owner", json.dumps({"opponent": kalaha_id,
                                                "name": "kalaha-one"}).encode(),
         'Invalid name: the name "kalaha-one" belongs to a bot of alice', True),
        ("a look-alike of it", json.dumps({"opponent": kalaha_id,
                                           "name": "Kalaha-One"}).encode(),
         'Invalid name: the name "Kalaha-One" is too like "kalaha-one"', True),
        ("unreadable", b"{nope", "JSON parse error: ", True),
    ]
    for name, body, message, prefix in cases:
        answer = await boards.call("POST", "/api/boards", body)
        assert answer.status == 400, (name, answer)
        refusal(answer, 400, message, "/api/boards", prefix=prefix)
    assert e2e.read_db("SELECT COUNT(*) FROM games")[0][0] == 0  # no game was made

    # The bot goes away: once the platform knows it is offline, it is refused too.
    bot = next(b for b in e2e.bots if b.name == "kalaha-one")
    assert await e2e.processes.stop(bot.child) == 0

    async def gone() -> tuple[str | None, str]:
        status = (await e2e.get(f"/api/bots/{kalaha_id}"))["status"]
        return (status if status == "OFFLINE" else None), status

    await e2e.wait_until("the bot to be offline", gone)
    answer = await boards.call("POST", "/api/boards", json.dumps({"opponent": kalaha_id}).encode())
    refusal(answer, 400, offline(kalaha_id), "/api/boards")
    assert e2e.read_db("SELECT COUNT(*) FROM games")[0][0] == 0


@pytest.mark.parametrize("opponent", ["bot", "hot seat"])
async def test_a_person_who_stops_moving_loses_on_time(e2e: E2E, opponent: str) -> None:
    token = await e2e.add_user("alice")
    boards = await start_kalaha(e2e, person_turn_limit="1")
    bot_id = await kalaha_bot(e2e, token, "kalaha-good") if opponent == "bot" else None
    first = await boards.create(None if bot_id is None else {"opponent": bot_id})
    board = first["boardId"]
    if bot_id is not None:
        # One move, answered once the bot has moved; then the person stops.
        last = await boards.play(board, 2, "ONE")
        assert last["nextPlayer"] == "ONE" and not last["gameOver"], last
    else:
        last = first

    async def over() -> tuple[dict[str, Any] | None, str]:
        state = await boards.view(board)
        return (state if state["gameOver"] else None), json.dumps(state)

    state = await e2e.wait_until("the board to be lost on time", over)
    # The board as it stood, over, ONE (to move) the loser.
    assert state == {**last, "gameOver": True, "winner": "TWO"}, state
    refusal(await boards.put(board, 0, "ONE"), 400, "Game is over", f"/api/boards/{board}")

    async def stored() -> tuple[dict[str, Any] | None, str]:
        game = game_of(e2e, board)
        return (game if game["status"] == "FINISHED" else None), str(game)

    game = await e2e.wait_until("the game to be finished", stored)
    assert (game["outcome"], game["reason"], game["rated"]) == ("WIN", "TIMEOUT", 0), game
    results = [(row["seat"], row["result"]) for row in e2e.read_db(
        "SELECT seat, result FROM seats WHERE game_id = ? ORDER BY seat", (game["id"],))]
    assert results == [(0, "LOSS"), (1, "WIN")], results
    # Anonymous: nobody's rating changed, the bot's included.
    assert e2e.read_db("SELECT * FROM ratings") == []


async def test_a_board_whose_bot_is_disabled_ends_without_a_winner(e2e: E2E) -> None:
    token = await e2e.add_user("alice")
    boards = await start_kalaha(e2e, person_turn_limit="60")
    bot_id = await kalaha_bot(e2e, token, "kalaha-good")
    board = (await boards.create({"opponent": bot_id, "name": "Petra"}))["boardId"]
    last = await boards.play(board, 2, "ONE")
    assert last["nextPlayer"] == "ONE" and not last["gameOver"], last
    async with e2e.session.post(f"{e2e.url}/api/admin/bots/{bot_id}/disable",
                                json={"reason": "a test"},
                                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
        assert response.status == 200, await response.text()

    async def stored() -> tuple[dict[str, Any] | None, str]:
        game = game_of(e2e, board)
        return (game if game["status"] == "FINISHED" else None), str(game)

    game = await e2e.wait_until("the game to end", stored)
    assert game["outcome"] == "NO_RESULT", game
    # Nobody won: the board says so, in memory as from the store.
    assert await boards.view(board) == {**last, "gameOver": True, "winner": None}
    refusal(await boards.put(board, 0, "ONE"), 400, "Game is over", f"/api/boards/{board}")

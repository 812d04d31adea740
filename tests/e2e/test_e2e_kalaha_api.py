"""The Kalaha board API (``Anna87/kalaha``, research part (d)) end to end, its wire:
``merknera serve`` with its Kalaha listener as a real process.  Every answer is checked
against the original: its statuses and messages in its check order (the media type, the
body, ``@Valid``, the path's id, the board, then ``RoundValidator``: game over, pit empty,
player order), Spring's error body and CORS for any origin.
"""

from __future__ import annotations

import uuid
from typing import Any

from tests.e2e.harness import E2E
from tests.support.kalaha import (
    PIT_RANGE,
    PITS,
    PLAYERS,
    Position,
    binding_errors,
    invalid_uuid,
    refusal,
    sow,
    start_kalaha,
)


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



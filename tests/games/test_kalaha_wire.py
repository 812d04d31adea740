"""Kalaha on the wire: the replies a bot may send, the views it gets, and the stored state."""

from __future__ import annotations

import json
from typing import Any

import pytest

from merknera.games.base import JSON, InvalidMoveError
from merknera.games.kalaha import Board, Kalaha, Sow

GAME = Kalaha()
Z = (0,) * 6


def _row(pits: list[int], store: int) -> dict[str, Any]:
    return {"pits": [{"stones": n} for n in pits], "kalahaStones": store}


@pytest.mark.parametrize(
    ("reply", "move"),
    [
        ({"pitIndex": 0}, Sow(0)),
        ({"pitIndex": 5}, Sow(5)),
        ({"PitIndex": 3}, Sow(3)),  # keys are case-insensitive, as every param
        ({"pitindex": 3, "Player": "TWO"}, Sow(3, 1)),
        ({"pitIndex": 2, "player": "ONE"}, Sow(2, 0)),
        ({"pitIndex": 2, "player": None}, Sow(2)),  # null is no player
        ({"pitIndex": 4, "boardId": "43ea97d0", "comment": "hi"}, Sow(4)),  # others ignored
    ],
)
def test_well_formed_replies(reply: JSON, move: Sow) -> None:
    assert GAME.parse_move(reply) == move


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (3, r'^expected an object \{"pitIndex": 0-5\}, got 3$'),
        ("3", r"^expected an object .*, got '3'$"),
        ([3], r"^expected an object .*, got \[3\]$"),
        (None, r"^expected an object .*, got None$"),
        ({}, r'^the reply has no "pitIndex": \{\}$'),
        ({"pit": 3}, r'^the reply has no "pitIndex": \{\'pit\': 3\}$'),
        # The seed's Jackson read "0" as 0; here a string is malformed.
        ({"pitIndex": "0"}, r'^"pitIndex" must be an integer 0-5, got \'0\'$'),
        ({"pitIndex": True}, r'^"pitIndex" must be an integer 0-5, got True$'),
        ({"pitIndex": False}, r'^"pitIndex" must be an integer 0-5, got False$'),
        ({"pitIndex": 2.0}, r'^"pitIndex" must be an integer 0-5, got 2\.0$'),
        ({"pitIndex": None}, r'^"pitIndex" must be an integer 0-5, got None$'),
        ({"pitIndex": [1]}, r'^"pitIndex" must be an integer 0-5, got \[1\]$'),
        ({"pitIndex": 6}, r'^"pitIndex" must be between 0 and 5, got 6$'),
        ({"pitIndex": -1}, r'^"pitIndex" must be between 0 and 5, got -1$'),
        ({"pitIndex": 10**30}, r'^"pitIndex" must be between 0 and 5, got 1000000000000000'),
        ({"pitIndex": 1, "player": "one"}, r'^"player" must be "ONE" or "TWO", got \'one\'$'),
        ({"pitIndex": 1, "player": 1}, r'^"player" must be "ONE" or "TWO", got 1$'),
        ({"pitIndex": 1, "player": ["ONE"]}, r'^"player" must be "ONE" or "TWO", got'),
        ({"pitIndex": "x" * 500}, r"got 'xxx.*\.\.\.$"),  # long values are cut short
    ],
)
def test_malformed_replies(reply: JSON, message: str) -> None:
    with pytest.raises(InvalidMoveError, match=message):
        GAME.parse_move(reply)


@pytest.mark.parametrize("move", [Sow(0), Sow(5), Sow(3, 0), Sow(1, 1)])
def test_moves_round_trip_through_the_wire(move: Sow) -> None:
    wire = json.loads(json.dumps(GAME.move_to_wire(move)))
    assert GAME.parse_move(wire) == move


def test_move_wire_form() -> None:
    assert GAME.move_to_wire(Sow(4)) == {"pitIndex": 4}
    assert GAME.move_to_wire(Sow(4, 1)) == {"pitIndex": 4, "player": "TWO"}
    assert GAME.describe_move(Board(), 0, Sow(4)) == "ONE sows pit 4 (6 stones)"


def test_next_move_view_is_the_seeds_board_state() -> None:
    board = GAME.apply(Board(), 0, Sow(1))
    assert GAME.next_move_params(board, 1) == {
        "player": "TWO",
        "boardId": None,
        "nextPlayer": "TWO",
        "rowOne": _row([6, 0, 7, 7, 7, 7], 1),
        "rowTwo": _row([7, 6, 6, 6, 6, 6], 0),
        "gameOver": False,
        "winner": None,
    }
    # The seat is the recipient's; the rest is the same for both.
    view = GAME.next_move_params(Board(), 0)
    assert view["player"] == "ONE" and view["nextPlayer"] == "ONE"
    assert view["rowOne"] == view["rowTwo"] == _row([6] * 6, 0)
    assert json.loads(json.dumps(view)) == view


def test_complete_view_keeps_the_protocols_winner_flag() -> None:
    final = GAME.apply(Board(((5, 5, 5, 1, 0, 5), (0, 3, 0, 0, 0, 0)), (0, 30)), 0, Sow(3))
    expected = {
        "player": "ONE",
        "boardId": None,
        "nextPlayer": "ONE",
        "rowOne": _row([0] * 6, 24),
        "rowTwo": _row([0] * 6, 30),
        "gameOver": True,
    }
    assert GAME.complete_params(final, 0) == expected
    assert GAME.complete_params(final, 1) == {**expected, "player": "TWO"}
    # The runner sends {"gameid", "winner": <bool>, **complete_params}: nothing overrides it.
    assert "winner" not in GAME.complete_params(final, 0)
    # After a forfeit the board is shown as it stood, and the game is over all the same.
    midgame = GAME.complete_params(Board(), 1)
    assert midgame["gameOver"] is True
    assert midgame["rowOne"] == _row([6] * 6, 0)


def test_the_view_at_the_end_names_the_winner_or_a_draw() -> None:
    won = Board((Z, Z), (24, 30))
    assert GAME.next_move_params(won, 0)["winner"] == "TWO"
    assert GAME.next_move_params(won, 0)["gameOver"] is True
    assert GAME.next_move_params(Board((Z, Z), (40, 32)), 1)["winner"] == "ONE"
    assert GAME.next_move_params(Board((Z, Z), (36, 36)), 1)["winner"] is None


@pytest.mark.parametrize(
    "board",
    [
        Board(),
        Board(((0, 0, 6, 6, 6, 6), (6, 6, 6, 6, 0, 6)), (7, 0), 1),
        Board((Z, Z), (36, 36), 0),
        Board(((13, 0, 0, 0, 0, 1), (1,) * 6), (4, 0), 1),
    ],
)
def test_state_json_round_trips_exactly(board: Board) -> None:
    data = GAME.state_to_json(board)
    text = json.dumps(data, allow_nan=False)
    assert GAME.state_from_json(json.loads(text)) == board
    assert GAME.state_to_json(GAME.state_from_json(json.loads(text))) == data


def test_state_json_shape() -> None:
    board = Board(((0, 0, 6, 6, 6, 6), (6, 6, 6, 6, 0, 6)), (7, 0), 1)
    assert GAME.state_to_json(board) == {
        "nextPlayer": "TWO",
        "rowOne": {"pits": [0, 0, 6, 6, 6, 6], "kalahaStones": 7},
        "rowTwo": {"pits": [6, 6, 6, 6, 0, 6], "kalahaStones": 0},
    }


def _state(**change: Any) -> Any:
    data: dict[str, Any] = {
        "nextPlayer": "ONE",
        "rowOne": {"pits": [6] * 6, "kalahaStones": 0},
        "rowTwo": {"pits": [6] * 6, "kalahaStones": 0},
    }
    data.update(change)
    return data


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        _state(nextPlayer="THREE"),
        _state(nextPlayer=0),
        _state(extra=1),
        {k: v for k, v in _state().items() if k != "rowTwo"},
        _state(rowOne={"pits": [6] * 5, "kalahaStones": 0}),
        _state(rowOne={"pits": [6] * 6, "kalahaStones": -1}),
        _state(rowOne={"pits": [6] * 6, "kalahaStones": "0"}),
        _state(rowOne={"pits": [6] * 6, "kalahaStones": True}),
        _state(rowOne={"pits": [6, 6, 6, 6, 6, 6.0], "kalahaStones": 0}),
        _state(rowOne={"pits": [6, 6, 6, 6, 6, True], "kalahaStones": 0}),
        _state(rowOne={"pits": [{"stones": 6}] * 6, "kalahaStones": 0}),
        _state(rowOne={"pits": [6] * 6}),
        _state(rowOne={"pits": [0] * 6, "kalahaStones": 0}),  # one row empty, not swept
    ],
)
def test_bad_state_json_is_refused(data: JSON) -> None:
    with pytest.raises(ValueError, match=r"Kalaha|impossible"):
        GAME.state_from_json(data)

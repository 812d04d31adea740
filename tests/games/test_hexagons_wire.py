"""Hexagons on the wire: reading moves, the Game object a bot sees, and the stored state."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from merknera.games.base import JSON, InvalidMoveError
from merknera.games.hexagons import Hexagons, HexagonsState, Point, lattice, line_between

GAME = Hexagons()
PLAYERS = ("amy", "bob")


def new(rows: int = 5, cols: int = 4) -> HexagonsState:
    return GAME.new({"rows": rows, "cols": cols}, PLAYERS, random.Random(0))


def play(state: HexagonsState, *lines: tuple[tuple[int, int], tuple[int, int]]) -> HexagonsState:
    for a, b in lines:
        seat = GAME.to_move(state)
        assert seat is not None
        state = GAME.apply(state, seat, line_between(a, b))
    return state


def random_game(seed: int, rows: int = 5, cols: int = 4) -> list[HexagonsState]:
    rng = random.Random(seed)
    states = [GAME.new({"rows": rows, "cols": cols}, PLAYERS, rng)]
    while (seat := GAME.to_move(states[-1])) is not None:
        move = rng.choice(list(GAME.legal_moves(states[-1], seat)))
        states.append(GAME.apply(states[-1], seat, move))
    return states


# -- moves ---------------------------------------------------------------------------


@pytest.mark.parametrize("reply", [
    {"line": [{"row": 1, "col": 1}, {"row": 1, "col": 2}]},
    {"line": [{"row": 1, "col": 2}, {"row": 1, "col": 1}]},
    {"Line": [{"ROW": 1, "Col": 2}, {"row": 1, "col": 1, "note": "x"}], "why": "greedy"},
])
def test_a_line_in_either_order(reply: JSON) -> None:
    assert GAME.parse_move(reply) == (Point(1, 1), Point(1, 2))


@pytest.mark.parametrize(("reply", "message"), [
    (None, "expected {\"line\": [{\"row\", \"col\"}, {\"row\", \"col\"}]}, got None"),
    ([{"row": 1, "col": 1}, {"row": 1, "col": 2}], "expected {\"line\""),
    ("1,1-1,2", "expected {\"line\""),
    ({}, 'the reply has no "line"'),
    ({"lines": []}, 'the reply has no "line"'),
    ({"line": None}, 'the reply has no "line"'),
    ({"line": {"row": 1, "col": 1}}, '"line" must be a list of two coordinates'),
    ({"line": [{"row": 1, "col": 1}]}, '"line" must be a list of two coordinates'),
    ({"line": [{"row": 1, "col": 1}] * 3}, '"line" must be a list of two coordinates'),
    ({"line": [[1, 1], [1, 2]]}, 'endpoint 1 must be an object {"row", "col"}, got [1, 1]'),
    ({"line": [{"row": 1, "col": 1}, "1,2"]}, "endpoint 2 must be an object"),
    ({"line": [{"row": 1}, {"row": 1, "col": 2}]}, 'endpoint 1 has no "col"'),
    ({"line": [{"row": 1, "col": 1}, {"col": 2}]}, 'endpoint 2 has no "row"'),
    ({"line": [{"row": 1.0, "col": 1}, {"row": 1, "col": 2}]},
     '"row" of endpoint 1 must be an integer, got 1.0'),
    ({"line": [{"row": 1, "col": 1}, {"row": 1, "col": True}]},
     '"col" of endpoint 2 must be an integer, got True'),
    ({"line": [{"row": "1", "col": 1}, {"row": 1, "col": 2}]},
     '"row" of endpoint 1 must be an integer, got \'1\''),
])
def test_malformed_replies(reply: JSON, message: str) -> None:
    with pytest.raises(InvalidMoveError) as caught:
        GAME.parse_move(reply)
    assert str(caught.value).startswith("invalid line data: ")
    assert message in str(caught.value)


def test_moves_round_trip_through_the_wire() -> None:
    for line in lattice(5, 4).lines:
        wire = json.loads(json.dumps(GAME.move_to_wire(line)))
        assert GAME.parse_move(wire) == line
    assert GAME.move_to_wire(line_between((2, 1), (1, 1))) == {
        "line": [{"row": 1, "col": 1}, {"row": 2, "col": 1}]}


# -- the Game object -----------------------------------------------------------------


def test_next_move_params_are_the_game_object() -> None:
    # Amy draws (1,1)-(1,2) and bob (0,0)-(0,1).
    state = play(new(), ((1, 2), (1, 1)), ((0, 1), (0, 0)))
    assert GAME.next_move_params(state, 0) == {
        "you": "amy",
        "rows": 5,
        "cols": 4,
        "lines": [
            {"endpoints": [{"row": 1, "col": 1}, {"row": 1, "col": 2}],
             "owner": {"name": "amy", "score": 0}},
            {"endpoints": [{"row": 0, "col": 0}, {"row": 0, "col": 1}],
             "owner": {"name": "bob", "score": 0}},
        ],
        "hexagons": [],
        "players": [{"name": "amy", "score": 0}, {"name": "bob", "score": 0}],
        "state": "in play",
    }
    assert GAME.next_move_params(state, 1)["you"] == "bob"
    assert GAME.new_game_params(state, 1) == {"rows": 5, "cols": 4}


def test_owners_carry_their_current_score_and_complete_says_completed() -> None:
    board = lattice(5, 4)
    state = play(new(), *board.rings[Point(2, 1)])  # bob closes the ring and the game
    assert GAME.to_move(state) is None
    params: dict[str, Any] = GAME.complete_params(state, 0)
    assert params["you"] == "amy" and params["state"] == "completed"
    assert params["hexagons"] == [{"center": {"row": 2, "col": 1},
                                   "owner": {"name": "bob", "score": 1}}]
    assert params["players"] == [{"name": "amy", "score": 0}, {"name": "bob", "score": 1}]
    # The first line was bob's too; its owner shows bob's score now, as the original did.
    assert params["lines"][1]["owner"] == {"name": "bob", "score": 1}
    assert [line["owner"]["name"] for line in params["lines"]] == ["amy", "bob"] * 3
    assert json.loads(json.dumps(params)) == params


def test_every_view_of_a_random_game_is_plain_json_with_sorted_endpoints() -> None:
    for state in random_game(5, 7, 6):
        seat = GAME.to_move(state)
        view: Any = GAME.next_move_params(state, 0 if seat is None else seat)
        assert json.loads(json.dumps(view, allow_nan=False)) == view
        for line in view["lines"]:
            a, b = line["endpoints"]
            assert (a["row"], a["col"]) < (b["row"], b["col"])


# -- the stored state --------------------------------------------------------------------


def test_the_state_json_shape() -> None:
    state = play(new(), *lattice(5, 4).rings[Point(1, 1)])
    assert GAME.state_to_json(state) == {
        "rows": 5, "cols": 4, "players": ["amy", "bob"],
        "lines": [[*a, *b, i % 2] for i, (a, b) in enumerate(lattice(5, 4).rings[Point(1, 1)])],
        "hexagons": [[1, 1, 1]],
        "scores": [0, 1],
        "turn": 1,
    }


@pytest.mark.parametrize("seed", range(4))
def test_every_state_of_a_game_round_trips(seed: int) -> None:
    for state in random_game(seed):
        data = json.loads(json.dumps(GAME.state_to_json(state)))
        again = GAME.state_from_json(data)
        assert again == state
        assert (again.scores, again.claimed, again.drawn) == (
            state.scores, state.claimed, state.drawn)
        assert GAME.state_to_json(again) == data


def _tampered(change: str) -> dict[str, Any]:
    data = GAME.state_to_json(random_game(3)[-1])
    assert isinstance(data, dict)
    lines: list[list[int]] = data["lines"]  # type: ignore[assignment]
    if change == "turn":
        data["turn"] = 0
    elif change == "scores":
        data["scores"] = [9, 9]
    elif change == "hexagons":
        data["hexagons"] = []
    elif change == "seat":
        lines[0][4] = 1
    elif change == "repeat":
        lines.insert(1, [*lines[0][:4], 1])
    elif change == "short":
        lines[0] = lines[0][:4]
    elif change == "bool":
        lines[0][4] = False
    elif change == "size":
        data["rows"] = 4
    elif change == "key":
        data["extra"] = 1
    return data


@pytest.mark.parametrize(("change", "message"), [
    ("turn", "turn 0 do not follow"),
    ("scores", "scores [9, 9] do not follow"),
    ("hexagons", "hexagons [] do not follow"),
    ("seat", "it is amy's turn, not bob's"),
    ("repeat", "line already placed"),
    ("short", "not a Hexagons line"),
    ("bool", "not a Hexagons line"),
    ("size", "rows must be odd"),
    ("key", "not a Hexagons state"),
])
def test_states_that_do_not_follow_from_play_are_refused(change: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        GAME.state_from_json(_tampered(change))


# -- determinism and the house rules -------------------------------------------------------


def test_the_rng_plays_no_part_and_seeds_replay() -> None:
    assert GAME.new(GAME.default_settings, PLAYERS, random.Random(1)) == GAME.new(
        GAME.default_settings, PLAYERS, random.Random(2))
    assert random_game(11) == random_game(11)
    assert random_game(11) != random_game(12)


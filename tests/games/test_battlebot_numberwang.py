"""Numberwang (merknera/games/battlebot.py) through its Battlebot view.

Turns go through ``parse_move`` as a bot's reply ``{"n": ...}``, then ``apply``, seats
alternating from ``players[0]``.
"""

from __future__ import annotations

import json
import math
import random
import sys
from dataclasses import dataclass

import pytest

from merknera.games.base import (
    JSON,
    IllegalMoveError,
    InvalidMoveError,
    SeatResult,
    Termination,
)
from merknera.games.battlebot import (
    MAX_TURNS,
    Numberwang,
    NumberwangState,
    NumberwangTurn,
)
from merknera.games.testing import playout

GAME = Numberwang()
PLAYERS = ("alice", "bob")
DRAW = "draw"
BIG = int(sys.float_info.max)
"""The largest integer a turn may send (the largest double)."""


def play(turns: list[int | float], max_turns: int | None = None) -> NumberwangState:
    settings = {} if max_turns is None else {"maxTurns": max_turns}
    state = GAME.new(settings, PLAYERS, random.Random(0))
    for ply, n in enumerate(turns):
        assert GAME.to_move(state) == ply % 2
        state = GAME.apply(state, ply % 2, GAME.parse_move({"n": n}))
    return state


@dataclass(frozen=True)
class Row:
    """One line of the rule table."""

    name: str
    turns: list[int | float]
    n: int | float
    """``board.n`` in the view afterwards (compared with its type)."""
    result: int | str | None
    detail: str | None = None
    max_turns: int | None = None


RULES = [
    Row("start", [], 0, None),
    Row("players[0] wins at once with 10", [10], 10, 0, "n reached 10, 10 or more: alice wins"),
    Row("9.99 is not yet 10", [9.99], 9.99, None),
    Row("players[1] wins on its turn with -10", [0, -10], -10, 1,
        "n reached -10, -10 or less: bob wins"),
    Row("players[1] with -19.5 after 9.5", [9.5, -19.5], -10, 1,
        "n reached -10, -10 or less: bob wins"),
    Row("players[1] reaching 10 makes players[0] win", [5, 5], 10, 0,
        "n reached 10, 10 or more: alice wins"),
    Row("players[0] reaching -10 makes players[1] win", [-10], -10, 1,
        "n reached -10, -10 or less: bob wins"),
    Row("negatives add up", [-3, -4, -3], -10, 1, "n reached -10, -10 or less: bob wins"),
    Row("fractions add up exactly", [0.1, 0.2], 0.3, None),
    Row("decimals, not doubles: 0.7 + 0.1 + 9.2 is 10", [0.7, 0.1, 9.2], 10, 0,
        "n reached 10, 10 or more: alice wins"),
    Row("quarters", [2.5, 2.5, 2.5, 2.5], 10, 0, "n reached 10, 10 or more: alice wins"),
    Row("beyond 10", [3, 4, 12.25], 19.25, 0, "n reached 19.25, 10 or more: alice wins"),
    Row("an exponent", [1e-3, -2e-3], -0.001, None),
    Row("minus zero is zero", [-0.0], 0, None),
    Row("integral floats are integers", [2.0, 3.0], 5, None),
    Row("a huge integer stays exact", [10**20], 10**20, 0,
        "n reached 100000000000000000000, 10 or more: alice wins"),
    Row("the largest double", [-BIG], -BIG, 1),
    Row("a sum between doubles is rounded to one", [1, 1e-300], 1, None),
    Row("a tiny sum stays exact", [1e-300, 2e-300], 3e-300, None),
    Row("the turn limit: a draw", [1, -1, 1, -1], 0, DRAW,
        "n was 0 after 4 turns, the most allowed; it never reached 10 or -10: a draw", 4),
    Row("a win on the last turn is a win", [0, -10], -10, 1,
        "n reached -10, -10 or less: bob wins", 2),
    Row("one turn allowed", [9], 9, DRAW,
        "n was 9 after 1 turn, the most allowed; it never reached 10 or -10: a draw", 1),
]


@pytest.mark.parametrize("row", RULES, ids=[row.name for row in RULES])
def test_rules_through_the_view(row: Row) -> None:
    state = play(row.turns, row.max_turns)
    view = GAME.next_move_params(state, len(row.turns) % 2)["state"]
    assert isinstance(view, dict)
    assert view["board"] == {"n": row.n}
    assert type(view["board"]["n"]) is type(row.n)
    assert view["nextPlayer"] == PLAYERS[len(row.turns) % 2]
    outcome = GAME.outcome(state)
    if row.result is None:
        assert outcome is None
        assert view["complete"] is False
        assert set(view) == {"players", "nextPlayer", "complete", "board"}
        assert GAME.to_move(state) == len(row.turns) % 2
        return
    assert outcome is not None
    assert outcome.termination is Termination.NORMAL
    if row.detail is not None:
        assert outcome.detail == row.detail
    assert GAME.to_move(state) is None
    assert GAME.legal_moves(state, 0) == GAME.legal_moves(state, 1) == ()
    assert view["complete"] is True
    if row.result == DRAW:
        assert outcome.ranks == (0, 0)
        assert (view["victor"], view["reason"]) == (None, "maxTurns")
    else:
        assert isinstance(row.result, int)
        assert outcome.result_for(row.result) is SeatResult.WIN
        assert outcome.result_for(1 - row.result) is SeatResult.LOSS
        assert (view["victor"], view["reason"]) == (PLAYERS[row.result], "complete")
    assert GAME.complete_params(state, 1) == {"state": view}


def test_a_hundred_tenths_make_exactly_ten_on_the_last_turn() -> None:
    # With doubles the sum would be 9.99999999999998 and the game a draw.
    state = play([0.1] * 99)
    assert GAME.view(state)["board"] == {"n": 9.9}
    state = GAME.apply(state, 1, NumberwangTurn(0.1))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (0,)
    assert outcome.detail == "n reached 10, 10 or more: alice wins"


def test_the_default_limit_is_a_hundred_turns() -> None:
    assert GAME.default_settings == {"maxTurns": 100} and MAX_TURNS == GAME.max_moves == 100
    state = play([0] * 99)
    assert GAME.to_move(state) == 1
    state = GAME.apply(state, 1, NumberwangTurn(0))
    outcome = GAME.outcome(state)
    assert GAME.to_move(state) is None
    assert outcome is not None and outcome.ranks == (0, 0)
    assert outcome.detail == (
        "n was 0 after 100 turns, the most allowed; it never reached 10 or -10: a draw")


@pytest.mark.parametrize("limit", [0, -1, 101, 1.5, 10.0, "10", True, None, [10]])
def test_max_turns_must_be_an_integer_from_1_to_100(limit: JSON) -> None:
    with pytest.raises(ValueError, match="maxTurns must be an integer from 1 to 100"):
        GAME.new({"maxTurns": limit}, PLAYERS, random.Random(0))


def test_the_state_shapes() -> None:
    state = GAME.new(GAME.default_settings, PLAYERS, random.Random(5))
    initial = {"players": ["alice", "bob"], "nextPlayer": "alice", "complete": False,
               "board": {"n": 0}}
    assert GAME.next_move_params(state, 0) == {"state": initial}
    assert GAME.state_to_json(state) == {**initial, "turns": 0, "maxTurns": 100}
    state = play([2.5])
    assert GAME.next_move_params(state, 1) == {"state": {
        "players": ["alice", "bob"], "nextPlayer": "bob", "complete": False,
        "board": {"n": 2.5}}}
    state = GAME.apply(state, 1, NumberwangTurn(-12.5))
    final = {"players": ["alice", "bob"], "nextPlayer": "alice", "complete": True,
             "board": {"n": -10}, "victor": "bob", "reason": "complete"}
    assert GAME.complete_params(state, 0) == GAME.complete_params(state, 1) == {"state": final}
    assert GAME.state_to_json(state) == {**final, "turns": 2, "maxTurns": 100}


def test_complete_for_a_game_the_platform_ended() -> None:
    assert GAME.complete_params(play([3]), 0) == {"state": {
        "players": ["alice", "bob"], "nextPlayer": "bob", "complete": True,
        "board": {"n": 3}, "victor": None, "reason": "platform"}}


# -- illegal and malformed turns --------------------------------------------------------------

@pytest.mark.parametrize(("turns", "seat", "message"), [
    ([], 1, "it is alice's turn, not bob's"),
    ([1], 0, "it is bob's turn, not alice's"),
    ([10], 1, "the game is over; 5 cannot be added"),
])
def test_illegal_turns(turns: list[int | float], seat: int, message: str) -> None:
    with pytest.raises(IllegalMoveError) as caught:
        GAME.apply(play(turns), seat, NumberwangTurn(5))
    assert str(caught.value) == message


MALFORMED: list[tuple[str, JSON, str]] = [
    ("a number", 4, 'expected an object {"n": <number>}, got 4'),
    ("a list", [4], 'expected an object {"n": <number>}, got [4]'),
    ("a string", "n", 'expected an object {"n": <number>}, got \'n\''),
    ("null", None, 'expected an object {"n": <number>}, got None'),
    ("no n", {}, 'the reply has no "n": {}'),
    ("another key", {"m": 1}, 'the reply has no "n"'),
    ("n null", {"n": None}, 'the reply has no "n"'),
    ("n a string", {"n": "5"}, "\"n\" must be a number, got '5'"),
    ("n true", {"n": True}, '"n" must be a number, got True'),
    ("n false", {"n": False}, '"n" must be a number, got False'),
    ("n a list", {"n": [1]}, '"n" must be a number, got [1]'),
    ("n an object", {"n": {"value": 1}}, '"n" must be a number, got {'),
    ("NaN", {"n": math.nan}, '"n" must be a finite number, got nan'),
    ("Infinity", {"n": math.inf}, '"n" must be a finite number, got inf'),
    ("-Infinity", {"n": -math.inf}, '"n" must be a finite number, got -inf'),
    ("beyond a double", {"n": BIG + 1}, '"n" is beyond the range of a double'),
    ("far beyond", {"n": -(10**400)}, '"n" is beyond the range of a double'),
]


@pytest.mark.parametrize(("reply", "message"), [row[1:] for row in MALFORMED],
                         ids=[row[0] for row in MALFORMED])
def test_malformed_replies_are_invalid(reply: JSON, message: str) -> None:
    with pytest.raises(InvalidMoveError) as caught:
        GAME.parse_move(reply)
    assert str(caught.value).startswith(message)
    assert not isinstance(caught.value, IllegalMoveError)


@pytest.mark.parametrize(("reply", "n"), [
    ({"n": 2}, 2), ({"n": -0.5}, -0.5), ({"N": 7}, 7), ({"n": 1e308}, 1e308),
    ({"n": BIG}, BIG), ({"n": 3, "player": "x", "time": 1}, 3),
])
def test_well_formed_replies_keep_the_number_sent(reply: JSON, n: int | float) -> None:
    turn = GAME.parse_move(reply)
    assert turn == NumberwangTurn(n) and type(turn.n) is type(n)
    assert GAME.move_to_wire(turn) == {"n": n}
    assert GAME.parse_move(json.loads(json.dumps(GAME.move_to_wire(turn)))) == turn


def test_legal_moves_are_a_sample_and_all_legal() -> None:
    state = play([1])
    sample = GAME.legal_moves(state, 1)
    assert [turn.n for turn in sample] == [-10, -2.5, -1, -0.1, 0, 0.1, 1, 2.5, 10]
    assert GAME.legal_moves(state, 0) == ()
    for turn in sample:
        GAME.apply(state, 1, turn)
    # Numbers outside the sample are legal too.
    GAME.apply(state, 1, NumberwangTurn(-123.456))


def test_describe_move() -> None:
    assert GAME.describe_move(play([0.1]), 1, NumberwangTurn(0.2)) == \
        "bob adds 0.2: n goes from 0.1 to 0.3"


# -- round trips and determinism ------------------------------------------------------------

@pytest.mark.parametrize("seed", range(1, 13))
def test_random_playouts_follow_the_house_rules(seed: int) -> None:
    first = playout(GAME, 2, seed)
    assert first.states == playout(GAME, 2, seed).states
    for snapshot in first.states:
        assert GAME.state_to_json(GAME.state_from_json(snapshot)) == snapshot


@pytest.mark.parametrize("turns", [[0.1, 0.2], [1e-300, 2e-300], [10**20], [-BIG], [1, 1e-300],
                                   [0.30000000000000004], [1 / 3, 1 / 7], [0] * 100])
def test_states_round_trip_exactly(turns: list[int | float]) -> None:
    state = play(turns)
    text = json.dumps(GAME.state_to_json(state))
    assert GAME.state_from_json(json.loads(text)) == state
    assert json.dumps(GAME.state_to_json(GAME.state_from_json(json.loads(text)))) == text


def record(turns: list[int | float]) -> dict[str, JSON]:
    """The platform's record of the state after ``turns``."""
    data = GAME.state_to_json(play(turns))
    assert isinstance(data, dict)
    return data


INCONSISTENT: list[tuple[str, JSON]] = [
    ("not an object", 0),
    ("no board", {"players": ["a", "b"], "nextPlayer": "a", "complete": False, "turns": 0,
                  "maxTurns": 100}),
    ("n a string", {**record([]), "board": {"n": "0"}}),
    ("n true", {**record([]), "board": {"n": True}}),
    ("wrong nextPlayer", {**record([1]), "nextPlayer": "alice"}),
    ("complete too early", {**record([1]), "complete": True}),
    ("n past 10 but going on", {**record([1]), "board": {"n": 11}}),
    ("turns past the limit", {**record([1]), "turns": 101}),
    ("turns past the limit, complete", {**record([1]), "turns": 101, "complete": True,
                                        "victor": None, "reason": "maxTurns"}),
    ("negative turns", {**record([]), "turns": -2}),
    ("limit too high", {**record([]), "maxTurns": 1000}),
]


@pytest.mark.parametrize("data", [row[1] for row in INCONSISTENT],
                         ids=[row[0] for row in INCONSISTENT])
def test_state_from_json_refuses_inconsistent_states(data: JSON) -> None:
    with pytest.raises(ValueError, match=r"Numberwang state|maxTurns"):
        GAME.state_from_json(data)


def test_static_facts() -> None:
    assert (GAME.mnemonic, GAME.name, GAME.calls.prefix) == (
        "NUMBERWANG", "Numberwang", "Numberwang")
    assert (GAME.min_seats, GAME.max_seats) == (2, 2)
    with pytest.raises(ValueError, match="2 players"):
        GAME.new({}, ["solo"], random.Random(0))

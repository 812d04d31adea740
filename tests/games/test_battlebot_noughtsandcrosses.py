"""Noughts and crosses (merknera/games/battlebot.py) through its Battlebot view.

Games are played the way the runner plays them: each turn goes through ``parse_move`` as a
bot's reply ``{"mark", "space"}``, then ``apply``; positions are read back from the view.
Moves in the tables are spaces ``"<row><col>"`` played alternately, X first.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import pytest

from merknera.games.base import (
    JSON,
    IllegalMoveError,
    InvalidMoveError,
    MoveError,
    SeatResult,
    Termination,
)
from merknera.games.battlebot import NoughtsAndCrosses, NoughtsState, NoughtsTurn
from merknera.games.testing import playout
from merknera.games.tictactoe import LINES, Board

GAME = NoughtsAndCrosses()
PLAYERS = ("crosses", "noughts")
CROSS, NOUGHT = 0, 1
DRAW = "draw"


def reply(mark: str, space: str) -> JSON:
    """A bot's turn object for ``space`` written as ``"<row><col>"``."""
    return {"mark": mark, "space": [int(space[0]), int(space[1])]}


def play(moves: str) -> NoughtsState:
    """The state after the spaces in ``moves`` (``"11 00 ..."``), through the wire."""
    state = GAME.new({}, PLAYERS, random.Random(0))
    for ply, space in enumerate(moves.split()):
        seat = ply % 2
        assert GAME.to_move(state) == seat
        state = GAME.apply(state, seat, GAME.parse_move(reply("XO"[seat], space)))
    return state


def board(text: str) -> list[JSON]:
    """``"XO./.X./..."`` as Battlebot's board rows."""
    rows: list[JSON] = [[cell.replace(".", "") for cell in row] for row in text.split("/")]
    return rows


@dataclass(frozen=True)
class Row:
    """One line of the rule table."""

    name: str
    moves: str
    board: str
    result: int | str | None
    """The winning seat, DRAW, or None while the game goes on."""
    detail: str | None = None


def x_won(line: str) -> str:
    return f"crosses (X) completed {line}"


def o_won(line: str) -> str:
    return f"noughts (O) completed {line}"


DIAGONAL, ANTI_DIAGONAL = "the diagonal [0, 0]-[2, 2]", "the diagonal [0, 2]-[2, 0]"

RULES = [
    Row("empty board", "", ".../.../...", None),
    Row("X in the centre", "11", ".../.X./...", None),
    Row("O answers in a corner", "11 00", "O../.X./...", None),
    Row("eight moves, one space left", "00 01 02 11 10 12 21 20", "XOX/XOO/OX.", None),
    # -- X completes each of the 8 lines on the 5th move ------------------------------------
    Row("X row 0", "00 10 01 11 02", "XXX/OO./...", CROSS, x_won("row 0")),
    Row("X row 1", "10 00 11 01 12", "OO./XXX/...", CROSS, x_won("row 1")),
    Row("X row 2", "20 00 21 01 22", "OO./.../XXX", CROSS, x_won("row 2")),
    Row("X column 0", "00 01 10 11 20", "XO./XO./X..", CROSS, x_won("column 0")),
    Row("X column 1", "01 00 11 02 21", "OXO/.X./.X.", CROSS, x_won("column 1")),
    Row("X column 2", "02 00 12 01 22", "OOX/..X/..X", CROSS, x_won("column 2")),
    Row("X diagonal", "00 01 11 02 22", "XOO/.X./..X", CROSS, x_won(DIAGONAL)),
    Row("X anti-diagonal", "02 00 11 01 20", "OOX/.X./X..", CROSS, x_won(ANTI_DIAGONAL)),
    # -- O completes each of the 8 lines on the 6th move ------------------------------------
    Row("O row 0", "10 00 11 01 22 02", "OOO/XX./..X", NOUGHT, o_won("row 0")),
    Row("O row 1", "00 10 01 11 22 12", "XX./OOO/..X", NOUGHT, o_won("row 1")),
    Row("O row 2", "00 20 01 21 12 22", "XX./..X/OOO", NOUGHT, o_won("row 2")),
    Row("O column 0", "01 00 02 10 22 20", "OXX/O../O.X", NOUGHT, o_won("column 0")),
    Row("O column 1", "00 01 02 11 20 21", "XOX/.O./XO.", NOUGHT, o_won("column 1")),
    Row("O column 2", "00 02 01 12 20 22", "XXO/..O/X.O", NOUGHT, o_won("column 2")),
    Row("O diagonal", "01 00 02 11 10 22", "OXX/XO./..O", NOUGHT, o_won(DIAGONAL)),
    Row("O anti-diagonal", "00 02 01 11 22 20", "XXO/.O./O.X", NOUGHT, o_won(ANTI_DIAGONAL)),
    # -- full boards ------------------------------------------------------------------------
    Row("full board, no line", "00 01 02 11 10 12 21 20 22", "XOX/XOO/OXX", DRAW,
        "the board is full with no line"),
    Row("X wins with the 9th move (a win, not a draw)", "00 01 02 11 10 12 21 22 20",
        "XOX/XOO/XXO", CROSS, x_won("column 0")),
]


def test_the_table_covers_every_line_for_both_marks() -> None:
    wins = {(row.result, row.board) for row in RULES if isinstance(row.result, int)}
    for seat, mark in ((CROSS, "X"), (NOUGHT, "O")):
        for line in LINES:
            assert any(won == seat and all(text.replace("/", "")[i] == mark for i in line)
                       for won, text in wins), f"no row where {mark} completes {line}"


@pytest.mark.parametrize("row", RULES, ids=[row.name for row in RULES])
def test_rules_through_the_view(row: Row) -> None:
    state = play(row.moves)
    plies = len(row.moves.split())
    view = GAME.next_move_params(state, plies % 2)["state"]
    assert isinstance(view, dict)
    assert view["board"] == board(row.board)
    assert view["nextPlayer"] == PLAYERS[plies % 2]  # Battlebot swaps it on the last move too
    outcome = GAME.outcome(state)
    if row.result is None:
        assert outcome is None
        assert view["complete"] is False
        assert "victor" not in view and "reason" not in view
        assert GAME.to_move(state) == plies % 2
        assert len(GAME.legal_moves(state, plies % 2)) == 9 - plies
        return
    assert outcome is not None
    assert outcome.termination is Termination.NORMAL
    assert outcome.detail == row.detail
    assert GAME.to_move(state) is None
    assert GAME.legal_moves(state, CROSS) == GAME.legal_moves(state, NOUGHT) == ()
    assert view["complete"] is True
    assert view["reason"] == "complete"
    if row.result == DRAW:
        assert outcome.ranks == (0, 0)
        assert view["victor"] is None
    else:
        assert isinstance(row.result, int)
        assert outcome.result_for(row.result) is SeatResult.WIN
        assert outcome.result_for(1 - row.result) is SeatResult.LOSS
        assert view["victor"] == PLAYERS[row.result]
    assert GAME.complete_params(state, CROSS) == {"state": view}


# -- the state shapes of research/seed-systems.md a.7 -------------------------------------------

def test_the_initial_state_is_battlebots() -> None:
    state = GAME.new({}, ["IdiotBot2", "IdiotBot"], random.Random(1))
    expected = {
        "players": ["IdiotBot2", "IdiotBot"],
        "complete": False,
        "board": [["", "", ""], ["", "", ""], ["", "", ""]],
        "nextPlayer": "IdiotBot2",
        "marks": {"X": "IdiotBot2", "O": "IdiotBot"},
    }
    assert GAME.next_move_params(state, 0) == {"state": expected}
    assert GAME.state_to_json(state) == expected
    assert GAME.to_move(state) == 0


def test_the_readmes_final_state() -> None:
    """The Battlebot README's last update: X completes column 2 with [1, 2]."""
    state = GAME.new({}, ["IdiotBot2", "IdiotBot"], random.Random(1))
    for ply, space in enumerate(["10", "00", "21", "01", "02", "11", "22", "20", "12"]):
        state = GAME.apply(state, ply % 2, GAME.parse_move(reply("XO"[ply % 2], space)))
        if ply == 1:
            assert GAME.next_move_params(state, 0)["state"] == {
                "players": ["IdiotBot2", "IdiotBot"], "complete": False,
                "board": [["O", "", ""], ["X", "", ""], ["", "", ""]],
                "nextPlayer": "IdiotBot2", "marks": {"X": "IdiotBot2", "O": "IdiotBot"}}
    final: JSON = {
        "complete": True,
        "players": ["IdiotBot2", "IdiotBot"],
        "reason": "complete",
        "board": [["O", "O", "X"], ["X", "O", "X"], ["O", "X", "X"]],
        "marks": {"X": "IdiotBot2", "O": "IdiotBot"},
        "nextPlayer": "IdiotBot",
        "victor": "IdiotBot2",
    }
    for seat in (0, 1):
        assert GAME.complete_params(state, seat) == {"state": final}
    assert GAME.state_to_json(state) == final
    assert GAME.state_from_json(final) == state


def test_complete_for_a_game_the_platform_ended() -> None:
    """A forfeit: the board is not finished, so the state names no victor (see ``winner``)."""
    state = play("11 00")
    assert GAME.complete_params(state, NOUGHT)["state"] == {
        "players": list(PLAYERS), "nextPlayer": "crosses", "complete": True,
        "board": board("O../.X./..."), "marks": {"X": "crosses", "O": "noughts"},
        "victor": None, "reason": "platform"}
    assert GAME.state_to_json(state)["complete"] is False  # type: ignore[index,call-overload]


# -- illegal turns -----------------------------------------------------------------------------

ILLEGAL = [
    ("X sends O's mark", "", CROSS, ("O", "11"), "your mark is X, not O"),
    ("O sends X's mark", "11", NOUGHT, ("X", "00"), "your mark is O, not X"),
    ("space taken by X", "11", NOUGHT, ("O", "11"), "the space [1, 1] is already taken by X"),
    ("space taken by O", "11 02", CROSS, ("X", "02"), "the space [0, 2] is already taken by O"),
    ("O moves first", "", NOUGHT, ("O", "11"), "it is crosses's turn (X), not noughts's (O)"),
    ("X moves twice", "11", CROSS, ("X", "00"), "it is noughts's turn (O), not crosses's (X)"),
    ("after X won", "00 10 01 11 02", NOUGHT, ("O", "12"),
     "the game is over; O cannot be played at [1, 2]"),
    ("after a draw", "00 01 02 11 10 12 21 20 22", NOUGHT, ("O", "00"),
     "the game is over; O cannot be played at [0, 0]"),
]


@pytest.mark.parametrize(("moves", "seat", "turn", "message"),
                         [row[1:] for row in ILLEGAL], ids=[row[0] for row in ILLEGAL])
def test_illegal_turns_say_why(moves: str, seat: int, turn: tuple[str, str],
                               message: str) -> None:
    state = play(moves)
    move = GAME.parse_move(reply(*turn))  # well formed: it parses
    with pytest.raises(IllegalMoveError) as caught:
        GAME.apply(state, seat, move)
    assert str(caught.value) == message
    assert not isinstance(caught.value, InvalidMoveError)


def test_apply_leaves_the_old_state_alone() -> None:
    before = play("11")
    after = GAME.apply(before, NOUGHT, NoughtsTurn("O", 0, 0))
    assert GAME.state_to_json(before) != GAME.state_to_json(after)
    assert before == play("11")
    with pytest.raises(AttributeError):
        before.board = Board()  # type: ignore[misc]


# -- malformed replies -------------------------------------------------------------------------

SHAPE = '{"mark": "X" or "O", "space": [row, col]}'
SPACE = '"space" must be [row, col] of integers 0-2, got '
MALFORMED: list[tuple[str, JSON, str]] = [
    ("a number", 4, f"expected an object {SHAPE}, got 4"),
    ("a list", ["X", [1, 1]], f"expected an object {SHAPE}, got ['X', [1, 1]]"),
    ("a string", "X11", f"expected an object {SHAPE}, got 'X11'"),
    ("null", None, f"expected an object {SHAPE}, got None"),
    ("true", True, f"expected an object {SHAPE}, got True"),
    ("tic-tac-toe's reply", {"position": 4}, "the reply has no \"mark\": {'position': 4}"),
    ("no space", {"mark": "X"}, "the reply has no \"space\": {'mark': 'X'}"),
    ("mark null", {"mark": None, "space": [1, 1]}, 'the reply has no "mark"'),
    ("mark lower case", {"mark": "x", "space": [1, 1]}, "\"mark\" must be \"X\" or \"O\", got 'x'"),
    ("mark XO", {"mark": "XO", "space": [1, 1]}, "\"mark\" must be \"X\" or \"O\", got 'XO'"),
    ("mark empty", {"mark": "", "space": [1, 1]}, "\"mark\" must be \"X\" or \"O\", got ''"),
    ("mark a number", {"mark": 1, "space": [1, 1]}, '"mark" must be "X" or "O", got 1'),
    ("mark a list", {"mark": ["X"], "space": [1, 1]}, "\"mark\" must be \"X\" or \"O\", got ['X']"),
    ("space a string", {"mark": "X", "space": "11"}, f"{SPACE}'11'"),
    ("space an object", {"mark": "X", "space": {"row": 1, "col": 1}},
     f"{SPACE}{{'row': 1, 'col': 1}}"),
    ("space of one", {"mark": "X", "space": [1]}, f"{SPACE}[1]"),
    ("space of three", {"mark": "X", "space": [1, 1, 1]}, f"{SPACE}[1, 1, 1]"),
    ("space empty", {"mark": "X", "space": []}, f"{SPACE}[]"),
    ("row 1.5 (invalid on Battlebot too)", {"mark": "X", "space": [1.5, 0]}, f"{SPACE}[1.5, 0]"),
    ("col 0.5", {"mark": "X", "space": [0, 0.5]}, f"{SPACE}[0, 0.5]"),
    ("row true", {"mark": "X", "space": [True, 0]}, f"{SPACE}[True, 0]"),
    ("col false", {"mark": "X", "space": [0, False]}, f"{SPACE}[0, False]"),
    ("row -1", {"mark": "X", "space": [-1, 0]}, f"{SPACE}[-1, 0]"),
    ("row 3", {"mark": "X", "space": [3, 0]}, f"{SPACE}[3, 0]"),
    ("col 3.0", {"mark": "X", "space": [0, 3.0]}, f"{SPACE}[0, 3.0]"),
    ("strings", {"mark": "X", "space": ["1", "1"]}, f"{SPACE}['1', '1']"),
    ("a null", {"mark": "X", "space": [None, 0]}, f"{SPACE}[None, 0]"),
    ("nested", {"mark": "X", "space": [[1], [1]]}, f"{SPACE}[[1], [1]]"),
]


@pytest.mark.parametrize(("reply_", "message"), [row[1:] for row in MALFORMED],
                         ids=[row[0] for row in MALFORMED])
def test_malformed_replies_are_invalid(reply_: JSON, message: str) -> None:
    with pytest.raises(InvalidMoveError) as caught:
        GAME.parse_move(reply_)
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, MoveError)
    assert not isinstance(caught.value, IllegalMoveError)


@pytest.mark.parametrize(("reply_", "expected"), [
    ({"mark": "X", "space": [2, 2]}, NoughtsTurn("X", 2, 2)),
    ({"mark": "O", "space": [0, 1]}, NoughtsTurn("O", 0, 1)),
    ({"mark": "X", "space": [1.0, 2.0]}, NoughtsTurn("X", 1, 2)),  # JSON has no 1 vs 1.0
    ({"Mark": "O", "SPACE": [2, 0]}, NoughtsTurn("O", 2, 0)),  # keys in any case
    ({"mark": "X", "space": [0, 0], "player": "someone", "time": 1}, NoughtsTurn("X", 0, 0)),
])
def test_well_formed_replies(reply_: JSON, expected: NoughtsTurn) -> None:
    assert GAME.parse_move(reply_) == expected


@pytest.mark.parametrize(("mark", "row", "col"), [("Z", 0, 0), ("X", 3, 0), ("O", 0, -1)])
def test_turns_off_the_board_cannot_be_built(mark: str, row: int, col: int) -> None:
    with pytest.raises(InvalidMoveError):
        NoughtsTurn(mark, row, col)


# -- round trips and determinism ------------------------------------------------------------

def test_every_turn_round_trips_through_the_wire() -> None:
    for seat, moves in ((CROSS, ""), (NOUGHT, "11")):
        state = play(moves)
        turns = GAME.legal_moves(state, seat)
        assert len(turns) == 9 - len(moves.split())
        assert all(turn.mark == "XO"[seat] for turn in turns)
        for turn in turns:
            wire = json.loads(json.dumps(GAME.move_to_wire(turn)))
            assert wire == {"mark": turn.mark, "space": [turn.row, turn.col]}
            assert GAME.parse_move(wire) == turn
            GAME.apply(state, seat, turn)  # every listed turn is legal


def test_describe_move() -> None:
    assert GAME.describe_move(play(""), CROSS, NoughtsTurn("X", 1, 2)) == \
        "crosses plays X at [1, 2]"


@pytest.mark.parametrize("seed", range(1, 13))
def test_random_playouts_follow_the_house_rules(seed: int) -> None:
    first = playout(GAME, 2, seed)
    assert first.states == playout(GAME, 2, seed).states
    for snapshot in first.states:
        assert GAME.state_to_json(GAME.state_from_json(snapshot)) == snapshot


INCONSISTENT: list[tuple[str, JSON]] = [
    ("not an object", [["", "", ""]] * 3),
    ("two rows", {**GAME.view(play("")), "board": [["", "", ""]] * 2}),
    ("a row of two", {**GAME.view(play("")), "board": [["", ""], ["", "", ""], ["", "", ""]]}),
    ("a number cell", {**GAME.view(play("")), "board": [[0, "", ""], ["", "", ""],
                                                          ["", "", ""]]}),
    ("O first", {**GAME.view(play("")), "board": board("O../.../...")}),
    ("wrong nextPlayer", {**GAME.view(play("11")), "nextPlayer": "crosses"}),
    ("marks swapped", {**GAME.view(play("")), "marks": {"X": "noughts", "O": "crosses"}}),
    ("complete too early", {**GAME.view(play("")), "complete": True}),
    ("wrong victor", {**GAME.view(play("00 10 01 11 02")), "victor": "noughts"}),
    ("three players", {**GAME.view(play("")), "players": ["a", "b", "c"]}),
]


@pytest.mark.parametrize("data", [row[1] for row in INCONSISTENT],
                         ids=[row[0] for row in INCONSISTENT])
def test_state_from_json_refuses_inconsistent_states(data: JSON) -> None:
    with pytest.raises(ValueError, match=r"noughts-and-crosses|tic-tac-toe|impossible|2 players"):
        GAME.state_from_json(data)


def test_new_needs_two_players() -> None:
    for players in (["solo"], ["a", "b", "c"]):
        with pytest.raises(ValueError, match="2 players"):
            GAME.new({}, players, random.Random(0))
    assert (GAME.mnemonic, GAME.name, GAME.calls.prefix) == (
        "NOUGHTSANDCROSSES", "Noughts and Crosses", "NoughtsAndCrosses")
    assert (GAME.min_seats, GAME.max_seats, GAME.max_moves) == (2, 2, 9)

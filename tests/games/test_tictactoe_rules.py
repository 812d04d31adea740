"""Tic-tac-toe rules (merknera/games/tictactoe.py) and the shared vocabulary (games/base.py).

The rule tables read like game records: the positions played in order (X first), then the
board that results, the seat to move, and how the game stands.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import pytest

from merknera.games import REGISTRY, get_game
from merknera.games.base import (
    JSON,
    IllegalMoveError,
    InvalidMoveError,
    MoveError,
    Outcome,
    SeatResult,
    Termination,
    UnknownGameError,
)
from merknera.games.tictactoe import LINES, MARKS, Board, TicTacToe

GAME = TicTacToe()
PLAYERS = ("crosses", "noughts")
CROSS, NOUGHT = 0, 1
"""The seats of X and O."""
DRAW = "draw"


def play(positions: list[int]) -> Board:
    """The board after ``positions`` are played alternately, X first."""
    state = GAME.new({}, PLAYERS, random.Random(0))
    for ply, position in enumerate(positions):
        state = GAME.apply(state, ply % 2, position)
    return state


def rows(text: str) -> str:
    """``"XO./.X./..."`` -> the three-line rendering of Board.render()."""
    return text.replace("/", "\n")


@dataclass(frozen=True)
class Row:
    """One line of the rule table."""

    name: str
    moves: list[int]
    board: str
    to_move: int | None
    result: int | str | None
    """The winning seat, DRAW, or None while the game goes on."""
    detail: str | None = None


RULES = [
    # -- in progress ---------------------------------------------------------------------
    Row("empty board", [], ".../.../...", CROSS, None),
    Row("X in the centre", [4], ".../.X./...", NOUGHT, None),
    Row("O answers in a corner", [4, 0], "O../.X./...", CROSS, None),
    Row("two each", [0, 4, 8, 2], "X.O/.O./..X", CROSS, None),
    Row("eight moves, one cell left", [0, 1, 2, 4, 3, 5, 7, 6], "XOX/XOO/OX.", CROSS, None),
    # -- X completes each of the 8 lines on the 5th move ------------------------------------
    Row("X row 0-1-2", [0, 3, 1, 4, 2], "XXX/OO./...", None, CROSS, "X completed the line 0-1-2"),
    Row("X row 3-4-5", [3, 0, 4, 1, 5], "OO./XXX/...", None, CROSS, "X completed the line 3-4-5"),
    Row("X row 6-7-8", [6, 0, 7, 1, 8], "OO./.../XXX", None, CROSS, "X completed the line 6-7-8"),
    Row("X column 0-3-6", [0, 1, 3, 4, 6], "XO./XO./X..", None, CROSS,
        "X completed the line 0-3-6"),
    Row("X column 1-4-7", [1, 0, 4, 2, 7], "OXO/.X./.X.", None, CROSS,
        "X completed the line 1-4-7"),
    Row("X column 2-5-8", [2, 0, 5, 1, 8], "OOX/..X/..X", None, CROSS,
        "X completed the line 2-5-8"),
    Row("X diagonal 0-4-8", [0, 1, 4, 2, 8], "XOO/.X./..X", None, CROSS,
        "X completed the line 0-4-8"),
    Row("X diagonal 2-4-6", [2, 0, 4, 1, 6], "OOX/.X./X..", None, CROSS,
        "X completed the line 2-4-6"),
    # -- O completes each of the 8 lines on the 6th move ------------------------------------
    Row("O row 0-1-2", [3, 0, 4, 1, 8, 2], "OOO/XX./..X", None, NOUGHT,
        "O completed the line 0-1-2"),
    Row("O row 3-4-5", [0, 3, 1, 4, 8, 5], "XX./OOO/..X", None, NOUGHT,
        "O completed the line 3-4-5"),
    Row("O row 6-7-8", [0, 6, 1, 7, 5, 8], "XX./..X/OOO", None, NOUGHT,
        "O completed the line 6-7-8"),
    Row("O column 0-3-6", [1, 0, 2, 3, 8, 6], "OXX/O../O.X", None, NOUGHT,
        "O completed the line 0-3-6"),
    Row("O column 1-4-7", [0, 1, 2, 4, 6, 7], "XOX/.O./XO.", None, NOUGHT,
        "O completed the line 1-4-7"),
    Row("O column 2-5-8", [0, 2, 1, 5, 6, 8], "XXO/..O/X.O", None, NOUGHT,
        "O completed the line 2-5-8"),
    Row("O diagonal 0-4-8", [1, 0, 2, 4, 3, 8], "OXX/XO./..O", None, NOUGHT,
        "O completed the line 0-4-8"),
    Row("O diagonal 2-4-6", [0, 2, 1, 4, 8, 6], "XXO/.O./O.X", None, NOUGHT,
        "O completed the line 2-4-6"),
    # -- full boards ------------------------------------------------------------------------
    Row("full board, no line", [0, 1, 2, 4, 3, 5, 7, 6, 8], "XOX/XOO/OXX", None, DRAW,
        "the board is full with no line"),
    Row("X wins with the 9th move (a win, not a draw)", [0, 1, 2, 4, 3, 5, 7, 8, 6],
        "XOX/XOO/XXO", None, CROSS, "X completed the line 0-3-6"),
    Row("the 9th move completes two lines: the first one is named",
        [0, 3, 2, 5, 4, 6, 7, 8, 1], "XXX/OXO/OXO", None, CROSS, "X completed the line 0-1-2"),
]


def test_the_table_covers_every_line_for_both_marks() -> None:
    named = {(row.result, row.detail) for row in RULES}
    for seat, mark in ((CROSS, "X"), (NOUGHT, "O")):
        for line in LINES:
            detail = f"{mark} completed the line {'-'.join(map(str, line))}"
            assert (seat, detail) in named, f"no row for {detail}"


@pytest.mark.parametrize("row", RULES, ids=[row.name for row in RULES])
def test_rules(row: Row) -> None:
    state = play(row.moves)
    assert state.render() == rows(row.board)
    assert GAME.to_move(state) == row.to_move
    assert state.filled == len(row.moves)
    outcome = GAME.outcome(state)
    if row.result is None:
        assert outcome is None
        assert row.to_move is not None
        assert GAME.legal_moves(state, row.to_move), "a game in progress has moves"
        return
    assert outcome is not None
    assert outcome.termination is Termination.NORMAL
    assert outcome.detail == row.detail
    assert outcome.offender is None
    if row.result == DRAW:
        assert outcome.ranks == (0, 0)
        assert outcome.winners == ()
    else:
        assert isinstance(row.result, int)
        assert outcome.winners == (row.result,)
        assert outcome.result_for(row.result) is SeatResult.WIN
        assert outcome.result_for(1 - row.result) is SeatResult.LOSS
    assert GAME.legal_moves(state, CROSS) == ()
    assert GAME.legal_moves(state, NOUGHT) == ()


def test_apply_returns_a_new_board_and_leaves_the_old_one_alone() -> None:
    before = play([4])
    after = GAME.apply(before, NOUGHT, 0)
    assert before.render() == rows(".../.X./...")
    assert after.render() == rows("O../.X./...")
    assert before != after


# -- illegal moves ---------------------------------------------------------------------------

ILLEGAL = [
    ("square taken by X", [4], NOUGHT, 4, "position 4 is already taken by X"),
    ("square taken by O", [4, 0], CROSS, 0, "position 0 is already taken by O"),
    ("O moves first", [], NOUGHT, 4, "it is X's turn, not O's"),
    ("X moves twice", [4], CROSS, 0, "it is O's turn, not X's"),
    ("after X won", [0, 3, 1, 4, 2], NOUGHT, 5, "the game is over; position 5 cannot be played"),
    ("after X won, X again", [0, 3, 1, 4, 2], CROSS, 8,
     "the game is over; position 8 cannot be played"),
    ("after a draw", [0, 1, 2, 4, 3, 5, 7, 6, 8], NOUGHT, 0,
     "the game is over; position 0 cannot be played"),
    ("position 9", [], CROSS, 9, "position 9 is not on the board (0-8)"),
    ("position -1", [4], NOUGHT, -1, "position -1 is not on the board (0-8)"),
    ("position 100", [], CROSS, 100, "position 100 is not on the board (0-8)"),
]


@pytest.mark.parametrize(("moves", "seat", "position", "message"),
                         [row[1:] for row in ILLEGAL], ids=[row[0] for row in ILLEGAL])
def test_illegal_moves_say_why(moves: list[int], seat: int, position: int, message: str) -> None:
    state = play(moves)
    with pytest.raises(IllegalMoveError) as caught:
        GAME.apply(state, seat, position)
    assert str(caught.value) == message
    assert isinstance(caught.value, MoveError)
    assert not isinstance(caught.value, InvalidMoveError)


# -- parsing a bot's reply -------------------------------------------------------------------

MALFORMED: list[tuple[str, JSON, str]] = [
    ("a number", 4, 'expected an object {"position": 0-8}, got 4'),
    ("a list", [4], 'expected an object {"position": 0-8}, got [4]'),
    ("a string", "4", "expected an object {\"position\": 0-8}, got '4'"),
    ("null", None, 'expected an object {"position": 0-8}, got None'),
    ("true", True, 'expected an object {"position": 0-8}, got True'),
    ("an empty object", {}, 'the reply has no "position": {}'),
    ("another key", {"pos": 4}, "the reply has no \"position\": {'pos': 4}"),
    ("position null", {"position": None}, 'the reply has no "position"'),
    ("position as string", {"position": "4"}, "\"position\" must be an integer 0-8, got '4'"),
    ("position 4.0", {"position": 4.0}, '"position" must be an integer 0-8, got 4.0'),
    ("position 4.5", {"position": 4.5}, '"position" must be an integer 0-8, got 4.5'),
    ("position true", {"position": True}, '"position" must be an integer 0-8, got True'),
    ("position false", {"position": False}, '"position" must be an integer 0-8, got False'),
    ("position a list", {"position": [4]}, '"position" must be an integer 0-8, got [4]'),
    ("position -1", {"position": -1}, '"position" must be between 0 and 8, got -1'),
    ("position 9", {"position": 9}, '"position" must be between 0 and 8, got 9'),
    ("position huge", {"position": 10**30},
     f'"position" must be between 0 and 8, got {10**30}'),
]


@pytest.mark.parametrize(("reply", "message"), [row[1:] for row in MALFORMED],
                         ids=[row[0] for row in MALFORMED])
def test_malformed_replies_are_invalid_moves(reply: JSON, message: str) -> None:
    with pytest.raises(InvalidMoveError) as caught:
        GAME.parse_move(reply)
    assert str(caught.value).startswith(message)
    assert not isinstance(caught.value, IllegalMoveError)


def test_a_long_malformed_reply_is_shortened_in_the_message() -> None:
    with pytest.raises(InvalidMoveError) as caught:
        GAME.parse_move("x" * 10_000)
    assert len(str(caught.value)) < 200
    assert str(caught.value).endswith("...")


@pytest.mark.parametrize(("reply", "position"), [
    ({"position": 4}, 4),
    ({"Position": 4}, 4),
    ({"POSITION": 0}, 0),
    ({"position": 8}, 8),
    ({"position": 2, "comment": "ignored"}, 2),
], ids=["lower", "Capitalised", "UPPER", "last cell", "extra keys"])
def test_well_formed_replies_parse(reply: JSON, position: int) -> None:
    assert GAME.parse_move(reply) == position


@pytest.mark.parametrize("position", range(9))
def test_move_wire_round_trip(position: int) -> None:
    wire = GAME.move_to_wire(position)
    assert wire == {"position": position}
    assert GAME.parse_move(json.loads(json.dumps(wire))) == position


# -- the board and its JSON ------------------------------------------------------------------

IMPOSSIBLE: list[tuple[str, tuple[str, ...]]] = [
    ("eight cells", ("",) * 8),
    ("ten cells", ("",) * 10),
    ("a lower-case mark", ("x",) + ("",) * 8),
    ("a space for empty", (" ",) + ("",) * 8),
    ("O moved first", ("O",) + ("",) * 8),
    ("X moved twice", ("X", "X") + ("",) * 7),
    ("too many O", ("X", "O", "O", "O") + ("",) * 5),
    ("all X", ("X",) * 9),
]


@pytest.mark.parametrize("cells", [row[1] for row in IMPOSSIBLE],
                         ids=[row[0] for row in IMPOSSIBLE])
def test_impossible_boards_are_refused(cells: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="board"):
        Board(cells)


@pytest.mark.parametrize("cells", [
    ("X", "X", "X", "O", "O", "O", "", "", ""),   # both marks have a line
    ("X", "X", "X", "O", "O", "", "", "", "O"),   # O moved after X had won
    ("O", "O", "O", "X", "X", "", "X", "X", ""),  # X moved after O had won
], ids=["both lines", "O moved after X won", "X moved after O won"])
def test_boards_that_play_past_a_win_are_refused(cells: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        Board(cells)


def test_the_default_board_is_empty() -> None:
    assert Board() == Board(("",) * 9)
    assert Board().filled == 0
    assert Board().winning_line() is None
    assert GAME.new({}, PLAYERS, random.Random(1)) == Board()


@pytest.mark.parametrize("seats", [1, 3])
def test_tictactoe_is_for_two_seats(seats: int) -> None:
    with pytest.raises(ValueError, match=f"not {seats}"):
        GAME.new({}, [f"p{n}" for n in range(seats)], random.Random(0))


@pytest.mark.parametrize("moves", [row.moves for row in RULES],
                         ids=[row.name for row in RULES])
def test_state_json_round_trip(moves: list[int]) -> None:
    state = play(moves)
    data = GAME.state_to_json(state)
    assert data == list(state.cells)
    assert GAME.state_from_json(json.loads(json.dumps(data))) == state


@pytest.mark.parametrize("data", [
    "X........", {"cells": [""] * 9}, None, [None] * 9, [0] * 9, [""] * 8,
    ["X", "X"] + [""] * 7,
], ids=["a string", "an object", "null", "nulls", "numbers", "eight cells", "X twice"])
def test_state_from_json_refuses_what_is_not_a_board(data: JSON) -> None:
    with pytest.raises(ValueError, match="board"):
        GAME.state_from_json(data)


# -- the wire view (docs/bots/protocol.md section 4, TicTacToe) --------------------------------


def test_next_move_params_are_merknera_s() -> None:
    state = play([4])
    assert GAME.next_move_params(state, NOUGHT) == {
        "mark": "O", "gamestate": ["", "", "", "", "X", "", "", "", ""]}
    assert GAME.next_move_params(Board(), CROSS) == {"mark": "X", "gamestate": [""] * 9}


def test_complete_params_carry_the_final_board_for_each_mark() -> None:
    state = play([0, 3, 1, 4, 2])
    final = ["X", "X", "X", "O", "O", "", "", "", ""]
    assert GAME.complete_params(state, CROSS) == {"mark": "X", "gamestate": final}
    assert GAME.complete_params(state, NOUGHT) == {"mark": "O", "gamestate": final}
    assert GAME.new_game_params(state, CROSS) == {}


def test_params_are_fresh_lists_not_views_of_the_state() -> None:
    state = play([4])
    params = GAME.next_move_params(state, NOUGHT)
    gamestate = params["gamestate"]
    assert isinstance(gamestate, list)
    gamestate[0] = "O"
    assert state.cells[0] == ""


def test_legal_moves_are_sorted_empty_cells_for_the_seat_to_move_only() -> None:
    assert list(GAME.legal_moves(Board(), CROSS)) == list(range(9))
    assert list(GAME.legal_moves(Board(), NOUGHT)) == []
    state = play([4, 0, 8])
    assert list(GAME.legal_moves(state, NOUGHT)) == [1, 2, 3, 5, 6, 7]
    assert list(GAME.legal_moves(state, CROSS)) == []


def test_the_game_names_itself_as_on_the_wire() -> None:
    assert (GAME.mnemonic, GAME.calls.prefix, GAME.name) == (
        "TICTACTOE", "TicTacToe", "Tic-Tac-Toe")
    assert (GAME.min_seats, GAME.max_seats, GAME.max_moves, GAME.assets) == (2, 2, 9, ())
    assert isinstance(get_game("TICTACTOE"), TicTacToe)
    assert REGISTRY["TICTACTOE"] is get_game("TICTACTOE")
    with pytest.raises(UnknownGameError):
        get_game("tictactoe")
    assert GAME.describe_move(Board(), CROSS, 4) == "X at 4"
    assert GAME.describe_move(play([4]), NOUGHT, 0) == "O at 0"
    assert list(GAME.announcements(Board(), CROSS, 4, play([4]))) == []


def test_tictactoe_has_no_chance_moves() -> None:
    with pytest.raises(NotImplementedError, match="TICTACTOE"):
        GAME.sample_chance(Board(), random.Random(0))


# -- Outcome and Termination (games/base.py) -------------------------------------------------

FORFEITS = {
    Termination.NORMAL: False,
    Termination.TIMEOUT: True,
    Termination.UNREACHABLE: True,
    Termination.STRIKES: True,
    Termination.NOT_READY: True,
    Termination.SUPERSEDED: False,
    Termination.ABORTED: False,
}


def test_every_termination_is_classified() -> None:
    assert set(FORFEITS) == set(Termination)


@pytest.mark.parametrize("termination", list(Termination), ids=lambda t: t.value)
def test_is_forfeit(termination: Termination) -> None:
    assert termination.is_forfeit is FORFEITS[termination]


def test_win() -> None:
    outcome = Outcome.win(1, 2, "O completed the line 0-1-2")
    assert outcome == Outcome(Termination.NORMAL, (1, 0), "O completed the line 0-1-2")
    assert outcome.winners == (1,)
    assert [outcome.result_for(seat) for seat in (0, 1)] == [SeatResult.LOSS, SeatResult.WIN]
    assert outcome.offender is None
    assert outcome.scores is None


def test_win_among_three_seats() -> None:
    outcome = Outcome.win(2, 3, "seat 2 won", scores=(1.0, 2.0, 5.0))
    assert outcome.ranks == (1, 1, 0)
    assert outcome.scores == (1.0, 2.0, 5.0)
    assert outcome.winners == (2,)
    assert [outcome.result_for(seat) for seat in range(3)] == [
        SeatResult.LOSS, SeatResult.LOSS, SeatResult.WIN]


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_draw(seats: int) -> None:
    outcome = Outcome.draw(seats, "the board is full with no line")
    assert outcome.termination is Termination.NORMAL
    assert outcome.ranks == (0,) * seats
    assert outcome.winners == ()
    assert all(outcome.result_for(seat) is SeatResult.DRAW for seat in range(seats))


@pytest.mark.parametrize("termination",
                         [t for t, forfeit in FORFEITS.items() if forfeit], ids=lambda t: t.value)
def test_forfeit_of_two_seats(termination: Termination) -> None:
    outcome = Outcome.forfeit(0, 2, termination, "bot-a: no reply within 10 s")
    assert outcome.termination is termination
    assert outcome.ranks == (1, 0)
    assert outcome.offender == 0
    assert outcome.detail == "bot-a: no reply within 10 s"
    assert outcome.winners == (1,)
    assert outcome.result_for(0) is SeatResult.LOSS
    assert outcome.result_for(1) is SeatResult.WIN


def test_forfeit_of_three_seats_puts_the_others_first_together() -> None:
    outcome = Outcome.forfeit(1, 3, Termination.STRIKES, "three strikes")
    assert outcome.ranks == (0, 1, 0)
    assert outcome.winners == (0, 2)
    assert outcome.result_for(1) is SeatResult.LOSS
    # Two seats share first place: that is a draw between them by result_for's rule.
    assert outcome.result_for(0) is SeatResult.DRAW
    assert outcome.result_for(2) is SeatResult.DRAW


@pytest.mark.parametrize("termination",
                         [t for t, forfeit in FORFEITS.items() if not forfeit],
                         ids=lambda t: t.value)
def test_forfeit_needs_a_forfeit_termination(termination: Termination) -> None:
    with pytest.raises(ValueError, match="not a forfeit"):
        Outcome.forfeit(0, 2, termination, "nobody's fault")


@pytest.mark.parametrize("termination", [Termination.SUPERSEDED, Termination.ABORTED],
                         ids=lambda t: t.value)
def test_no_result(termination: Termination) -> None:
    outcome = Outcome.no_result(termination, "a newer version was registered")
    assert outcome.termination is termination
    assert outcome.ranks is None
    assert outcome.detail == "a newer version was registered"
    assert outcome.winners == ()
    assert outcome.result_for(0) is SeatResult.NONE
    assert outcome.result_for(1) is SeatResult.NONE


def test_random_games_end_within_max_moves_with_an_outcome() -> None:
    endings: set[str] = set()
    for seed in range(200):
        rng = random.Random(seed)
        state = GAME.new({}, PLAYERS, rng)
        plies = 0
        while (seat := GAME.to_move(state)) is not None:
            legal = GAME.legal_moves(state, seat)
            assert legal, f"seed {seed}: no legal move for the seat to move"
            assert list(legal) == sorted(legal)
            assert GAME.legal_moves(state, 1 - seat) == ()
            # A taken square is always refused.
            taken = next((i for i, cell in enumerate(state.cells) if cell), None)
            if taken is not None:
                try:
                    GAME.apply(state, seat, taken)
                except IllegalMoveError:
                    pass
                else:
                    raise AssertionError(f"seed {seed}: {taken} was taken but accepted")
            assert GAME.outcome(state) is None
            state = GAME.apply(state, seat, rng.choice(list(legal)))
            assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(state)))) == state
            plies += 1
            assert plies <= GAME.max_moves, f"seed {seed}: more than {GAME.max_moves} moves"
        outcome = GAME.outcome(state)
        assert outcome is not None, f"seed {seed}: the game ended without an outcome"
        assert outcome.termination is Termination.NORMAL
        assert plies == state.filled >= 5
        line = state.winning_line()
        if line is None:
            assert state.filled == 9
            assert outcome.ranks == (0, 0)
            endings.add("draw")
        else:
            winner = MARKS.index(state.cells[line[0]])
            assert outcome.winners == (winner,)
            # The winner made the last move: play stops at the first line.
            assert (plies - 1) % 2 == winner
            endings.add(MARKS[winner])
    # Two hundred random games see every kind of ending.
    assert endings == {"X", "O", "draw"}

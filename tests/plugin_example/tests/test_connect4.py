"""The plugin's own tests: the platform's house rules (check_game), then its rules."""

from __future__ import annotations

import random

import pytest
from merknera_connect4 import ConnectFour, State
from merknera_connect4.bot import choose_greedy, read_board

from merknera.games import IllegalMoveError, InvalidMoveError
from merknera.games.testing import check_game

GAME = ConnectFour()


def played(*columns: int) -> State:
    state = GAME.new({}, ["a", "b"], random.Random(0))
    for number, column in enumerate(columns):
        state = GAME.apply(state, number % 2, column)
    return state


def test_connect_four_keeps_the_house_rules() -> None:
    check_game(GAME)


@pytest.mark.parametrize(("columns", "detail"), [
    ((0, 1, 0, 1, 0, 1, 0), "X has four in a row"),        # up column 0
    ((0, 0, 1, 1, 2, 2, 3), "X has four in a row"),        # across the bottom
    ((0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3), "X has four in a row"),  # diagonally
    ((6, 0, 0, 1, 1, 2, 2, 3), "O has four in a row"),
])
def test_four_in_a_row_wins(columns: tuple[int, ...], detail: str) -> None:
    outcome = GAME.outcome(played(*columns))
    assert outcome is not None and outcome.detail == detail
    assert GAME.to_move(played(*columns)) is None


@pytest.mark.parametrize(("reply", "error"), [
    ({"column": 7}, InvalidMoveError), ({"column": True}, InvalidMoveError),
    ({"col": 1}, InvalidMoveError), ([3], InvalidMoveError),
])
def test_a_reply_that_is_no_move_is_invalid(reply: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        GAME.parse_move(reply)  # type: ignore[arg-type]


def test_a_full_column_is_illegal() -> None:
    with pytest.raises(IllegalMoveError, match="column 0 is full"):
        GAME.apply(played(0, 0, 0, 0, 0, 0), 0, 0)


def test_the_greedy_bot_wins_then_blocks() -> None:
    view = GAME.next_move_params(played(0, 1, 0, 1, 0), 1)
    assert choose_greedy(read_board(view["board"]), "O") == 0  # blocks X's column
    view = GAME.next_move_params(played(0, 1, 0, 1, 0, 1), 0)
    assert choose_greedy(read_board(view["board"]), "X") == 0  # wins

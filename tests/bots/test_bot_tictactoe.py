"""The tic-tac-toe reference strategies: perfect never loses, random plays any empty cell."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from merknera_bots.tictactoe import (
    choose_perfect,
    choose_random,
    empty_cells,
    normalise_board,
    winner,
)

EMPTY: tuple[str, ...] = ("",) * 9


def _play(cells: tuple[str, ...], position: int, mark: str) -> tuple[str, ...]:
    assert cells[position] == "", f"{position} is taken on {cells}"
    return (*cells[:position], mark, *cells[position + 1:])


def _other(mark: str) -> str:
    return "O" if mark == "X" else "X"


def _outcomes_against_everything(perfect_mark: str) -> Counter[str]:
    """Play perfect as ``perfect_mark`` against every possible sequence of opponent moves;
    count the endings ("win", "draw", "loss") over all branches."""
    endings: Counter[str] = Counter()

    def explore(cells: tuple[str, ...], to_move: str) -> None:
        won = winner(cells)
        if won is not None:
            endings["win" if won == perfect_mark else "loss"] += 1
            return
        if not empty_cells(cells):
            endings["draw"] += 1
            return
        if to_move == perfect_mark:
            explore(_play(cells, choose_perfect(list(cells), to_move), to_move), _other(to_move))
        else:
            for position in empty_cells(cells):
                explore(_play(cells, position, to_move), _other(to_move))

    explore(EMPTY, "X")
    return endings


@pytest.mark.parametrize("mark", ["X", "O"])
def test_perfect_never_loses_to_any_line_of_play(mark: str) -> None:
    endings = _outcomes_against_everything(mark)
    assert endings["loss"] == 0
    # Sanity: the opponent tree was really explored, and bad opponents get beaten.
    assert endings["win"] > 0
    assert sum(endings.values()) > 50


def test_perfect_against_perfect_is_a_draw() -> None:
    cells, mark = EMPTY, "X"
    while winner(cells) is None and empty_cells(cells):
        cells = _play(cells, choose_perfect(list(cells), mark), mark)
        mark = _other(mark)
    assert winner(cells) is None
    assert empty_cells(cells) == []


def test_perfect_takes_the_quickest_win() -> None:
    # X can win at once on 2 (top row); any other move wins later at best.
    board = ["X", "X", "", "O", "O", "", "", "", ""]
    assert choose_perfect(board, "X") == 2
    # O to move on the same board wins at once on 5 rather than blocking at 2.
    assert choose_perfect(board, "O") == 5


def test_perfect_blocks_a_threat() -> None:
    board = ["X", "X", "", "", "O", "", "", "", ""]
    assert choose_perfect(board, "O") == 2


def test_perfect_is_deterministic_and_reads_null_as_empty() -> None:
    with_nulls: list[str | None] = [None] * 9
    assert choose_perfect(with_nulls, "X") == choose_perfect([""] * 9, "X")
    assert choose_perfect(["X", None, None, None, None, None, None, None, None], "O") == 4


def test_random_plays_every_empty_cell_and_only_those() -> None:
    board = ["X", "", "O", "", "X", "", "", "O", ""]
    rng = random.Random(7)
    seen = Counter(choose_random(board, "X", rng) for _ in range(2000))
    assert set(seen) == {1, 3, 5, 6, 8}
    # Uniform: each of the 5 cells about 400 times out of 2000.
    assert all(250 < n < 550 for n in seen.values()), seen


def test_random_is_repeatable_with_a_seed() -> None:
    board = [""] * 9
    first = [choose_random(board, "X", random.Random(42)) for _ in range(5)]
    again = [choose_random(board, "X", random.Random(42)) for _ in range(5)]
    assert first == again
    a, b = random.Random(1), random.Random(1)
    assert [choose_random(board, "O", a) for _ in range(20)] == [
        choose_random(board, "O", b) for _ in range(20)]


@pytest.mark.parametrize(
    ("board", "mark"),
    [
        (["X"] * 8, "O"),  # 8 cells
        (["X", "O", "X", "O", "X", "O", "O", "X", "O"], "X"),  # full
        (["x", "", "", "", "", "", "", "", ""], "O"),  # lower-case mark in a cell
        ([""] * 9, "Z"),  # no such mark
        ("XO       ", "X"),  # a string, not a list
    ],
)
def test_strategies_refuse_bad_boards(board: list[str], mark: str) -> None:
    with pytest.raises(ValueError):
        choose_perfect(board, mark)
    with pytest.raises(ValueError):
        choose_random(board, mark, random.Random(0))


def test_normalise_board_and_winner() -> None:
    assert normalise_board([None, "X", "", "O", None, "", "", "", ""]) == (
        "", "X", "", "O", "", "", "", "", "")
    assert winner(("O", "X", "X", "", "O", "X", "", "", "O")) == "O"
    assert winner(("X", "O", "X", "", "O", "", "", "", "")) is None

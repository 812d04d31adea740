"""Reference tic-tac-toe bots: ``random`` (any empty cell) and ``perfect`` (never loses).

Run one with::

    python -m merknera_bots.tictactoe --strategy perfect --platform http://127.0.0.1:8080 \\
        --token TOKEN --port 0

The board is Merknera's: 9 cells row by row (indices 0-8), each ``"X"``, ``"O"`` or ``""``;
``null`` is read as empty too, since Merknera's old documentation said so.
"""

from __future__ import annotations

import asyncio
import functools
import random
import sys
from collections.abc import Callable, Sequence
from typing import Any

from merknera_bots.kit import Bot, InvalidParamsError
from merknera_bots.launcher import strategy_main

GAME = "TICTACTOE"
PREFIX = "TicTacToe"
MARKS = ("X", "O")
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))

Cells = tuple[str, ...]


def normalise_board(board: Sequence[str | None]) -> Cells:
    """``board`` as a tuple of 9 cells ``"X"``, ``"O"`` or ``""`` (``None`` becomes ``""``).

    :raises ValueError: if it is not 9 such cells.
    """
    if isinstance(board, str | bytes) or len(board) != 9:
        raise ValueError("the board must be a list of 9 cells")
    cells = tuple("" if cell is None else cell for cell in board)
    if any(cell not in ("", *MARKS) for cell in cells):
        raise ValueError('every cell must be "X", "O" or ""')
    return cells


def winner(cells: Cells) -> str | None:
    """The mark that holds a full line, if any."""
    for a, b, c in LINES:
        if cells[a] and cells[a] == cells[b] == cells[c]:
            return cells[a]
    return None


def empty_cells(cells: Cells) -> list[int]:
    """Indices of the empty cells, ascending."""
    return [i for i, cell in enumerate(cells) if not cell]


def _other(mark: str) -> str:
    return "O" if mark == "X" else "X"


def _check(board: Sequence[str | None], mark: str) -> tuple[Cells, list[int]]:
    if mark not in MARKS:
        raise ValueError('the mark must be "X" or "O"')
    cells = normalise_board(board)
    free = empty_cells(cells)
    if not free:
        raise ValueError("the board is full")
    return cells, free


def choose_random(board: Sequence[str | None], mark: str, rng: random.Random) -> int:
    """A uniformly random empty cell.

    :raises ValueError: on a malformed or full board, or a mark other than X/O.
    """
    _, free = _check(board, mark)
    return rng.choice(free)


def choose_perfect(board: Sequence[str | None], mark: str) -> int:
    """The best move for ``mark``: never loses, wins as quickly as it can, and otherwise
    delays a loss the opponent could force; among equal moves, the lowest index.

    :raises ValueError: on a malformed or full board, or a mark other than X/O.
    """
    cells, free = _check(board, mark)
    return max(free, key=lambda i: (_move_value(cells, mark, i), -i))


def _move_value(cells: Cells, mark: str, position: int) -> int:
    """What playing ``position`` is worth to ``mark``, by :func:`_negamax`'s scale."""
    child = (*cells[:position], mark, *cells[position + 1:])
    if winner(child) == mark:
        # One more than the empty cells left, so a quicker win (more cells left) scores more.
        return 1 + len(empty_cells(child))
    if not empty_cells(child):
        return 0
    return -_negamax(child, _other(mark))


@functools.cache
def _negamax(cells: Cells, mark: str) -> int:
    """The value for ``mark``, to move on a board with an empty cell and no winner:
    positive = a forced win (the quicker the larger), 0 = a draw, negative = a forced loss."""
    return max(_move_value(cells, mark, i) for i in empty_cells(cells))


Strategy = Callable[[Sequence[str | None], str], int]


def make_bot(strategy: str, *, delay: float = 0.0, seed: int | None = None) -> Bot:
    """A :class:`~merknera_bots.kit.Bot` playing ``strategy`` (``"random"`` or ``"perfect"``),
    waiting ``delay`` seconds before each move."""
    choose: Strategy
    if strategy == "perfect":
        choose = choose_perfect
    elif strategy == "random":
        rng = random.Random(seed)
        choose = functools.partial(choose_random, rng=rng)
    else:
        raise ValueError(f"unknown strategy {strategy!r}")

    async def next_move(*, gameid: int, mark: str, gamestate: list[str | None],
                        **extra: Any) -> dict[str, int]:
        if not isinstance(gamestate, list):
            raise InvalidParamsError("gamestate must be a list of 9 cells")
        try:
            position = choose(gamestate, mark)
        except ValueError as exc:
            raise InvalidParamsError(str(exc)) from None
        if delay > 0:
            await asyncio.sleep(delay)
        return {"position": position}

    return Bot(PREFIX, next_move)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``--strategy random|perfect [--delay SECONDS] [--seed N]`` plus the
    kit's common options (see :func:`merknera_bots.launcher.make_parser`)."""
    return strategy_main(
        argv, title="A reference tic-tac-toe bot for the Merknera platform.",
        game=GAME, name_prefix="tictactoe", default="random", make_bot=make_bot,
        strategies={
            "random": "Plays a uniformly random empty cell.",
            "perfect": "Plays perfect tic-tac-toe (negamax): it never loses.",
        })


if __name__ == "__main__":
    sys.exit(main())

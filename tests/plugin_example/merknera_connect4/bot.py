"""Reference Connect Four bots: ``random`` (any column with room) and ``greedy`` (wins when
it can, blocks the opponent's win when it must, else the column nearest the middle).

Run one with the platform's bot kit (installed with the platform)::

    python -m merknera_connect4.bot --strategy greedy --platform http://127.0.0.1:8080 \\
        --token TOKEN --port 0
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from typing import Any

from merknera_bots.kit import Bot, InvalidParamsError
from merknera_bots.launcher import strategy_main
from merknera_connect4 import COLUMNS, MARKS, ROWS, Board

PREFIX = "ConnectFour"


def read_board(rows: object) -> Board:
    """The wire's six rows (top first) of seven cells as a :class:`Board`.

    :raises ValueError: for anything else.
    """
    if not isinstance(rows, list) or len(rows) != ROWS or not all(
            isinstance(row, list) and len(row) == COLUMNS
            and all(cell in ("", *MARKS) for cell in row) for row in rows):
        raise ValueError("the board must be 6 rows of 7 cells \"X\", \"O\" or \"\"")
    bottom_up = list(reversed(rows))
    return Board(tuple(tuple(row[c] for row in bottom_up if row[c]) for c in range(COLUMNS)))


def open_columns(board: Board) -> list[int]:
    """The columns with room, left to right."""
    return [c for c in range(COLUMNS) if len(board.columns[c]) < ROWS]


def wins(board: Board, column: int, mark: str) -> bool:
    """Whether dropping ``mark`` into ``column`` makes four in a row."""
    after = board.drop(column, mark)
    return after.line_through(len(after.columns[column]) - 1, column)


def choose_greedy(board: Board, mark: str) -> int:
    """Win, else block, else the open column nearest the middle."""
    free = open_columns(board)
    other = MARKS[1 - MARKS.index(mark)]
    for wanted in (mark, other):
        for column in free:
            if wins(board, column, wanted):
                return column
    return min(free, key=lambda column: (abs(column - COLUMNS // 2), column))


def make_bot(strategy: str, *, delay: float = 0.0, seed: int | None = None) -> Bot:
    """A bot playing ``strategy`` (``"random"`` or ``"greedy"``)."""
    if strategy not in ("random", "greedy"):
        raise ValueError(f"unknown strategy {strategy!r}")
    rng = random.Random(seed)

    async def next_move(*, gameid: int, mark: str, board: list[Any],
                        **extra: Any) -> dict[str, int]:
        try:
            position = read_board(board)
        except ValueError as exc:
            raise InvalidParamsError(str(exc)) from None
        if mark not in MARKS or not open_columns(position):
            raise InvalidParamsError("no move: an unknown mark, or a full board")
        if strategy == "random":
            return {"column": rng.choice(open_columns(position))}
        return {"column": choose_greedy(position, mark)}

    return Bot(PREFIX, next_move)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``--strategy random|greedy`` plus the kit's common options."""
    return strategy_main(
        argv, title="A reference Connect Four bot for the Merknera platform.",
        game="CONNECTFOUR", name_prefix="connect4", default="greedy", make_bot=make_bot,
        delay=False, strategies={
            "random": "Drops into a uniformly random column with room.",
            "greedy": "Wins when it can, blocks when it must, else plays the middle.",
        })


if __name__ == "__main__":
    sys.exit(main())

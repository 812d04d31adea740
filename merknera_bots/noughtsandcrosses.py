"""Reference noughts-and-crosses bots (Battlebot's game): ``random`` and ``perfect``.

Run one with::

    python -m merknera_bots.noughtsandcrosses --strategy perfect --platform http://127.0.0.1:8080 \\
        --token TOKEN --port 0

NextMove brings Battlebot's state, ``{"state": {"players", "nextPlayer", "complete",
"board", "marks"}}``, with ``board`` three rows of three cells (``"X"``, ``"O"`` or ``""``);
the answer is a turn ``{"mark": "X", "space": [row, col]}``.  The strategies are
:mod:`merknera_bots.tictactoe`'s, on the board read row by row.  The mark to play is read from the
board (X when both marks are as many), which holds even when both seats have one name.
"""

from __future__ import annotations

import functools
import random
import sys
from collections.abc import Callable, Sequence
from typing import Any

from merknera_bots.battlebot import Turn, state_bot
from merknera_bots.kit import Bot
from merknera_bots.launcher import strategy_main
from merknera_bots.tictactoe import Cells, choose_perfect, choose_random, normalise_board

GAME = "NOUGHTSANDCROSSES"
PREFIX = "NoughtsAndCrosses"



def read_state(state: Any) -> tuple[Cells, str]:
    """The nine cells (row by row) and the mark to play of a Battlebot state.

    :raises ValueError: if the state is not a game in progress with a 3x3 board.
    """
    if not isinstance(state, dict):
        raise ValueError("state must be an object")
    if state.get("complete"):
        raise ValueError("the game is complete")
    board = state.get("board")
    if not isinstance(board, list) or len(board) != 3 or not all(
            isinstance(row, list) and len(row) == 3 for row in board):
        raise ValueError("state.board must be 3 rows of 3 cells")
    cells = normalise_board([cell for row in board for cell in row])
    crosses, noughts = cells.count("X"), cells.count("O")
    if crosses - noughts not in (0, 1):
        raise ValueError(f"impossible board: {crosses} X and {noughts} O")
    return cells, "X" if crosses == noughts else "O"


def to_turn(position: int, mark: str) -> Turn:
    """Cell ``position`` (0-8) as Battlebot's turn object."""
    return {"mark": mark, "space": [position // 3, position % 3]}


def choose_perfect_turn(state: Any) -> Turn:
    """The perfect turn (:func:`merknera_bots.tictactoe.choose_perfect`): it never loses.

    :raises ValueError: on a malformed, complete or full board.
    """
    cells, mark = read_state(state)
    return to_turn(choose_perfect(cells, mark), mark)


def choose_random_turn(state: Any, rng: random.Random) -> Turn:
    """A uniformly random empty space.

    :raises ValueError: on a malformed, complete or full board.
    """
    cells, mark = read_state(state)
    return to_turn(choose_random(cells, mark, rng), mark)


def make_bot(strategy: str, *, delay: float = 0.0, seed: int | None = None) -> Bot:
    """A :class:`~merknera_bots.kit.Bot` playing ``strategy`` (``"random"`` or ``"perfect"``),
    waiting ``delay`` seconds before each move."""
    choose: Callable[[Any], Turn]
    if strategy == "perfect":
        choose = choose_perfect_turn
    elif strategy == "random":
        choose = functools.partial(choose_random_turn, rng=random.Random(seed))
    else:
        raise ValueError(f"unknown strategy {strategy!r}")
    return state_bot(PREFIX, choose, delay=delay)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``--strategy random|perfect [--delay SECONDS] [--seed N]`` plus the
    kit's common options (see :func:`merknera_bots.launcher.make_parser`)."""
    return strategy_main(
        argv, title="A reference noughts-and-crosses bot for the Merknera platform.",
        game=GAME, name_prefix="noughtsandcrosses", default="random", make_bot=make_bot,
        strategies={
            "random": "Plays a uniformly random empty space.",
            "perfect": "Plays perfect noughts and crosses (negamax): it never loses.",
        })


if __name__ == "__main__":
    sys.exit(main())

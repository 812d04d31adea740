"""Reference Numberwang bots (Battlebot's protocol test game): ``good`` and ``random``.

Run one with::

    python -m merknera_bots.numberwang --strategy good --platform http://127.0.0.1:8080 \\
        --token TOKEN --port 0

NextMove brings Battlebot's state, ``{"state": {"players", "nextPlayer", "complete",
"board": {"n": <number>}}}``; the answer is ``{"n": <number>}``, added to ``n``.  At
``n >= 10`` ``players[0]`` wins, at ``n <= -10`` ``players[1]`` wins, whoever moved.

``good`` wins on its turn, which is always possible: as ``players[0]`` it sends the least
integer of at least ``10 - n``, as ``players[1]`` the greatest integer of at most
``-10 - n``.  ``random`` sends a random multiple of 0.1 from -5 to 5.
"""

from __future__ import annotations

import functools
import math
import random
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from merknera_bots.battlebot import Turn, state_bot
from merknera_bots.kit import Bot
from merknera_bots.launcher import strategy_main

GAME = "NUMBERWANG"
PREFIX = "Numberwang"
WIN_AT = 10



def read_state(state: Any) -> tuple[Fraction, int]:
    """The total ``n`` (exactly, as the decimal it is written as) and the seat to move.

    When both players have one name either seat is ours, and seat 0 is returned.

    :raises ValueError: if the state is not a Numberwang game in progress.
    """
    if not isinstance(state, dict):
        raise ValueError("state must be an object")
    if state.get("complete"):
        raise ValueError("the game is complete")
    players, mover, board = state.get("players"), state.get("nextPlayer"), state.get("board")
    if not isinstance(players, list) or len(players) != 2 or mover not in players:
        raise ValueError("state.nextPlayer must be one of the 2 state.players")
    n = board.get("n") if isinstance(board, dict) else None
    if isinstance(n, bool) or not isinstance(n, int | float) or not math.isfinite(n):
        raise ValueError("state.board.n must be a finite number")
    # The platform reads a number as its shortest decimal text, and so do we.
    value = Fraction(n) if isinstance(n, int) else Fraction(repr(n))
    return value, players.index(mover)


def choose_good(state: Any) -> Turn:
    """The integer that takes ``n`` to 10 or more (seat 0) or -10 or less (seat 1).

    :raises ValueError: on a state that is not a game in progress.
    """
    n, seat = read_state(state)
    return {"n": math.ceil(WIN_AT - n) if seat == 0 else math.floor(-WIN_AT - n)}


def choose_random(state: Any, rng: random.Random) -> Turn:
    """A random multiple of 0.1 from -5 to 5 (an int when it is whole).

    :raises ValueError: on a state that is not a game in progress.
    """
    read_state(state)
    tenths = rng.randint(-50, 50)
    return {"n": tenths // 10 if tenths % 10 == 0 else tenths / 10}


def make_bot(strategy: str, *, delay: float = 0.0, seed: int | None = None) -> Bot:
    """A :class:`~merknera_bots.kit.Bot` playing ``strategy`` (``"good"`` or ``"random"``),
    waiting ``delay`` seconds before each move."""
    choose: Callable[[Any], Turn]
    if strategy == "good":
        choose = choose_good
    elif strategy == "random":
        choose = functools.partial(choose_random, rng=random.Random(seed))
    else:
        raise ValueError(f"unknown strategy {strategy!r}")
    return state_bot(PREFIX, choose, delay=delay)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``--strategy good|random [--delay SECONDS] [--seed N]`` plus the
    kit's common options (see :func:`merknera_bots.launcher.make_parser`)."""
    return strategy_main(
        argv, title="A reference Numberwang bot for the Merknera platform.",
        game=GAME, name_prefix="numberwang", default="random", make_bot=make_bot,
        strategies={
            "good": "Wins on its first turn: sends what takes n to 10 (or -10) at once.",
            "random": "Sends a random multiple of 0.1 from -5 to 5.",
        })


if __name__ == "__main__":
    sys.exit(main())

"""Reference Kalaha bots: ``random`` (any non-empty pit) and ``good`` (alpha-beta search).

Run one with::

    python -m merknera_bots.kalaha --strategy good --platform http://127.0.0.1:8080 \\
        --token TOKEN --port 0

The rules are the seed's (``seeds/004_*``): six pits of six stones a side; sowing runs
counter-clockwise through the own pits, the own store and the opponent's pits, never the
opponent's store; the last stone in the own store earns another move; the last stone in an
own empty pit takes itself and the opposite pit (pit ``i`` faces pit ``5 - i``) to the store;
when either row is empty each side keeps its own stones; equal stores are a draw.  This file
imports nothing from ``merknera``: it carries its own small copy of the rules.

``good`` searches :data:`DEPTH` sowings ahead (an extra turn is one more sowing by the same
side, so the depth counts sowings, not turns) and scores a position by the difference of the
stores; a finished game scores :data:`WIN` more for a win.  Its moves take a few
milliseconds to a few tens of milliseconds, and equal positions always get the same move.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from merknera_bots.kit import Bot, InvalidParamsError
from merknera_bots.launcher import strategy_main

GAME = "KALAHA"
PREFIX = "Kalaha"
PLAYERS = ("ONE", "TWO")
PITS = 6
DEPTH = 7
"""Sowings searched ahead by ``good``."""
WIN = 1000
"""The bonus of a won game over any store difference."""
OVER = -1
"""Who moves after the last move: nobody."""

Position = tuple[int, ...]
"""14 counts: ONE's pits 0-5, ONE's store, TWO's pits 0-5, TWO's store.  Player ``p``'s
pits are ``7p .. 7p+5`` and its store ``7p+6``; pit ``k`` faces pit ``12 - k``."""


def read_position(row_one: Any, row_two: Any) -> Position:
    """The position from the two rows of a BoardState (``{"pits": [{"stones": n} x6],
    "kalahaStones": n}``; a pit may also be a bare number).

    :raises ValueError: if a row is not of that shape.
    """
    counts: list[int] = []
    for name, row in (("rowOne", row_one), ("rowTwo", row_two)):
        if not isinstance(row, Mapping):
            raise ValueError(f"{name} must be an object with pits and kalahaStones")
        keys = {str(key).lower(): value for key, value in row.items()}
        pits, store = keys.get("pits"), keys.get("kalahastones")
        if not isinstance(pits, list) or len(pits) != PITS:
            raise ValueError(f"{name}.pits must be a list of 6 pits")
        for pit in pits:
            stones = _stones(pit.get("stones") if isinstance(pit, Mapping) else pit)
            if stones is None:
                raise ValueError(f"{name}.pits must hold {{\"stones\": n}} with n >= 0")
            counts.append(stones)
        stones = _stones(store)
        if stones is None:
            raise ValueError(f"{name}.kalahaStones must be a number >= 0")
        counts.append(stones)
    return tuple(counts)


def _stones(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def moves(position: Position, player: int) -> list[int]:
    """The pits ``player`` may sow: its non-empty ones, 0-5."""
    base = 7 * player
    return [pit for pit in range(PITS) if position[base + pit]]


def over(position: Position) -> bool:
    """Whether the game has ended (a row is empty)."""
    return not any(position[0:6]) or not any(position[7:13])


_LAPS = tuple((*range(7 * p, 7 * p + 7), *range(7 - 7 * p, 13 - 7 * p)) for p in (0, 1))
"""Player ``p``'s sowing order: its pits 0-5, its store, the opponent's pits 0-5."""


def sow(position: Position, player: int, pit: int) -> tuple[Position, int]:
    """The position after ``player`` sows its non-empty ``pit``, and who moves next: the
    other player, the same one after an extra turn, or :data:`OVER` after the end."""
    board = list(position)
    lap = _LAPS[player]
    stones, board[lap[pit]] = board[lap[pit]], 0
    laps, rest = divmod(stones, 13)
    if laps:
        for at in lap:
            board[at] += laps
    for step in range(pit + 1, pit + rest + 1):
        board[lap[step % 13]] += 1
    last = (pit + stones) % 13
    at = lap[last]
    if last < PITS and board[at] == 1:
        store = lap[PITS]
        board[store] += 1 + board[12 - at]
        board[at] = board[12 - at] = 0
    if not any(board[0:6]) or not any(board[7:13]):
        board[6] += sum(board[0:6])
        board[13] += sum(board[7:13])
        board[0:6] = board[7:13] = [0] * PITS
        return tuple(board), OVER
    return tuple(board), player if last == PITS else 1 - player


def _final(position: Position, player: int) -> int:
    """A finished game for ``player``: the difference of the stores, :data:`WIN` more for a
    win (less for a loss)."""
    diff = position[7 * player + 6] - position[13 - 7 * player]
    return diff + (WIN if diff > 0 else -WIN if diff < 0 else 0)


def _value(position: Position, after: int, player: int, depth: int, alpha: int,
           beta: int) -> int:
    """The value for ``player`` of the position it reached, ``after`` moving next."""
    if after == OVER:
        return _final(position, player)
    if after == player:
        return _search(position, player, depth, alpha, beta)
    return -_search(position, after, depth, -beta, -alpha)


def _search(position: Position, player: int, depth: int, alpha: int, beta: int) -> int:
    """Negamax with alpha-beta: the value for ``player``, to move in a game not over."""
    own, theirs = 7 * player + 6, 13 - 7 * player
    if depth == 0:
        return position[own] - position[theirs]
    if depth == 1:
        # The last sowing: each child is worth its store difference (no need to order them).
        return max(_final(child, player) if after == OVER else child[own] - child[theirs]
                   for child, after in (sow(position, player, pit)
                                        for pit in moves(position, player)))
    best = -WIN * 2
    for child, after in _children(position, player):
        value = _value(child, after, player, depth - 1, alpha, beta)
        if value > best:
            best = value
            if value > alpha:
                alpha = value
                if alpha >= beta:
                    break
    return best


def _children(position: Position, player: int) -> list[tuple[Position, int]]:
    """Every position ``player`` can reach with one sowing, the likely best first (extra
    turns, then the larger own store), ties in pit order."""
    store = 7 * player + 6
    children = [sow(position, player, pit) for pit in moves(position, player)]
    children.sort(key=lambda child: (child[1] != player, -child[0][store]))
    return children


def choose_good(position: Position, player: int, depth: int = DEPTH) -> int:
    """The pit the ``good`` strategy sows: the best by a ``depth``-sowing search, the lowest
    pit among equals.

    :raises ValueError: if ``player`` cannot move.
    """
    legal = moves(position, player)
    if over(position) or not legal:
        raise ValueError("there is no move to make: the game is over")
    best_pit, alpha = legal[0], -WIN * 2
    for pit in legal:
        child, after = sow(position, player, pit)
        value = _value(child, after, player, depth - 1, alpha, WIN * 2)
        if value > alpha:
            best_pit, alpha = pit, value
    return best_pit


def choose_random(position: Position, player: int, rng: random.Random) -> int:
    """A uniformly random non-empty pit of ``player``.

    :raises ValueError: if ``player`` cannot move.
    """
    legal = moves(position, player)
    if over(position) or not legal:
        raise ValueError("there is no move to make: the game is over")
    return rng.choice(legal)


def make_bot(strategy: str, *, seed: int | None = None) -> Bot:
    """A :class:`~merknera_bots.kit.Bot` playing ``strategy`` (``"good"`` or ``"random"``)."""
    if strategy not in ("good", "random"):
        raise ValueError(f"unknown strategy {strategy!r}")
    rng = random.Random(seed)

    async def next_move(*, gameid: int, player: str, rowone: Any, rowtwo: Any,
                        **extra: Any) -> dict[str, int]:
        # The kit lower-cases the param keys: nextPlayer arrives as "nextplayer".
        if player not in PLAYERS:
            raise InvalidParamsError('player must be "ONE" or "TWO"')
        seat = PLAYERS.index(player)
        if extra.get("nextplayer", player) != player:
            raise InvalidParamsError(f"it is not {player}'s turn")
        try:
            position = read_position(rowone, rowtwo)
            if strategy == "random":
                pit = choose_random(position, seat, rng)
            else:
                # Off the event loop, so that pings and other games' calls are answered.
                pit = await asyncio.to_thread(choose_good, position, seat)
        except ValueError as exc:
            raise InvalidParamsError(str(exc)) from None
        return {"pitIndex": pit}

    return Bot(PREFIX, next_move)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``--strategy good|random [--seed N]`` plus the kit's common options
    (see :func:`merknera_bots.launcher.make_parser`)."""
    return strategy_main(
        argv, title="A reference Kalaha bot for the Merknera platform.",
        game=GAME, name_prefix="kalaha", default="random", make_bot=make_bot, delay=False,
        strategies={
            "good": f"Alpha-beta search {DEPTH} sowings deep on the difference of the stores.",
            "random": "Sows a uniformly random non-empty pit.",
        })


if __name__ == "__main__":
    sys.exit(main())

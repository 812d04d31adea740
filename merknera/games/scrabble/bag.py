"""The tile bag and the racks.

Tiles are drawn from the front of the bag; exchanged tiles go back in at places that are a
pure function of the game's bag seed and the turn.

There is no chance node in Scrabble here: :meth:`Scrabble.new` shuffles the bag once with the
caller's RNG and stores the order and a seed in the state, so that the whole game follows from
the state it started in and the moves, and can be replayed without any RNG.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from merknera.games.base import IllegalMoveError
from merknera.games.scrabble.assets import BLANK


def draw(bag: str, count: int) -> tuple[str, str]:
    """(the tiles drawn, the bag left): up to ``count`` tiles from the front of ``bag``."""
    return bag[:count], bag[count:]


def put_back(bag: str, tiles: str, seed: int, turn: int) -> str:
    """The bag after ``tiles`` are returned to it on ``turn`` of a game with bag ``seed``.

    Tile ``i`` goes in at a place read from SHA-256 of ``"<seed>:<turn>:<i>"``.  A hash, not
    :class:`random.Random`, so that replays do not depend on the RNG algorithm of a Python
    version; the seed is secret from the bots (it is not in the NextMove params), so they
    cannot tell where the tiles went.
    """
    for i, tile in enumerate(tiles):
        digest = hashlib.sha256(f"{seed}:{turn}:{i}".encode("ascii")).digest()
        place = int.from_bytes(digest[:8], "big") % (len(bag) + 1)
        bag = bag[:place] + tile + bag[place:]
    return bag


def take(rack: str, tiles: str, what: str, where: Callable[[int], str] | None = None) -> str:
    """The rack without ``tiles`` (``"*"`` for blanks), for ``what`` (``"the play"``).

    ``where(i)`` names the square tile ``i`` goes to, for the message (called only then).

    :raises IllegalMoveError: if the rack does not hold every tile, naming the tile.
    """
    left = list(rack)
    for i, tile in enumerate(tiles):
        try:
            left.remove(tile)
        except ValueError:
            held = rack.count(tile)
            shown = rack or "(empty)"
            if not held:
                name = "a blank" if tile == BLANK else f"the tile {tile}"
                square = f" (for {where(i)})" if where is not None else ""
                raise IllegalMoveError(f"{name}{square} is not in your rack {shown}") from None
            plural = "blanks" if tile == BLANK else f"{tile} tiles"
            raise IllegalMoveError(f"{what} needs {tiles.count(tile)} {plural} but your rack "
                                   f"{shown} holds only {held}") from None
    return "".join(left)

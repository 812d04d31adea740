"""Hexagons: dots and boxes on a triangular lattice (Instructure's MebiPenny 2011 final).

A move draws one line between two neighbouring points.  Drawing the last line of a
hexagon's ring claims it for the mover (+1; a line can close two rings at once, +2), and a
mover who claims moves again.  A hexagon cannot be claimed next to a claimed one, and no
line may touch a claimed centre.  The game ends when every centre is claimed or next to a
claimed one, often with lines still undrawn.  More hexagons win; equal counts draw.

As in the original server, lines and hexagons are listed in the order they were drawn and
claimed, and a line's endpoints are sorted row-major.  Unlike it, seat 0 always moves first
(the scheduler plays both seatings), and the board size comes from the game's settings,
``{"rows": 9, "cols": 9}`` unless set: integers, ``rows`` odd, both from 3 to 25.

On the wire (docs/bots/protocol.md section 4) NextMove and Complete carry ``you`` (the seat's player
name) and the original's Game object; a move is ``{"line": [{"row", "col"}, {"row", "col"}]}``.
A refused line gets the original's reason, coordinates written as JSON, e.g.
``endpoint {"row": 0, "col": 3} not on board``.

* :mod:`.board`: the lattice's points, lines, hexagons and rings, and the sizes allowed.
* :mod:`.state`: the immutable position and what follows from it.
* :mod:`.wire`: a move and the Game object on the bots' wire.
* :mod:`.render`: a position as text.
* :mod:`.game`: :class:`Hexagons`, the rules of a turn, the end, and the stored state.
"""

from __future__ import annotations

from merknera.games.hexagons.board import (
    MAX_SIZE,
    MIN_SIZE,
    Lattice,
    Line,
    Point,
    board_size,
    coordinate,
    lattice,
    line_between,
    line_count,
)
from merknera.games.hexagons.game import Hexagons
from merknera.games.hexagons.render import render
from merknera.games.hexagons.state import HexagonsState
from merknera.games.hexagons.wire import game_object, move_to_wire, parse_line

__all__ = [
    "MAX_SIZE", "MIN_SIZE", "Hexagons", "HexagonsState", "Lattice", "Line", "Point",
    "board_size", "coordinate", "game_object", "lattice", "line_between", "line_count",
    "move_to_wire", "parse_line", "render",
]

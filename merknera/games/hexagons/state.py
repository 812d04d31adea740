"""A Hexagons position: the lines drawn and the hexagons claimed, in order, and what follows
from them (the sets, the scores, the stored JSON rows, why a line may not be drawn).

A state made by a move extends what the state before it derived rather than deriving it
from every line again: a replay makes a state, and a view of it, after every move.
"""

from __future__ import annotations

import functools
from dataclasses import InitVar, dataclass, field

from merknera.games.base import JSON, Seat
from merknera.games.hexagons.board import Lattice, Line, Point, coordinate_text, lattice


@dataclass(frozen=True)
class HexagonsState:
    """A position: the lines drawn, the hexagons claimed, whose turn it is.

    ``turn`` is ``None`` once no hexagon can be claimed any more.
    """

    rows: int
    cols: int
    players: tuple[str, ...]
    """The players' names in seat order (a repeated name gets ``#2`` appended)."""
    lines: tuple[tuple[Line, Seat], ...] = ()
    """The lines in the order drawn, each with the seat that drew it."""
    hexagons: tuple[tuple[Point, Seat], ...] = ()
    """The claimed centres in the order claimed, each with its owner's seat."""
    turn: Seat | None = 0
    """The seat to move (a seat that claims moves again), ``None`` at the end."""
    drawn: frozenset[Line] = field(init=False, compare=False, repr=False)
    claimed: frozenset[Point] = field(init=False, compare=False, repr=False)
    scores: tuple[int, ...] = field(init=False, compare=False, repr=False)
    """Hexagons claimed by each seat."""
    rows_json: tuple[tuple[list[JSON], ...], tuple[list[JSON], ...]] = field(
        init=False, compare=False, repr=False)
    """The lines as ``[r1, c1, r2, c2, seat]`` and the hexagons as ``[row, col, seat]``, in
    order: the rows of the state's JSON form (:meth:`~merknera.games.hexagons.Hexagons.
    state_to_json`), shared with the states after it, so never to be changed."""
    before: InitVar[HexagonsState | None] = None
    """The state this one follows by a move: its sets and lists are extended, not made anew."""

    def __post_init__(self, before: HexagonsState | None) -> None:
        lines, hexagons = self.lines, self.hexagons
        if before is not None and lines[:len(before.lines)] == before.lines \
                and hexagons[:len(before.hexagons)] == before.hexagons:
            drawn, claimed, scores = before.drawn, before.claimed, list(before.scores)
            old_lines, old_hexagons = before.rows_json
            lines, hexagons = lines[len(before.lines):], hexagons[len(before.hexagons):]
        else:
            drawn, claimed, scores = frozenset(), frozenset(), [0] * len(self.players)
            old_lines = old_hexagons = ()
        for _, seat in hexagons:
            scores[seat] += 1
        derive = functools.partial(object.__setattr__, self)
        derive("drawn", drawn.union(line for line, _ in lines))
        derive("claimed", claimed.union(center for center, _ in hexagons))
        derive("scores", tuple(scores))
        derive("rows_json", (old_lines + tuple([*a, *b, s] for (a, b), s in lines),
                             old_hexagons + tuple([*c, s] for c, s in hexagons)))

    @property
    def lattice(self) -> Lattice:
        """The board's geometry."""
        return lattice(self.rows, self.cols)

    def why_illegal(self, line: Line) -> str | None:
        """Why ``line`` (sorted) may not be drawn, in the original's words, or ``None``."""
        board = self.lattice
        first, last = line
        if line in self.drawn:
            return "line already placed"
        for end in line:
            if not board.on_board(end):
                return f"endpoint {coordinate_text(end)} not on board"
        if last not in board.neighbours[first]:
            return (f"endpoints {coordinate_text(first)} and {coordinate_text(last)} "
                    "are not adjacent")
        if first in self.claimed or last in self.claimed:
            return "line falls within claimed hex"
        return None

    def completed_by(self, line: Line) -> tuple[Point, ...]:
        """The centres that drawing the legal ``line`` would claim."""
        board, drawn = self.lattice, self.drawn
        return tuple(center for center in board.corners[line]
                     if all(ring == line or ring in drawn for ring in board.rings[center])
                     and not any(p in self.claimed for p in board.neighbours[center]))

    def claimable(self) -> bool:
        """Whether some centre can still be claimed: not claimed, and no neighbour claimed."""
        return self.lattice.claimable(self.claimed)

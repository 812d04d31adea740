"""The Hexagons board: the lattice of points, its lines and hexagons, and the sizes allowed.

The board has ``rows`` rows of points, numbered from 0.  Even rows hold ``cols - 1`` points
and odd rows ``cols``; even rows sit half a step to the right, so every point touches up to
six others.  On a 5x4 board::

      .   .   .         row 0: cols 0-2
    .   .   .   .       row 1: cols 0-3
      .   .   .         row 2
    .   .   .   .       row 3
      .   .   .         row 4

The neighbours of ``(r, c)``, clockwise from the left, are ``(r, c-1)``, two points above,
``(r, c+1)`` and two below: ``(r-1, c)``, ``(r-1, c+1)``, ``(r+1, c+1)``, ``(r+1, c)`` on
an even row, ``(r-1, c-1)``, ``(r-1, c)``, ``(r+1, c)``, ``(r+1, c-1)`` on an odd row.

A point with six neighbours is the centre of a hexagon; its *ring* is the six lines that
join consecutive neighbours (the spokes from the centre are not part of it).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from merknera.games.base import JSON, JSONObject
from merknera.games.wire import shorten

MIN_SIZE = 3
"""The smallest ``rows`` and ``cols`` a game may be set up with."""
MAX_SIZE = 25
"""The largest ``rows`` and ``cols`` a game may be set up with."""


class Point(NamedTuple):
    """A point of the lattice (the original's Coordinate)."""

    row: int
    col: int


Line = tuple[Point, Point]
"""A line between two points, sorted row-major (the first endpoint is the smaller)."""


def line_between(a: tuple[int, int], b: tuple[int, int]) -> Line:
    """The line joining ``a`` and ``b``, whatever their order."""
    first, last = Point(*a), Point(*b)
    return (first, last) if first <= last else (last, first)


def line_count(rows: int, cols: int) -> int:
    """How many lines a ``rows`` x ``cols`` board has (the original's formula)."""
    return 2 * (rows - 1) * (cols - 1) + (rows + 1) // 2 * (cols - 2) + (rows - 1) // 2 * (cols - 1)


def coordinate(point: Point) -> JSONObject:
    """The original's Coordinate object for ``point``: ``{"row", "col"}``."""
    return {"row": point.row, "col": point.col}


def coordinate_text(point: Point) -> str:
    """``point`` as the original's refusals quote it: its Coordinate written as JSON."""
    return json.dumps(coordinate(point))


@dataclass(frozen=True, eq=False)
class Lattice:
    """The geometry of one board size, computed once (see :func:`lattice`)."""

    rows: int
    cols: int
    points: tuple[Point, ...]
    """Row by row."""
    neighbours: Mapping[Point, tuple[Point, ...]]
    """Each point's neighbours on the board, clockwise from the left."""
    lines: tuple[Line, ...]
    """Every line of the board, sorted."""
    centers: tuple[Point, ...]
    """The points with six neighbours, row by row."""
    rings: Mapping[Point, tuple[Line, ...]]
    """The six ring lines of each centre."""
    corners: Mapping[Line, tuple[Point, ...]]
    """For each line, the centres whose ring holds it (at most two)."""

    def on_board(self, point: Point) -> bool:
        """Whether ``point`` is a point of this board."""
        width = self.cols - 1 if point.row % 2 == 0 else self.cols
        return 0 <= point.row < self.rows and 0 <= point.col < width

    def claimable(self, claimed: frozenset[Point]) -> bool:
        """Whether some centre can still be claimed beside the ``claimed`` ones: one not
        claimed, and with no claimed neighbour."""
        return any(center not in claimed
                   and not any(p in claimed for p in self.neighbours[center])
                   for center in self.centers)


@functools.cache
def lattice(rows: int, cols: int) -> Lattice:
    """The board of ``rows`` x ``cols`` (checked by :func:`board_size`)."""
    points = tuple(Point(row, col) for row in range(rows)
                   for col in range(cols - 1 if row % 2 == 0 else cols))
    board = set(points)

    def around(point: Point) -> tuple[Point, ...]:
        row, col = point
        shift = (row + 1) % 2  # even rows sit half a step right
        clockwise = (Point(row, col - 1), Point(row - 1, col + shift - 1),
                     Point(row - 1, col + shift), Point(row, col + 1),
                     Point(row + 1, col + shift), Point(row + 1, col + shift - 1))
        return tuple(p for p in clockwise if p in board)

    neighbours = {point: around(point) for point in points}
    lines = tuple(sorted({line_between(p, q) for p in points for q in neighbours[p]}))
    centers = tuple(p for p in points if len(neighbours[p]) == 6)
    rings = {c: tuple(line_between(neighbours[c][i], neighbours[c][(i + 1) % 6])
                      for i in range(6)) for c in centers}
    corners: dict[Line, list[Point]] = {line: [] for line in lines}
    for center in centers:
        for line in rings[center]:
            corners[line].append(center)
    return Lattice(rows, cols, points, neighbours, lines, centers, rings,
                   {line: tuple(found) for line, found in corners.items()})


def board_size(settings: Mapping[str, JSON]) -> tuple[int, int]:
    """``(rows, cols)`` from a game's settings.

    :raises ValueError: for a missing or unknown setting, or unless both are integers from
        3 to 25 and ``rows`` is odd.
    """
    unknown = sorted(set(settings) - {"rows", "cols"})
    if unknown:
        raise ValueError(f"unknown Hexagons settings: {', '.join(unknown)} (only rows and cols)")
    if "rows" not in settings or "cols" not in settings:
        raise ValueError("Hexagons needs the settings rows and cols")
    rows, cols = _size("rows", settings["rows"]), _size("cols", settings["cols"])
    if rows % 2 == 0:
        raise ValueError(f"rows must be odd, got {rows}")
    return rows, cols


def _size(name: str, value: JSON) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {shorten(value)}")
    if not MIN_SIZE <= value <= MAX_SIZE:
        raise ValueError(f"{name} must be from {MIN_SIZE} to {MAX_SIZE}, got {value}")
    return value

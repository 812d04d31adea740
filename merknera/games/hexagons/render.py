"""A Hexagons position as text, for transcripts and test failures."""

from __future__ import annotations

from merknera.games.hexagons.board import Point
from merknera.games.hexagons.state import HexagonsState


def render(state: HexagonsState) -> str:
    """The board as text: ``.`` a point, ``0``/``1`` a centre claimed by that seat, and
    ``---``, ``/``, ``\\`` the lines drawn."""
    width = 4 * state.cols - 3
    grid = [[" "] * width for _ in range(2 * state.rows - 1)]
    owner = dict(state.hexagons)

    def x(point: Point) -> int:
        return 4 * point.col + (2 if point.row % 2 == 0 else 0)

    for point in state.lattice.points:
        mark = owner.get(point)
        grid[2 * point.row][x(point)] = "." if mark is None else str(mark)
    for (first, last), _ in state.lines:
        if first.row == last.row:
            grid[2 * first.row][x(first) + 1:x(first) + 4] = ["-"] * 3
        else:
            left = x(last) < x(first)
            grid[2 * first.row + 1][x(first) + (-1 if left else 1)] = "/" if left else "\\"
    return "\n".join("".join(row).rstrip() for row in grid)

"""The Hexagons board (merknera.games.hexagons.board): the lattice's points, lines, centres
and rings, and the sizes a game may be set up with.

Positions are on the 5x4 board of research/seed-systems.md c.4 unless said otherwise::

      .   .   .         row 0: cols 0-2
    .   .   .   .       row 1: cols 0-3
      .   .   .         row 2
    .   .   .   .       row 3
      .   .   .         row 4
"""

from __future__ import annotations

import random
import re

import pytest

from merknera.games.hexagons import (
    Hexagons,
    Line,
    Point,
    board_size,
    lattice,
    line_between,
    line_count,
)

GAME = Hexagons()
PLAYERS = ("amy", "bob")


def ln(r1: int, c1: int, r2: int, c2: int) -> Line:
    return line_between((r1, c1), (r2, c2))


def ring(r: int, c: int, rows: int = 5, cols: int = 4) -> tuple[Line, ...]:
    return lattice(rows, cols).rings[Point(r, c)]


# -- the lattice ---------------------------------------------------------------------


def test_the_5x4_board_has_17_points_and_36_lines() -> None:
    board = lattice(5, 4)
    assert len(board.points) == 17
    assert len(board.lines) == 36 == line_count(5, 4)
    widths = [sum(1 for p in board.points if p.row == row) for row in range(5)]
    assert widths == [3, 4, 3, 4, 3]


@pytest.mark.parametrize(("rows", "cols"), [(3, 3), (3, 7), (5, 4), (7, 3), (9, 9), (25, 25)])
def test_the_line_formula_counts_the_lines(rows: int, cols: int) -> None:
    board = lattice(rows, cols)
    assert len(board.lines) == line_count(rows, cols)
    assert list(board.lines) == sorted(set(board.lines))
    # Adjacency is symmetric, and every line joins neighbours.
    for point, around in board.neighbours.items():
        assert all(point in board.neighbours[other] for other in around)
    assert all(b in board.neighbours[a] for a, b in board.lines)


@pytest.mark.parametrize(("point", "expected"), [
    # research c.4, clockwise from the left
    ((2, 1), [(2, 0), (1, 1), (1, 2), (2, 2), (3, 2), (3, 1)]),
    ((1, 1), [(1, 0), (0, 0), (0, 1), (1, 2), (2, 1), (2, 0)]),
    ((0, 0), [(0, 1), (1, 1), (1, 0)]),
    ((1, 0), [(0, 0), (1, 1), (2, 0)]),
    ((4, 2), [(4, 1), (3, 2), (3, 3)]),
    ((1, 3), [(1, 2), (0, 2), (2, 2)]),
])
def test_neighbours(point: tuple[int, int], expected: list[tuple[int, int]]) -> None:
    assert list(lattice(5, 4).neighbours[Point(*point)]) == expected


def test_the_centres_of_5x4_and_their_rings() -> None:
    board = lattice(5, 4)
    assert board.centers == ((1, 1), (1, 2), (2, 1), (3, 1), (3, 2))
    for center in board.centers:
        around = board.neighbours[center]
        assert len(board.rings[center]) == 6
        # A ring joins consecutive neighbours; the centre is on none of its lines.
        for i, line in enumerate(board.rings[center]):
            assert line == line_between(around[i], around[(i + 1) % 6])
            assert center not in line
    assert ring(2, 1) == (ln(1, 1, 2, 0), ln(1, 1, 1, 2), ln(1, 2, 2, 2), ln(2, 2, 3, 2),
                          ln(3, 1, 3, 2), ln(2, 0, 3, 1))


@pytest.mark.parametrize(("rows", "cols", "centres"), [
    (3, 3, 1), (3, 4, 2), (5, 4, 5), (9, 9, 7 * 7 - 3), (25, 25, 23 * 23 - 11)])
def test_centre_counts(rows: int, cols: int, centres: int) -> None:
    # Odd rows 1..rows-2 have cols-2 centres, even rows 2..rows-3 have cols-3.
    assert len(lattice(rows, cols).centers) == centres


# -- settings ------------------------------------------------------------------------


@pytest.mark.parametrize(("settings", "size"), [
    ({"rows": 9, "cols": 9}, (9, 9)),
    ({"rows": 3, "cols": 3}, (3, 3)),
    ({"rows": 25, "cols": 25}, (25, 25)),
    ({"cols": 4, "rows": 5}, (5, 4)),
])
def test_board_size(settings: dict[str, object], size: tuple[int, int]) -> None:
    assert board_size(settings) == size  # type: ignore[arg-type]


@pytest.mark.parametrize(("settings", "message"), [
    ({"rows": 8, "cols": 9}, "rows must be odd, got 8"),
    ({"rows": 1, "cols": 9}, "rows must be from 3 to 25, got 1"),
    ({"rows": 27, "cols": 9}, "rows must be from 3 to 25, got 27"),
    ({"rows": 9, "cols": 2}, "cols must be from 3 to 25, got 2"),
    ({"rows": 9, "cols": 26}, "cols must be from 3 to 25, got 26"),
    ({"rows": 9.0, "cols": 9}, "rows must be an integer, got 9.0"),
    ({"rows": 9, "cols": True}, "cols must be an integer, got True"),
    ({"rows": "9", "cols": 9}, "rows must be an integer, got '9'"),
    ({"rows": 9}, "Hexagons needs the settings rows and cols"),
    ({"rows": 9, "cols": 9, "colls": 7}, "unknown Hexagons settings: colls"),
])
def test_bad_settings(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        GAME.new(settings, PLAYERS, random.Random(0))  # type: ignore[arg-type]

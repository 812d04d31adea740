"""Reference Hexagons bots: ``random`` (any legal line) and ``good`` (greedy and careful).

Run one with::

    python -m merknera_bots.hexagons --strategy good --platform http://127.0.0.1:8080 \\
        --token TOKEN --port 0

``Hexagons.NextMove`` brings the original server's Game object (``rows``, ``cols``,
``lines``, ``hexagons``, ``players``, ``state``) plus ``gameid`` and ``you``; the reply is
``{"line": [{"row", "col"}, {"row", "col"}]}``.  This module has its own small copy of the
board's geometry and imports nothing from ``merknera``.

``good`` claims a hexagon when it can (the line that claims the most), else draws a line that
leaves no hexagon one line short for the opponent, else the line after which the opponent's
run of claims is shortest.  Ties are broken at random.
"""

from __future__ import annotations

import asyncio
import functools
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from merknera_bots.kit import Bot, InvalidParamsError
from merknera_bots.launcher import strategy_main

GAME = "HEXAGONS"
PREFIX = "Hexagons"

Point = tuple[int, int]
Line = tuple[Point, Point]
"""Sorted: the smaller endpoint (row, then col) first."""


def line_between(a: Point, b: Point) -> Line:
    """The line joining ``a`` and ``b``, endpoints sorted."""
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True)
class Geometry:
    """The lattice of one board size: even rows hold ``cols - 1`` points, odd rows ``cols``,
    even rows sit half a step right."""

    rows: int
    cols: int
    neighbours: dict[Point, tuple[Point, ...]]
    """Clockwise from the left."""
    lines: tuple[Line, ...]
    rings: dict[Point, tuple[Line, ...]]
    """The six lines around each hexagon centre (a point with six neighbours)."""
    corners: dict[Line, tuple[Point, ...]]
    """The centres whose ring holds each line."""


@functools.cache
def geometry(rows: int, cols: int) -> Geometry:
    """The lattice of ``rows`` x ``cols``."""
    points = {(r, c) for r in range(rows) for c in range(cols - 1 if r % 2 == 0 else cols)}

    def around(r: int, c: int) -> tuple[Point, ...]:
        s = (r + 1) % 2
        clockwise = ((r, c - 1), (r - 1, c + s - 1), (r - 1, c + s), (r, c + 1),
                     (r + 1, c + s), (r + 1, c + s - 1))
        return tuple(p for p in clockwise if p in points)

    neighbours = {p: around(*p) for p in sorted(points)}
    lines = tuple(sorted({line_between(p, q) for p in points for q in neighbours[p]}))
    rings = {p: tuple(line_between(ns[i], ns[(i + 1) % 6]) for i in range(6))
             for p, ns in neighbours.items() if len(ns) == 6}
    corners: dict[Line, list[Point]] = {line: [] for line in lines}
    for center, ring in rings.items():
        for line in ring:
            corners[line].append(center)
    return Geometry(rows, cols, neighbours, lines, rings,
                    {line: tuple(found) for line, found in corners.items()})


@dataclass(frozen=True)
class Position:
    """What a bot needs of the Game object: the board, the lines drawn, the centres claimed."""

    geometry: Geometry
    drawn: frozenset[Line]
    claimed: frozenset[Point]

    def is_open(self, center: Point, claimed: frozenset[Point] | set[Point] | None = None
                ) -> bool:
        """Whether ``center`` can still be claimed: neither it nor a neighbour is claimed."""
        taken = self.claimed if claimed is None else claimed
        return center not in taken and not any(p in taken for p in
                                               self.geometry.neighbours[center])

    def legal_lines(self) -> list[Line]:
        """Every line that may be drawn, sorted."""
        return [line for line in self.geometry.lines if line not in self.drawn
                and line[0] not in self.claimed and line[1] not in self.claimed]

    def missing(self, center: Point, drawn: frozenset[Line] | set[Line] | None = None
                ) -> list[Line]:
        """The ring lines of ``center`` not drawn yet."""
        done = self.drawn if drawn is None else drawn
        return [line for line in self.geometry.rings[center] if line not in done]

    def claims(self, line: Line) -> int:
        """How many hexagons drawing ``line`` would claim."""
        return sum(1 for c in self.geometry.corners[line]
                   if self.is_open(c) and self.missing(c) == [line])

    def is_safe(self, line: Line) -> bool:
        """Whether ``line`` leaves no hexagon one line short (for a position with no claim)."""
        return not any(self.is_open(c) and len(self.missing(c)) == 2
                       for c in self.geometry.corners[line])

    def give_away(self, line: Line) -> int:
        """How many hexagons the opponent claims in a row after we draw ``line``, taking
        greedily every hexagon one line short."""
        drawn, claimed = set(self.drawn), set(self.claimed)
        drawn.add(line)
        frontier = list(self.geometry.corners[line])
        taken = 0
        while frontier:
            center = frontier.pop()
            if not self.is_open(center, claimed):
                continue
            short = self.missing(center, drawn)
            if len(short) != 1:
                continue
            edge = short[0]
            done = [c for c in self.geometry.corners[edge]
                    if self.is_open(c, claimed) and self.missing(c, drawn) == [edge]]
            drawn.add(edge)
            claimed.update(done)
            taken += len(done)
            frontier.extend(self.geometry.corners[edge])
        return taken


def read_position(rows: Any, cols: Any, lines: Any, hexagons: Any) -> Position:
    """The position described by a Game object's fields.

    :raises ValueError: if they do not describe a board with lines and hexagons on it.
    """
    for name, value in (("rows", rows), ("cols", cols)):
        if isinstance(value, bool) or not isinstance(value, int) or not 3 <= value <= 99:
            raise ValueError(f"{name} must be an integer from 3 to 99, got {value!r}")
    if rows % 2 == 0:
        raise ValueError(f"rows must be odd, got {rows}")
    board = geometry(rows, cols)
    if not isinstance(lines, list) or not isinstance(hexagons, list):
        raise ValueError("lines and hexagons must be lists")
    drawn = set()
    for item in lines:
        ends = item.get("endpoints") if isinstance(item, dict) else None
        if not isinstance(ends, list) or len(ends) != 2:
            raise ValueError(f"a line must have two endpoints: {item!r}")
        line = line_between(_point(ends[0]), _point(ends[1]))
        if line not in board.corners:
            raise ValueError(f"no such line on a {rows}x{cols} board: {item!r}")
        drawn.add(line)
    claimed = set()
    for item in hexagons:
        center = _point(item.get("center") if isinstance(item, dict) else None)
        if center not in board.rings:
            raise ValueError(f"no hexagon centre at {center} on a {rows}x{cols} board")
        claimed.add(center)
    return Position(board, frozenset(drawn), frozenset(claimed))


def _point(value: Any) -> Point:
    if not isinstance(value, dict):
        raise ValueError(f"a coordinate must be an object {{row, col}}, got {value!r}")
    row, col = value.get("row"), value.get("col")
    if isinstance(row, bool) or isinstance(col, bool) or not (
            isinstance(row, int) and isinstance(col, int)):
        raise ValueError(f"a coordinate needs integer row and col, got {value!r}")
    return (row, col)


def choose_random(position: Position, rng: random.Random) -> Line:
    """Any legal line, uniformly.  :raises ValueError: if there is none."""
    legal = position.legal_lines()
    if not legal:
        raise ValueError("no line can be drawn")
    return rng.choice(legal)


def choose_good(position: Position, rng: random.Random) -> Line:
    """Claim the most; else a safe line; else the line that gives the least away.

    :raises ValueError: if no line can be drawn.
    """
    legal = position.legal_lines()
    if not legal:
        raise ValueError("no line can be drawn")
    gains = {line: position.claims(line) for line in legal}
    best = max(gains.values())
    if best > 0:
        return rng.choice([line for line in legal if gains[line] == best])
    safe = [line for line in legal if position.is_safe(line)]
    if safe:
        return rng.choice(safe)
    losses = {line: position.give_away(line) for line in legal}
    least = min(losses.values())
    return rng.choice([line for line in legal if losses[line] == least])


def line_to_wire(line: Line) -> dict[str, list[dict[str, int]]]:
    """The NextMove reply for ``line``."""
    return {"line": [{"row": r, "col": c} for r, c in line]}


Strategy = Callable[[Position, random.Random], Line]
STRATEGIES: dict[str, Strategy] = {"good": choose_good, "random": choose_random}


def make_bot(strategy: str, *, delay: float = 0.0, seed: int | None = None) -> Bot:
    """A :class:`~merknera_bots.kit.Bot` playing ``strategy`` (``"good"`` or ``"random"``), waiting
    ``delay`` seconds before each move, drawing its choices from ``random.Random(seed)``."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    choose, rng = STRATEGIES[strategy], random.Random(seed)

    async def next_move(*, gameid: Any, rows: Any, cols: Any, lines: Any, hexagons: Any,
                        **extra: Any) -> dict[str, Any]:
        try:
            line = choose(read_position(rows, cols, lines, hexagons), rng)
        except ValueError as exc:
            raise InvalidParamsError(str(exc)) from None
        if delay > 0:
            await asyncio.sleep(delay)
        return line_to_wire(line)

    return Bot(PREFIX, next_move)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``--strategy good|random [--delay SECONDS] [--seed N]`` plus the
    kit's common options (see :func:`merknera_bots.launcher.make_parser`)."""
    return strategy_main(
        argv, title="A reference Hexagons bot for the Merknera platform.",
        game=GAME, name_prefix="hexagons", default="good", make_bot=make_bot,
        seed_help="seed of the generator that breaks ties and picks lines",
        strategies={
            "good": "Claims when it can, otherwise avoids leaving a hexagon one line short.",
            "random": "Draws a uniformly random legal line.",
        })


if __name__ == "__main__":
    sys.exit(main())

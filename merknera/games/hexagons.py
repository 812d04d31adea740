"""Hexagons: dots and boxes on a triangular lattice (Instructure's MebiPenny 2011 final).

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

A move draws one line between two neighbours.  A point with six neighbours is the centre
of a hexagon; its *ring* is the six lines that join consecutive neighbours (the spokes from
the centre never count).  Drawing the last line of a ring claims the hexagon for the mover
(+1; a line can close two rings at once, +2), and a mover who claims moves again.  A
hexagon cannot be claimed next to a claimed one, and no line may touch a claimed centre.
The game ends when every centre is claimed or next to a claimed one, often with lines still
undrawn.  More hexagons win; equal counts draw.

As in the original server, lines and hexagons are listed in the order they were drawn and
claimed, and a line's endpoints are sorted row-major.  Unlike it, seat 0 always moves first
(the scheduler plays both seatings), and the board size comes from the game's settings,
``{"rows": 9, "cols": 9}`` unless set: integers, ``rows`` odd, both from 3 to 25.

On the wire (PROTOCOL.md section 4) NextMove and Complete carry ``you`` (the seat's player
name) and the original's Game object; a move is ``{"line": [{"row", "col"}, {"row", "col"}]}``.
A refused line gets the original's reason, coordinates written as JSON, e.g.
``endpoint {"row": 0, "col": 3} not on board``.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from typing import NamedTuple

from merknera.games.base import (
    JSON,
    Calls,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    JSONObject,
    Outcome,
    Seat,
)
from merknera.games.wire import lowered, member, shorten

MIN_SIZE = 3
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
    rows_json: tuple[tuple[JSON, ...], ...] = field(init=False, compare=False, repr=False)
    """The lines and the hexagons as :meth:`Hexagons.state_to_json` writes them."""
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
                return f"endpoint {_coordinate_text(end)} not on board"
        if last not in board.neighbours[first]:
            return (f"endpoints {_coordinate_text(first)} and {_coordinate_text(last)} "
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
        return _claimable(self.lattice, self.claimed)

    def render(self) -> str:
        """The board as text: ``.`` a point, ``0``/``1`` a centre claimed by that seat, and
        ``---``, ``/``, ``\\`` the lines drawn."""
        width = 4 * self.cols - 3
        grid = [[" "] * width for _ in range(2 * self.rows - 1)]
        owner = dict(self.hexagons)

        def x(point: Point) -> int:
            return 4 * point.col + (2 if point.row % 2 == 0 else 0)

        for point in self.lattice.points:
            mark = owner.get(point)
            grid[2 * point.row][x(point)] = "." if mark is None else str(mark)
        for (first, last), _ in self.lines:
            if first.row == last.row:
                grid[2 * first.row][x(first) + 1:x(first) + 4] = ["-"] * 3
            else:
                left = x(last) < x(first)
                grid[2 * first.row + 1][x(first) + (-1 if left else 1)] = "/" if left else "\\"
        return "\n".join("".join(row).rstrip() for row in grid)


def parse_line(reply: JSON) -> Line:
    """Read ``{"line": [{"row", "col"}, {"row", "col"}]}`` (endpoints in either order).

    Keys match case-insensitively (one given twice in different cases is invalid, see
    :mod:`merknera.games.wire`); other keys are ignored.

    :raises InvalidMoveError: for anything else, with what was wrong.
    """
    if not isinstance(reply, dict):
        raise InvalidMoveError(
            f'invalid line data: expected {{"line": [{{"row", "col"}}, {{"row", "col"}}]}}, '
            f"got {shorten(reply)}")
    value = member(reply, "line", "invalid line data: the reply")
    if value is None:
        raise InvalidMoveError(f'invalid line data: the reply has no "line": {shorten(reply)}')
    if not isinstance(value, list) or len(value) != 2:
        raise InvalidMoveError(
            f'invalid line data: "line" must be a list of two coordinates, got {shorten(value)}')
    ends: list[Point] = []
    for index, end in enumerate(value, 1):
        if not isinstance(end, dict):
            raise InvalidMoveError(f'invalid line data: endpoint {index} must be an object '
                                   f'{{"row", "col"}}, got {shorten(end)}')
        numbers = []
        fields = lowered(end, f"invalid line data: endpoint {index}")
        for key in ("row", "col"):
            number = fields.get(key)
            if number is None:
                raise InvalidMoveError(
                    f'invalid line data: endpoint {index} has no "{key}": {shorten(end)}')
            # bool is an int in Python; true is not a row.
            if isinstance(number, bool) or not isinstance(number, int):
                raise InvalidMoveError(f'invalid line data: "{key}" of endpoint {index} '
                                       f"must be an integer, got {shorten(number)}")
            numbers.append(number)
        ends.append(Point(*numbers))
    return line_between(ends[0], ends[1])


class Hexagons(Game[HexagonsState, Line]):
    """Hexagon dots and boxes for two: draw lines, close rings, claim hexagons."""

    mnemonic = "HEXAGONS"
    name = "Hexagons"
    calls = Calls("Hexagons")
    max_moves = line_count(MAX_SIZE, MAX_SIZE)
    """Every move draws a line, so the largest board bounds every game (1739 moves)."""
    default_settings: Mapping[str, JSON] = {"rows": 9, "cols": 9}

    def new(self, settings: Mapping[str, JSON], players: Sequence[str],
            rng: random.Random) -> HexagonsState:
        """An empty board of the settings' size; ``rng`` is not used.

        :raises ValueError: for bad settings or not two players.
        """
        rows, cols = board_size(settings)
        return HexagonsState(rows, cols, _distinct(players))

    def to_move(self, state: HexagonsState) -> Seat | None:
        return state.turn

    def legal_moves(self, state: HexagonsState, seat: Seat) -> Sequence[Line]:
        if state.turn != seat:
            return ()
        drawn, claimed = state.drawn, state.claimed
        return tuple(line for line in state.lattice.lines if line not in drawn
                     and line[0] not in claimed and line[1] not in claimed)

    def apply(self, state: HexagonsState, seat: Seat, move: Line) -> HexagonsState:
        if state.turn is None:
            raise IllegalMoveError("the game is over: no hexagon can be claimed any more")
        if seat != state.turn:
            raise IllegalMoveError(f"it is {state.players[state.turn]}'s turn, "
                                   f"not {state.players[seat]}'s")
        line = line_between(*move)
        reason = state.why_illegal(line)
        if reason is not None:
            raise IllegalMoveError(reason)
        claims = state.completed_by(line)
        if not _claimable(state.lattice, state.claimed.union(claims)):
            turn = None
        else:
            turn = seat if claims else 1 - seat
        return HexagonsState(state.rows, state.cols, state.players,
                             (*state.lines, (line, seat)),
                             (*state.hexagons, *((center, seat) for center in claims)), turn,
                             before=state)

    def outcome(self, state: HexagonsState) -> Outcome | None:
        if state.turn is not None:
            return None
        (first, second), scores = state.players, state.scores
        ending = "no hexagon can be claimed any more"
        if scores[0] == scores[1]:
            detail = f"a draw, {scores[0]} hexagons each: {ending}"
        else:
            winner = first if scores[0] > scores[1] else second
            detail = f"{winner} wins {max(scores)}-{min(scores)}: {ending}"
        return Outcome.by_scores(tuple(float(s) for s in scores), detail)

    def standings(self, state: HexagonsState) -> tuple[float, ...]:
        return tuple(float(s) for s in state.scores)

    # -- values <-> JSON -----------------------------------------------------------------

    def state_to_json(self, state: HexagonsState) -> JSON:
        """``{"rows", "cols", "players": [names], "lines": [[r1, c1, r2, c2, seat], ...]``
        (in the order drawn), ``"hexagons": [[row, col, seat], ...]`` (in the order claimed),
        ``"scores": [n, n], "turn": seat | null}``."""
        return _state_json(state, [[a.row, a.col, b.row, b.col, s] for (a, b), s in state.lines],
                           [[c.row, c.col, seat] for c, seat in state.hexagons])

    def spectator_view(self, state: HexagonsState, reveal: bool) -> JSON:
        """:meth:`state_to_json`'s form (nothing is hidden), whose lines and hexagons are the
        state's own lists, shared with the states after it: not to be changed.  A replay
        makes a view of every state of a game, and writing every line afresh each move was
        most of a long game's replay time."""
        line_rows, hexagon_rows = state.rows_json
        return _state_json(state, list(line_rows), list(hexagon_rows))

    def state_from_json(self, data: JSON) -> HexagonsState:
        """Read :meth:`state_to_json`'s form by replaying its lines, which checks them.

        :raises ValueError: if it is not a position reached by legal play.
        """
        if not isinstance(data, dict) or set(data) != {
                "rows", "cols", "players", "lines", "hexagons", "scores", "turn"}:
            raise ValueError(f"not a Hexagons state: {shorten(data)}")
        players = data["players"]
        if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
            raise ValueError(f"Hexagons players must be a list of names, got {shorten(players)}")
        state = HexagonsState(*board_size({"rows": data["rows"], "cols": data["cols"]}),
                              _distinct([str(p) for p in players], exact=True))
        lines = data["lines"]
        if not isinstance(lines, list):
            raise ValueError(f"Hexagons lines must be a list, got {shorten(lines)}")
        for item in lines:
            numbers = [n for n in item if type(n) is int] if isinstance(item, list) else []
            if not isinstance(item, list) or len(numbers) != len(item) or len(item) != 5:
                raise ValueError(f"not a Hexagons line [r1, c1, r2, c2, seat]: {shorten(item)}")
            r1, c1, r2, c2, seat = numbers
            if seat not in (0, 1):
                raise ValueError(f"no seat {seat} in line {item}")
            try:
                state = self.apply(state, seat, line_between((r1, c1), (r2, c2)))
            except IllegalMoveError as exc:
                raise ValueError(f"line {item} cannot be drawn: {exc}") from None
        derived = self.state_to_json(state)
        assert isinstance(derived, dict)
        for key in ("lines", "hexagons", "scores", "turn"):
            if data[key] != derived[key]:
                raise ValueError(f"Hexagons {key} {shorten(data[key])} do not follow from "
                                 f"the lines drawn: expected {shorten(derived[key])}")
        return state

    def move_to_wire(self, move: Line) -> JSON:
        return {"line": [_coordinate(end) for end in move]}

    def parse_move(self, reply: JSON) -> Line:
        return parse_line(reply)

    # -- the wire view -----------------------------------------------------------------

    def game_object(self, state: HexagonsState, *, completed: bool) -> JSONObject:
        """The original's Game object: ``rows``, ``cols``, ``lines`` and ``hexagons`` (in the
        order drawn and claimed, each ``owner`` a player with its current score), ``players``
        (``{"name", "score"}`` in seat order, where the original rotated them to put the
        mover first) and ``state`` (``"in play"`` or ``"completed"``)."""

        def player(seat: Seat) -> JSON:
            return {"name": state.players[seat], "score": state.scores[seat]}

        return {
            "rows": state.rows,
            "cols": state.cols,
            "lines": [{"endpoints": [_coordinate(a), _coordinate(b)], "owner": player(seat)}
                      for (a, b), seat in state.lines],
            "hexagons": [{"center": _coordinate(center), "owner": player(seat)}
                         for center, seat in state.hexagons],
            "players": [player(seat) for seat in range(len(state.players))],
            "state": "completed" if completed else "in play",
        }

    def new_game_params(self, state: HexagonsState, seat: Seat) -> JSONObject:
        return {"rows": state.rows, "cols": state.cols}

    def next_move_params(self, state: HexagonsState, seat: Seat) -> JSONObject:
        return {"you": state.players[seat], **self.game_object(state, completed=False)}

    def complete_params(self, state: HexagonsState, seat: Seat,
                        outcome: Outcome | None = None) -> JSONObject:
        return {"you": state.players[seat], **self.game_object(state, completed=True)}

    def describe_move(self, state: HexagonsState, seat: Seat, move: Line) -> str:
        line = line_between(*move)
        text = f"{state.players[seat]} draws {_point_text(line[0])}-{_point_text(line[1])}"
        if state.why_illegal(line) is None:
            claims = state.completed_by(line)
            if claims:
                text += f", claims {' and '.join(_point_text(c) for c in claims)}"
        return text


def _state_json(state: HexagonsState, lines: list[JSON], hexagons: list[JSON]) -> JSON:
    return {"rows": state.rows, "cols": state.cols, "players": list(state.players),
            "lines": lines, "hexagons": hexagons, "scores": list(state.scores),
            "turn": state.turn}


def _claimable(board: Lattice, claimed: frozenset[Point]) -> bool:
    return any(center not in claimed and not any(p in claimed for p in board.neighbours[center])
               for center in board.centers)


def _coordinate(point: Point) -> JSON:
    return {"row": point.row, "col": point.col}


def _coordinate_text(point: Point) -> str:
    return json.dumps(_coordinate(point))


def _point_text(point: Point) -> str:
    return f"({point.row},{point.col})"


def _distinct(players: Sequence[str], *, exact: bool = False) -> tuple[str, ...]:
    """Two player names that tell the seats apart: a repeated name gets ``#2``.

    With ``exact`` (a stored state) repeated names are an error instead.
    """
    if len(players) != 2:
        raise ValueError(f"Hexagons is for 2 players, not {len(players)}")
    first, second = players
    if first == second:
        if exact:
            raise ValueError(f"both Hexagons players are called {first!r}")
        second = f"{second}#2"
    return (first, second)

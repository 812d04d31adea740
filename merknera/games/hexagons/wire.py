"""Hexagons on the bots' wire (docs/bots/protocol.md section 4): a move is
``{"line": [{"row", "col"}, {"row", "col"}]}``, and NextMove and Complete carry the
original's Game object.
"""

from __future__ import annotations

from merknera.games.base import JSON, InvalidMoveError, JSONObject, Seat
from merknera.games.hexagons.board import Line, Point, coordinate, line_between
from merknera.games.hexagons.state import HexagonsState
from merknera.games.wire import lowered, member, shorten


def move_to_wire(line: Line) -> JSON:
    """``line`` as a move: ``{"line": [{"row", "col"}, {"row", "col"}]}``."""
    return {"line": [coordinate(end) for end in line]}


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


def game_object(state: HexagonsState, *, completed: bool) -> JSONObject:
    """The original's Game object: ``rows``, ``cols``, ``lines`` and ``hexagons`` (in the
    order drawn and claimed, each ``owner`` a player with its current score), ``players``
    (``{"name", "score"}`` in seat order, where the original rotated them to put the
    mover first) and ``state`` (``"in play"`` or ``"completed"``)."""

    def player(seat: Seat) -> JSON:
        return {"name": state.players[seat], "score": state.scores[seat]}

    return {
        "rows": state.rows,
        "cols": state.cols,
        "lines": [{"endpoints": [coordinate(a), coordinate(b)], "owner": player(seat)}
                  for (a, b), seat in state.lines],
        "hexagons": [{"center": coordinate(center), "owner": player(seat)}
                     for center, seat in state.hexagons],
        "players": [player(seat) for seat in range(len(state.players))],
        "state": "completed" if completed else "in play",
    }

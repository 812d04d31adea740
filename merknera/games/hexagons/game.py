"""The rules of Hexagons (:class:`Hexagons`): the turns, the end, the stored state and the
bots' view of it."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from merknera.games.base import (
    JSON,
    Calls,
    Game,
    IllegalMoveError,
    JSONObject,
    Outcome,
    Seat,
)
from merknera.games.hexagons import wire
from merknera.games.hexagons.board import (
    MAX_SIZE,
    Line,
    Point,
    board_size,
    line_between,
    line_count,
)
from merknera.games.hexagons.state import HexagonsState
from merknera.games.wire import shorten


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
        if not state.lattice.claimable(state.claimed.union(claims)):
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
        line_rows, hexagon_rows = state.rows_json
        return _state_json(state, [row.copy() for row in line_rows],
                           [row.copy() for row in hexagon_rows])

    def spectator_view(self, state: HexagonsState, reveal: bool) -> JSON:
        """:meth:`state_to_json`'s form (nothing is hidden), whose lines and hexagons are the
        state's own rows, shared with the states after it: not to be changed.  A replay
        makes a view of every state of a game, and writing every line afresh each move was
        most of a long game's replay time."""
        line_rows, hexagon_rows = state.rows_json
        return _state_json(state, [*line_rows], [*hexagon_rows])

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
        return wire.move_to_wire(move)

    def parse_move(self, reply: JSON) -> Line:
        return wire.parse_line(reply)

    # -- the wire view -----------------------------------------------------------------

    def game_object(self, state: HexagonsState, *, completed: bool) -> JSONObject:
        """The original's Game object (:func:`merknera.games.hexagons.wire.game_object`)."""
        return wire.game_object(state, completed=completed)

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

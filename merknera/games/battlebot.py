"""Battlebot's two games, noughts and crosses and Numberwang, with Battlebot's state shapes.

Both views are the era-A Battlebot state (``research/seed-systems.md`` a.6, a.7): NextMove
carries ``{"state": {"players", "nextPlayer", "complete", "board", ...}}`` and Complete the
final state, with ``"complete": true``, ``"victor"`` (a name, or ``null`` for a draw) and
``"reason"``.  ``players`` are the bots' names in seat order; ``players[0]`` moves first.
The platform's record of a state (:meth:`Game.state_to_json`) is the same object.

**Noughts and crosses** is tic-tac-toe (:mod:`merknera.games.tictactoe` holds the rules and
the board); only the view differs.  The board is three rows of three cells, ``"X"``, ``"O"``
or ``""``; ``players[0]`` is X.  A turn is ``{"mark": "X", "space": [row, col]}``.  A reply
that is not such an object, a mark other than ``"X"``/``"O"`` or a space that is not two
integers 0-2 is malformed (1.5 is, as on Battlebot; 1.0 is the integer 1, as JSON has only
numbers).  The wrong player's mark, a taken space or a move out of turn is illegal.

**Numberwang** was Battlebot's protocol test: ``board`` is ``{"n": 0}``, a turn
``{"n": <number>}`` adds any finite number to ``n`` (fractions and negatives included), and
the game ends when ``n >= 10`` (``players[0]`` wins) or ``n <= -10`` (``players[1]`` wins),
whoever moved.  Our additions:

* The setting ``maxTurns`` (default and most: 100, at least 1): a game that has run that many
  turns without an end is a draw with the reason ``"maxTurns"``, so every game ends.
* Numbers are decimals.  A JSON number is read as its shortest decimal text (``0.1`` is one
  tenth, not the double nearest it), sums are exact, and a sum that is not an integer is then
  rounded to the nearest double and kept as that double's shortest decimal, so ``n`` is always
  a JSON number that reads back exactly: ``0.1 + 0.2`` is ``0.3``.  Integers stay exact.  A
  number beyond the range of a double (about 1.8e308) is malformed.
* Reply keys are matched case-insensitively, like every reply on this platform.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from merknera.games.base import (
    JSON,
    Calls,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    JSONObject,
    Outcome,
    Seat,
    Termination,
)
from merknera.games.tictactoe import MARKS, Board, TicTacToe
from merknera.games.wire import lowered, shorten

COMPLETE = "complete"
"""Battlebot's ``reason`` when the rules ended the game."""
PLATFORM = "platform"
"""The ``reason`` in Complete when the platform ended a game its rules had not (a forfeit,
or a game ended without a result): ``winner`` then says who won."""

_TICTACTOE = TicTacToe()


def _check_players(players: Sequence[str], game: str) -> tuple[str, str]:
    if len(players) != 2 or not all(isinstance(name, str) for name in players):
        raise ValueError(f"{game} is for 2 players, not {list(players)!r}")
    return players[0], players[1]


def _fields(reply: JSON, shape: str, *keys: str) -> list[JSON]:
    """``reply[key]`` for each key of a reply object, keys matched case-insensitively (the
    object's keys lower-cased once for all of them).

    :raises InvalidMoveError: if the reply is not an object, lacks a key, or has a key
        twice in different cases (see :mod:`merknera.games.wire`).
    """
    if not isinstance(reply, dict):
        raise InvalidMoveError(f"expected an object {shape}, got {shorten(reply)}")
    fields = lowered(reply)
    found: list[JSON] = []
    for key in keys:
        value = fields.get(key)
        if value is None:
            raise InvalidMoveError(f'the reply has no "{key}": {shorten(reply)}')
        found.append(value)
    return found


def _final_view(view: JSONObject, outcome: Outcome | None) -> JSONObject:
    """``view`` as the final state sent with Complete: complete, with a victor and a reason.

    A game the rules did not end (a forfeit) takes its victor and reason from ``outcome``,
    in Battlebot's words where it had them.
    """
    if view["complete"]:
        return view
    victor: JSON = None
    reason = PLATFORM
    if outcome is not None:
        winners = outcome.winners
        players = view["players"]
        if len(winners) == 1 and isinstance(players, list):
            victor = players[winners[0]]
        reason = battlebot_reason(outcome.termination)
    return {**view, "complete": True, "victor": victor, "reason": reason}


_REASONS = {Termination.TIMEOUT: "timeout", Termination.UNREACHABLE: "disconnect",
            Termination.STRIKES: "Didn't write unit tests"}
"""Battlebot's reasons for the ends its server decided (research a.6)."""


def battlebot_reason(termination: Termination) -> str:
    """The ``reason`` of a game the platform ended (not the rules): Battlebot's words where
    it had them, else the termination in lower case."""
    return _REASONS.get(termination, termination.value.lower())


# -- noughts and crosses ------------------------------------------------------------------

_LINE_NAMES = {
    (0, 1, 2): "row 0", (3, 4, 5): "row 1", (6, 7, 8): "row 2",
    (0, 3, 6): "column 0", (1, 4, 7): "column 1", (2, 5, 8): "column 2",
    (0, 4, 8): "the diagonal [0, 0]-[2, 2]", (2, 4, 6): "the diagonal [0, 2]-[2, 0]",
}


@dataclass(frozen=True)
class NoughtsTurn:
    """A Battlebot noughts-and-crosses turn: ``mark`` at ``[row, col]``.

    :raises InvalidMoveError: on construction, for a mark other than X/O or a space off the
        board.
    """

    mark: str
    row: int
    col: int

    def __post_init__(self) -> None:
        if self.mark not in MARKS:
            raise InvalidMoveError(f'"mark" must be "X" or "O", got {shorten(self.mark)}')
        for value in (self.row, self.col):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2:
                raise InvalidMoveError(
                    f'"space" must be [row, col] of integers 0-2, got {[self.row, self.col]}')

    @property
    def position(self) -> int:
        """The tic-tac-toe cell index, 0-8 row by row."""
        return self.row * 3 + self.col


@dataclass(frozen=True)
class NoughtsState:
    """A game of noughts and crosses: the players' names (X first) and the board."""

    players: tuple[str, str]
    board: Board = field(default_factory=Board)


class NoughtsAndCrosses(Game[NoughtsState, NoughtsTurn]):
    """Battlebot's noughts and crosses: tic-tac-toe in Battlebot's state shape."""

    mnemonic = "NOUGHTSANDCROSSES"
    name = "Noughts and Crosses"
    calls = Calls("NoughtsAndCrosses")
    max_moves = _TICTACTOE.max_moves

    def new(self, settings: Mapping[str, JSON], players: Sequence[str],
            rng: random.Random) -> NoughtsState:
        return NoughtsState(_check_players(players, "noughts and crosses"))

    def to_move(self, state: NoughtsState) -> Seat | None:
        return _TICTACTOE.to_move(state.board)

    def legal_moves(self, state: NoughtsState, seat: Seat) -> Sequence[NoughtsTurn]:
        """Every empty space with the seat's mark, row by row."""
        return tuple(NoughtsTurn(MARKS[seat], *divmod(position, 3))
                     for position in _TICTACTOE.legal_moves(state.board, seat))

    def apply(self, state: NoughtsState, seat: Seat, move: NoughtsTurn) -> NoughtsState:
        to_move = self.to_move(state)
        space = [move.row, move.col]
        if to_move is None:
            raise IllegalMoveError(f"the game is over; {move.mark} cannot be played at {space}")
        if seat != to_move:
            raise IllegalMoveError(
                f"it is {state.players[to_move]}'s turn ({MARKS[to_move]}), "
                f"not {state.players[seat]}'s ({MARKS[seat]})")
        if move.mark != MARKS[seat]:
            raise IllegalMoveError(f"your mark is {MARKS[seat]}, not {move.mark}")
        taken = state.board.cells[move.position]
        if taken:
            raise IllegalMoveError(f"the space {space} is already taken by {taken}")
        return replace(state, board=_TICTACTOE.apply(state.board, seat, move.position))

    def outcome(self, state: NoughtsState) -> Outcome | None:
        line = state.board.line
        if line is not None:
            seat = MARKS.index(state.board.cells[line[0]])
            return Outcome.win(seat, 2, f"{state.players[seat]} ({MARKS[seat]}) "
                                        f"completed {_LINE_NAMES[line]}")
        if state.board.filled == 9:
            return Outcome.draw(2, "the board is full with no line")
        return None

    def view(self, state: NoughtsState) -> JSONObject:
        """The state as Battlebot sent it (with ``victor`` and ``reason`` once complete)."""
        cells = state.board.cells
        players: list[JSON] = list(state.players)
        view: JSONObject = {
            "players": players,
            "nextPlayer": state.players[state.board.filled % 2],
            "complete": False,
            "board": [list(cells[row * 3:row * 3 + 3]) for row in range(3)],
            "marks": {"X": state.players[0], "O": state.players[1]},
        }
        outcome = self.outcome(state)
        if outcome is not None:
            winners = outcome.winners
            view["complete"] = True
            view["victor"] = state.players[winners[0]] if winners else None
            view["reason"] = COMPLETE
        return view

    def state_to_json(self, state: NoughtsState) -> JSON:
        return self.view(state)

    def state_from_json(self, data: JSON) -> NoughtsState:
        if not isinstance(data, dict):
            raise ValueError(f"not a noughts-and-crosses state: {shorten(data)}")
        players, board = data.get("players"), data.get("board")
        if not isinstance(players, list) or not isinstance(board, list) or len(board) != 3:
            raise ValueError(f"not a noughts-and-crosses state: {shorten(data)}")
        cells: list[str] = []
        for row in board:
            if not isinstance(row, list) or len(row) != 3 or not all(
                    isinstance(cell, str) for cell in row):
                raise ValueError(f"not a noughts-and-crosses board: {shorten(board)}")
            cells.extend(str(cell) for cell in row)
        state = NoughtsState(_check_players([str(name) for name in players],
                                            "noughts and crosses"), Board(tuple(cells)))
        if self.view(state) != data:
            raise ValueError(f"an inconsistent noughts-and-crosses state: {shorten(data)}")
        return state

    def move_to_wire(self, move: NoughtsTurn) -> JSON:
        return {"mark": move.mark, "space": [move.row, move.col]}

    def parse_move(self, reply: JSON) -> NoughtsTurn:
        shape = '{"mark": "X" or "O", "space": [row, col]}'
        mark, space = _fields(reply, shape, "mark", "space")
        if not isinstance(mark, str):
            raise InvalidMoveError(f'"mark" must be "X" or "O", got {shorten(mark)}')
        if not isinstance(space, list) or len(space) != 2:
            raise InvalidMoveError(
                f'"space" must be [row, col] of integers 0-2, got {shorten(space)}')
        row, col = (_integer(value, space) for value in space)
        return NoughtsTurn(mark, row, col)

    def next_move_params(self, state: NoughtsState, seat: Seat) -> JSONObject:
        return {"state": self.view(state)}

    def complete_params(self, state: NoughtsState, seat: Seat,
                        outcome: Outcome | None = None) -> JSONObject:
        return {"state": _final_view(self.view(state), outcome)}

    def describe_move(self, state: NoughtsState, seat: Seat, move: NoughtsTurn) -> str:
        return f"{state.players[seat]} plays {move.mark} at [{move.row}, {move.col}]"


def _integer(value: JSON, space: JSON) -> int:
    """A coordinate of a space: an integer (1.0 counts; 1.5 and true do not)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2:
        raise InvalidMoveError(
            f'"space" must be [row, col] of integers 0-2, got {shorten(space)}')
    return value


# -- Numberwang -----------------------------------------------------------------------------

MAX_TURNS = 100
"""The default and the largest ``maxTurns``: a game is a draw after this many turns."""
WIN_AT = 10
"""``n >= WIN_AT`` wins for ``players[0]``; ``n <= -WIN_AT`` wins for ``players[1]``."""
SAMPLE_TURNS: tuple[int | float, ...] = (-10, -2.5, -1, -0.1, 0, 0.1, 1, 2.5, 10)
"""What :meth:`Numberwang.legal_moves` lists: a sample, since every finite number is legal."""

Number = int | float


def number_value(number: Number) -> Fraction:
    """The exact value of a JSON number: an integer, or a float's shortest decimal text."""
    return Fraction(number) if isinstance(number, int) else Fraction(repr(number))


def to_number(value: Fraction) -> Number:
    """A canonical value (see :func:`_canonical`) as a JSON number: an int when integral."""
    return value.numerator if value.denominator == 1 else float(value)


def _canonical(exact: Fraction) -> Fraction:
    """``exact`` if it is an integer, else the shortest decimal of the nearest double."""
    return exact if exact.denominator == 1 else Fraction(repr(float(exact)))


def _text(value: Fraction) -> str:
    return repr(to_number(value))


@dataclass(frozen=True)
class NumberwangTurn:
    """A Numberwang turn: add ``n`` (an int or a finite float, as the bot sent it).

    :raises InvalidMoveError: on construction, for anything else.
    """

    n: Number

    def __post_init__(self) -> None:
        n = self.n
        if isinstance(n, bool) or not isinstance(n, int | float):
            raise InvalidMoveError(f'"n" must be a number, got {shorten(n)}')
        if isinstance(n, float) and not math.isfinite(n):
            raise InvalidMoveError(f'"n" must be a finite number, got {n}')
        if isinstance(n, int) and abs(n) > sys.float_info.max:
            raise InvalidMoveError(f'"n" is beyond the range of a double: {shorten(n)}')

    @property
    def value(self) -> Fraction:
        """The exact value added (see the module docstring)."""
        return number_value(self.n)


@dataclass(frozen=True)
class NumberwangState:
    """A game of Numberwang: the players, the total ``n``, the turns played and the limit."""

    players: tuple[str, str]
    n: Fraction = Fraction(0)
    """Always canonical: an integer or the shortest decimal of a double."""
    turns: int = 0
    max_turns: int = MAX_TURNS


class Numberwang(Game[NumberwangState, NumberwangTurn]):
    """Battlebot's Numberwang, with a turn limit (see the module docstring)."""

    mnemonic = "NUMBERWANG"
    name = "Numberwang"
    calls = Calls("Numberwang")
    max_moves = MAX_TURNS
    default_settings: Mapping[str, JSON] = {"maxTurns": MAX_TURNS}

    def new(self, settings: Mapping[str, JSON], players: Sequence[str],
            rng: random.Random) -> NumberwangState:
        """:raises ValueError: unless ``maxTurns`` (if given) is an integer 1-100."""
        limit = settings.get("maxTurns", MAX_TURNS)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_TURNS:
            raise ValueError(f"maxTurns must be an integer from 1 to {MAX_TURNS}, "
                             f"not {shorten(limit)}")
        return NumberwangState(_check_players(players, "Numberwang"), max_turns=limit)

    def to_move(self, state: NumberwangState) -> Seat | None:
        return None if self._ended(state) else state.turns % 2

    @staticmethod
    def _ended(state: NumberwangState) -> bool:
        return abs(state.n) >= WIN_AT or state.turns >= state.max_turns

    def legal_moves(self, state: NumberwangState, seat: Seat) -> Sequence[NumberwangTurn]:
        """A sample of legal turns (:data:`SAMPLE_TURNS`), ascending: any number is legal."""
        if self.to_move(state) != seat:
            return ()
        return tuple(NumberwangTurn(n) for n in SAMPLE_TURNS)

    def apply(self, state: NumberwangState, seat: Seat,
              move: NumberwangTurn) -> NumberwangState:
        to_move = self.to_move(state)
        if to_move is None:
            raise IllegalMoveError(f"the game is over; {shorten(move.n)} cannot be added")
        if seat != to_move:
            raise IllegalMoveError(f"it is {state.players[to_move]}'s turn, "
                                   f"not {state.players[seat]}'s")
        return replace(state, n=_canonical(state.n + move.value), turns=state.turns + 1)

    def outcome(self, state: NumberwangState) -> Outcome | None:
        n = _text(state.n)
        if state.n >= WIN_AT:
            return Outcome.win(0, 2, f"n reached {n}, 10 or more: {state.players[0]} wins")
        if state.n <= -WIN_AT:
            return Outcome.win(1, 2, f"n reached {n}, -10 or less: {state.players[1]} wins")
        if state.turns >= state.max_turns:
            turns = f"{state.turns} turn{'' if state.turns == 1 else 's'}"
            return Outcome.draw(2, f"n was {n} after {turns}, the most allowed; "
                                   "it never reached 10 or -10: a draw")
        return None

    def view(self, state: NumberwangState) -> JSONObject:
        """The state as Battlebot sent it (with ``victor`` and ``reason`` once complete)."""
        players: list[JSON] = list(state.players)
        view: JSONObject = {
            "players": players,
            "nextPlayer": state.players[state.turns % 2],
            "complete": False,
            "board": {"n": to_number(state.n)},
        }
        outcome = self.outcome(state)
        if outcome is not None:
            winners = outcome.winners
            view["complete"] = True
            view["victor"] = state.players[winners[0]] if winners else None
            view["reason"] = COMPLETE if winners else "maxTurns"
        return view

    def state_to_json(self, state: NumberwangState) -> JSON:
        """The view plus ``turns`` (played) and ``maxTurns``."""
        return {**self.view(state), "turns": state.turns, "maxTurns": state.max_turns}

    def state_from_json(self, data: JSON) -> NumberwangState:
        if not isinstance(data, dict):
            raise ValueError(f"not a Numberwang state: {shorten(data)}")
        players, board = data.get("players"), data.get("board")
        turns, limit = data.get("turns"), data.get("maxTurns")
        n = board.get("n") if isinstance(board, dict) else None
        if (not isinstance(players, list) or not isinstance(turns, int)
                or not isinstance(limit, int) or isinstance(n, bool)
                or not isinstance(n, int | float) or not 0 <= turns <= limit):
            raise ValueError(f"not a Numberwang state: {shorten(data)}")
        start = self.new({"maxTurns": limit}, [str(name) for name in players],
                         random.Random(0))
        state = replace(start, n=_canonical(number_value(n)), turns=turns)
        if self.state_to_json(state) != data:
            raise ValueError(f"an inconsistent Numberwang state: {shorten(data)}")
        return state

    def move_to_wire(self, move: NumberwangTurn) -> JSON:
        return {"n": move.n}

    def parse_move(self, reply: JSON) -> NumberwangTurn:
        (n,) = _fields(reply, '{"n": <number>}', "n")
        if isinstance(n, bool) or not isinstance(n, int | float):
            raise InvalidMoveError(f'"n" must be a number, got {shorten(n)}')
        return NumberwangTurn(n)

    def next_move_params(self, state: NumberwangState, seat: Seat) -> JSONObject:
        return {"state": self.view(state)}

    def complete_params(self, state: NumberwangState, seat: Seat,
                        outcome: Outcome | None = None) -> JSONObject:
        return {"state": _final_view(self.view(state), outcome)}

    def describe_move(self, state: NumberwangState, seat: Seat, move: NumberwangTurn) -> str:
        after = _canonical(state.n + move.value)
        return (f"{state.players[seat]} adds {move.n!r}: "
                f"n goes from {_text(state.n)} to {_text(after)}")

"""Connect Four: seven columns of six cells; players drop a disc in turn, and four in a row
(across, up or diagonally) wins.

On the wire a board is six rows, top row first, of seven cells ``"X"``, ``"O"`` or ``""``;
a move is ``{"column": 0-6}``.  Seat 0 plays ``X`` and moves first.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from merknera.games import (
    JSON,
    Calls,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    JSONObject,
    Outcome,
    Seat,
)

ROWS, COLUMNS, LINE = 6, 7, 4
MARKS = ("X", "O")
EMPTY = ""
_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


@dataclass(frozen=True)
class Board:
    """A position: ``columns[c]`` holds column ``c``'s discs from the bottom up."""

    columns: tuple[tuple[str, ...], ...] = ((),) * COLUMNS

    @property
    def filled(self) -> int:
        """How many discs are down."""
        return sum(len(column) for column in self.columns)

    def cell(self, row: int, column: int) -> str:
        """The disc at ``row`` (0 is the bottom) of ``column``, or ``""``."""
        held = self.columns[column]
        return held[row] if row < len(held) else EMPTY

    def drop(self, column: int, mark: str) -> Board:
        """The board with ``mark`` dropped into ``column`` (which has room)."""
        columns = list(self.columns)
        columns[column] = (*columns[column], mark)
        return Board(tuple(columns))

    def line_through(self, row: int, column: int) -> bool:
        """Whether the disc at ``row``, ``column`` is in a line of four."""
        mark = self.cell(row, column)
        for d_row, d_column in _DIRECTIONS:
            count = 1
            for sign in (1, -1):
                r, c = row + sign * d_row, column + sign * d_column
                while 0 <= r < ROWS and 0 <= c < COLUMNS and self.cell(r, c) == mark:
                    count += 1
                    r, c = r + sign * d_row, c + sign * d_column
            if count >= LINE:
                return True
        return False

    def rows(self) -> list[list[str]]:
        """The wire form: six rows, top row first, of seven cells."""
        return [[self.cell(row, column) for column in range(COLUMNS)]
                for row in reversed(range(ROWS))]


@dataclass(frozen=True)
class State:
    """The board, and the line's last disc once somebody has four in a row."""

    board: Board = Board()
    won_by: Seat | None = None


class ConnectFour(Game[State, int]):
    """Connect Four: two seats, ``X`` first, four in a row wins, a full board draws."""

    mnemonic = "CONNECTFOUR"
    name = "Connect Four"
    calls = Calls("ConnectFour")
    max_moves = ROWS * COLUMNS

    def new(self, settings: Mapping[str, JSON], players: Sequence[str],
            rng: random.Random) -> State:
        if len(players) != 2:
            raise ValueError(f"Connect Four is for 2 players, not {len(players)}")
        return State()

    def to_move(self, state: State) -> Seat | None:
        if state.won_by is not None or state.board.filled == ROWS * COLUMNS:
            return None
        return state.board.filled % 2

    def legal_moves(self, state: State, seat: Seat) -> Sequence[int]:
        if self.to_move(state) != seat:
            return ()
        return tuple(c for c in range(COLUMNS) if len(state.board.columns[c]) < ROWS)

    def apply(self, state: State, seat: Seat, move: int) -> State:
        to_move = self.to_move(state)
        if to_move is None:
            raise IllegalMoveError(f"the game is over; column {move} cannot be played")
        if seat != to_move:
            raise IllegalMoveError(f"it is {MARKS[to_move]}'s turn, not {MARKS[seat]}'s")
        if not 0 <= move < COLUMNS:
            raise IllegalMoveError(f"column {move} is not on the board (0-6)")
        if len(state.board.columns[move]) == ROWS:
            raise IllegalMoveError(f"column {move} is full")
        board = state.board.drop(move, MARKS[seat])
        row = len(board.columns[move]) - 1
        return State(board, seat if board.line_through(row, move) else None)

    def outcome(self, state: State) -> Outcome | None:
        if state.won_by is not None:
            return Outcome.win(state.won_by, 2, f"{MARKS[state.won_by]} has four in a row")
        if state.board.filled == ROWS * COLUMNS:
            return Outcome.draw(2, "the board is full with no four in a row")
        return None

    def state_to_json(self, state: State) -> JSON:
        return {"board": [list(column) for column in state.board.columns],
                "won_by": state.won_by}

    def state_from_json(self, data: JSON) -> State:
        if not isinstance(data, dict) or not isinstance(data.get("board"), list):
            raise ValueError(f"not a Connect Four state: {data!r}")
        columns = data["board"]
        assert isinstance(columns, list)
        won_by = data.get("won_by")
        if won_by not in (None, 0, 1) or len(columns) != COLUMNS or not all(
                isinstance(column, list) and len(column) <= ROWS
                and all(disc in MARKS for disc in column) for column in columns):
            raise ValueError(f"not a Connect Four state: {data!r}")
        board = Board(tuple(tuple(str(disc) for disc in column)  # type: ignore[union-attr]
                            for column in columns))
        return State(board, won_by if isinstance(won_by, int) else None)

    def move_to_wire(self, move: int) -> JSON:
        return {"column": move}

    def parse_move(self, reply: JSON) -> int:
        if not isinstance(reply, dict) or "column" not in reply:
            raise InvalidMoveError(f'expected {{"column": 0-6}}, got {str(reply)[:60]}')
        column = reply["column"]
        if isinstance(column, bool) or not isinstance(column, int):
            raise InvalidMoveError(f'"column" must be an integer 0-6, got {column!r}'[:80])
        if not 0 <= column < COLUMNS:
            raise InvalidMoveError(f'"column" must be between 0 and 6, got {column}')
        return column

    def next_move_params(self, state: State, seat: Seat) -> JSONObject:
        return {"mark": MARKS[seat], "board": self._rows(state)}

    def complete_params(self, state: State, seat: Seat,
                        outcome: Outcome | None = None) -> JSONObject:
        return {"mark": MARKS[seat], "board": self._rows(state)}

    def describe_move(self, state: State, seat: Seat, move: int) -> str:
        return f"{MARKS[seat]} in column {move}"

    def spectator_view(self, state: State, reveal: bool) -> JSON:
        return self._rows(state)

    @staticmethod
    def _rows(state: State) -> JSON:
        return [list(row) for row in state.board.rows()]

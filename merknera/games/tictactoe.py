"""Tic-tac-toe, exactly as Merknera played it.

The board is nine cells, row by row::

     0 | 1 | 2
     3 | 4 | 5
     6 | 7 | 8

Seat 0 plays ``X`` and moves first; seat 1 plays ``O``.  On the wire a cell is ``"X"``,
``"O"`` or ``""`` (Merknera's server sent ``""``, never ``null``), and a move is
``{"position": 0-8}``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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
from merknera.games.wire import member, shorten

MARKS = ("X", "O")
EMPTY = ""
LINES: tuple[tuple[int, int, int], ...] = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns
    (0, 4, 8), (2, 4, 6),             # diagonals
)
_LINES_THROUGH: tuple[tuple[tuple[int, int, int], ...], ...] = tuple(
    tuple(line for line in LINES if cell in line) for cell in range(9))


@dataclass(frozen=True)
class Board:
    """A tic-tac-toe position: nine cells of ``"X"``, ``"O"`` or ``""``.

    Only positions reachable in play are boards: X moved first, nobody moved after a line
    was completed.
    """

    cells: tuple[str, ...] = (EMPTY,) * 9
    filled: int = field(init=False, compare=False, repr=False)
    """How many cells hold a mark."""
    line: tuple[int, int, int] | None = field(init=False, compare=False, repr=False)
    """The completed line, if any (computed once: the referee asks for it every move)."""

    def __post_init__(self) -> None:
        cells = self.cells
        if len(cells) != 9 or any(cell not in ("X", "O", EMPTY) for cell in cells):
            raise ValueError(f"not a tic-tac-toe board: {cells!r}")
        crosses, noughts = cells.count("X"), cells.count("O")
        if crosses - noughts not in (0, 1):
            raise ValueError(f"impossible board: {crosses} X and {noughts} O in {cells!r}")
        lines = [line for line in LINES
                 if cells[line[0]] and cells[line[0]] == cells[line[1]] == cells[line[2]]]
        marks = {cells[line[0]] for line in lines}
        if len(marks) > 1:
            raise ValueError(f"impossible board: both X and O completed a line in {cells!r}")
        if lines:
            # The last mover completed every line, through the cell played last.
            winner_moved_last = ("X" in marks) == (crosses > noughts)
            through_one_cell = bool(set.intersection(*(set(line) for line in lines)))
            if not (winner_moved_last and through_one_cell):
                raise ValueError(f"impossible board: play went on after a line in {cells!r}")
        object.__setattr__(self, "filled", crosses + noughts)
        object.__setattr__(self, "line", lines[0] if lines else None)

    def play(self, position: int, mark: str) -> Board:
        """The board after ``mark`` is played on an empty ``position`` of a board in play.

        The caller (the rules) has checked the move; this skips re-validating the board.
        """
        cells = (*self.cells[:position], mark, *self.cells[position + 1:])
        board = object.__new__(Board)
        object.__setattr__(board, "cells", cells)
        object.__setattr__(board, "filled", self.filled + 1)
        object.__setattr__(board, "line", next(
            (line for line in _LINES_THROUGH[position]
             if cells[line[0]] == cells[line[1]] == cells[line[2]]), None))
        return board

    def winning_line(self) -> tuple[int, int, int] | None:
        """The first completed line, if any."""
        return self.line

    def render(self) -> str:
        """The board as three text rows, ``.`` for an empty cell."""
        return "\n".join(
            "".join(cell or "." for cell in self.cells[row * 3:row * 3 + 3]) for row in range(3)
        )


def parse_position(reply: JSON) -> int:
    """Read ``{"position": n}`` as a cell index 0-8 (keys in any case, see
    :mod:`merknera.games.wire`).

    :raises InvalidMoveError: for anything else, with what was wrong.
    """
    if not isinstance(reply, dict):
        raise InvalidMoveError(f'expected an object {{"position": 0-8}}, got {shorten(reply)}')
    position = member(reply, "position")
    if position is None:
        raise InvalidMoveError(f'the reply has no "position": {shorten(reply)}')
    # bool is an int in Python; true is not a cell.  Merknera truncated 4.5 to 4; we refuse.
    if isinstance(position, bool) or not isinstance(position, int):
        raise InvalidMoveError(f'"position" must be an integer 0-8, got {shorten(position)}')
    if not 0 <= position <= 8:
        raise InvalidMoveError(f'"position" must be between 0 and 8, got {position}')
    return position


class TicTacToe(Game[Board, int]):
    """Merknera's tic-tac-toe: two seats, ``X`` first, three in a row wins."""

    mnemonic = "TICTACTOE"
    name = "Tic-Tac-Toe"
    calls = Calls("TicTacToe")
    max_moves = 9

    def new(self, settings: Mapping[str, JSON], players: Sequence[str],
            rng: random.Random) -> Board:
        if len(players) != 2:
            raise ValueError(f"tic-tac-toe is for 2 players, not {len(players)}")
        return Board()

    def to_move(self, state: Board) -> Seat | None:
        if state.line is not None or state.filled == 9:
            return None
        return state.filled % 2

    def legal_moves(self, state: Board, seat: Seat) -> Sequence[int]:
        if self.to_move(state) != seat:
            return ()
        return tuple(i for i, cell in enumerate(state.cells) if not cell)

    def apply(self, state: Board, seat: Seat, move: int) -> Board:
        to_move = self.to_move(state)
        if to_move is None:
            raise IllegalMoveError(f"the game is over; position {move} cannot be played")
        if seat != to_move:
            raise IllegalMoveError(f"it is {MARKS[to_move]}'s turn, not {MARKS[seat]}'s")
        if not 0 <= move <= 8:
            raise IllegalMoveError(f"position {move} is not on the board (0-8)")
        if state.cells[move]:
            raise IllegalMoveError(
                f"position {move} is already taken by {state.cells[move]}"
            )
        return state.play(move, MARKS[seat])

    def outcome(self, state: Board) -> Outcome | None:
        line = state.line
        if line is not None:
            mark = state.cells[line[0]]
            cells = "-".join(str(i) for i in line)
            return Outcome.win(MARKS.index(mark), 2, f"{mark} completed the line {cells}")
        if state.filled == 9:
            return Outcome.draw(2, "the board is full with no line")
        return None

    def state_to_json(self, state: Board) -> JSON:
        return list(state.cells)

    def state_from_json(self, data: JSON) -> Board:
        if not isinstance(data, list) or not all(isinstance(cell, str) for cell in data):
            raise ValueError(f"not a tic-tac-toe board: {data!r}")
        return Board(tuple(str(cell) for cell in data))

    def move_to_wire(self, move: int) -> JSON:
        return {"position": move}

    def parse_move(self, reply: JSON) -> int:
        return parse_position(reply)

    def next_move_params(self, state: Board, seat: Seat) -> JSONObject:
        return {"mark": MARKS[seat], "gamestate": list(state.cells)}

    def complete_params(self, state: Board, seat: Seat,
                        outcome: Outcome | None = None) -> JSONObject:
        return {"mark": MARKS[seat], "gamestate": list(state.cells)}

    def describe_move(self, state: Board, seat: Seat, move: int) -> str:
        return f"{MARKS[seat]} at {move}"

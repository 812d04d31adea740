"""The state of a Scrabble game, its JSON form and its text rendering.

The board is one string of ``rows * cols`` characters, row by row: ``"."`` for an empty
square, ``"A"``-``"Z"`` for a letter tile, ``"a"``-``"z"`` for a blank standing for that letter
(lower case marks blanks, as in the usual Scrabble notation).  A string is immutable, cheap to
copy and to compare, and a word on it is a slice.

The JSON form (``state_to_json``) is::

    {"players": ["alice", "bob"],
     "board": ["...............", ...],     one string per row, as above
     "racks": ["AEIRST*", "DOGQ"],          by seat, in the order the tiles were drawn
     "bag": "KXE...",                       the next tile drawn is the first
     "bagseed": 1234567,                    where exchanged tiles go back (see bag.py)
     "scores": [0, 0],
     "turn": 0,                             turns played; seat turn % seats moves next
     "scoreless": 0,                        consecutive scoreless turns so far
     "ending": null | "OUT" | "SCORELESS",
     "adjustments": []}                     the end-of-game rack adjustments, by seat
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass

from merknera.games.base import JSON
from merknera.games.scrabble.assets import BLANK, LETTERS, BoardLayout, TileSet

EMPTY = "."
"""An empty square on the board string."""


class Ending(enum.Enum):
    """How a game of Scrabble ended."""

    OUT = "OUT"
    """A player played their last tile with the bag empty."""
    SCORELESS = "SCORELESS"
    """Six consecutive turns scored nothing (passes, exchanges, plays worth 0)."""


@dataclass(frozen=True)
class ScrabbleState:
    """A position of a game: everything needed to go on and to replay it.

    Scores include the end-of-game adjustments once the game has ended.
    """

    players: tuple[str, ...]
    """The players' names, in seat order."""
    board: str
    """``rows * cols`` characters: ``"."`` empty, ``"A"``-``"Z"`` a tile, lower case a blank."""
    racks: tuple[str, ...]
    """Each seat's tiles in the order drawn, ``"*"`` for a blank."""
    bag: str
    """The tiles not yet drawn, in draw order."""
    scores: tuple[int, ...]
    bag_seed: int
    """Decides where exchanged tiles go back into the bag (see :func:`bag.put_back`)."""
    turn: int = 0
    """Turns played so far (plays, passes and exchanges)."""
    scoreless: int = 0
    """Consecutive turns that scored nothing, up to the last one."""
    ending: Ending | None = None
    """``None`` while the game goes on."""
    adjustments: tuple[int, ...] = ()
    """Each seat's end-of-game rack adjustment (already in ``scores``); empty before the end."""

    @property
    def seats(self) -> int:
        """The number of players."""
        return len(self.players)

    @property
    def to_move(self) -> int | None:
        """The seat whose turn it is, or ``None`` once the game has ended."""
        return None if self.ending is not None else self.turn % len(self.players)


def state_to_json(state: ScrabbleState, cols: int) -> dict[str, JSON]:
    """The state as JSON (see the module docstring); ``cols`` is the board's width."""
    return {
        "players": list(state.players),
        "board": [state.board[i:i + cols] for i in range(0, len(state.board), cols)],
        "racks": list(state.racks),
        "bag": state.bag,
        "bagseed": state.bag_seed,
        "scores": list(state.scores),
        "turn": state.turn,
        "scoreless": state.scoreless,
        "ending": None if state.ending is None else state.ending.value,
        "adjustments": list(state.adjustments),
    }


_KEYS = frozenset({"players", "board", "racks", "bag", "bagseed", "scores", "turn", "scoreless",
                   "ending", "adjustments"})
_CELLS = frozenset(EMPTY + LETTERS + LETTERS.lower())


def state_from_json(data: JSON, layout: BoardLayout, tiles: TileSet) -> ScrabbleState:
    """The inverse of :func:`state_to_json`, checked against the board and the tile set.

    :raises ValueError: if ``data`` is not a state of this board and tile set, including when
        the tiles on the board, in the racks and in the bag are not exactly the tile set.
    """
    if not isinstance(data, dict) or set(data) != _KEYS:
        raise ValueError(f"not a Scrabble state: expected an object with the keys {sorted(_KEYS)}")
    players = _strings(data["players"], "players")
    seats = len(players)
    rows = _strings(data["board"], "board")
    if len(rows) != layout.rows or any(len(row) != layout.cols for row in rows):
        raise ValueError(f"not a Scrabble state: the board is not {layout.rows}x{layout.cols}")
    board = "".join(rows)
    if not set(board) <= _CELLS:
        raise ValueError("not a Scrabble state: the board holds a square that is not . A-Z a-z")
    racks = _strings(data["racks"], "racks")
    bag = data["bag"]
    if not isinstance(bag, str):
        raise ValueError("not a Scrabble state: the bag must be a string")
    scores = _ints(data["scores"], "scores")
    adjustments = _ints(data["adjustments"], "adjustments")
    bag_seed, turn, scoreless = (_int(data[key], key) for key in ("bagseed", "turn", "scoreless"))
    ending = data["ending"]
    if ending is not None and ending not in Ending.__members__:
        raise ValueError(f"not a Scrabble state: unknown ending {ending!r}")
    if seats < 1 or len(racks) != seats or len(scores) != seats:
        raise ValueError("not a Scrabble state: players, racks and scores differ in number")
    if len(adjustments) not in (0, seats) or (ending is None) != (not adjustments):
        raise ValueError("not a Scrabble state: adjustments are made at the end, one per seat")
    if turn < 0 or not 0 <= scoreless <= turn:
        raise ValueError(f"not a Scrabble state: turn {turn} with {scoreless} scoreless turns")
    if any(len(rack) > tiles.rack for rack in racks):
        raise ValueError(f"not a Scrabble state: a rack holds more than {tiles.rack} tiles")
    on_board = "".join(BLANK if cell.islower() else cell for cell in board if cell != EMPTY)
    if Counter(on_board + "".join(racks) + bag) != Counter(tiles.bag()):
        raise ValueError("not a Scrabble state: board, racks and bag are not the tile set")
    return ScrabbleState(players, board, racks, bag, scores, bag_seed, turn, scoreless,
                         None if ending is None else Ending(ending), adjustments)


def render(board: str, cols: int) -> str:
    """The board as text: a header of column letters, then one numbered line per row."""
    lines = ["   " + " ".join(LETTERS[:cols])]
    for start in range(0, len(board), cols):
        row = board[start:start + cols]
        lines.append(f"{start // cols + 1:>2} " + " ".join(row))
    return "\n".join(lines)


def _strings(value: JSON, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"not a Scrabble state: {name} must be a list of strings")
    return tuple(str(item) for item in value)


def _ints(value: JSON, name: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise ValueError(f"not a Scrabble state: {name} must be a list of integers")
    return tuple(_int(item, name) for item in value)


def _int(value: JSON, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"not a Scrabble state: {name} must be an integer, not {value!r}")
    return value

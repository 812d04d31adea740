"""The three asset files of Scrabble, parsed into immutable values.

* ``gameboard`` (JSON): ``rows``, ``cols``, ``squares`` (rows of ``""``, ``"DL"``, ``"TL"``,
  ``"DW"``, ``"TW"``) and the ``start`` square ``{"row", "col"}`` -> :class:`BoardLayout`.
* ``letters`` (JSON): ``rack`` (tiles per rack), ``bingo`` (the bonus for playing a full
  rack) and ``tiles`` (``[{"letter", "count", "points"}]``, ``"*"`` the blank) -> :class:`TileSet`.
* ``dictionary`` (text): one word a line -> :class:`Lexicon`.

The caller reads and verifies the files; parsing here is pure.  Every parser raises
:class:`ValueError` naming the file and what is wrong with it.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

BLANK = "*"
"""The blank tile, in racks, in the bag and on the wire."""
LETTERS = string.ascii_uppercase
PREMIUMS: Mapping[str, tuple[int, int]] = {
    "": (1, 1), "DL": (2, 1), "TL": (3, 1), "DW": (1, 2), "TW": (1, 3)}
"""Each kind of square as (letter multiplier, word multiplier)."""


@dataclass(frozen=True)
class BoardLayout:
    """The premium squares of a board and its start square.

    Squares are numbered row by row (``row * cols + col``); the rules work on these indices.
    """

    rows: int
    cols: int
    squares: tuple[tuple[str, ...], ...]
    """The kind of each square, by row: ``""``, ``"DL"``, ``"TL"``, ``"DW"`` or ``"TW"``."""
    start: tuple[int, int]
    """(row, col) of the square the first play must cover."""
    letter_multipliers: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """By square index: what a newly placed tile's points are multiplied by."""
    word_multipliers: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """By square index: what the words through a newly placed tile are multiplied by."""

    def __post_init__(self) -> None:
        # Columns are named by letters (H8), so a board is at most 26 columns wide.
        if not (1 <= self.rows <= 99 and 1 <= self.cols <= 26):
            raise ValueError(f"a board is 1-99 rows by 1-26 columns, not {self.rows}x{self.cols}")
        if len(self.squares) != self.rows or any(len(row) != self.cols for row in self.squares):
            raise ValueError(f"the squares are not {self.rows} rows of {self.cols}")
        kinds = {kind for row in self.squares for kind in row}
        if not kinds <= PREMIUMS.keys():
            unknown = sorted(kinds - PREMIUMS.keys())
            raise ValueError(f"unknown square kinds {unknown}; expected one of {list(PREMIUMS)}")
        row, col = self.start
        if not (0 <= row < self.rows and 0 <= col < self.cols):
            raise ValueError(f"the start square (row {row}, col {col}) is not on the board")
        flat = [PREMIUMS[kind] for line in self.squares for kind in line]
        object.__setattr__(self, "letter_multipliers", tuple(m for m, _ in flat))
        object.__setattr__(self, "word_multipliers", tuple(m for _, m in flat))

    @property
    def size(self) -> int:
        """The number of squares."""
        return self.rows * self.cols

    @property
    def start_index(self) -> int:
        """The start square's index."""
        return self.start[0] * self.cols + self.start[1]

    def name(self, index: int) -> str:
        """A square by its index, as players and bots both read it: ``"H8 (row 7, col 7)"``."""
        row, col = divmod(index, self.cols)
        return f"{square_name(row, col)} (row {row}, col {col})"


def square_name(row: int, col: int) -> str:
    """The Scrabble name of a square: column letter then row number from 1 (``H8``)."""
    return f"{LETTERS[col]}{row + 1}"


@dataclass(frozen=True)
class TileSet:
    """The tiles of a game: how many of each letter, their points, the rack and the bonus."""

    rack: int
    """How many tiles a rack holds (7)."""
    bingo: int
    """The bonus for playing every tile of a full rack in one play (50)."""
    counts: tuple[tuple[str, int], ...]
    """(letter, count) in file order; ``"*"`` is the blank."""
    points: Mapping[str, int]
    """Points by tile: ``"A"``-``"Z"`` and ``"*"``.  A placed blank, written as a lower-case
    letter on the board, is worth the blank's points (0 in every standard set)."""

    def __post_init__(self) -> None:
        # The scoring loop looks placed blanks up by their lower-case letter.
        blank = self.points.get(BLANK, 0)
        values = {**{letter.lower(): blank for letter in LETTERS}, **self.points}
        object.__setattr__(self, "points", MappingProxyType(values))

    @property
    def total(self) -> int:
        """The number of tiles in the set (100)."""
        return sum(count for _, count in self.counts)

    def bag(self) -> str:
        """Every tile of the set once, in file order (the bag before it is shuffled)."""
        return "".join(letter * count for letter, count in self.counts)

    def value(self, tiles: str) -> int:
        """The points of some tiles (a rack, for the end-of-game adjustments)."""
        points = self.points
        return sum(points[tile] for tile in tiles)


class Lexicon:
    """The words that may be formed, upper-case.  Membership is a hash lookup."""

    __slots__ = ("_words",)

    def __init__(self, words: Iterable[str]) -> None:
        # A dict of str keys and None values, not a frozenset: CPython's collector does not
        # track such a dict, while it walks every member of a set in each collection that
        # holds it.  A standard dictionary is 113,688 words: as a frozenset it cost every
        # full collection a walk of them all (and each young one, while it was new).
        self._words = dict.fromkeys(words)

    @property
    def words(self) -> Collection[str]:
        """The words (a read-only view)."""
        return self._words.keys()

    def __contains__(self, word: object) -> bool:
        return word in self._words

    def __len__(self) -> int:
        return len(self._words)

    def __iter__(self) -> Iterator[str]:
        return iter(self._words)


def parse_gameboard(data: bytes) -> BoardLayout:
    """Read the ``gameboard`` file.

    :raises ValueError: if it is not JSON of that shape.
    """
    obj = _json_object(data, "gameboard")
    try:
        squares = obj["squares"]
        if not isinstance(squares, list) or not all(isinstance(row, list) for row in squares):
            raise ValueError('"squares" must be a list of rows')
        if not all(isinstance(kind, str) for row in squares for kind in row):
            raise ValueError('every square must be a string')
        rows = _int(obj.get("rows", len(squares)), "rows")
        cols = _int(obj.get("cols", len(squares[0]) if squares else 0), "cols")
        start = obj.get("start")
        if start is None:  # the centre, as on every standard board
            start_at = (rows // 2, cols // 2)
        elif isinstance(start, dict):
            start_at = (_int(start.get("row"), "start.row"), _int(start.get("col"), "start.col"))
        else:
            raise ValueError('"start" must be {"row": r, "col": c}')
        return BoardLayout(rows, cols, tuple(tuple(row) for row in squares), start_at)
    except (KeyError, ValueError) as exc:
        raise ValueError(f"gameboard: {_reason(exc)}") from None


def parse_letters(data: bytes) -> TileSet:
    """Read the ``letters`` file.

    :raises ValueError: if it is not JSON of that shape.
    """
    obj = _json_object(data, "letters")
    try:
        rack = _int(obj["rack"], "rack")
        bingo = _int(obj["bingo"], "bingo")
        if rack < 1 or bingo < 0:
            raise ValueError(f"the rack must hold a tile and the bonus be >= 0: {rack}, {bingo}")
        tiles = obj["tiles"]
        if not isinstance(tiles, list) or not tiles:
            raise ValueError('"tiles" must be a non-empty list')
        counts: list[tuple[str, int]] = []
        points: dict[str, int] = {}
        for entry in tiles:
            if not isinstance(entry, dict):
                raise ValueError(f"a tile must be an object, not {entry!r}")
            letter = entry.get("letter")
            if not isinstance(letter, str) or len(letter) != 1 or letter not in LETTERS + BLANK:
                raise ValueError(f"a tile letter must be A-Z or *, not {letter!r}")
            if letter in points:
                raise ValueError(f"the letter {letter} is listed twice")
            count = _int(entry.get("count"), f"{letter}.count")
            value = _int(entry.get("points"), f"{letter}.points")
            if count < 0 or value < 0:
                raise ValueError(f"{letter}: count and points must be >= 0")
            counts.append((letter, count))
            points[letter] = value
        return TileSet(rack, bingo, tuple(counts), points)
    except (KeyError, ValueError) as exc:
        raise ValueError(f"letters: {_reason(exc)}") from None


_WORDS = re.compile(rb"[A-Za-z\r\n]*")


def parse_dictionary(data: bytes) -> Lexicon:
    """Read the ``dictionary`` file: one word a line, letters A-Z (lower case is upper-cased).

    :raises ValueError: if a line holds anything but letters.
    """
    if not _WORDS.fullmatch(data):
        bad = next(line for line in data.splitlines() if not _WORDS.fullmatch(line))
        raise ValueError(f"dictionary: a line is not a word of letters A-Z: {bad[:40]!r}")
    lexicon = Lexicon(data.decode("ascii").upper().split())
    if not lexicon:
        raise ValueError("dictionary: no words")
    return lexicon


def _json_object(data: bytes, name: str) -> dict[str, Any]:
    try:
        obj = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{name}: not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{name}: expected a JSON object")
    return obj


def _int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f'"{name}" must be an integer, not {value!r}')
    return value


def _reason(exc: Exception) -> str:
    return f"missing {exc}" if isinstance(exc, KeyError) else str(exc)

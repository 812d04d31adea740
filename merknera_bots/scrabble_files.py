"""Scrabble for bots: the ``gameboard`` and ``letters`` files, and the board's symbols.

Nothing here imports ``merknera``: copy the bots' Scrabble files next to your bot if you like.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

BLANK = "*"
"""The blank tile, in racks and (placed) on the board."""
PREMIUMS: Mapping[str, tuple[int, int]] = {
    "": (1, 1), "DL": (2, 1), "TL": (3, 1), "DW": (1, 2), "TW": (1, 3)}
"""Each kind of square as (letter multiplier, word multiplier)."""
UNKNOWN = "?"
"""Stands on the board for a placed blank whose letter we were not told: no word runs
through it, so no play touches it."""



# --- the asset files --------------------------------------------------------------------


@dataclass(frozen=True)
class BoardLayout:
    """The premium squares of a board and the square the first play must cover."""

    rows: int
    cols: int
    squares: tuple[tuple[str, ...], ...]
    """The kind of each square, row by row: ``""``, ``"DL"``, ``"TL"``, ``"DW"``, ``"TW"``."""
    start: tuple[int, int]
    """(row, col) of the start square."""

    def __post_init__(self) -> None:
        if self.rows < 1 or self.cols < 1:
            raise ValueError(f"a board needs rows and columns, not {self.rows}x{self.cols}")
        if len(self.squares) != self.rows or any(len(row) != self.cols for row in self.squares):
            raise ValueError(f"the squares are not {self.rows} rows of {self.cols}")
        unknown = {kind for row in self.squares for kind in row} - PREMIUMS.keys()
        if unknown:
            raise ValueError(f"unknown square kinds {sorted(unknown)}")
        row, col = self.start
        if not (0 <= row < self.rows and 0 <= col < self.cols):
            raise ValueError(f"the start square ({row}, {col}) is not on the board")

    @classmethod
    def from_json(cls, data: bytes | str) -> BoardLayout:
        """Read a ``gameboard`` file: ``squares``, optional ``rows``/``cols`` and ``start``
        ``{"row", "col"}`` (the centre when missing).

        :raises ValueError: if it is not such a file.
        """
        obj = _json_object(data, "gameboard")
        squares = obj.get("squares")
        if not isinstance(squares, list) or not squares or not all(
                isinstance(row, list) and all(isinstance(kind, str) for kind in row)
                for row in squares):
            raise ValueError('gameboard: "squares" must be a list of rows of strings')
        rows = _int(obj.get("rows", len(squares)), "gameboard: rows")
        cols = _int(obj.get("cols", len(squares[0])), "gameboard: cols")
        start = obj.get("start")
        if start is None:
            at = (rows // 2, cols // 2)
        elif isinstance(start, dict):
            at = (_int(start.get("row"), "gameboard: start.row"),
                  _int(start.get("col"), "gameboard: start.col"))
        else:
            raise ValueError('gameboard: "start" must be {"row": r, "col": c}')
        try:
            return cls(rows, cols, tuple(tuple(row) for row in squares), at)
        except ValueError as exc:
            raise ValueError(f"gameboard: {exc}") from None

    def letter_multiplier(self, row: int, col: int) -> int:
        """What a tile newly placed on the square has its points multiplied by."""
        return PREMIUMS[self.squares[row][col]][0]

    def word_multiplier(self, row: int, col: int) -> int:
        """What the words through a tile newly placed on the square are multiplied by."""
        return PREMIUMS[self.squares[row][col]][1]


@dataclass(frozen=True)
class LetterSet:
    """The tiles: points per letter (``"*"`` the blank), rack size and the full-rack bonus."""

    points: Mapping[str, int]
    counts: Mapping[str, int]
    rack: int = 7
    bingo: int = 50
    alphabet: tuple[str, ...] = field(init=False)
    """The letters a blank may stand for: every letter of the set but the blank, sorted."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "alphabet",
                           tuple(sorted(letter for letter in self.points if letter != BLANK)))

    @classmethod
    def from_json(cls, data: bytes | str) -> LetterSet:
        """Read a ``letters`` file: ``rack``, ``bingo`` and ``tiles`` ``[{letter, count,
        points}]`` with letters A-Z and ``"*"``.

        :raises ValueError: if it is not such a file.
        """
        obj = _json_object(data, "letters")
        tiles = obj.get("tiles")
        if not isinstance(tiles, list) or not tiles:
            raise ValueError('letters: "tiles" must be a non-empty list')
        points: dict[str, int] = {}
        counts: dict[str, int] = {}
        for entry in tiles:
            letter = entry.get("letter") if isinstance(entry, dict) else None
            if not isinstance(letter, str) or not (
                    letter == BLANK or (len(letter) == 1 and "A" <= letter <= "Z")):
                raise ValueError(f"letters: a tile must have a letter A-Z or *: {entry!r}")
            assert isinstance(entry, dict)
            points[letter] = _int(entry.get("points"), f"letters: {letter}.points")
            counts[letter] = _int(entry.get("count"), f"letters: {letter}.count")
        rack = _int(obj.get("rack", 7), "letters: rack")
        bingo = _int(obj.get("bingo", 50), "letters: bingo")
        if rack < 1:
            raise ValueError("letters: the rack must hold at least one tile")
        return cls(points, counts, rack, bingo)

    def value(self, tile: str) -> int:
        """The points of a tile (``"*"``: the blank's); a letter not in the set is worth 0."""
        return self.points.get(tile, 0)


def _json_object(data: bytes | str, name: str) -> dict[str, Any]:
    try:
        obj = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{name}: not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{name}: not a JSON object")
    return obj


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, not {value!r}")
    return value

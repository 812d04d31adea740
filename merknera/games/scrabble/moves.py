"""Scrabble moves and their wire form (docs/bots/protocol.md section 4, Scrabble).

A bot's reply is ``{"type": "PLAY" | "PASS" | "EXCHANGE", "playtiles": [...],
"exchangetiles": [...]}``:

* ``PLAY``: ``"playtiles"`` is a non-empty list of ``{"row", "col", "tile"}``; a blank is
  ``{"row", "col", "tile": "*", "letter": "E"}``.  Rows and columns count from 0.
* ``PASS``: nothing else; any tiles sent with it are ignored (as the wiki says).
* ``EXCHANGE``: ``"exchangetiles"`` is a non-empty list of tiles, ``"*"`` for a blank.

As everywhere in the protocol, keys are matched case-insensitively; the type and the
letters may be lower-case too.  Extra keys are ignored.  :func:`parse_move` checks the shape
only (an :class:`~merknera.games.base.InvalidMoveError` says what is wrong); whether the
tiles are held and the words are words is for the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from merknera.games.base import JSON, InvalidMoveError, JSONObject
from merknera.games.scrabble.assets import BLANK, LETTERS, square_name
from merknera.games.wire import lowered, shorten

# Sets of single characters, not strings: "ﬆ".upper() is "ST", which a substring test would pass.
_LETTERS = frozenset(LETTERS)
_TILES = frozenset(LETTERS + BLANK)


@dataclass(frozen=True)
class Placement:
    """One tile put on one square: a letter tile, or a blank standing for ``letter``."""

    row: int
    col: int
    letter: str
    """The letter the tile shows on the board, ``"A"``-``"Z"``."""
    blank: bool = False
    """Whether the tile is a blank (worth no points) standing for ``letter``."""

    def __post_init__(self) -> None:
        if self.letter not in _LETTERS:
            raise ValueError(f"a placed tile shows one letter A-Z, not {self.letter!r}")

    @property
    def tile(self) -> str:
        """The tile taken from the rack: the letter, or ``"*"`` for a blank."""
        return BLANK if self.blank else self.letter

    @property
    def cell(self) -> str:
        """The tile as the board stores it: upper case, or lower case for a blank."""
        return self.letter.lower() if self.blank else self.letter

    @property
    def square(self) -> str:
        """The square's name, ``"H8"``."""
        return square_name(self.row, self.col)


@dataclass(frozen=True)
class Play:
    """Tiles placed on the board in one line, forming words."""

    placements: tuple[Placement, ...]


@dataclass(frozen=True)
class Pass:
    """The turn passes without a play."""


@dataclass(frozen=True)
class Exchange:
    """Tiles returned to the bag for as many new ones."""

    tiles: str
    """The tiles returned, ``"*"`` for a blank, e.g. ``"QVV"``."""


ScrabbleMove: TypeAlias = Play | Pass | Exchange
"""A move of Scrabble."""

_SHAPE = '{"type": "PLAY" | "PASS" | "EXCHANGE", "playtiles": [...], "exchangetiles": [...]}'
_PLACEMENT = '{"row", "col", "tile"}'


def parse_move(reply: JSON, rows: int = 15, cols: int = 15) -> ScrabbleMove:
    """Read a bot's reply as a move on a board of ``rows`` x ``cols``.

    :raises InvalidMoveError: if the reply is not a move, saying exactly what is wrong.
    """
    fields = _fields(reply, f"expected an object {_SHAPE}", "the reply")
    kind = fields.get("type")
    if kind is None:
        raise InvalidMoveError(f'the reply has no "type": {shorten(reply)}')
    if not isinstance(kind, str) or kind.upper() not in ("PLAY", "PASS", "EXCHANGE"):
        raise InvalidMoveError(f'"type" must be "PLAY", "PASS" or "EXCHANGE", got {shorten(kind)}')
    kind = kind.upper()
    if kind == "PASS":
        return Pass()
    if kind == "EXCHANGE":
        return Exchange(_exchange_tiles(fields.get("exchangetiles")))
    return Play(_placements(fields.get("playtiles"), rows, cols))


def move_to_wire(move: ScrabbleMove) -> JSONObject:
    """The move as a bot sends it; :func:`parse_move` reads it back to an equal move."""
    if isinstance(move, Play):
        tiles: list[JSON] = []
        for placement in move.placements:
            tile: JSONObject = {"row": placement.row, "col": placement.col, "tile": placement.tile}
            if placement.blank:
                tile["letter"] = placement.letter
            tiles.append(tile)
        return {"type": "PLAY", "playtiles": tiles}
    if isinstance(move, Exchange):
        return {"type": "EXCHANGE", "exchangetiles": list(move.tiles)}
    return {"type": "PASS"}


def _placements(value: JSON, rows: int, cols: int) -> tuple[Placement, ...]:
    if value is None:
        raise InvalidMoveError(f'a PLAY needs "playtiles": a list of {_PLACEMENT}')
    if not isinstance(value, list):
        raise InvalidMoveError(
            f'"playtiles" must be a list of {_PLACEMENT}, got {shorten(value)}')
    if not value:
        raise InvalidMoveError('a PLAY must place at least one tile: "playtiles" is empty')
    placements: list[Placement] = []
    seen: dict[tuple[int, int], int] = {}
    for i, item in enumerate(value):
        where = f"playtiles[{i}]"
        fields = _fields(item, f"{where} must be an object {_PLACEMENT}", where)
        row = _coordinate(fields.get("row"), f"{where}.row", rows)
        col = _coordinate(fields.get("col"), f"{where}.col", cols)
        tile = fields.get("tile")
        # ASCII only: "ı".upper() is "I" and "ſ".upper() is "S".
        if (not isinstance(tile, str) or len(tile) != 1 or not tile.isascii()
                or tile.upper() not in _TILES):
            raise InvalidMoveError(
                f'{where}.tile must be one letter A-Z or "*" for a blank, got {shorten(tile)}')
        tile = tile.upper()
        letter = fields.get("letter")
        if letter is not None and (
                not isinstance(letter, str) or len(letter) != 1 or not letter.isascii()
                or letter.upper() not in _LETTERS):
            raise InvalidMoveError(f"{where}.letter must be one letter A-Z, got {shorten(letter)}")
        if tile == BLANK:
            if letter is None:
                raise InvalidMoveError(
                    f'{where} is a blank ("*") without the "letter" A-Z it stands for')
            placement = Placement(row, col, letter.upper(), blank=True)
        else:
            # A letter tile may repeat its own letter, but it cannot stand for another.
            if letter is not None and letter.upper() != tile:
                raise InvalidMoveError(
                    f'{where} is the tile {tile}, not a blank, so it cannot stand for '
                    f'"{letter}"')
            placement = Placement(row, col, tile)
        if (row, col) in seen:
            raise InvalidMoveError(
                f"playtiles[{seen[row, col]}] and {where} are both on square "
                f"{square_name(row, col)} (row {row}, col {col})")
        seen[row, col] = i
        placements.append(placement)
    return tuple(placements)


def _exchange_tiles(value: JSON) -> str:
    if value is None:
        raise InvalidMoveError('an EXCHANGE needs "exchangetiles": a list of tiles')
    if not isinstance(value, list):
        raise InvalidMoveError(
            f'"exchangetiles" must be a list of tiles like ["Q", "*"], got {shorten(value)}')
    if not value:
        raise InvalidMoveError(
            'an EXCHANGE must return at least one tile: "exchangetiles" is empty')
    tiles = []
    for i, tile in enumerate(value):
        # ASCII only: "ı".upper() is "I" and "ſ".upper() is "S".
        if (not isinstance(tile, str) or len(tile) != 1 or not tile.isascii()
                or tile.upper() not in _TILES):
            raise InvalidMoveError(f'exchangetiles[{i}] must be one letter A-Z or "*" for a '
                                   f'blank, got {shorten(tile)}')
        tiles.append(tile.upper())
    return "".join(tiles)


def _fields(value: JSON, expected: str, where: str) -> dict[str, JSON]:
    """An object's members by lower-cased key (a key given twice in different cases is
    refused: see :mod:`merknera.games.wire`)."""
    if not isinstance(value, dict):
        raise InvalidMoveError(f"{expected}, got {shorten(value)}")
    return lowered(value, where)


def _coordinate(value: JSON, name: str, size: int) -> int:
    if value is None:
        raise InvalidMoveError(f"{name} is missing")
    # bool is an int in Python; true is not a row.
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidMoveError(f"{name} must be an integer 0-{size - 1}, got {shorten(value)}")
    if not 0 <= value < size:
        raise InvalidMoveError(f"{name} must be between 0 and {size - 1}, got {value}")
    return value

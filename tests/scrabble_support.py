"""Scrabble with the real assets, and positions written square by square, for the
tests/games/test_scrabble_*.py tests.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from merknera.games.scrabble import EMPTY, Ending, Placement, Play, Scrabble, ScrabbleState

ASSETS = Path(__file__).resolve().parent.parent / "assets" / "scrabble"
FILES = {
    "gameboard": (ASSETS / "board-standard.json").read_bytes(),
    "dictionary": (ASSETS / "dictionary-english.txt").read_bytes(),
    "letters": (ASSETS / "letters-english.json").read_bytes(),
}
GAME = Scrabble().with_assets(FILES)
PLAYERS = ("alice", "bob", "carol", "dave")
ACROSS, DOWN = True, False
RACK = "AEIRST*"
BAG = "EEEEEEEEEE"


def at(square: str) -> tuple[int, int]:
    """``"H8"`` -> (row 7, col 7)."""
    return int(square[1:]) - 1, ord(square[0]) - ord("A")


def tiles(*squares: str) -> Play:
    """A play of ``"H9=A"``-style tiles (lower case for a blank)."""
    placements = []
    for spec in squares:
        square, letter = spec.split("=")
        placements.append(Placement(*at(square), letter.upper(), blank=letter.islower()))
    return Play(tuple(placements))


def board(*words: tuple[str, bool, str]) -> str:
    cells = [EMPTY] * 225
    for square, across, letters in words:
        row, col = at(square)
        for i, letter in enumerate(letters):
            cells[row * 15 + col + i if across else (row + i) * 15 + col] = letter
    return "".join(cells)


HOUSE = ScrabbleState(PLAYERS[:2], board(("H8", ACROSS, "HOUSE")), (RACK, "QZXJKVW"), BAG,
                      (18, 0), bag_seed=1, turn=2)
"""Alice (seat 0) to move, with HOUSE on H8-L8."""
EMPTY_BOARD = replace(HOUSE, board=EMPTY * 225, scores=(0, 0), turn=0)
BLANK_E = replace(HOUSE, board=board(("H8", ACROSS, "HOUSe")))
SMALL_BAG = replace(HOUSE, bag="ABCDEF")
OVER = replace(HOUSE, ending=Ending.SCORELESS, adjustments=(-5, -48), scores=(13, -48))

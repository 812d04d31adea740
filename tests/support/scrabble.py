"""Scrabble with the real assets, and positions written square by square, for the
tests/games/test_scrabble_*.py tests; the policy of the golden Scrabble game
(:func:`best_play`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from itertools import combinations

from merknera.assets import default_directory
from merknera.games import IllegalMoveError, Seat
from merknera.games.scrabble import (
    BLANK,
    EMPTY,
    Ending,
    Exchange,
    Lexicon,
    Pass,
    Placement,
    Play,
    Scrabble,
    ScrabbleMove,
    ScrabbleState,
    score_play,
)

ASSETS = default_directory() / "scrabble"
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


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@cache
def anagrams(lexicon: Lexicon) -> dict[str, tuple[str, ...]]:
    """Words by their sorted letters, words of up to 8 letters (a rack and one board tile)."""
    index: dict[str, list[str]] = defaultdict(list)
    for word in sorted(lexicon.words):
        if len(word) <= 8:
            index["".join(sorted(word))].append(word)
    return {key: tuple(words) for key, words in index.items()}


def sub_racks(rack: str) -> Iterator[str]:
    """Every distinct sub-multiset of ``rack``, as sorted strings, shortest first."""
    letters = "".join(sorted(rack))
    for size in range(1, len(letters) + 1):
        yield from sorted({"".join(combo) for combo in combinations(letters, size)})


def candidates(game: Scrabble, state: ScrabbleState, rack: str, blanks: int) -> Iterator[Play]:
    """Plays of one word: through the start square at first, later through one board tile.

    With ``blanks``, one tile of each sub-rack is a blank standing for any letter.
    """
    cols, rows = game.layout.cols, game.layout.rows
    board = state.board
    subs = list(sub_racks(rack))
    if blanks:
        subs = [sub + letter.lower() for sub in ["", *subs] for letter in LETTERS]
    squares: dict[str, list[tuple[int, int]]] = defaultdict(list)
    if board[game.layout.start_index] == EMPTY:
        squares[""].append(game.layout.start)
    else:
        for i, cell in enumerate(board):
            if cell != EMPTY:
                squares[cell.upper()].append(divmod(i, cols))
    words = anagrams(game.lexicon)
    for letter, where in sorted(squares.items()):
        for sub in subs:
            for word in words.get("".join(sorted(sub.upper() + letter)), ()):
                for offset in range(len(word)):
                    if letter and word[offset] != letter:
                        continue
                    for row, col in where:
                        for across in (True, False):
                            play = place(board, rows, cols, word, sub, row, col, offset,
                                         across, opening=not letter)
                            if play is not None:
                                yield play


def place(board: str, rows: int, cols: int, word: str, sub: str, row: int, col: int,
          offset: int, across: bool, opening: bool) -> Play | None:
    """``word`` laid so that its letter ``offset`` is on (row, col), tiles from ``sub``."""
    blank_letter = next((tile.upper() for tile in sub if tile.islower()), None)
    placements = []
    for i, letter in enumerate(word):
        r, c = (row, col + i - offset) if across else (row + i - offset, col)
        if not (0 <= r < rows and 0 <= c < cols):
            return None
        if i == offset and not opening:
            continue
        if board[r * cols + c] != EMPTY:
            return None
        blank = letter == blank_letter
        if blank:
            blank_letter = None  # the blank stands for one letter only
        placements.append(Placement(r, c, letter, blank=blank))
    return Play(tuple(placements))


def best_play(game: Scrabble, state: ScrabbleState, seat: Seat) -> ScrabbleMove:
    """The best-scoring play that a small deterministic search finds (words from the rack
    through one tile on the board; the first found among equals), else an exchange of the
    whole rack, else a pass."""
    rack = state.racks[seat]
    plain = rack.replace(BLANK, "")
    for blanks in (0, 1) if BLANK in rack else (0,):
        best: tuple[int, Play] | None = None
        for play in candidates(game, state, plain, blanks):
            try:
                scored = score_play(game.layout, game.tiles, game.lexicon, state.board, rack,
                                    play.placements)
            except IllegalMoveError:
                continue
            if best is None or scored.score > best[0]:
                best = (scored.score, play)
        if best is not None:
            return best[1]
    if len(state.bag) >= game.tiles.rack:
        return Exchange(rack)
    return Pass()

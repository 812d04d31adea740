"""Checking and scoring one play: the referee's hot path.

:func:`score_play` takes the board, the mover's rack and the tiles placed, refuses the play
with an :class:`~merknera.games.base.IllegalMoveError` that names the square, the tile or the
word at fault, and otherwise returns the words formed, the score and the board after it.

Scoring is standard: a tile's points times the letter premium of its square, summed over the
word, times the word premiums; premiums count only under tiles placed by this play (a premium
already covered is spent), a blank is worth the blank's points (0), every word formed scores
(the main word and each cross word of two or more letters), and playing a full rack adds the
bingo bonus.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from merknera.games.base import IllegalMoveError
from merknera.games.scrabble.assets import BoardLayout, Lexicon, TileSet, square_name
from merknera.games.scrabble.bag import take
from merknera.games.scrabble.moves import Placement
from merknera.games.scrabble.state import EMPTY


@dataclass(frozen=True)
class Word:
    """A word formed by a play."""

    letters: str
    """As on the board: upper case, lower case where a blank stands for the letter."""
    start: int
    """The index of the square of its first letter."""
    across: bool
    """Read left to right (or else top to bottom)."""
    score: int

    @property
    def text(self) -> str:
        """The word in upper case, as the lexicon holds it."""
        return self.letters.upper()


@dataclass(frozen=True)
class ScoredPlay:
    """A legal play: what it forms and what it is worth."""

    words: tuple[Word, ...]
    """The main word first (absent when a single tile only forms a cross word), then the
    cross words in the order of the tiles along the line."""
    score: int
    """The points of every word, plus the bingo bonus."""
    bingo: bool
    board: str
    """The board after the play."""
    rack: str
    """The mover's tiles left after the play, before drawing."""


def score_play(layout: BoardLayout, tiles: TileSet, lexicon: Lexicon, board: str, rack: str,
               placements: Sequence[Placement]) -> ScoredPlay:
    """Check a play of ``placements`` from ``rack`` on ``board`` and score it.

    :raises IllegalMoveError: if the rules forbid it, naming the square, tile or word.
    """
    rows, cols = layout.rows, layout.cols
    if not placements:
        raise IllegalMoveError("a play must place at least one tile")
    new: dict[int, str] = {}
    for p in placements:
        if not (0 <= p.row < rows and 0 <= p.col < cols):
            raise IllegalMoveError(
                f"row {p.row}, col {p.col} is not on the {rows}x{cols} board")
        index = p.row * cols + p.col
        if index in new:
            raise IllegalMoveError(f"two tiles are placed on {layout.name(index)}")
        taken = board[index]
        if taken != EMPTY:
            raise IllegalMoveError(f"{layout.name(index)} is already taken by {_shown(taken)}")
        new[index] = p.cell
    left = take(rack, "".join(p.tile for p in placements), "the play",
                lambda i: placements[i].square)

    # The line: a row if the tiles share one (or a lone tile has a neighbour in its row).
    first = placements[0]
    across = all(p.row == first.row for p in placements)
    if across and len(placements) == 1:
        col = first.col
        index = first.row * cols + col
        across = (col > 0 and board[index - 1] != EMPTY) or (
            col + 1 < cols and board[index + 1] != EMPTY)
    elif not across and not all(p.col == first.col for p in placements):
        # Name the first tile, the first off its row and the first off its column.
        off_row = next(p for p in placements if p.row != first.row)
        off_col = next(p for p in placements if p.col != first.col)
        named = list(dict.fromkeys((first.square, off_row.square, off_col.square)))
        raise IllegalMoveError("the tiles are not in one row or one column: "
                               f"{', '.join(named[:-1])} and {named[-1]}")
    step = 1 if across else cols
    squares = sorted(new)
    lo, hi = squares[0], squares[-1]
    for index in range(lo, hi, step):
        if index not in new and board[index] == EMPTY:
            raise IllegalMoveError(
                f"there is a gap at {layout.name(index)} between the tiles placed")

    start = layout.start_index
    opening = board[start] == EMPTY
    if opening:
        # Nothing else can be on the board while the start square is free: the first play
        # covers it.
        if start not in new:
            raise IllegalMoveError(
                f"the first play must cover the start square {layout.name(start)}")
        if len(new) < 2:
            raise IllegalMoveError("the first play must place at least two tiles")

    cells = list(board)
    for index, cell in new.items():
        cells[index] = cell
    after = "".join(cells)
    points = tiles.points
    letter_x = layout.letter_multipliers
    word_x = layout.word_multipliers
    size = layout.size
    words: list[Word] = []
    # The main word: the placed tiles extended over the tiles already on their line.
    if across:
        row_start = lo - lo % cols
        while lo > row_start and after[lo - 1] != EMPTY:
            lo -= 1
        row_end = row_start + cols - 1
        while hi < row_end and after[hi + 1] != EMPTY:
            hi += 1
    else:
        while lo >= cols and after[lo - cols] != EMPTY:
            lo -= cols
        while hi + cols < size and after[hi + cols] != EMPTY:
            hi += cols
    # A lone tile with no neighbour on its line forms no main word (a cross word at most).
    has_main = hi > lo
    if has_main:
        words.append(_word(after, lo, hi, step, across, new, points, letter_x, word_x))
    # The cross words: through each placed tile, across the line.
    for index in squares:
        lo = hi = index
        if across:
            while lo >= cols and after[lo - cols] != EMPTY:
                lo -= cols
            while hi + cols < size and after[hi + cols] != EMPTY:
                hi += cols
            if hi > lo:
                words.append(_word(after, lo, hi, cols, False, new, points, letter_x, word_x))
        else:
            row_start = index - index % cols
            while lo > row_start and after[lo - 1] != EMPTY:
                lo -= 1
            row_end = row_start + cols - 1
            while hi < row_end and after[hi + 1] != EMPTY:
                hi += 1
            if hi > lo:
                words.append(_word(after, lo, hi, 1, True, new, points, letter_x, word_x))

    # Every cross word holds an old tile; the main word does when it is longer than the play.
    touches = len(words) > has_main or (has_main and len(words[0].letters) > len(new))
    if not opening and not touches:
        raise IllegalMoveError("the play does not touch any tile already on the board")
    words_in = lexicon.words
    for i, word in enumerate(words):
        if word.text not in words_in:
            kind = "the word" if i == 0 and has_main else "the cross word"
            direction = "across" if word.across else "down"
            raise IllegalMoveError(
                f"{kind} {word.text} ({direction} from {_square(word.start, cols)}) is not "
                f"in the dictionary")
    bingo = len(new) == tiles.rack
    score = sum(word.score for word in words) + (tiles.bingo if bingo else 0)
    return ScoredPlay(tuple(words), score, bingo, after, left)


def _word(board: str, lo: int, hi: int, step: int, across: bool, new: dict[int, str],
          points: Mapping[str, int], letter_x: tuple[int, ...],
          word_x: tuple[int, ...]) -> Word:
    """Score the word from square ``lo`` to ``hi``: premiums only under new tiles."""
    total = 0
    multiplier = 1
    for index in range(lo, hi + 1, step):
        value = points[board[index]]
        if index in new:
            value *= letter_x[index]
            multiplier *= word_x[index]
        total += value
    return Word(board[lo:hi + 1:step], lo, across, total * multiplier)


def _shown(cell: str) -> str:
    return f"a blank standing for {cell.upper()}" if cell.islower() else cell


def _square(index: int, cols: int) -> str:
    return square_name(*divmod(index, cols))

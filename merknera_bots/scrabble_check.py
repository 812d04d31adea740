"""Scrabble for bots: one play checked and scored by the rules from scratch, the slow and
simple way (a referee's view); the bot runs it over the play it chooses before sending it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from merknera_bots.scrabble_files import BLANK, LetterSet
from merknera_bots.scrabble_lexicon import Lexicon, Position, Tile

# --- the referee's view: one play, checked from scratch ---------------------------------


class IllegalPlayError(ValueError):
    """A play that breaks the rules; the message says which."""


def check_play(position: Position, tiles: Sequence[Tile], rack: Iterable[str],
               lexicon: Lexicon, letters: LetterSet) -> tuple[int, list[str]]:
    """Check a play by the rules and return its score and the words it forms.

    :raises IllegalPlayError: if it is not a legal play of ``rack`` on ``position``.
    """
    layout = position.layout
    grid = position.letters
    if not tiles:
        raise IllegalPlayError("no tiles")
    squares = [(t.row, t.col) for t in tiles]
    if len(set(squares)) != len(squares):
        raise IllegalPlayError("two tiles on one square")
    for t in tiles:
        if not (0 <= t.row < layout.rows and 0 <= t.col < layout.cols):
            raise IllegalPlayError(f"({t.row}, {t.col}) is off the board")
        if grid[t.row][t.col] is not None:
            raise IllegalPlayError(f"({t.row}, {t.col}) is taken")
        if t.letter not in letters.alphabet:
            raise IllegalPlayError(f"{t.letter!r} is not a letter of the set")
    need = Counter(BLANK if t.blank else t.letter for t in tiles)
    have = Counter(rack)
    if any(have[k] < v for k, v in need.items()):
        raise IllegalPlayError("the rack does not hold those tiles")
    rows = {r for r, _ in squares}
    cols = {c for _, c in squares}
    if len(rows) > 1 and len(cols) > 1:
        raise IllegalPlayError("the tiles are not in one row or column")
    new: dict[tuple[int, int], Tile] = {(t.row, t.col): t for t in tiles}

    def at(r: int, c: int) -> str | None:
        if not (0 <= r < layout.rows and 0 <= c < layout.cols):
            return None
        tile = new.get((r, c))
        return tile.letter if tile is not None else grid[r][c]

    # The line is the tiles' row (or column); a single tile is checked both ways.
    across = len(rows) == 1 and (len(cols) > 1 or at(tiles[0].row, tiles[0].col - 1) is not None
                                 or at(tiles[0].row, tiles[0].col + 1) is not None)
    dr, dc = (0, 1) if across else (1, 0)
    first, last = min(squares), max(squares)
    r, c = first
    while (r, c) != last:
        r, c = r + dr, c + dc
        if at(r, c) is None:
            raise IllegalPlayError("the tiles are not contiguous")

    def word_through(r: int, c: int, dr: int, dc: int) -> list[tuple[int, int]]:
        while at(r - dr, c - dc) is not None:
            r, c = r - dr, c - dc
        cells = []
        while at(r, c) is not None:
            cells.append((r, c))
            r, c = r + dr, c + dc
        return cells

    words = [word_through(*first, dr, dc)]
    words += [word_through(r, c, dc, dr) for r, c in squares]
    words = [w for w in words if len(w) >= 2]
    if position.is_empty():
        if layout.start not in new:
            raise IllegalPlayError("the first play must cover the start square")
        if len(tiles) < 2:
            raise IllegalPlayError("the first play must place two tiles or more")
    elif not any(any(cell not in new for cell in word) for word in words):
        raise IllegalPlayError("the play does not touch the tiles on the board")
    if not words:
        raise IllegalPlayError("the play forms no word")
    total = 0
    spelled = []
    for word in words:
        text = "".join(at(r, c) or "" for r, c in word)
        if text not in lexicon:
            raise IllegalPlayError(f"{text} is not in the dictionary")
        spelled.append(text)
        sum_, mult = 0, 1
        for r, c in word:
            tile = new.get((r, c))
            if tile is None:
                sum_ += 0 if position.blanks[r][c] else letters.value(grid[r][c] or "")
            else:
                sum_ += letters.value(BLANK if tile.blank else tile.letter) * \
                    layout.letter_multiplier(r, c)
                mult *= layout.word_multiplier(r, c)
        total += sum_ * mult
    if len(tiles) == letters.rack:
        total += letters.bingo
    return total, spelled

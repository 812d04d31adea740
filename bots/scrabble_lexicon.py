"""Scrabble for bots: the board, the tiles, a word graph and a move generator.

* :class:`BoardLayout` and :class:`LetterSet` are the ``gameboard`` and ``letters`` files;
  :class:`Lexicon` is the ``dictionary`` as a DAWG (a minimised trie).
* :class:`Position` is the board of a ``Scrabble.NextMove`` call: the tiles on it and which
  of them are blanks.
* :func:`generate_moves` lists every legal play of a rack, scored; :func:`best_move` finds the
  highest-scoring one without keeping the others.  They are the anchor-square search of
  Appel & Jacobson ("The World's Fastest Scrabble Program", 1988): cross-checks for every
  empty square, then from each anchor square every left part the rack can make, extended
  rightwards through the word graph.
* :func:`check_play` scores one play by the rules from scratch, the slow and simple way (a
  referee's view); the bot runs it over the play it chooses before sending it.

Nothing here imports ``merknera``: copy the file next to your bot if you like.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "BLANK",
    "BoardLayout",
    "IllegalPlayError",
    "LetterSet",
    "Lexicon",
    "Move",
    "Position",
    "Tile",
    "best_move",
    "check_play",
    "generate_moves",
]

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


# --- the word graph ---------------------------------------------------------------------


class _Node:
    """A state of the word graph: the letters that may follow, and whether a word ends."""

    __slots__ = ("edges", "final")

    def __init__(self) -> None:
        self.edges: dict[str, _Node] = {}
        self.final = False


class Lexicon:
    """The dictionary as a DAWG: a trie whose equal subtrees are shared.

    Built in one pass over the sorted words (Daciuk et al., "Incremental construction of
    minimal acyclic finite-state automata", 2000): each word's new suffix is added, and the
    nodes of the previous word that no later word can extend are replaced by an equal node
    already in the graph, when there is one.
    """

    def __init__(self, words: Iterable[str]) -> None:
        """``words``: upper-case words; anything that is not 2+ letters A-Z is left out."""
        self.root = _Node()
        self.word_count = 0
        seen: set[str] = set()
        register: dict[tuple[bool, tuple[tuple[str, int], ...]], _Node] = {}
        # The path of the word added last, as (parent, letter, child) from the root down:
        # its nodes may still gain edges, so they are not in the register yet.
        path: list[tuple[_Node, str, _Node]] = []

        def minimise(down_to: int) -> None:
            while len(path) > down_to:
                parent, letter, child = path.pop()
                # Children are registered already, so equal subtrees are the same objects
                # and a node is known by its finality and its edges' letters and targets.
                key = (child.final, tuple((k, id(v)) for k, v in child.edges.items()))
                twin = register.get(key)
                if twin is None:
                    register[key] = child
                else:
                    parent.edges[letter] = twin

        previous = ""
        for word in sorted({w for w in words if len(w) >= 2 and w.isascii() and w.isalpha()
                            and w.isupper()}):
            common = 0
            for a, b in zip(word, previous, strict=False):
                if a != b:
                    break
                common += 1
            minimise(common)
            node = path[-1][2] if path else self.root
            for letter in word[common:]:
                child = _Node()
                node.edges[letter] = child
                path.append((node, letter, child))
                node = child
            node.final = True
            self.word_count += 1
            seen.update(word[common:])
            previous = word
        minimise(0)
        self.node_count = len(register) + 1
        """The number of nodes of the graph (the root included)."""
        self.letters = frozenset(seen)
        """The letters the words are spelled with."""

    @classmethod
    def from_text(cls, text: str | bytes) -> Lexicon:
        """A ``dictionary`` file: one word a line (lower case is upper-cased)."""
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        return cls(line.strip().upper() for line in text.splitlines())

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        node: _Node | None = self.root
        for letter in word:
            assert node is not None
            node = node.edges.get(letter)
            if node is None:
                return False
        return node is not None and node.final

    def __len__(self) -> int:
        return self.word_count

    def words(self) -> list[str]:
        """Every word, sorted (for tests and debugging: this walks the whole graph)."""
        found: list[str] = []

        def walk(node: _Node, prefix: str) -> None:
            if node.final:
                found.append(prefix)
            for letter in sorted(node.edges):
                walk(node.edges[letter], prefix + letter)

        walk(self.root, "")
        return found


# --- positions and moves ----------------------------------------------------------------


class Tile(NamedTuple):
    """A tile placed by a play; a blank has ``blank=True`` and ``letter`` its letter."""

    row: int
    col: int
    letter: str
    blank: bool = False

    def to_wire(self) -> dict[str, Any]:
        """As in a PLAY result: ``{"row", "col", "tile"}``, a blank with ``"letter"`` too."""
        if self.blank:
            return {"row": self.row, "col": self.col, "tile": BLANK, "letter": self.letter}
        return {"row": self.row, "col": self.col, "tile": self.letter}


@dataclass(frozen=True)
class Move:
    """A play: the tiles placed (sorted by square) and the points it scores."""

    tiles: tuple[Tile, ...]
    score: int

    def to_wire(self) -> dict[str, Any]:
        """The ``Scrabble.NextMove`` result for this play."""
        return {"type": "PLAY", "playtiles": [tile.to_wire() for tile in self.tiles]}


class Position:
    """The tiles on a board: ``letters[r][c]`` is the letter there (a blank's letter for a
    blank) or ``None``; ``blanks[r][c]`` says whether it is a blank."""

    def __init__(self, layout: BoardLayout, letters: Sequence[Sequence[str | None]],
                 blanks: Sequence[Sequence[bool]] | None = None) -> None:
        if len(letters) != layout.rows or any(len(row) != layout.cols for row in letters):
            raise ValueError(f"the board must be {layout.rows} rows of {layout.cols} squares")
        self.layout = layout
        self.letters: list[list[str | None]] = [list(row) for row in letters]
        self.blanks: list[list[bool]] = (
            [[False] * layout.cols for _ in range(layout.rows)] if blanks is None
            else [list(row) for row in blanks])

    @classmethod
    def empty(cls, layout: BoardLayout) -> Position:
        """A board with no tiles."""
        return cls(layout, [[None] * layout.cols for _ in range(layout.rows)])

    @classmethod
    def from_wire(cls, layout: BoardLayout, gamestate: Any, blanks: Any = None) -> Position:
        """The ``gamestate`` and ``blanks`` params of ``Scrabble.NextMove``.

        A square is ``""`` (or null) when empty, else a letter; ``"*"`` is a placed blank
        whose letter ``blanks`` (``[{"row", "col", "letter"}]``) gives.  A lower-case letter
        is read as a blank standing for that letter too.  A ``"*"`` that ``blanks`` does not
        explain blocks every word through it.

        :raises ValueError: if the params are not of that shape or size.
        """
        if not isinstance(gamestate, list) or len(gamestate) != layout.rows or not all(
                isinstance(row, list) and len(row) == layout.cols for row in gamestate):
            raise ValueError(f"gamestate must be {layout.rows} rows of {layout.cols} squares")
        told: dict[tuple[int, int], str] = {}
        if blanks is not None:
            if not isinstance(blanks, list):
                raise ValueError("blanks must be a list of {row, col, letter}")
            for entry in blanks:
                if not isinstance(entry, dict):
                    raise ValueError("blanks must be a list of {row, col, letter}")
                low = {str(k).lower(): v for k, v in entry.items()}
                row, col, letter = low.get("row"), low.get("col"), low.get("letter")
                if not (isinstance(row, int) and isinstance(col, int)
                        and isinstance(letter, str) and len(letter) == 1 and letter.isalpha()
                        and letter.isascii()):
                    raise ValueError(f"a blank must be {{row, col, letter}}, not {entry!r}")
                told[(row, col)] = letter.upper()
        letters: list[list[str | None]] = []
        is_blank: list[list[bool]] = []
        for r, row in enumerate(gamestate):
            letters_row: list[str | None] = []
            blank_row: list[bool] = []
            for c, square in enumerate(row):
                if square is None or square == "":
                    letters_row.append(None)
                    blank_row.append(False)
                elif square == BLANK:
                    letters_row.append(told.get((r, c), UNKNOWN))
                    blank_row.append(True)
                elif (isinstance(square, str) and len(square) == 1 and square.isascii()
                      and square.isalpha()):
                    letters_row.append(square.upper())
                    blank_row.append(square.islower())
                else:
                    raise ValueError(f"square ({r}, {c}) holds {square!r}, not a letter")
            letters.append(letters_row)
            is_blank.append(blank_row)
        return cls(layout, letters, is_blank)

    def is_empty(self) -> bool:
        """Whether no tile has been played yet."""
        return all(letter is None for row in self.letters for letter in row)

    def play(self, move: Move) -> Position:
        """A copy with ``move``'s tiles placed (not checked)."""
        after = Position(self.layout, self.letters, self.blanks)
        for tile in move.tiles:
            after.letters[tile.row][tile.col] = tile.letter
            after.blanks[tile.row][tile.col] = tile.blank
        return after

    def to_wire(self) -> tuple[list[list[str]], list[dict[str, Any]]]:
        """``gamestate`` and ``blanks`` as ``Scrabble.NextMove`` sends them."""
        rows = [[("" if letter is None else BLANK if blank else letter)
                 for letter, blank in zip(lrow, brow, strict=True)]
                for lrow, brow in zip(self.letters, self.blanks, strict=True)]
        blanks = [{"row": r, "col": c, "letter": self.letters[r][c]}
                  for r in range(self.layout.rows) for c in range(self.layout.cols)
                  if self.blanks[r][c] and self.letters[r][c] is not None]
        return rows, blanks


# --- the move generator -----------------------------------------------------------------

_Placed = list[tuple[int, str, bool]]
"""Tiles placed on a line so far: (index along the line, letter, is a blank)."""
_Sink = Callable[[int, tuple[Tile, ...]], None]


def generate_moves(position: Position, rack: Iterable[str], lexicon: Lexicon,
                   letters: LetterSet) -> list[Move]:
    """Every legal play of ``rack`` (letters, ``"*"`` for a blank) on ``position``, scored.

    Each play appears once; a blank standing for a letter and the letter's own tile are
    different plays.  The order is the search's (deterministic for equal arguments).
    """
    moves: list[Move] = []

    def keep(score: int, tiles: tuple[Tile, ...]) -> None:
        moves.append(Move(tiles, score))

    _search(position, rack, lexicon, letters, keep)
    return moves


def best_move(position: Position, rack: Iterable[str], lexicon: Lexicon,
              letters: LetterSet) -> Move | None:
    """The highest-scoring legal play of ``rack`` on ``position`` (None when there is none).

    Of equal scores the one with the smallest tiles tuple (by row, col, letter, real tile
    before blank) wins, so the answer depends on nothing but the arguments.
    """
    best: list[Move] = []
    top = -1

    def keep(score: int, tiles: tuple[Tile, ...]) -> None:
        nonlocal top
        if score > top:
            top = score
            best[:] = [Move(tiles, score)]
        elif score == top and tiles < best[0].tiles:
            best[0] = Move(tiles, score)

    _search(position, rack, lexicon, letters, keep)
    return best[0] if best else None


def _search(position: Position, tiles: Iterable[str], lexicon: Lexicon, letters: LetterSet,
            sink: _Sink) -> None:
    layout = position.layout
    grid = position.letters
    blank_grid = position.blanks
    rows, cols = layout.rows, layout.cols
    points = letters.points
    tile_points = [[0 if (grid[r][c] is None or blank_grid[r][c])
                    else points.get(grid[r][c] or "", 0) for c in range(cols)]
                   for r in range(rows)]
    premiums = [[PREMIUMS[kind] for kind in row] for row in layout.squares]
    first = position.is_empty()
    # A plain dict with every letter the graph may offer, so a lookup never misses.
    counted = Counter(tiles)
    rack: dict[str, int] = dict.fromkeys(lexicon.letters, 0)
    rack.update(counted)
    rack.setdefault(BLANK, 0)
    if not counted:
        return
    across_grid = grid
    down_grid = [[grid[r][c] for r in range(rows)] for c in range(cols)]
    for down in (False, True):
        if down:
            g, pts = down_grid, [[tile_points[r][c] for r in range(rows)] for c in range(cols)]
            prem = [[premiums[r][c] for r in range(rows)] for c in range(cols)]
            start = (layout.start[1], layout.start[0])
        else:
            g, pts, prem, start = across_grid, tile_points, premiums, layout.start
        _search_direction(g, pts, prem, down, first, start, rack, lexicon, letters, sink)


def _search_direction(g: list[list[str | None]], pts: list[list[int]],
                      prem: list[list[tuple[int, int]]], down: bool, first: bool,
                      start: tuple[int, int], rack: dict[str, int], lexicon: Lexicon,
                      letters: LetterSet, sink: _Sink) -> None:
    """Plays along the lines of ``g`` (its rows; the board's columns when ``down``)."""
    nlines, n = len(g), len(g[0])
    root = lexicon.root
    for i in range(nlines):
        line = g[i]
        above = g[i - 1] if i > 0 else None
        below = g[i + 1] if i + 1 < nlines else None
        # Anchors: the empty squares next to a tile (the start square on an empty board).
        if first:
            if i != start[0]:
                continue
            anchors = [start[1]]
        else:
            anchors = [j for j in range(n) if line[j] is None and (
                (j > 0 and line[j - 1] is not None) or (j + 1 < n and line[j + 1] is not None)
                or (above is not None and above[j] is not None)
                or (below is not None and below[j] is not None))]
            if not anchors:
                continue
        # Cross-checks: which letters may go on each empty square given the tiles above and
        # below it (None: any, no cross word), and the points of those tiles (-1: none).
        allowed: list[frozenset[str] | None] = [None] * n
        cross_sum = [-1] * n
        for j in range(n):
            if line[j] is not None or not (
                    (above is not None and above[j] is not None)
                    or (below is not None and below[j] is not None)):
                continue
            top = i
            while top > 0 and g[top - 1][j] is not None:
                top -= 1
            bottom = i
            while bottom + 1 < nlines and g[bottom + 1][j] is not None:
                bottom += 1
            cross_sum[j] = sum(pts[k][j] for k in range(top, bottom + 1) if k != i)
            node: _Node | None = root
            for k in range(top, i):
                node = node.edges.get(g[k][j] or "") if node is not None else None
            fits: set[str] = set()
            if node is not None:
                for letter, child in node.edges.items():
                    end: _Node | None = child
                    for k in range(i + 1, bottom + 1):
                        end = end.edges.get(g[k][j] or "") if end is not None else None
                    if end is not None and end.final:
                        fits.add(letter)
            allowed[j] = frozenset(fits)
        _search_line(i, line, pts[i], prem[i], anchors, allowed, cross_sum, down, rack,
                     root, letters, sink)


def _search_line(i: int, line: list[str | None], line_pts: list[int],
                 prem: list[tuple[int, int]], anchors: list[int],
                 allowed: list[frozenset[str] | None], cross_sum: list[int], down: bool,
                 rack: dict[str, int], root: _Node, letters: LetterSet, sink: _Sink) -> None:
    """Plays on line ``i`` through one of its ``anchors``: every left part, then on to the
    right through the word graph, scoring as the tiles go down."""
    n = len(line)
    points = letters.points
    blank_value = points.get(BLANK, 0)
    bingo_size, bingo = letters.rack, letters.bingo
    blank_letters = frozenset(letters.alphabet)
    rack_total = sum(rack.values())
    # The rack's letters, for plays without a blank (counts change as tiles go down).
    own = sorted(k for k, v in rack.items() if v > 0 and k != BLANK)
    letter_mult = [p[0] for p in prem]
    word_mult = [p[1] for p in prem]
    is_anchor = [False] * n
    for j in anchors:
        is_anchor[j] = True
    placed: _Placed = []

    def extend(j: int, node: _Node, main: int, mult: int, cross: int, used: int,
               anchor: int, begin: int) -> None:
        # Walk through the tiles already on the line.
        while j < n:
            letter = line[j]
            if letter is None:
                break
            nxt = node.edges.get(letter)
            if nxt is None:
                return
            node = nxt
            main += line_pts[j]
            j += 1
        # A word ends here if it covers the anchor and is 2+ letters.  A single tile that
        # makes a word across too is left to the across search, which finds it as well.
        if node.final and j > anchor and j - begin >= 2 and not (
                down and used == 1 and cross_sum[placed[0][0]] >= 0):
            score = main * mult + cross + (bingo if used == bingo_size else 0)
            if down:
                sink(score, tuple(Tile(k, i, ch, b) for k, ch, b in placed))
            else:
                sink(score, tuple(Tile(i, k, ch, b) for k, ch, b in placed))
        if j >= n or used >= rack_total:
            return
        fits = allowed[j]
        lm, wm, xs = letter_mult[j], word_mult[j], cross_sum[j]
        edges = node.edges
        blanks = rack[BLANK]
        candidates: Iterable[str] = edges if blanks else own
        for letter in candidates:
            child = edges.get(letter)
            if child is None or (fits is not None and letter not in fits):
                continue
            if rack[letter] > 0:
                value = points.get(letter, 0) * lm
                rack[letter] -= 1
                placed.append((j, letter, False))
                extend(j + 1, child, main + value, mult * wm,
                       cross + (xs + value) * wm if xs >= 0 else cross, used + 1,
                       anchor, begin)
                placed.pop()
                rack[letter] += 1
            if blanks and letter in blank_letters:
                value = blank_value * lm
                rack[BLANK] -= 1
                placed.append((j, letter, True))
                extend(j + 1, child, main + value, mult * wm,
                       cross + (xs + value) * wm if xs >= 0 else cross, used + 1,
                       anchor, begin)
                placed.pop()
                rack[BLANK] += 1

    def left_part(node: _Node, anchor: int, room: int, chosen: list[tuple[str, bool]]) -> None:
        # ``chosen`` is a left part from the rack, to lie on the squares just left of the
        # anchor: empty non-anchor squares, so nothing is next to them (no cross-checks),
        # and only their premiums are needed to score it.
        size = len(chosen)
        begin = anchor - size
        main, mult = 0, 1
        for k, (letter, blank) in enumerate(chosen):
            main += (blank_value if blank else points.get(letter, 0)) * letter_mult[begin + k]
            mult *= word_mult[begin + k]
            placed.append((begin + k, letter, blank))
        extend(anchor, node, main, mult, 0, size, anchor, begin)
        del placed[len(placed) - size:]
        if size >= room:
            return
        edges = node.edges
        blanks = rack[BLANK]
        candidates: Iterable[str] = edges if blanks else own
        for letter in candidates:
            child = edges.get(letter)
            if child is None:
                continue
            if rack[letter] > 0:
                rack[letter] -= 1
                chosen.append((letter, False))
                left_part(child, anchor, room, chosen)
                chosen.pop()
                rack[letter] += 1
            if blanks and letter in blank_letters:
                rack[BLANK] -= 1
                chosen.append((letter, True))
                left_part(child, anchor, room, chosen)
                chosen.pop()
                rack[BLANK] += 1

    for anchor in anchors:
        if anchor > 0 and line[anchor - 1] is not None:
            # The left part is the tiles already left of the anchor (extend walks them).
            begin = anchor - 1
            while begin > 0 and line[begin - 1] is not None:
                begin -= 1
            extend(begin, root, 0, 1, 0, 0, anchor, begin)
            continue
        # Otherwise every left part of up to rack-1 tiles that fits on the empty non-anchor
        # squares to the left (Appel & Jacobson's LeftPart).
        room = 0
        while (room < rack_total - 1 and anchor - room - 1 >= 0
               and line[anchor - room - 1] is None and not is_anchor[anchor - room - 1]):
            room += 1
        left_part(root, anchor, room, [])


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

"""Scrabble for bots: the move generator.

:func:`generate_moves` lists every legal play of a rack, scored; :func:`best_move` finds the
highest-scoring one without keeping the others.  They are the anchor-square search of Appel
& Jacobson ("The World's Fastest Scrabble Program", 1988): cross-checks for every empty
square, then from each anchor square every left part the rack can make, extended rightwards
through the word graph.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from merknera_bots.scrabble_files import BLANK, PREMIUMS, LetterSet
from merknera_bots.scrabble_lexicon import Lexicon, Move, Node, Position, Tile

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
            node: Node | None = root
            for k in range(top, i):
                node = node.edges.get(g[k][j] or "") if node is not None else None
            fits: set[str] = set()
            if node is not None:
                for letter, child in node.edges.items():
                    end: Node | None = child
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
                 rack: dict[str, int], root: Node, letters: LetterSet, sink: _Sink) -> None:
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

    def extend(j: int, node: Node, main: int, mult: int, cross: int, used: int,
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

    def left_part(node: Node, anchor: int, room: int, chosen: list[tuple[str, bool]]) -> None:
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

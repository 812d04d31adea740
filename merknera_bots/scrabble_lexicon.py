"""Scrabble for bots: the dictionary as a word graph, and the board of a NextMove call.

* :class:`Lexicon` is the ``dictionary`` as a DAWG (a minimised trie).
* :class:`Position` is the board of a ``Scrabble.NextMove`` call: the tiles on it and which
  of them are blanks.

The move generator is :mod:`merknera_bots.scrabble_movegen`, a referee's check of one play
:mod:`merknera_bots.scrabble_check`, the files :mod:`merknera_bots.scrabble_files`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from merknera_bots.scrabble_files import BLANK, UNKNOWN, BoardLayout

# --- the word graph ---------------------------------------------------------------------


class Node:
    """A state of the word graph: the letters that may follow, and whether a word ends."""

    __slots__ = ("edges", "final")

    def __init__(self) -> None:
        self.edges: dict[str, Node] = {}
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
        self.root = Node()
        self.word_count = 0
        seen: set[str] = set()
        register: dict[tuple[bool, tuple[tuple[str, int], ...]], Node] = {}
        # The path of the word added last, as (parent, letter, child) from the root down:
        # its nodes may still gain edges, so they are not in the register yet.
        path: list[tuple[Node, str, Node]] = []

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
                child = Node()
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
        node: Node | None = self.root
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

        def walk(node: Node, prefix: str) -> None:
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

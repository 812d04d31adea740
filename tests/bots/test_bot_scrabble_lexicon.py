"""The Scrabble bots' word graph and move generator, against brute force.

The checkers here share no code with ``merknera_bots.scrabble_lexicon``'s search: ``_referee``
scores a play by the rules from the board, and ``_brute_force`` tries every placement of every
ordering of the rack's tiles (every letter for a blank) on every line.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache

import pytest

from merknera.assets import default_directory
from merknera_bots.scrabble_check import IllegalPlayError, check_play
from merknera_bots.scrabble_files import BLANK, BoardLayout, LetterSet
from merknera_bots.scrabble_lexicon import Lexicon, Move, Position, Tile
from merknera_bots.scrabble_movegen import best_move, generate_moves

ASSETS = default_directory() / "scrabble"

PointsTable = dict[str, int]
Play = tuple[tuple[Tile, ...], int]


# --- small worlds -----------------------------------------------------------------------

SMALL_LETTERS = LetterSet(
    points={"A": 1, "E": 1, "R": 2, "S": 1, "T": 3, BLANK: 0},
    counts={"A": 6, "E": 6, "R": 4, "S": 4, "T": 4, BLANK: 2},
    rack=4, bingo=20)
"""A rack of four, so that the full-rack bonus comes up on small boards."""

SEVEN = BoardLayout(7, 7, (
    ("TW", "", "", "DL", "", "", "TW"),
    ("", "DW", "", "", "", "DW", ""),
    ("", "", "TL", "", "TL", "", ""),
    ("DL", "", "", "DW", "", "", "DL"),
    ("", "", "TL", "", "TL", "", ""),
    ("", "DW", "", "", "", "DW", ""),
    ("TW", "", "", "DL", "", "", "TW"),
), (3, 3))

# Not square and the start off the centre, so that rows and columns cannot be confused.
OBLONG = BoardLayout(5, 6, (
    ("", "TL", "", "", "DW", ""),
    ("DL", "", "", "TW", "", ""),
    ("", "DW", "", "", "", "TL"),
    ("", "", "DL", "", "DW", ""),
    ("TW", "", "", "", "", "DL"),
), (2, 1))


@cache
def _real_words() -> tuple[str, ...]:
    return tuple((ASSETS / "dictionary-english.txt").read_text().split())


@cache
def _small_words() -> frozenset[str]:
    """The real dictionary's words of 2-5 letters spelled with A, E, R, S and T."""
    return frozenset(w for w in _real_words() if len(w) <= 5 and set(w) <= set("AERST"))


@cache
def _small_lexicon() -> Lexicon:
    return Lexicon(_small_words())


# --- the independent checkers -----------------------------------------------------------


def _referee(layout: BoardLayout, board: dict[tuple[int, int], tuple[str, bool]],
             tiles: Sequence[Tile], words: frozenset[str], letters: LetterSet) -> int | None:
    """The score of placing ``tiles`` on ``board`` ((row, col) -> (letter, is a blank)), or
    None if that is not a legal play (the rack is not checked here)."""
    new = {(t.row, t.col): (t.letter, t.blank) for t in tiles}
    if len(new) != len(tiles) or any(square in board for square in new):
        return None
    if any(not (0 <= r < layout.rows and 0 <= c < layout.cols) for r, c in new):
        return None
    rows = {r for r, _ in new}
    cols = {c for _, c in new}
    if len(rows) > 1 and len(cols) > 1:
        return None
    every = {**board, **new}
    spans = []
    for dr, dc in ((0, 1), (1, 0)):
        for square in new:
            r, c = square
            while (r - dr, c - dc) in every:
                r, c = r - dr, c - dc
            span = []
            while (r, c) in every:
                span.append((r, c))
                r, c = r + dr, c + dc
            if len(span) >= 2 and span not in spans:
                spans.append(span)
    # One line, no gaps: some word holds every new tile.
    if not any(all(square in span for square in new) for span in spans):
        return None
    if not board:
        if layout.start not in new or len(new) < 2:
            return None
    elif not any(any(square in board for square in span) for span in spans):
        return None
    total = 0
    for span in spans:
        if "".join(every[square][0] for square in span) not in words:
            return None
        word_sum, factor = 0, 1
        for r, c in span:
            letter, blank = every[(r, c)]
            value = 0 if blank else letters.points[letter]
            if (r, c) in new:
                kind = layout.squares[r][c]
                value *= {"DL": 2, "TL": 3}.get(kind, 1)
                factor *= {"DW": 2, "TW": 3}.get(kind, 1)
            word_sum += value
        total += word_sum * factor
    return total + (letters.bingo if len(tiles) == letters.rack else 0)


def _board_of(position: Position) -> dict[tuple[int, int], tuple[str, bool]]:
    return {(r, c): (letter, position.blanks[r][c])
            for r, row in enumerate(position.letters) for c, letter in enumerate(row)
            if letter is not None}


def _brute_force(position: Position, rack: Sequence[str], words: frozenset[str],
                 letters: LetterSet) -> dict[tuple[Tile, ...], int]:
    """Every legal play by trying everything: tiles (sorted) -> score."""
    layout = position.layout
    board = _board_of(position)
    found: dict[tuple[Tile, ...], int] = {}
    orders = {order for k in range(1, len(rack) + 1)
              for order in itertools.permutations(rack, k)}
    for dr, dc in ((0, 1), (1, 0)):
        for r0, c0 in itertools.product(range(layout.rows), range(layout.cols)):
            if (r0, c0) in board:
                continue
            # The empty squares from (r0, c0) onwards along the line.
            free = []
            r, c = r0, c0
            while 0 <= r < layout.rows and 0 <= c < layout.cols:
                if (r, c) not in board:
                    free.append((r, c))
                r, c = r + dr, c + dc
            for order in orders:
                if len(order) > len(free):
                    continue
                choices = [[(t, False)] if t != BLANK else
                           [(x, True) for x in letters.alphabet] for t in order]
                for spelled in itertools.product(*choices):
                    tiles = tuple(sorted(Tile(sr, sc, letter, blank) for (sr, sc), (letter, blank)
                                         in zip(free, spelled, strict=False)))
                    score = _referee(layout, board, tiles, words, letters)
                    if score is not None:
                        found[tiles] = score
    return found


def _as_plays(moves: Iterable[Move]) -> dict[tuple[Tile, ...], int]:
    plays: dict[tuple[Tile, ...], int] = {}
    for move in moves:
        assert move.tiles not in plays, f"{move} generated twice"
        assert list(move.tiles) == sorted(move.tiles)
        plays[move.tiles] = move.score
    return plays


def _expected_best(plays: dict[tuple[Tile, ...], int]) -> Play | None:
    if not plays:
        return None
    top = max(plays.values())
    return min(tiles for tiles, score in plays.items() if score == top), top


def _draw(rng: random.Random, bag: list[str], n: int) -> list[str]:
    return [bag.pop(rng.randrange(len(bag))) for _ in range(min(n, len(bag)))]


def _compare_over_a_game(layout: BoardLayout, seed: int, turns: int) -> int:
    """Play random legal plays (chosen from the brute-force list) and compare the generator
    with brute force at every turn; returns how many plays were compared."""
    rng = random.Random(seed)
    lexicon, words = _small_lexicon(), _small_words()
    bag = [t for t, n in SMALL_LETTERS.counts.items() for _ in range(n)]
    position = Position.empty(layout)
    compared = 0
    for _ in range(turns):
        rack = _draw(rng, list(bag), SMALL_LETTERS.rack)
        expected = _brute_force(position, rack, words, SMALL_LETTERS)
        got = _as_plays(generate_moves(position, rack, lexicon, SMALL_LETTERS))
        assert got == expected, (rack, position.letters)
        best = best_move(position, rack, lexicon, SMALL_LETTERS)
        want = _expected_best(expected)
        assert (None if best is None else (best.tiles, best.score)) == want
        compared += len(expected)
        if expected:
            tiles = rng.choice(sorted(expected))
            position = position.play(Move(tiles, expected[tiles]))
    return compared


# --- the word graph ---------------------------------------------------------------------


def test_the_graph_holds_exactly_the_words() -> None:
    words = ["CAT", "CATS", "CAR", "CARS", "DOG", "DOGS", "TO", "AT", "ZA", "SCAT"]
    lexicon = Lexicon([*words, "A", "", "lower", "NO-NO", "CAT"])
    assert lexicon.words() == sorted(words)
    assert len(lexicon) == len(words)
    assert "CATS" in lexicon and "CA" not in lexicon and "CATSS" not in lexicon
    assert 3 not in lexicon
    # Shared endings: the -S, -AT and -OG branches are merged, so fewer nodes than a trie.
    trie_nodes = len({w[:k] for w in words for k in range(len(w) + 1)})
    assert lexicon.node_count < trie_nodes


def test_the_real_dictionary_round_trips() -> None:
    words = _real_words()
    lexicon = Lexicon.from_text("\n".join(words))
    assert len(lexicon) == len(set(words)) > 100_000
    assert lexicon.words() == sorted(set(words))
    assert "QUIXOTIC" in lexicon and "QUIXOTICS" not in lexicon


# --- moves against brute force ----------------------------------------------------------


@pytest.mark.parametrize(("layout", "seed"), [(SEVEN, 1), (SEVEN, 2), (OBLONG, 3),
                                              (OBLONG, 4)])
def test_generator_equals_brute_force_over_random_games(layout: BoardLayout, seed: int) -> None:
    assert _compare_over_a_game(layout, seed, turns=7) > 100


@pytest.mark.parametrize("rack", [["A", "*", "T", "S"], ["*", "*", "E"], ["*", "R"]])
def test_blanks_against_brute_force(rack: list[str]) -> None:
    position = Position.empty(SEVEN)
    position = position.play(Move((Tile(3, 2, "R"), Tile(3, 3, "A", True), Tile(3, 4, "T")), 0))
    position = position.play(Move((Tile(2, 4, "E"), Tile(4, 4, "A")), 0))
    expected = _brute_force(position, rack, _small_words(), SMALL_LETTERS)
    got = _as_plays(generate_moves(position, rack, _small_lexicon(), SMALL_LETTERS))
    assert got == expected
    # Plays of the blank exist as both, and a real tile beats a blank on the same square.
    blanked = [tiles for tiles in got if any(t.blank for t in tiles)]
    assert blanked
    best = best_move(position, rack, _small_lexicon(), SMALL_LETTERS)
    assert best is not None and (best.tiles, best.score) == _expected_best(expected)


def test_a_placed_blank_scores_nothing_and_keeps_its_letter() -> None:
    # R, blank-as-A, T across the start; play S after it: RATS scores R2 + A0 + T3 + S1.
    position = Position.empty(SEVEN).play(
        Move((Tile(3, 2, "R"), Tile(3, 3, "A", True), Tile(3, 4, "T")), 0))
    plays = _as_plays(generate_moves(position, ["S"], _small_lexicon(), SMALL_LETTERS))
    assert plays[(Tile(3, 5, "S"),)] == 2 + 0 + 3 + 1
    # A blank with an unknown letter blocks every word through it.
    gamestate, _ = position.to_wire()
    unexplained = Position.from_wire(SEVEN, gamestate, [])
    assert unexplained.letters[3][3] == "?"
    plays = _as_plays(generate_moves(unexplained, ["S"], _small_lexicon(), SMALL_LETTERS))
    assert (Tile(3, 5, "S"),) not in plays
    assert all(_referee(SEVEN, _board_of(position), tiles, _small_words(), SMALL_LETTERS)
               == score for tiles, score in plays.items())


def test_the_first_play_covers_the_start_square() -> None:
    for layout in (SEVEN, OBLONG):
        moves = generate_moves(Position.empty(layout), ["T", "E", "A", "*"], _small_lexicon(),
                               SMALL_LETTERS)
        assert moves
        assert all(any((t.row, t.col) == layout.start for t in m.tiles) for m in moves)
        assert all(len(m.tiles) >= 2 for m in moves)
        # Both directions are tried.
        assert any(len({t.row for t in m.tiles}) == 1 for m in moves)
        assert any(len({t.col for t in m.tiles}) == 1 for m in moves)


def test_a_single_tile_play_is_listed_once() -> None:
    # AT across the start and an E below the T: a tile on (4, 3) makes a word each way.
    position = Position.empty(SEVEN).play(
        Move((Tile(3, 3, "A"), Tile(3, 4, "T"), Tile(4, 4, "E")), 0))
    plays = _as_plays(generate_moves(position, ["S", "R"], _small_lexicon(), SMALL_LETTERS))
    assert plays == _brute_force(position, ["S", "R"], _small_words(), SMALL_LETTERS)
    # AR down and RE across: both words score.
    assert plays[(Tile(4, 3, "R"),)] == (1 + 2) + (2 + 1)


def test_no_play_without_tiles_or_words() -> None:
    assert generate_moves(Position.empty(SEVEN), [], _small_lexicon(), SMALL_LETTERS) == []
    assert best_move(Position.empty(SEVEN), ["S", "S"], Lexicon(["AT"]), SMALL_LETTERS) is None


def test_check_play_refuses_what_the_rules_refuse() -> None:
    lexicon = _small_lexicon()
    empty = Position.empty(SEVEN)
    cases: list[tuple[Position, tuple[Tile, ...], str]] = [
        (empty, (Tile(0, 0, "A"), Tile(0, 1, "T")), "start square"),
        (empty, (Tile(3, 3, "A"),), "two tiles or more"),
        (empty, (Tile(3, 3, "A"), Tile(3, 5, "T")), "contiguous"),
        (empty, (Tile(3, 3, "A"), Tile(4, 4, "T")), "one row or column"),
        (empty, (Tile(3, 3, "T"), Tile(3, 4, "T")), "not in the dictionary"),
        (empty, (Tile(3, 3, "A"), Tile(3, 4, "Z")), "not a letter"),
    ]
    played = empty.play(Move((Tile(3, 3, "A"), Tile(3, 4, "T")), 0))
    cases += [
        (played, (Tile(0, 0, "A"), Tile(0, 1, "T")), "does not touch"),
        (played, (Tile(3, 3, "A"),), "taken"),
        (played, (Tile(3, 5, "E"), Tile(3, 5, "S")), "two tiles"),
    ]
    for position, tiles, reason in cases:
        with pytest.raises(IllegalPlayError, match=reason):
            check_play(position, tiles, "ATTZES*", lexicon, SMALL_LETTERS)
    with pytest.raises(IllegalPlayError, match="rack"):
        check_play(empty, (Tile(3, 3, "A"), Tile(3, 4, "T")), "A", lexicon, SMALL_LETTERS)
    # A full rack earns the bonus: RATE across the start.
    tiles = (Tile(3, 3, "R"), Tile(3, 4, "A"), Tile(3, 5, "T"), Tile(3, 6, "E"))
    assert check_play(empty, tiles, "RATE", lexicon, SMALL_LETTERS) == (
        (2 + 1 + 3 + 2 * 1) * 2 + 20, ["RATE"])


# --- the real dictionary and board ------------------------------------------------------


@cache
def _real() -> tuple[BoardLayout, LetterSet, Lexicon]:
    return (BoardLayout.from_json((ASSETS / "board-standard.json").read_bytes()),
            LetterSet.from_json((ASSETS / "letters-english.json").read_bytes()),
            Lexicon(_real_words()))


def _pattern_search(position: Position, rack: Sequence[str], words: Sequence[str],
                    letters: LetterSet) -> dict[tuple[Tile, ...], int]:
    """Every legal play found from the words' side: for each line, start square and number
    of tiles, every dictionary word that fits the squares (a regular expression over the
    word list), played if the rack can spell it. Slow, simple and independent."""
    layout = position.layout
    board = _board_of(position)
    by_length: dict[int, list[str]] = {}
    for word in words:
        by_length.setdefault(len(word), []).append(word)
    texts = {n: "\n".join(group) for n, group in by_length.items()}
    have = Counter(rack)
    lexicon = frozenset(words)
    found: dict[tuple[Tile, ...], int] = {}
    for dr, dc in ((0, 1), (1, 0)):
        for r0, c0 in itertools.product(range(layout.rows), range(layout.cols)):
            if (r0, c0) in board:
                continue
            r, c = r0 - dr, c0 - dc
            while (r, c) in board:  # the word may start with tiles on the board
                r, c = r - dr, c - dc
            first = (r + dr, c + dc)
            for k in range(1, len(rack) + 1):
                squares, placed = [], 0
                r, c = first
                while 0 <= r < layout.rows and 0 <= c < layout.cols and (
                        placed < k or (r, c) in board):
                    if (r, c) not in board:
                        placed += 1
                    squares.append((r, c))
                    r, c = r + dr, c + dc
                if placed < k:
                    break
                touching = any(s in board or (s[0] + dc, s[1] + dr) in board
                               or (s[0] - dc, s[1] - dr) in board for s in squares)
                if not touching and board:
                    continue
                free_class = "." if have[BLANK] else f"[{''.join(sorted(have))}]"
                regex = "".join(board[s][0] if s in board else free_class for s in squares)
                text = texts.get(len(squares), "")
                for word in re.findall(f"^{regex}$", text, re.MULTILINE):
                    need = Counter(w for w, s in zip(word, squares, strict=True)
                                   if s not in board)
                    short = sum(max(0, v - have[x]) for x, v in need.items())
                    if short > have[BLANK]:
                        continue
                    # Every way of covering the shortfall with blanks (and, with blanks to
                    # spare, of using them for letters the rack holds too).
                    free = [(s, w) for w, s in zip(word, squares, strict=True)
                            if s not in board]
                    for n_blank in range(have[BLANK] + 1):
                        for which in itertools.combinations(range(len(free)), n_blank):
                            real = Counter(w for i, (_, w) in enumerate(free) if i not in which)
                            if any(have[x] < v for x, v in real.items()):
                                continue
                            tiles = tuple(sorted(Tile(s[0], s[1], w, i in which)
                                                 for i, (s, w) in enumerate(free)))
                            score = _referee(layout, board, tiles, lexicon, letters)
                            if score is not None:
                                found[tiles] = score
    return found


def _midgame(seed: int, turns: int) -> Position:
    layout, letters, lexicon = _real()
    rng = random.Random(seed)
    bag = [t for t, n in letters.counts.items() for _ in range(n) if t != BLANK]
    position = Position.empty(layout)
    for _ in range(turns):
        move = best_move(position, _draw(rng, bag, 7), lexicon, letters)
        assert move is not None
        position = position.play(move)
    return position


@pytest.mark.parametrize(("seed", "rack"), [(5, "RETAINS"), (6, "QU*ZEST")])
def test_midgame_moves_on_the_real_board(seed: int, rack: str) -> None:
    layout, letters, lexicon = _real()
    position = _midgame(seed, 6)
    moves = generate_moves(position, rack, lexicon, letters)
    plays = _as_plays(moves)
    words = frozenset(_real_words())
    board = _board_of(position)
    # Every play is legal and scores what it claims, by both checkers.
    for tiles, score in plays.items():
        assert _referee(layout, board, tiles, words, letters) == score, tiles
    for move in moves[:: max(1, len(moves) // 50)]:
        assert check_play(position, move.tiles, rack, lexicon, letters)[0] == move.score
    best = best_move(position, rack, lexicon, letters)
    assert best is not None and (best.tiles, best.score) == _expected_best(plays)
    if BLANK not in rack:
        # Nothing is missed: the words' side finds the same plays.
        assert plays == _pattern_search(position, rack, _real_words(), letters)


def test_the_opening_bingo() -> None:
    layout, letters, lexicon = _real()
    best = best_move(Position.empty(layout), "RETAINS", lexicon, letters)
    assert best is not None
    assert len(best.tiles) == 7
    assert best.score == check_play(Position.empty(layout), best.tiles, "RETAINS", lexicon,
                                    letters)[0]
    assert best.score >= 50 + 2 * 7


def test_wire_round_trip() -> None:
    position = Position.empty(SEVEN).play(
        Move((Tile(3, 2, "R"), Tile(3, 3, "A", True), Tile(3, 4, "T")), 0))
    gamestate, blanks = position.to_wire()
    assert gamestate[3][2:5] == ["R", "*", "T"]
    assert blanks == [{"row": 3, "col": 3, "letter": "A"}]
    again = Position.from_wire(SEVEN, gamestate, blanks)
    assert again.letters == position.letters and again.blanks == position.blanks
    lower = [[square.lower() if square == "A" else square for square in row]
             for row in gamestate]
    lower[3][3] = "a"
    assert Position.from_wire(SEVEN, lower).blanks[3][3]
    with pytest.raises(ValueError, match="rows"):
        Position.from_wire(SEVEN, gamestate[:-1])
    with pytest.raises(ValueError, match="not a letter"):
        Position.from_wire(SEVEN, [[*row[:-1], "AB"] for row in gamestate])
    move = Move((Tile(2, 3, "E", True), Tile(4, 3, "T")), 5)
    assert json.loads(json.dumps(move.to_wire())) == {"type": "PLAY", "playtiles": [
        {"row": 2, "col": 3, "tile": "*", "letter": "E"}, {"row": 4, "col": 3, "tile": "T"}]}


def test_asset_parsers() -> None:
    layout = BoardLayout.from_json((ASSETS / "board-standard.json").read_bytes())
    assert (layout.rows, layout.cols, layout.start) == (15, 15, (7, 7))
    assert layout.word_multiplier(0, 0) == 3 and layout.letter_multiplier(1, 5) == 3
    letters = LetterSet.from_json((ASSETS / "letters-english.json").read_bytes())
    assert (letters.rack, letters.bingo, letters.value("Z"), letters.value(BLANK)) == (
        7, 50, 10, 0)
    assert len(letters.alphabet) == 26 and sum(letters.counts.values()) == 100
    for bad in (b"[]", b"{", b'{"squares": [["XX"]]}', b'{"squares": [["", ""], [""]]}',
                b'{"squares": [[""]], "start": {"row": 3, "col": 0}}'):
        with pytest.raises(ValueError, match="gameboard"):
            BoardLayout.from_json(bad)
    for bad in (b"{}", b'{"tiles": [{"letter": "AB", "count": 1, "points": 1}]}',
                b'{"tiles": [{"letter": "A", "count": "1", "points": 1}]}'):
        with pytest.raises(ValueError, match="letters"):
            LetterSet.from_json(bad)

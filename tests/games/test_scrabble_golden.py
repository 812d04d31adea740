"""A golden playthrough of Scrabble with the real assets (as OpenSpiel's playthrough files).

``tests/golden/scrabble/seed-11-two-players.txt`` is the transcript of a two-player game
started with ``random.Random(11)`` in which each seat makes the best-scoring play that a
small deterministic search below finds (words from the rack through one tile on the board),
else exchanges its whole rack, else passes.  A change of the rules, the scoring, the bag or
the wire format shows up as a diff against it.  To accept a deliberate change, run the test
with ``MERKNERA_REGENERATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Iterator
from itertools import combinations

from merknera.games.base import IllegalMoveError, Termination
from merknera.games.scrabble import (
    BLANK,
    EMPTY,
    Ending,
    Exchange,
    Lexicon,
    Pass,
    Placement,
    Play,
    ScrabbleMove,
    ScrabbleState,
    render,
    score_play,
)
from tests.golden import GOLDEN_DIR, check_golden
from tests.scrabble_support import GAME

GOLDEN = GOLDEN_DIR / "scrabble" / "seed-11-two-players.txt"
PLAYERS = ("alice", "bob")
SEED = 11
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def anagrams(lexicon: Lexicon) -> dict[str, tuple[str, ...]]:
    """Words by their sorted letters, words of up to 8 letters (a rack and one board tile)."""
    index: dict[str, list[str]] = defaultdict(list)
    for word in sorted(lexicon.words):
        if len(word) <= 8:
            index["".join(sorted(word))].append(word)
    return {key: tuple(words) for key, words in index.items()}


ANAGRAMS = anagrams(GAME.lexicon)


def sub_racks(rack: str) -> Iterator[str]:
    """Every distinct sub-multiset of ``rack``, as sorted strings, shortest first."""
    letters = "".join(sorted(rack))
    for size in range(1, len(letters) + 1):
        yield from sorted({"".join(combo) for combo in combinations(letters, size)})


def candidates(state: ScrabbleState, rack: str, blanks: int) -> Iterator[Play]:
    """Plays of one word: through the start square at first, later through one board tile.

    With ``blanks``, one tile of each sub-rack is a blank standing for any letter.
    """
    cols, rows = GAME.layout.cols, GAME.layout.rows
    board = state.board
    subs = list(sub_racks(rack))
    if blanks:
        subs = [sub + letter.lower() for sub in ["", *subs] for letter in LETTERS]
    squares: dict[str, list[tuple[int, int]]] = defaultdict(list)
    if board[GAME.layout.start_index] == EMPTY:
        squares[""].append(GAME.layout.start)
    else:
        for i, cell in enumerate(board):
            if cell != EMPTY:
                squares[cell.upper()].append(divmod(i, cols))
    for letter, where in sorted(squares.items()):
        for sub in subs:
            for word in ANAGRAMS.get("".join(sorted(sub.upper() + letter)), ()):
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


def choose(state: ScrabbleState, seat: int) -> ScrabbleMove:
    """The best-scoring play found (the first found among equals), else exchange or pass."""
    rack = state.racks[seat]
    plain = rack.replace(BLANK, "")
    for blanks in (0, 1) if BLANK in rack else (0,):
        best: tuple[int, Play] | None = None
        for play in candidates(state, plain, blanks):
            try:
                scored = score_play(GAME.layout, GAME.tiles, GAME.lexicon, state.board, rack,
                                    play.placements)
            except IllegalMoveError:
                continue
            if best is None or scored.score > best[0]:
                best = (scored.score, play)
        if best is not None:
            return best[1]
    if len(state.bag) >= GAME.tiles.rack:
        return Exchange(rack)
    return Pass()


def playthrough(seed: int) -> tuple[str, ScrabbleState]:
    """The transcript of the game played by :func:`choose` from ``random.Random(seed)``."""
    state = GAME.new({}, PLAYERS, random.Random(seed))
    cols = GAME.layout.cols
    lines = [
        f"game: {GAME.mnemonic} ({GAME.name}), seats: 2, seed: {seed}",
        "policy: the best-scoring one-word play through one tile, else EXCHANGE all, else PASS",
        f"bag: {state.bag}",
        f"racks: {' '.join(state.racks)}",
    ]
    while (seat := GAME.to_move(state)) is not None:
        move = choose(state, seat)
        wire = json.dumps(GAME.move_to_wire(move))
        lines += [
            "",
            f"turn {state.turn + 1}: seat {seat} ({state.players[seat]}), "
            f"rack {state.racks[seat]}",
            f"move: {wire}",
            f"      {GAME.describe_move(state, seat, move)}",
        ]
        state = GAME.apply(state, seat, move)
        scores = ", ".join(f"{name} {points}" for name, points in zip(
            state.players, state.scores, strict=True))
        lines += [f"scores: {scores}; bag: {len(state.bag)}", render(state.board, cols)]
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.ranks is not None
    lines += [
        "",
        f"termination: {outcome.termination.value} ({state.ending and state.ending.value})",
        f"adjustments: {' '.join(map(str, state.adjustments))}",
        f"ranks: {' '.join(map(str, outcome.ranks))}",
        f"detail: {outcome.detail}",
        f"gamestate: {json.dumps(GAME.state_to_json(state))}",
    ]
    return "\n".join(lines) + "\n", state


TRANSCRIPT, FINAL = playthrough(SEED)


def test_seed_11_playthrough_matches_the_golden_file() -> None:
    check_golden(GOLDEN, TRANSCRIPT)


def test_the_golden_game_is_a_real_game() -> None:
    """It ends by the rules, with real words on the board and every tile accounted for."""
    outcome = GAME.outcome(FINAL)
    assert outcome is not None
    assert outcome.termination is Termination.NORMAL
    assert FINAL.ending in (Ending.OUT, Ending.SCORELESS)
    assert FINAL.turn <= GAME.max_moves
    assert sum(cell != EMPTY for cell in FINAL.board) >= 40
    assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(FINAL)))) == FINAL
    # Every across and down run of two or more tiles on the final board is a word.
    cols = GAME.layout.cols
    lines = [FINAL.board[i:i + cols] for i in range(0, len(FINAL.board), cols)]
    lines += ["".join(line[c] for line in lines) for c in range(cols)]
    runs = [run.upper() for line in lines for run in line.split(EMPTY) if len(run) > 1]
    assert runs
    assert all(run in GAME.lexicon for run in runs), [r for r in runs if r not in GAME.lexicon]


def test_replaying_the_recorded_moves_gives_the_recorded_game() -> None:
    """The moves in the golden file, parsed as a bot's replies, replay to the final state."""
    text = GOLDEN.read_text(encoding="utf-8")
    state = GAME.new({}, PLAYERS, random.Random(SEED))
    moves = [line.removeprefix("move: ") for line in text.splitlines()
             if line.startswith("move: ")]
    assert moves, "the golden file records no move"
    for wire in moves:
        seat = GAME.to_move(state)
        assert seat is not None
        state = GAME.apply(state, seat, GAME.parse_move(json.loads(wire)))
    assert GAME.to_move(state) is None
    assert f"gamestate: {json.dumps(GAME.state_to_json(state))}" in text
    assert state == FINAL


def test_the_same_seed_and_moves_give_the_same_game() -> None:
    again, final = playthrough(SEED)
    assert again == TRANSCRIPT
    assert final == FINAL

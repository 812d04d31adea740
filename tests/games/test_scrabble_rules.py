"""Scrabble's rules: what a play must be, legal moves, and fuzzing the referee with plays
(merknera/games/scrabble/).

The tables list what the referee refuses and why, word for word: a bot author reads these
messages in ``Scrabble.Error``.  The bot's reply on the wire is in test_scrabble_wire.py, the
state (new games, the bag, JSON, assets) in test_scrabble_state.py.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from itertools import product

import pytest

from merknera.games.base import IllegalMoveError, InvalidMoveError, Termination
from merknera.games.scrabble import (
    EMPTY,
    Ending,
    Exchange,
    Pass,
    Placement,
    Play,
    Scrabble,
    ScrabbleMove,
    ScrabbleState,
    move_bound,
    score_play,
)
from tests.support.golden import golden_played
from tests.support.scrabble import (
    BLANK_E,
    EMPTY_BOARD,
    FILES,
    GAME,
    HOUSE,
    OVER,
    PLAYERS,
    SMALL_BAG,
    tiles,
)

# -- illegal and legal plays ----------------------------------------------------------------------

ILLEGAL: list[tuple[str, ScrabbleState, int, ScrabbleMove, str]] = [
    ("tile not in the rack", HOUSE, 0, tiles("H9=Q"),
     "the tile Q (for H9) is not in your rack AEIRST*"),
    ("two of a tile held once", HOUSE, 0, tiles("M7=E", "M9=E"),
     "the play needs 2 E tiles but your rack AEIRST* holds only 1"),
    ("two blanks, one held", HOUSE, 0, tiles("H9=a", "H10=b"),
     "the play needs 2 blanks but your rack AEIRST* holds only 1"),
    ("a blank not held", replace(HOUSE, racks=("AEIRSTU", "QZ")), 0, tiles("H9=a"),
     "a blank (for H9) is not in your rack AEIRSTU"),
    ("occupied square", HOUSE, 0, tiles("H8=S"),
     "H8 (row 7, col 7) is already taken by H"),
    ("square occupied by a blank", BLANK_E, 0, tiles("L8=S", "M8=S"),
     "L8 (row 7, col 11) is already taken by a blank standing for E"),
    ("not in one line", HOUSE, 0, tiles("H9=A", "I10=T"),
     "the tiles are not in one row or one column: H9 and I10"),
    ("not in one line: an L", HOUSE, 0, tiles("H9=A", "H10=T", "I9=E"),
     "the tiles are not in one row or one column: H9, H10 and I9"),
    ("a gap in a row", HOUSE, 0, tiles("H9=A", "J9=T"),
     "there is a gap at I9 (row 8, col 8) between the tiles placed"),
    ("a gap in a column", HOUSE, 0, tiles("M6=A", "M9=T"),
     "there is a gap at M7 (row 6, col 12) between the tiles placed"),
    ("first play misses the centre", EMPTY_BOARD, 0, tiles("A1=A", "B1=T"),
     "the first play must cover the start square H8 (row 7, col 7)"),
    ("first play of one tile", EMPTY_BOARD, 0, tiles("H8=A"),
     "the first play must place at least two tiles"),
    ("not connected", HOUSE, 0, tiles("A1=A", "B1=T"),
     "the play does not touch any tile already on the board"),
    ("a lone tile touching nothing", HOUSE, 0, tiles("A1=A"),
     "the play does not touch any tile already on the board"),
    ("main word not in the dictionary", HOUSE, 0, tiles("M8=A"),
     "the word HOUSEA (across from H8) is not in the dictionary"),
    ("a word through a tile not in the dictionary", HOUSE, 0, tiles("L9=A", "L10=I"),
     "the word EAI (down from L8) is not in the dictionary"),
    ("cross word not in the dictionary", HOUSE, 0, tiles("H9=I", "I9=T"),
     "the cross word OT (down from I8) is not in the dictionary"),
    ("a lone tile's word", HOUSE, 0, tiles("I9=T"),
     "the word OT (down from I8) is not in the dictionary"),
    ("exchange with six tiles in the bag", SMALL_BAG, 0, Exchange("Q"),
     "there are only 6 tiles in the bag; exchanging needs at least 7"),
    ("exchange a tile not held", HOUSE, 0, Exchange("AQ"),
     "the tile Q is not in your rack AEIRST*"),
    ("exchange two of a tile held once", HOUSE, 0, Exchange("EE"),
     "the exchange needs 2 E tiles but your rack AEIRST* holds only 1"),
    ("exchange no tiles", HOUSE, 0, Exchange(""), "an exchange must return at least one tile"),
    ("exchange eight tiles", HOUSE, 0, Exchange("AEIRST**"),
     "the exchange needs 2 blanks but your rack AEIRST* holds only 1"),
    ("play after the end", OVER, 0, tiles("M8=S"),
     "the game is over (6 consecutive scoreless turns; final scores: alice 13, bob -48); "
     "no more moves"),
    ("pass after the end", OVER, 1, Pass(),
     "the game is over (6 consecutive scoreless turns; final scores: alice 13, bob -48); "
     "no more moves"),
    ("out of turn", HOUSE, 1, tiles("M8=S"), "it is seat 0's turn (alice), not seat 1's (bob)"),
    ("pass out of turn", HOUSE, 1, Pass(), "it is seat 0's turn (alice), not seat 1's (bob)"),
    ("no such seat", HOUSE, 5, Pass(), "it is seat 0's turn (alice), not seat 5's (nobody)"),
    ("off the board", HOUSE, 0, Play((Placement(15, 0, "A"),)),
     "row 15, col 0 is not on the 15x15 board"),
    ("two tiles on one square", HOUSE, 0, tiles("H9=A", "H9=T"),
     "two tiles are placed on H9 (row 8, col 7)"),
    ("no tiles", HOUSE, 0, Play(()), "a play must place at least one tile"),
]


@pytest.mark.parametrize(("state", "seat", "move", "message"), [row[1:] for row in ILLEGAL],
                         ids=[row[0] for row in ILLEGAL])
def test_illegal_moves_say_why(state: ScrabbleState, seat: int, move: ScrabbleMove,
                               message: str) -> None:
    with pytest.raises(IllegalMoveError) as caught:
        GAME.apply(state, seat, move)
    assert str(caught.value) == message
    assert not isinstance(caught.value, InvalidMoveError)


def test_the_same_positions_accept_legal_plays() -> None:
    # HOUSES: H4 + O1 + U1 + S1 + E1 + S1 = 9
    assert GAME.apply(HOUSE, 0, tiles("M8=S")).scores == (18 + 9, 0)
    # TOE down I7-I9: T1 x2 (I7 DL) + O1 (old) + E1 x2 (I9 DL) = 5
    assert GAME.apply(HOUSE, 0, tiles("I7=T", "I9=E")).scores == (18 + 5, 0)
    # AT over the centre: (A1 + T1) x2 = 4
    assert GAME.apply(EMPTY_BOARD, 0, tiles("G8=A", "H8=T")).scores == (4, 0)
    # HOUSeS: H4 + O1 + U1 + S1 + blank 0 + S1 = 8
    assert GAME.apply(BLANK_E, 0, tiles("M8=S")).scores == (18 + 8, 0)


# -- legal moves ----------------------------------------------------------------------------------


def test_legal_moves_list_pass_and_one_tile_exchanges() -> None:
    state = replace(HOUSE, racks=("EEA*QEA", "QZ"))
    assert list(GAME.legal_moves(state, 0)) == [
        Pass(), Exchange("*"), Exchange("A"), Exchange("E"), Exchange("Q")]
    assert list(GAME.legal_moves(state, 1)) == []
    assert list(GAME.legal_moves(SMALL_BAG, 0)) == [Pass()]
    assert list(GAME.legal_moves(OVER, 0)) == []
    for move in GAME.legal_moves(state, 0):
        GAME.apply(state, 0, move)


def test_games_of_listed_moves_end_within_max_moves() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        state = GAME.new({}, PLAYERS[: 2 + seed % 3], rng)
        moves = 0
        while (seat := GAME.to_move(state)) is not None:
            legal = GAME.legal_moves(state, seat)
            assert legal
            state = GAME.apply(state, seat, rng.choice(list(legal)))
            moves += 1
        assert moves == 6 <= GAME.max_moves
        assert state.ending is Ending.SCORELESS
        assert GAME.outcome(state) is not None


def test_max_moves_is_six_per_tile_plus_six() -> None:
    assert Scrabble.max_moves == GAME.max_moves == move_bound(100) == 606
    letters = FILES["letters"].replace(b'"count": 12', b'"count": 2')  # 90 tiles: 10 fewer E
    assert Scrabble().with_assets({**FILES, "letters": letters}).max_moves == 6 * 91


# -- robustness: whatever a bot sends, the referee answers with a move error or a state ----------


ALPHABET = "AEST"
PERMISSIVE = Scrabble().with_assets({**FILES, "dictionary": "\n".join(
    "".join(letters) for size in range(2, 9) for letters in product(ALPHABET, repeat=size)
).encode()})
"""Every string of 2-8 letters A, E, S and T is a word: most plays on a board of those
letters are legal, so the fuzzing below reaches scoring and the end of the game."""


def random_board(rng: random.Random) -> str:
    """A board with a few random runs of letters, usually through the centre."""
    cells = [EMPTY] * 225
    for _ in range(rng.randrange(0, 5)):
        row, col, length = rng.randrange(15), rng.randrange(15), rng.randrange(2, 6)
        across = rng.random() < 0.5
        for i in range(length):
            r, c = (row, col + i) if across else (row + i, col)
            if r < 15 and c < 15:
                cells[r * 15 + c] = rng.choice(ALPHABET + "e")
    if rng.random() < 0.8:
        cells[7 * 15 + 7] = "A"
    return "".join(cells)


def random_play(rng: random.Random, board: str, rack: str) -> Play:
    """Tiles on a line, usually starting next to a tile on the board (now and then with a
    step aside or off the board) or scattered; usually from the rack, now and then not."""
    tiles_ = list(rack + "Q") if rng.random() < 0.1 else list(rack)
    rng.shuffle(tiles_)
    tiles_ = tiles_[:rng.randrange(1, len(tiles_) + 1)] if tiles_ else ["Q"]
    taken = [i for i, cell in enumerate(board) if cell != EMPTY]
    if taken and rng.random() < 0.8:
        row, col = divmod(rng.choice(taken), 15)
        row, col = row + rng.randrange(-2, 2), col + rng.randrange(-2, 2)
    else:
        row, col = rng.randrange(15), rng.randrange(15)
    shape = rng.choice(("across", "down", "across", "down", "scattered"))
    placements = []
    for i, tile in enumerate(tiles_):
        step = i + (rng.random() < 0.05)
        if shape == "across":
            r, c = row, col + step
        elif shape == "down":
            r, c = row + step, col
        else:
            r, c = rng.randrange(-1, 16), rng.randrange(-1, 16)
        letter = rng.choice(ALPHABET) if tile == "*" else tile
        placements.append(Placement(r, c, letter, blank=tile == "*"))
    return Play(tuple(placements))


@pytest.mark.parametrize("game", [PERMISSIVE, GAME], ids=["permissive", "real"])
def test_random_plays_are_refused_or_applied_never_crash(game: Scrabble) -> None:
    rng = random.Random(2024)
    outcomes: Counter[str] = Counter()
    for _ in range(3000):
        rack = "".join(rng.choice(ALPHABET + "*") for _ in range(rng.randrange(1, 8)))
        bag = "E" * rng.choice((0, 0, 3, 20))
        state = replace(HOUSE, board=random_board(rng), racks=(rack, "QZ"), bag=bag)
        move = random_play(rng, state.board, rack)
        try:
            after = game.apply(state, 0, move)
        except IllegalMoveError as exc:
            outcomes[str(exc).split()[1]] += 1
            continue
        outcomes["applied"] += 1
        placed = len(move.placements)
        assert sum(cell != EMPTY for cell in after.board) == sum(
            cell != EMPTY for cell in state.board) + placed
        drawn = state.bag[:len(state.bag) - len(after.bag)]
        assert len(after.racks[0]) == min(7, len(rack) - placed + len(state.bag))
        assert Counter(after.racks[0]) + Counter(p.tile for p in move.placements) == Counter(
            rack) + Counter(drawn)
        if after.ending is None:
            assert after.scores[0] >= state.scores[0]
        else:
            assert after.ending is Ending.OUT
            assert after.adjustments == (20, -20)  # bob's Q and Z
    assert outcomes["applied"] > (300 if game is PERMISSIVE else 0), outcomes


def recount(game: Scrabble, before: str, after: str) -> tuple[set[str], int]:
    """The words through the new tiles and their points, counted the slow, obvious way."""
    new = {i for i in range(225) if before[i] != after[i]}
    runs: set[tuple[int, ...]] = set()
    for index in new:
        for step in (1, 15):
            run = [index]
            while run[0] - step >= 0 and after[run[0] - step] != EMPTY and (
                    step == 15 or run[0] % 15 > 0):
                run.insert(0, run[0] - step)
            while run[-1] + step < 225 and after[run[-1] + step] != EMPTY and (
                    step == 15 or run[-1] % 15 < 14):
                run.append(run[-1] + step)
            if len(run) > 1:
                runs.add(tuple(run))
    total = 0
    for word in runs:
        points, multiplier = 0, 1
        for square in word:
            kind = game.layout.squares[square // 15][square % 15] if square in new else ""
            value = 0 if after[square].islower() else game.tiles.points[after[square]]
            points += value * {"DL": 2, "TL": 3}.get(kind, 1)
            multiplier *= {"DW": 2, "TW": 3}.get(kind, 1)
        total += points * multiplier
    if len(new) == 7:
        total += 50
    return {"".join(after[i] for i in run).upper() for run in runs}, total


def test_accepted_plays_score_as_a_plain_recount_says() -> None:
    rng = random.Random(5)
    checked = 0
    for _ in range(3000):
        rack = "".join(rng.choice(ALPHABET + "*") for _ in range(rng.randrange(1, 8)))
        state = replace(HOUSE, board=random_board(rng), racks=(rack, "QZ"), bag="E" * 20)
        move = random_play(rng, state.board, rack)
        try:
            after = PERMISSIVE.apply(state, 0, move)
        except IllegalMoveError:
            continue
        played = score_play(PERMISSIVE.layout, PERMISSIVE.tiles, PERMISSIVE.lexicon,
                            state.board, rack, move.placements)
        words, total = recount(PERMISSIVE, state.board, after.board)
        assert {word.text for word in played.words} == words
        assert played.score == total == after.scores[0] - state.scores[0]
        checked += 1
    assert checked > 300


def test_the_golden_game_is_a_real_game() -> None:
    """The golden game (tests/golden/scrabble/) ends by the rules, with real words on the
    board and every tile accounted for."""
    final = golden_played(GAME.mnemonic).final
    outcome = GAME.outcome(final)
    assert outcome is not None
    assert outcome.termination is Termination.NORMAL
    assert final.ending in (Ending.OUT, Ending.SCORELESS)
    assert final.turn <= GAME.max_moves
    assert sum(cell != EMPTY for cell in final.board) >= 40
    assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(final)))) == final
    # Every across and down run of two or more tiles on the final board is a word.
    cols = GAME.layout.cols
    lines = [final.board[i:i + cols] for i in range(0, len(final.board), cols)]
    lines += ["".join(line[c] for line in lines) for c in range(cols)]
    runs = [run.upper() for line in lines for run in line.split(EMPTY) if len(run) > 1]
    assert runs
    assert all(run in GAME.lexicon for run in runs), [r for r in runs if r not in GAME.lexicon]

"""Scoring a play and the end of a game (merknera/games/scrabble/scoring.py, game.py).

Every expected score is worked out by hand in the row's comment, from the standard board:
H8 (the centre) is a DW; H4 and L8 are DL; J6 is a TL; E5 and K5 are DW; H15 is a TW.
Positions are set up by writing words straight onto the board (lower case for a blank), so
a row shows only the play being scored.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

import pytest

from merknera.games.base import Termination
from merknera.games.scrabble import (
    EMPTY,
    SCORELESS_TURNS,
    Ending,
    Pass,
    Placement,
    Play,
    Scrabble,
    ScrabbleState,
    score_play,
)
from tests.support.scrabble import ACROSS, DOWN, FILES, PLAYERS, at
from tests.support.scrabble import GAME as REAL


def small(*words: str) -> Scrabble:
    """The standard board and tiles with a dictionary of just ``words``."""
    return Scrabble().with_assets({**FILES, "dictionary": "\n".join(words).encode()})


def squares(square: str, across: bool, length: int) -> list[tuple[int, int]]:
    row, col = at(square)
    return [(row, col + i) if across else (row + i, col) for i in range(length)]


def position(*words: tuple[str, bool, str], racks: tuple[str, ...] = ("", ""), bag: str = "",
             scores: tuple[int, ...] | None = None) -> ScrabbleState:
    """A state with ``words`` (square, across, letters) written on the board."""
    cells = [EMPTY] * 225
    for square, across, letters in words:
        for (row, col), letter in zip(squares(square, across, len(letters)), letters,
                                      strict=True):
            cells[row * 15 + col] = letter
    seats = len(racks)
    return ScrabbleState(PLAYERS[:seats], "".join(cells), racks, bag,
                         scores or (0,) * seats, bag_seed=1)


def play(state: ScrabbleState, square: str, across: bool, letters: str) -> Play:
    """The tiles of ``letters`` laid from ``square`` on the squares still empty."""
    placements = [
        Placement(row, col, letter.upper(), blank=letter.islower())
        for (row, col), letter in zip(squares(square, across, len(letters)), letters, strict=True)
        if state.board[row * 15 + col] == EMPTY]
    return Play(tuple(placements))


@dataclass(frozen=True)
class Case:
    name: str
    setup: tuple[tuple[str, bool, str], ...]
    rack: str
    move: tuple[str, bool, str]
    words: tuple[tuple[str, int], ...]
    score: int
    game: Scrabble = REAL


CASES = [
    # C3 + A1 + T1 = 5, x2 (H8 DW) = 10
    Case("first play over the centre DW", (), "CAT", ("G8", ACROSS, "CAT"),
         (("CAT", 10),), 10),
    # Z10 x2 (H4 DL) = 20, + E1 + B3 + R1 + A1 = 26, x2 (H8 DW) = 52
    Case("DL and DW in one word", (), "ZEBRA", ("H4", DOWN, "ZEBRA"), (("ZEBRA", 52),), 52),
    # HIS: H4 x3 (J6 TL) = 12, + I1 + S1 = 14.  CATS: C3 + A1 + T1 + S1 = 6, the H8 DW under
    # the old A is spent.  14 + 6 = 20
    Case("TL in the main word, a cross word without the spent DW", (("G8", ACROSS, "CAT"),),
         "HIS", ("J6", DOWN, "HIS"), (("HIS", 14), ("CATS", 6)), 20),
    # C3 + A1 + T1 + S1 = 6: the DW under A is not counted again
    Case("a premium already covered is not counted again", (("G8", ACROSS, "CAT"),), "S",
         ("G8", ACROSS, "CATS"), (("CATS", 6),), 6),
    # B3 + A1 + L1 + L1 (H12 DL, covered) + O1 + O1 + N1 + S1 = 10, x3 (H15 TW) = 30
    Case("TW under the new tile, a DL already covered", (("H8", DOWN, "BALLOON"),), "S",
         ("H8", DOWN, "BALLOONS"), (("BALLOONS", 30),), 30),
    # C3 (E5 DW) + H4 + A1 + R1 (old) + M3 + E1 + D2 (K5 DW) = 15, x2 x2 = 60
    Case("two word premiums multiply", (("H5", DOWN, "ROAD"),), "CHAMED",
         ("E5", ACROSS, "CHARMED"), (("CHARMED", 60),), 60),
    # TO: T1 + O1 x2 (I9 DL) = 3.  AT (H8-H9): A1 (old, DW spent) + T1 = 2.
    # TO (I8-I9): T1 (old) + O1 x2 (I9 DL, new) = 3.  3 + 2 + 3 = 8
    Case("cross words: the DL under a new tile counts in both its words",
         (("G8", ACROSS, "CAT"),), "TO", ("H9", ACROSS, "TO"),
         (("TO", 3), ("AT", 2), ("TO", 3)), 8),
    # ABE: A1 + B3 + E1 = 5, x2 (E5 DW) = 10.  CDE: C3 + D2 + E1 = 6, x2 (E5 DW) = 12.  22
    Case("a DW under a lone new tile doubles both of its words",
         (("C5", ACROSS, "AB"), ("E3", DOWN, "CD"), ("H8", ACROSS, "XY")), "E",
         ("E5", ACROSS, "E"), (("ABE", 10), ("CDE", 12)), 22, small("ABE", "CDE")),
    # blank C0 + A1 + T1 = 2, x2 (H8 DW) = 4
    Case("a blank is worth nothing", (), "*AT", ("G8", ACROSS, "cAT"), (("CAT", 4),), 4),
    # blank Z0 x2 (H4 DL) = 0, + E1 + B3 + R1 + A1 = 6, x2 (H8 DW) = 12
    Case("a blank on a DL is still worth nothing", (), "*EBRA", ("H4", DOWN, "zEBRA"),
         (("ZEBRA", 12),), 12),
    # Z10 x2 (H4 DL) = 20, + E1 + B3 + R1 + blank A0 = 25, x2 (H8 DW under the blank) = 50
    Case("a word premium under a blank still multiplies", (), "ZEBR*", ("H4", DOWN, "ZEBRa"),
         (("ZEBRA", 50),), 50),
    # P3 (H8 DW) + L1 + A1 + Y4 + E1 x2 (L8 DL) + R1 + S1 = 13, x2 = 26, + 50 (bingo) = 76
    Case("a bingo: all seven tiles", (), "PLAYERS", ("H8", ACROSS, "PLAYERS"),
         (("PLAYERS", 26),), 76),
    # HOUSES: H4 + O1 + U1 + S1 + E1 (L8 DL, covered) + S1 = 9 (M8 is plain)
    Case("a lone tile extending a word", (("H8", ACROSS, "HOUSE"),), "S",
         ("H8", ACROSS, "HOUSES"), (("HOUSES", 9),), 9),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_scores(case: Case) -> None:
    game = case.game
    # Tiles in the bag, so that playing the whole rack does not end the game.
    state = position(*case.setup, racks=(case.rack, "QZ"), bag="E" * 10)
    move = play(state, *case.move)
    played = score_play(game.layout, game.tiles, game.lexicon, state.board, case.rack,
                        move.placements)
    assert tuple((word.text, word.score) for word in played.words) == case.words
    assert played.score == case.score
    assert played.bingo is (len(move.placements) == 7)
    assert played.rack == ""
    after = game.apply(state, 0, move)
    assert after.scores == (case.score, 0)
    assert after.racks == ("E" * 7, "QZ")  # refilled to a full rack
    assert after.scoreless == 0
    assert after.board == played.board
    assert game.to_move(after) == 1


def test_a_bingo_needs_a_full_rack_played() -> None:
    # Six of seven tiles: P3 (H8 DW) + L1 + A1 + Y4 + E1 x2 (L8 DL) + R1 = 12, x2 = 24, no bonus
    state = position(racks=("PLAYERQ", ""))
    played = score_play(REAL.layout, REAL.tiles, REAL.lexicon, state.board, "PLAYERQ",
                        play(state, "H8", ACROSS, "PLAYER").placements)
    assert (played.score, played.bingo, played.rack) == (24, False, "Q")


def test_the_bingo_bonus_and_rack_size_come_from_the_letters_file() -> None:
    letters = FILES["letters"].replace(b'"rack": 7', b'"rack": 3').replace(
        b'"bingo": 50', b'"bingo": 35')
    game = Scrabble().with_assets({**FILES, "letters": letters})
    assert (game.tiles.rack, game.tiles.bingo) == (3, 35)
    state = position(racks=("CAT", ""))
    # C3 + A1 + T1 = 5, x2 (H8 DW) = 10, + 35 for the three tiles of a full rack = 45
    after = game.apply(state, 0, play(state, "G8", ACROSS, "CAT"))
    assert after.scores == (45, 0)


def test_a_blank_shows_lower_case_on_the_board_and_upper_case_in_the_words() -> None:
    state = position(racks=("*AT", ""))
    after = REAL.apply(state, 0, play(state, "G8", ACROSS, "cAT"))
    assert after.board[7 * 15 + 6: 7 * 15 + 9] == "cAT"
    assert REAL.describe_move(state, 0, play(state, "G8", ACROSS, "cAT")) == (
        "PLAY cAT at G8 across for 4")


# -- the end of the game -----------------------------------------------------------------------


def test_going_out_with_the_bag_empty_ends_the_game_and_takes_the_others_racks() -> None:
    state = position(("H8", ACROSS, "HOUSE"), racks=("S", "QZ"), scores=(100, 120))
    after = REAL.apply(state, 0, play(state, "H8", ACROSS, "HOUSES"))
    # HOUSES = 9 (above).  Bob holds Q10 + Z10 = 20: alice 100 + 9 + 20 = 129, bob 120 - 20 = 100
    assert after.ending is Ending.OUT
    assert after.adjustments == (20, -20)
    assert after.scores == (129, 100)
    assert REAL.to_move(after) is None
    outcome = REAL.outcome(after)
    assert outcome is not None
    assert outcome.termination is Termination.NORMAL
    assert outcome.ranks == (0, 1)
    assert outcome.scores == (129, 100)
    assert outcome.detail == (
        "alice went out with the bag empty; final scores: alice 129, bob 100")
    assert REAL.standings(after) == (129, 100)


def test_going_out_among_three_players() -> None:
    state = position(("H8", ACROSS, "HOUSE"), racks=("X", "S", "AE*"), scores=(50, 60, 70))
    state = replace(state, turn=1)  # bob's turn
    after = REAL.apply(state, 1, play(state, "H8", ACROSS, "HOUSES"))
    # Bob: 60 + 9 + (X8 + A1 + E1 + blank 0 = 10) = 79; alice 50 - 8 = 42; carol 70 - 2 = 68
    assert after.adjustments == (-8, 10, -2)
    assert after.scores == (42, 79, 68)
    outcome = REAL.outcome(after)
    assert outcome is not None
    assert outcome.ranks == (2, 0, 1)
    assert outcome.detail.startswith("bob went out with the bag empty")


def test_playing_the_last_tiles_with_tiles_in_the_bag_draws_and_goes_on() -> None:
    state = position(("H8", ACROSS, "HOUSE"), racks=("S", "QZ"), bag="E")
    after = REAL.apply(state, 0, play(state, "H8", ACROSS, "HOUSES"))
    assert (after.racks, after.bag, after.ending) == (("E", "QZ"), "", None)
    assert REAL.outcome(after) is None


def test_six_scoreless_turns_end_the_game_and_each_rack_counts_against_its_owner() -> None:
    state = REAL.new({}, PLAYERS[:2], random.Random(3))
    values = [sum(REAL.tiles.points[tile] for tile in rack) for rack in state.racks]
    for turn in range(SCORELESS_TURNS):
        assert REAL.outcome(state) is None
        state = REAL.apply(state, turn % 2, Pass())
        assert state.scoreless == turn + 1
    assert state.ending is Ending.SCORELESS
    assert state.adjustments == (-values[0], -values[1])
    assert state.scores == (-values[0], -values[1])
    outcome = REAL.outcome(state)
    assert outcome is not None
    assert outcome.detail == (
        f"6 consecutive scoreless turns; final scores: alice {-values[0]}, bob {-values[1]}")


def test_a_zero_score_play_counts_as_scoreless_and_a_scoring_play_resets_the_count() -> None:
    # Two blanks as AT over the centre: (0 + 0) x2 = 0 points.
    state = replace(position(racks=("**", "QZ"), bag="E" * 10), scoreless=5)
    after = REAL.apply(state, 0, play(state, "H8", ACROSS, "at"))
    assert after.ending is Ending.SCORELESS
    # The rack is refilled before the end: alice loses her seven E (7), bob his Q + Z (20).
    assert after.racks == ("EEEEEEE", "QZ")
    assert after.scores == (0 - 7, 0 - 20)
    scoring = replace(position(racks=("AT", "QZ"), bag="E" * 10), scoreless=5)
    after = REAL.apply(scoring, 0, play(scoring, "H8", ACROSS, "AT"))
    assert (after.scores, after.scoreless, after.ending) == ((4, 0), 0, None)


def test_ties_share_a_rank() -> None:
    state = position(("H8", ACROSS, "HOUSE"), racks=("S", "E"), scores=(91, 101))
    after = REAL.apply(state, 0, play(state, "H8", ACROSS, "HOUSES"))
    # alice 91 + 9 + 1 = 101, bob 101 - 1 = 100
    assert after.scores == (101, 100)
    tie = position(("H8", ACROSS, "HOUSE"), racks=("S", "E"), scores=(90, 101))
    after = REAL.apply(tie, 0, play(tie, "H8", ACROSS, "HOUSES"))
    # alice 90 + 9 + 1 = 100, bob 101 - 1 = 100
    outcome = REAL.outcome(after)
    assert outcome is not None
    assert outcome.ranks == (0, 0)
    assert outcome.winners == ()

"""Kalaha's rules: the seed's worked cases exactly, the corners around them, and the bound.

The first six rows of ``CASES`` are the fixtures of ``Anna87/kalaha``'s ``GameIT``
(``src/test/resources/board/``), start board, move and expected response, number for number.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

import pytest

from merknera.games.base import IllegalMoveError, SeatResult, Termination
from merknera.games.kalaha import (
    LONGEST_QUIET_CHAIN,
    MAX_MOVES,
    TOTAL,
    Board,
    Kalaha,
    Sow,
    longest_quiet_chain,
)
from tests.support.golden import golden_played

GAME = Kalaha()
NEW = Board()
Z = (0,) * 6


@dataclass(frozen=True)
class Case:
    """From ``start`` the seat to move sows ``pit``; the board must then be ``after``."""

    name: str
    start: Board
    pit: int
    after: Board


CASES = [
    # should-play.json: a plain move; the turn passes.
    Case("should-play", NEW, 1,
         Board(((6, 0, 7, 7, 7, 7), (7, 6, 6, 6, 6, 6)), (1, 0), 1)),
    # extra-round-response.json: six stones from pit 0 end in the store; ONE again.
    Case("extra-round", NEW, 0,
         Board(((0, 7, 7, 7, 7, 7), (6,) * 6), (1, 0), 0)),
    # steal-stones-response.json: into empty pit 1, capturing TWO's pit 4 (opposite 5-1).
    Case("steal-stones", Board(((1, 0, 6, 6, 6, 6), (6,) * 6)), 0,
         Board(((0, 0, 6, 6, 6, 6), (6, 6, 6, 6, 0, 6)), (7, 0), 1)),
    # skip-opponent-kalaha-response.json: ten stones from pit 5 pass TWO's store unfed.
    Case("skip-opponent-kalaha", Board(((1, 1, 1, 1, 1, 10), (1,) * 6)), 5,
         Board(((2, 2, 2, 1, 1, 0), (2,) * 6), (1, 0), 1)),
    # steal-opponent-end-game-response.json: a capture empties TWO's row; ONE keeps its 20.
    Case("steal-opponent-end-game", Board(((5, 5, 5, 1, 0, 5), (0, 3, 0, 0, 0, 0)), (0, 30)), 3,
         Board((Z, Z), (24, 30), 0)),
    # end-game-response.json: ONE's last stone into its store ends it; TWO keeps its 3, and
    # nextPlayer stays ONE (the extra turn is not played).
    Case("end-game", Board(((0, 0, 0, 0, 0, 1), (0, 0, 0, 1, 1, 1))), 5,
         Board((Z, Z), (1, 3), 0)),
    # A capture with an empty opposite pit moves just the one stone to the store.
    Case("capture-empty-opposite", Board(((1, 0, 6, 6, 6, 6), (6, 6, 6, 6, 0, 6)), (0, 6)), 0,
         Board(((0, 0, 6, 6, 6, 6), (6, 6, 6, 6, 0, 6)), (1, 6), 1)),
    # TWO captures too: its pit 2 is opposite ONE's pit 3.
    Case("two-captures", Board(((6,) * 6, (0, 1, 0, 6, 6, 6)), (0, 0), 1), 1,
         Board(((6, 6, 6, 0, 6, 6), (0, 0, 0, 6, 6, 6)), (0, 7), 0)),
    # TWO skips ONE's store and lands in its own pit 2.
    Case("two-skips-one-kalaha", Board(((1,) * 6, (1, 1, 1, 1, 1, 10)), (0, 0), 1), 5,
         Board(((2,) * 6, (2, 2, 2, 1, 1, 0)), (0, 1), 0)),
    # 13 stones make a full lap: the last lands in the emptied starting pit and captures
    # the opposite pit (TWO's pit 5, which got a stone on the way).
    Case("13-stone-lap", Board(((13, 0, 0, 0, 0, 1), (1,) * 6)), 0,
         Board(((0, 1, 1, 1, 1, 2), (2, 2, 2, 2, 2, 0)), (4, 0), 1)),
    # 14 stones from pit 2: the lap refills the starting pit and ends in pit 3, which got a
    # stone in the first lap, so nothing is captured.
    Case("14-stone-lap", Board(((0, 0, 14, 0, 0, 0), (0, 0, 0, 0, 0, 1))), 2,
         Board(((1, 1, 1, 2, 1, 1), (1, 1, 1, 1, 1, 2)), (1, 0), 1)),
    # 19 stones from pit 5: the lap passes the own store twice.
    Case("19-stones-twice-past-the-store", Board(((0, 0, 0, 0, 0, 19), (1,) * 6)), 5,
         Board(((1,) * 6, (3, 3, 3, 3, 3, 2)), (2, 0), 1)),
    # Sowing empties the mover's own row: TWO sweeps its 8 and wins 18 to 11.
    Case("end-sweep", Board(((0, 0, 0, 0, 0, 3), (1,) * 6), (10, 10)), 5,
         Board((Z, Z), (11, 18), 0)),
    # Equal stores at the end: a draw (the seed would have said TWO).
    Case("draw", Board(((0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 1)), (35, 35)), 5,
         Board((Z, Z), (36, 36), 0)),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_worked_cases(case: Case) -> None:
    seat = case.start.next_seat
    after = GAME.apply(case.start, seat, Sow(case.pit))
    assert after == case.after
    # Sowing only moves stones.
    assert sum(map(sum, after.rows)) + sum(after.stores) == \
        sum(map(sum, case.start.rows)) + sum(case.start.stores)
    assert GAME.to_move(after) == (None if after.over else after.next_seat)


@pytest.mark.parametrize(
    ("name", "winner", "detail"),
    [("steal-opponent-end-game", 1, "ONE 24 - TWO 30"), ("end-game", 1, "ONE 1 - TWO 3"),
     ("end-sweep", 1, "ONE 11 - TWO 18"), ("draw", None, "ONE 36 - TWO 36")],
)
def test_outcomes(name: str, winner: int | None, detail: str) -> None:
    case = next(case for case in CASES if case.name == name)
    assert GAME.outcome(case.start) is None
    outcome = GAME.outcome(case.after)
    assert outcome is not None
    assert outcome.termination is Termination.NORMAL
    assert outcome.detail == detail
    assert outcome.scores == tuple(float(n) for n in case.after.stores)
    assert GAME.standings(case.after) == outcome.scores
    if winner is None:
        assert outcome.ranks == (0, 0)
        assert outcome.result_for(0) is outcome.result_for(1) is SeatResult.DRAW
    else:
        assert outcome.winners == (winner,)
        assert outcome.result_for(1 - winner) is SeatResult.LOSS


def test_a_win_for_one() -> None:
    board = Board(((0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 1)), (40, 30))
    outcome = GAME.outcome(GAME.apply(board, 0, Sow(5)))
    assert outcome is not None
    assert outcome.winners == (0,)
    assert outcome.detail == "ONE 41 - TWO 31"


def test_extra_turns_repeat_until_the_row_is_empty() -> None:
    board = Board(((0, 0, 0, 0, 2, 1), (1,) * 6))
    steps = [  # (seat, pit, ONE's row, ONE's store, next seat)
        (0, 5, (0, 0, 0, 0, 2, 0), 1, 0),
        (0, 4, (0, 0, 0, 0, 0, 1), 2, 0),
        (0, 5, Z, 3, 0),
    ]
    for seat, pit, row, store, after in steps:
        assert GAME.to_move(board) == seat
        board = GAME.apply(board, seat, Sow(pit))
        assert (board.rows[0], board.stores[0], board.next_seat) == (row, store, after)
    assert board.over and board.stores == (3, 6)
    assert GAME.to_move(board) is None


def test_legal_moves_are_the_non_empty_own_pits() -> None:
    board = Board(((0, 3, 0, 1, 0, 2), (4, 0, 0, 0, 0, 0)), (0, 0), 0)
    assert GAME.legal_moves(board, 0) == (Sow(1), Sow(3), Sow(5))
    assert GAME.legal_moves(board, 1) == ()
    board = Board(board.rows, board.stores, 1)
    assert GAME.legal_moves(board, 1) == (Sow(0),)
    assert GAME.legal_moves(Board((Z, Z), (36, 36)), 0) == ()
    assert GAME.legal_moves(NEW, 0) == tuple(Sow(pit) for pit in range(6))


@pytest.mark.parametrize(
    ("board", "seat", "move", "message"),
    [
        (Board(((6, 6, 6, 0, 6, 6), (6,) * 6)), 0, Sow(3), r"^pit 3 is empty$"),
        (NEW, 1, Sow(0), r"^it is ONE's turn, not TWO's$"),
        (Board(NEW.rows, NEW.stores, 1), 0, Sow(0), r"^it is TWO's turn, not ONE's$"),
        (Board((Z, Z), (36, 36)), 0, Sow(0), r"^the game is over; pit 0 cannot be played$"),
        (Board((Z, Z), (36, 36)), 1, Sow(2), r"^the game is over; pit 2 cannot be played$"),
        (NEW, 0, Sow(0, player=1),
         r'^the reply says "player": "TWO", but this is ONE\'s move$'),
        (NEW, 0, Sow(6), r"^pit 6 is not on the board \(0-5\)$"),
        (NEW, 0, Sow(-1), r"^pit -1 is not on the board \(0-5\)$"),
    ],
)
def test_illegal_moves(board: Board, seat: int, move: Sow, message: str) -> None:
    with pytest.raises(IllegalMoveError, match=message):
        GAME.apply(board, seat, move)


def test_a_matching_player_is_accepted() -> None:
    assert GAME.apply(NEW, 0, Sow(1, player=0)) == GAME.apply(NEW, 0, Sow(1))


@pytest.mark.parametrize(
    ("rows", "stores", "seat"),
    [
        (((6,) * 5, (6,) * 6), (0, 0), 0),           # five pits
        (((6,) * 6, (6,) * 6), (0, -1), 0),          # a negative store
        (((6,) * 6, (6, 6, 6, 6, 6, -6)), (0, 0), 0),  # a negative pit
        (((6,) * 6, (6,) * 6), (0, 0), 2),           # no seat 2
        (((6,) * 6, (6,) * 6), (0, 0), True),        # a bool is no seat
        (((6,) * 6, (6, 6, 6, 6, 6, True)), (0, 0), 0),  # a bool is no count
        ((Z, (6,) * 6), (0, 0), 0),                  # a row empty, the other not swept
    ],
)
def test_impossible_boards_are_refused(rows: tuple[tuple[int, ...], tuple[int, ...]],
                                       stores: tuple[int, int], seat: int) -> None:
    with pytest.raises(ValueError, match=r"Kalaha|impossible"):
        Board(rows, stores, seat)


def test_static_facts_and_new() -> None:
    assert (GAME.mnemonic, GAME.name, GAME.calls.prefix) == ("KALAHA", "Kalaha", "Kalaha")
    assert (GAME.min_seats, GAME.max_seats, GAME.assets) == (2, 2, ())
    board = GAME.new({}, ["a", "b"], random.Random(0))
    assert board == NEW == Board(((6,) * 6, (6,) * 6), (0, 0), 0)
    assert GAME.to_move(board) == 0 and GAME.outcome(board) is None
    assert GAME.standings(board) == (0.0, 0.0)
    with pytest.raises(ValueError, match="2 players"):
        GAME.new({}, ["a", "b", "c"], random.Random(0))


# -- the move bound ---------------------------------------------------------------------


def test_the_longest_quiet_chain_is_16_and_bounds_the_game() -> None:
    assert longest_quiet_chain() == LONGEST_QUIET_CHAIN == 16
    assert GAME.max_moves == MAX_MOVES == 72 * (1 + 2 * 16) == 2376


def test_a_16_move_quiet_chain_exists() -> None:
    """The search's answer holds under the real rules: from 5 4 3 2 1 1, ONE can play 16
    moves in a row that score nothing, and no more."""

    def longest(board: Board) -> int:
        best = 0
        for move in GAME.legal_moves(board, 0):
            after = GAME.apply(board, 0, move)
            if after.stores == board.stores:
                best = max(best, 1 + longest(Board(after.rows, after.stores, 0)))
        return best

    assert longest(Board(((5, 4, 3, 2, 1, 1), (0, 0, 0, 0, 0, 50)))) == 16


def _scored(before: Board, after: Board) -> bool:
    return sum(after.stores) > sum(before.stores)


@pytest.mark.parametrize("seed", range(40))
def test_random_games_keep_the_bound_and_conserve_stones(seed: int) -> None:
    rng = random.Random(seed)
    board = GAME.new({}, ["a", "b"], rng)
    plies, quiet = 0, [0, 0]
    while (seat := GAME.to_move(board)) is not None:
        before = board
        board = GAME.apply(board, seat, rng.choice(list(GAME.legal_moves(board, seat))))
        plies += 1
        assert sum(map(sum, board.rows)) + sum(board.stores) == TOTAL
        assert all(after >= was for after, was in zip(board.stores, before.stores, strict=True))
        if _scored(before, board):
            quiet = [0, 0]
        else:
            # A quiet move touched only the mover's row and passed the turn.
            assert board.rows[1 - seat] == before.rows[1 - seat]
            assert board.next_seat == 1 - seat
            quiet[seat] += 1
            assert quiet[seat] <= LONGEST_QUIET_CHAIN
    assert plies <= MAX_MOVES
    assert _scored(before, board), "the last move scored nothing"
    outcome = GAME.outcome(board)
    assert outcome is not None and sum(outcome.scores or ()) == TOTAL


def test_the_golden_game_is_long_and_shows_an_extra_turn() -> None:
    """The golden game (tests/golden/kalaha/) is worth keeping: more than ten moves, and an
    extra turn (a seat moving twice in a row)."""
    plies = golden_played(GAME.mnemonic).plies
    assert len(plies) > 10, "the golden file records too few moves"
    seats = [ply.seat for ply in plies]
    assert any(a == b for a, b in itertools.pairwise(seats))

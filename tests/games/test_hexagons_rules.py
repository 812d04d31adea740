"""Hexagons: claiming hexagons, extra turns, illegal moves and the end.

Positions are on the 5x4 board of research/seed-systems.md c.4 unless said otherwise::

      .   .   .         row 0: cols 0-2
    .   .   .   .       row 1: cols 0-3
      .   .   .         row 2
    .   .   .   .       row 3
      .   .   .         row 4

Its hexagon centres are (1,1), (1,2), (2,1), (3,1) and (3,2).
"""

from __future__ import annotations

import itertools
import random

import pytest

from merknera.games.base import IllegalMoveError, Termination
from merknera.games.hexagons import (
    Hexagons,
    HexagonsState,
    Line,
    Point,
    lattice,
    line_between,
    line_count,
)
from tests.support.golden import golden_played

GAME = Hexagons()
PLAYERS = ("amy", "bob")
AMY, BOB = 0, 1


def ln(r1: int, c1: int, r2: int, c2: int) -> Line:
    return line_between((r1, c1), (r2, c2))


def ring(r: int, c: int, rows: int = 5, cols: int = 4) -> tuple[Line, ...]:
    return lattice(rows, cols).rings[Point(r, c)]


def new(rows: int = 5, cols: int = 4) -> HexagonsState:
    return GAME.new({"rows": rows, "cols": cols}, PLAYERS, random.Random(0))


def play(state: HexagonsState, *lines: Line) -> HexagonsState:
    """Draw each line in turn, by whoever is to move."""
    for line in lines:
        seat = GAME.to_move(state)
        assert seat is not None, f"the game ended before {line}"
        state = GAME.apply(state, seat, line)
    return state


def interleave(first: tuple[Line, ...], second: tuple[Line, ...]) -> tuple[Line, ...]:
    return tuple(line for pair in zip(first, second, strict=True) for line in pair)


# Two centres at distance 2 whose rings share the line (2,0)-(2,1).
SHARED = ln(2, 0, 2, 1)
RING_11 = tuple(line for line in ring(1, 1) if line != SHARED)
RING_31 = tuple(line for line in ring(3, 1) if line != SHARED)


# -- players ------------------------------------------------------------------------


def test_the_game_is_for_two_named_players() -> None:
    assert GAME.new(GAME.default_settings, ["ann", "ann"], random.Random(0)).players == (
        "ann", "ann#2")
    with pytest.raises(ValueError, match="for 2 players, not 3"):
        GAME.new(GAME.default_settings, ["a", "b", "c"], random.Random(0))
    assert GAME.default_settings == {"rows": 9, "cols": 9}
    assert (GAME.mnemonic, GAME.name, GAME.calls.prefix) == ("HEXAGONS", "Hexagons", "Hexagons")
    assert (GAME.min_seats, GAME.max_seats, GAME.max_moves) == (2, 2, line_count(25, 25))


# -- claiming ------------------------------------------------------------------------


def test_six_ring_lines_claim_a_hexagon_and_the_claimer_moves_again() -> None:
    state = new()
    # Amy and Bob alternate on the ring of (1,1); no spoke is ever drawn.
    for i, line in enumerate(ring(1, 1)[:5]):
        assert GAME.to_move(state) == i % 2
        state = play(state, line)
        assert state.hexagons == ()
    assert GAME.to_move(state) == BOB
    state = play(state, ring(1, 1)[5])
    assert state.hexagons == ((Point(1, 1), BOB),)
    assert state.scores == (0, 1)
    assert GAME.to_move(state) == BOB, "a claim earns another move"
    assert not any(Point(1, 1) in line for line, _ in state.lines)
    state = play(state, ln(4, 0, 4, 1))
    assert GAME.to_move(state) == AMY, "a move that claims nothing passes the turn"


def test_claiming_a_centre_next_to_all_the_others_ends_the_game() -> None:
    state = play(new(), *ring(2, 1))
    assert state.hexagons == ((Point(2, 1), BOB),)
    assert GAME.to_move(state) is None


def test_spokes_alone_claim_nothing() -> None:
    board = lattice(5, 4)
    spokes = tuple(line_between(board.neighbours[Point(2, 1)][i], (2, 1)) for i in range(6))
    state = play(new(), *spokes)
    assert state.hexagons == ()
    assert GAME.to_move(state) == AMY  # six moves, none claimed


def test_one_line_can_claim_two_hexagons() -> None:
    state = play(new(), *interleave(RING_11, RING_31))
    assert state.hexagons == ()
    mover = GAME.to_move(state)
    assert mover == AMY
    assert GAME.describe_move(state, AMY, SHARED) == "amy draws (2,0)-(2,1), claims (1,1) and (3,1)"
    state = play(state, SHARED)
    assert state.hexagons == ((Point(1, 1), AMY), (Point(3, 1), AMY))
    assert state.scores == (2, 0)


def test_a_ring_closed_next_to_a_claimed_centre_claims_nothing() -> None:
    # (1,2)'s ring holds two spokes of (1,1): drawn before (1,1) is claimed, they are legal,
    # but once (1,1) is claimed, closing (1,2)'s ring claims nothing and passes the turn.
    spokes = tuple(line for line in ring(1, 2) if Point(1, 1) in line)
    rest = tuple(line for line in ring(1, 2) if Point(1, 1) not in line)
    assert len(spokes) == 2 and len(rest) == 4
    state = play(new(), *spokes, *ring(1, 1))
    assert state.hexagons == ((Point(1, 1), BOB),) and GAME.to_move(state) == BOB
    state = play(state, *rest)
    assert set(ring(1, 2)) <= state.drawn
    assert state.hexagons == ((Point(1, 1), BOB),)
    assert GAME.to_move(state) == BOB, "amy closed the ring, claimed nothing, passed the turn"
    assert (state.lines[-1][1], GAME.outcome(state)) == (AMY, None)


# -- illegal moves ---------------------------------------------------------------------


def _claimed_11() -> HexagonsState:
    """Bob has claimed (1,1) and moves again; its spoke (1,1)-(1,2) was drawn first."""
    return play(new(), ln(1, 1, 1, 2), ln(4, 0, 4, 1), *ring(1, 1))


@pytest.mark.parametrize(("line", "message"), [
    ((Point(4, 0), Point(4, 1)), "line already placed"),
    ((Point(4, 1), Point(4, 0)), "line already placed"),
    ((Point(1, 2), Point(1, 1)), "line already placed"),  # a drawn spoke: placed comes first
    ((Point(0, 2), Point(0, 3)), 'endpoint {"row": 0, "col": 3} not on board'),
    ((Point(0, 0), Point(-1, 0)), 'endpoint {"row": -1, "col": 0} not on board'),
    ((Point(5, 0), Point(4, 0)), 'endpoint {"row": 5, "col": 0} not on board'),
    ((Point(9, 9), Point(-9, -9)), 'endpoint {"row": -9, "col": -9} not on board'),
    ((Point(0, 0), Point(0, 2)),
     'endpoints {"row": 0, "col": 0} and {"row": 0, "col": 2} are not adjacent'),
    ((Point(1, 2), Point(0, 0)),
     'endpoints {"row": 0, "col": 0} and {"row": 1, "col": 2} are not adjacent'),
    ((Point(3, 3), Point(3, 3)),
     'endpoints {"row": 3, "col": 3} and {"row": 3, "col": 3} are not adjacent'),
    ((Point(1, 1), Point(2, 1)), "line falls within claimed hex"),
    ((Point(1, 1), Point(0, 1)), "line falls within claimed hex"),
])
def test_illegal_moves_say_why(line: Line, message: str) -> None:
    state = _claimed_11()
    assert state.claimed == {Point(1, 1)} and GAME.to_move(state) == BOB
    with pytest.raises(IllegalMoveError) as caught:
        GAME.apply(state, BOB, line)
    assert str(caught.value) == message
    assert line_between(*line) not in GAME.legal_moves(state, BOB)


def test_moving_out_of_turn_or_after_the_end_is_illegal() -> None:
    state = new()
    with pytest.raises(IllegalMoveError, match="it is amy's turn, not bob's"):
        GAME.apply(state, BOB, ln(0, 0, 0, 1))
    over = play(state, *interleave(RING_11, RING_31), SHARED)
    with pytest.raises(IllegalMoveError, match="the game is over"):
        GAME.apply(over, AMY, ln(0, 1, 0, 2))


def test_legal_moves_are_the_undrawn_lines_clear_of_claimed_centres() -> None:
    state = _claimed_11()
    legal = GAME.legal_moves(state, BOB)
    assert list(legal) == sorted(legal)
    assert GAME.legal_moves(state, AMY) == ()
    expected = {line for line in lattice(5, 4).lines
                if line not in state.drawn and Point(1, 1) not in line}
    assert set(legal) == expected
    assert len(legal) == 36 - 8 - 5  # 8 drawn, 5 undrawn spokes of (1,1)


# -- the end ---------------------------------------------------------------------------


def test_the_game_ends_when_no_hexagon_can_be_claimed_though_lines_remain() -> None:
    state = play(new(), *interleave(RING_11, RING_31), SHARED)
    # (1,2), (2,1) and (3,2) each touch a claimed centre: nothing is left to claim.
    assert GAME.to_move(state) is None
    assert GAME.legal_moves(state, AMY) == GAME.legal_moves(state, BOB) == ()
    undrawn_legal = [line for line in lattice(5, 4).lines if state.why_illegal(line) is None]
    assert len(undrawn_legal) == 36 - 11 - 12  # 12 undrawn spokes
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.termination is Termination.NORMAL
    assert outcome.winners == (AMY,) and outcome.scores == (2.0, 0.0)
    assert outcome.detail == "amy wins 2-0: no hexagon can be claimed any more"


def test_equal_scores_draw() -> None:
    ring_32 = ring(3, 2)
    state = play(new(), *interleave(ring(1, 1)[:5], ring_32[:5]), ring(1, 1)[5])
    assert state.scores == (1, 0) and GAME.to_move(state) == AMY
    assert GAME.outcome(state) is None, "(3,1) and (3,2) can still be claimed"
    state = play(state, ln(0, 1, 0, 2), ring_32[5])
    assert state.scores == (1, 1)
    assert GAME.to_move(state) is None
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.ranks == (0, 0) and outcome.winners == ()
    assert outcome.detail == "a draw, 1 hexagons each: no hexagon can be claimed any more"


def test_the_smallest_board_ends_with_its_only_hexagon() -> None:
    state = new(3, 3)
    assert len(lattice(3, 3).lines) == 12
    state = play(state, *ring(1, 1, 3, 3))
    assert GAME.to_move(state) is None
    assert state.scores == (0, 1)
    assert len(state.drawn) == 6  # the six spokes are never drawn


@pytest.mark.parametrize(("rows", "cols"), [(3, 3), (5, 4), (7, 3), (9, 9), (11, 13)])
def test_random_games_end_within_the_line_count(rows: int, cols: int) -> None:
    for seed in range(10):
        rng = random.Random(seed)
        state, moves = new(rows, cols), 0
        while (seat := GAME.to_move(state)) is not None:
            assert GAME.outcome(state) is None
            state = GAME.apply(state, seat, rng.choice(list(GAME.legal_moves(state, seat))))
            moves += 1
        assert moves <= line_count(rows, cols)
        assert not state.claimable()
        assert sum(state.scores) == len(state.hexagons) >= 1
        # Claimed centres are never neighbours.
        board = state.lattice
        assert not any(p in state.claimed for c in state.claimed for p in board.neighbours[c])
        outcome = GAME.outcome(state)
        assert outcome is not None and outcome.scores == tuple(map(float, state.scores))


@pytest.mark.parametrize("seed", [1, 2])
def test_a_state_after_a_move_derives_what_a_state_made_afresh_does(seed: int) -> None:
    """apply extends its state's sets and JSON lists rather than making them again; a state
    made from the same lines and hexagons must come out the same, and the spectator's view
    (which shares those lists) must be the JSON form."""
    state, rng = new(9, 9), random.Random(seed)
    while (seat := GAME.to_move(state)) is not None:
        state = GAME.apply(state, seat, rng.choice(list(GAME.legal_moves(state, seat))))
        afresh = HexagonsState(state.rows, state.cols, state.players, state.lines,
                               state.hexagons, state.turn)
        assert (state.drawn, state.claimed, state.scores, state.rows_json) == (
            afresh.drawn, afresh.claimed, afresh.scores, afresh.rows_json)
        assert GAME.spectator_view(state, False) == GAME.state_to_json(state)
    assert sum(state.scores) == len(state.hexagons) > 0
    # A "before" that the state does not extend is not trusted: all is made afresh.
    other = HexagonsState(9, 9, PLAYERS, state.lines[:3], (), 0, before=new(9, 9))
    stranger = HexagonsState(9, 9, PLAYERS, state.lines[1:4], (), 0, before=other)
    assert stranger.drawn == {line for line, _ in state.lines[1:4]}
    assert stranger.rows_json == HexagonsState(9, 9, PLAYERS, state.lines[1:4]).rows_json


def test_the_golden_game_has_a_claim_and_an_extra_turn() -> None:
    """The golden game (tests/golden/hexagons/) is worth keeping: it has a claim, and a
    claimer moving again after it."""
    played = golden_played(GAME.mnemonic)
    assert played.final.hexagons
    seats = [ply.seat for ply in played.plies]
    assert any(a == b for a, b in itertools.pairwise(seats))

"""Standings: points, Buchholz and Sonneborn-Berger worked out by hand on small events."""

from __future__ import annotations

import pytest

from merknera.scheduler.pairing import NO_RESULT, Result, Scoring, round_robin
from merknera.scheduler.standings import StandingRow, standings

# Five entrants, three rounds, a bye each round and a cancelled game in a fourth:
#   round 1: 1 beats 4; 5 draws 2; 3 has the bye
#   round 2: 3 loses to 1 (1 is second); 2 beats 4; 5 has the bye
#   round 3: 1 draws 2; 5 beats 3; 4 has the bye
#   round 4: 2 v 3 ends with no result (scores nothing, is no game)
SMALL = [
    Result(1, 1, 4, 1), Result(1, 5, 2, 0.5), Result(1, 3, None, 1),
    Result(2, 3, 1, 0), Result(2, 2, 4, 1), Result(2, 5, None, 1),
    Result(3, 1, 2, 0.5), Result(3, 5, 3, 1), Result(3, 4, None, 1),
    Result(4, 2, 3, NO_RESULT),
]
# Points: 1 = 1+1+.5 = 2.5; 2 = .5+1+.5 = 2; 3 = bye 1; 4 = bye 1; 5 = .5+bye 1+1 = 2.5.
# Buchholz (opponents' points, byes add nothing):
#   1: 4, 3, 2 -> 1+1+2 = 4        2: 5, 4, 1 -> 2.5+1+2.5 = 6     3: 1, 5 -> 5
#   4: 1, 2 -> 2.5+2 = 4.5         5: 2, 3 -> 2+1 = 3
# Sonneborn-Berger (beaten opponents' points, half the drawn ones'):
#   1: 1 (4) + 1 (3) + 2/2 (2) = 3     2: 2.5/2 + 1 + 2.5/2 = 3.5     3: 0     4: 0
#   5: 2/2 (2) + 1 (3) = 2
EXPECTED = [
    #           entrant points buchholz sb  games wins draws losses byes rank
    StandingRow(1, 2.5, 4.0, 3.0, 3, 2, 1, 0, 0, 1),
    StandingRow(5, 2.5, 3.0, 2.0, 2, 1, 1, 0, 1, 2),
    StandingRow(2, 2.0, 6.0, 3.5, 3, 1, 2, 0, 0, 3),
    StandingRow(3, 1.0, 5.0, 0.0, 2, 0, 0, 2, 1, 4),
    StandingRow(4, 1.0, 4.5, 0.0, 2, 0, 0, 2, 1, 5),
]


def test_hand_computed_small_event() -> None:
    assert standings([1, 2, 3, 4, 5], SMALL) == EXPECTED


def test_result_order_does_not_matter() -> None:
    assert standings([1, 2, 3, 4, 5], list(reversed(SMALL))) == EXPECTED


def test_buchholz_cut_one_drops_the_weakest_opponent_and_ties_share_a_rank() -> None:
    rows = {row.entrant: row for row in standings([1, 2, 3, 4, 5], SMALL, buchholz_cut=1)}
    # 1: drop a 1 -> 3; 2: drop 1 -> 5; 3: drop 2.5 -> 2.5; 4: drop 2 -> 2.5; 5: drop 1 -> 2.
    assert {e: r.buchholz for e, r in rows.items()} == {1: 3.0, 2: 5.0, 3: 2.5, 4: 2.5, 5: 2.0}
    # 3 and 4 are now level on everything (points, Buchholz, SB 0, no wins): both 4th.
    assert (rows[3].rank, rows[4].rank) == (4, 4)


@pytest.mark.parametrize(("tiebreaks", "order", "ranks"), [
    ((), [1, 5, 2, 3, 4], [1, 1, 3, 4, 4]),
    (("sonneborn_berger",), [1, 5, 2, 3, 4], [1, 2, 3, 4, 4]),
    (("wins", "buchholz"), [1, 5, 2, 3, 4], [1, 2, 3, 4, 5]),
    (("buchholz",), [1, 5, 2, 3, 4], [1, 2, 3, 4, 5]),
])
def test_tiebreak_order_is_the_callers(tiebreaks: tuple[str, ...], order: list[int],
                                       ranks: list[int]) -> None:
    rows = standings([1, 2, 3, 4, 5], SMALL, tiebreaks=tiebreaks)  # type: ignore[arg-type]
    assert [r.entrant for r in rows] == order
    assert [r.rank for r in rows] == ranks


def test_complete_ties_share_a_rank_and_keep_seed_order() -> None:
    # Round robin of four: 1 beats everyone, 2 and 3 draw and both beat 4.
    results = [Result(1, 1, 2, 1), Result(1, 3, 4, 1), Result(2, 1, 3, 1),
               Result(2, 4, 2, 0), Result(3, 4, 1, 0), Result(3, 3, 2, 0.5)]
    rows = standings([1, 3, 2, 4], results)  # 3 seeded above 2
    assert [(r.entrant, r.points, r.buchholz, r.sonneborn_berger, r.rank) for r in rows] == [
        (1, 3.0, 3.0, 3.0, 1),
        (3, 1.5, 4.5, 0.75, 2),   # Buchholz 3 + 1.5 + 0; SB 0 (4) + 1.5/2 (2)
        (2, 1.5, 4.5, 0.75, 2),
        (4, 0.0, 6.0, 0.0, 4),
    ]


def test_everyone_drawing_is_one_big_tie() -> None:
    entrants = [10, 20, 30, 40]
    results = [Result(r, a, b, 0.5) for r, boards in enumerate(round_robin(entrants), 1)
               for a, b in boards if b is not None]
    rows = standings(entrants, results)
    assert [r.entrant for r in rows] == entrants
    assert {(r.points, r.rank, r.draws) for r in rows} == {(1.5, 1, 3)}


def test_scoring_is_a_parameter_and_sonneborn_berger_weights_by_outcome() -> None:
    three_one_nil = Scoring(win=3, draw=1, loss=0, bye=2)
    rows = {r.entrant: r for r in standings([1, 2, 3, 4, 5], SMALL, scoring=three_one_nil)}
    assert {e: r.points for e, r in rows.items()} == {1: 7, 2: 5, 3: 2, 4: 2, 5: 6}
    # 1 beat 4 (2) and 3 (2), drew 2 (5): 2 + 2 + 5/2.
    assert rows[1].sonneborn_berger == 6.5
    assert rows[1].buchholz == 2 + 2 + 5


def test_entrants_without_results_are_listed_with_nothing() -> None:
    rows = standings([1, 2, 3], [Result(1, 1, 2, 0)])
    assert [(r.entrant, r.points, r.games, r.rank) for r in rows] == [
        (2, 1.0, 1, 1), (1, 0.0, 1, 2), (3, 0.0, 0, 3)]
    # 1 lost, but to the leader: Buchholz 1 against 3's 0 (it played nobody).
    assert (rows[1].buchholz, rows[2].buchholz) == (1.0, 0.0)


def test_refuses_bad_results() -> None:
    with pytest.raises(ValueError, match="unknown entrant"):
        standings([1, 2], [Result(1, 1, 3, 1)])
    with pytest.raises(ValueError, match="two boards"):
        standings([1, 2, 3], [Result(1, 1, 2, 1), Result(1, 3, 1, 0)])
    with pytest.raises(ValueError, match="outcome"):
        standings([1, 2], [(1, 1, 2, 0.25)])
    with pytest.raises(ValueError, match="tie-break"):
        standings([1, 2], [], tiebreaks=["coin toss"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="negative"):
        standings([1, 2], [], buchholz_cut=-1)

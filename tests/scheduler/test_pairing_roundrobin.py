"""Round robin by Berger tables: every pair meets, byes rotate, seats balance."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from merknera.scheduler.pairing import Pairing, round_robin, round_robin_rounds

# Ids deliberately not in seed order, so a slip between index and id shows.
IDS = [42, 7, 19, 3, 88, 15, 61, 5, 30, 11, 77, 2, 64, 9, 50, 21, 33, 13, 70, 26, 48]


def seat_sequences(plan: list[list[Pairing]], entrants: list[int]) -> dict[int, list[int]]:
    """Each entrant's seats in order of play: 1 first, 0 second (byes left out)."""
    seats: dict[int, list[int]] = {e: [] for e in entrants}
    for boards in plan:
        for first, second in boards:
            if second is not None:
                seats[first].append(1)
                seats[second].append(0)
    return seats


@pytest.mark.parametrize("count", range(2, 22))
@pytest.mark.parametrize("cycles", [1, 2])
def test_every_pair_meets_once_per_cycle(count: int, cycles: int) -> None:
    entrants = IDS[:count]
    plan = round_robin(entrants, cycles=cycles)
    per_cycle = count - 1 if count % 2 == 0 else count
    assert len(plan) == round_robin_rounds(count, cycles) == per_cycle * cycles

    for boards in plan:
        # Everyone exactly once a round: playing, or (odd count only) sitting out.
        seated = [e for board in boards for e in board if e is not None]
        assert sorted(seated) == sorted(entrants)
        byes = [b for b in boards if b.is_bye]
        assert len(byes) == count % 2
        assert all(not b.is_bye for b in boards[:-1]), "the bye is listed last"

    games = [b for boards in plan for b in boards if not b.is_bye]
    meetings = Counter(frozenset(b) for b in games)
    assert set(meetings) == {frozenset(p) for p in combinations(entrants, 2)}
    assert set(meetings.values()) == {cycles}
    if cycles == 2:
        # Both seatings of every pair: each ordered pair exactly once.
        assert Counter(games) == {Pairing(a, b): 1 for a in entrants for b in entrants if a != b}

    byes_by = Counter(b.first for boards in plan for b in boards if b.is_bye)
    assert byes_by == (dict.fromkeys(entrants, cycles) if count % 2 else {})


@pytest.mark.parametrize("count", range(2, 22))
def test_seats_balance_within_one_and_never_three_running(count: int) -> None:
    entrants = IDS[:count]
    for cycles in (1, 2):
        seats = seat_sequences(round_robin(entrants, cycles=cycles), entrants)
        for entrant, seq in seats.items():
            played = len(seq)
            assert played == (count - 1) * cycles
            firsts = sum(seq)
            if cycles == 1:
                assert abs(firsts - played / 2) <= 1, (entrant, seq)
            else:
                assert firsts * 2 == played, (entrant, seq)
            if cycles == 1:
                runs = ["".join(map(str, seq[i:i + 3])) for i in range(len(seq) - 2)]
                assert "111" not in runs and "000" not in runs, (entrant, seq)


def test_odd_count_bye_goes_by_seed_and_is_a_pairing_with_none() -> None:
    plan = round_robin([5, 6, 7])
    assert plan == [
        [Pairing(6, 7), Pairing(5, None)],
        [Pairing(7, 5), Pairing(6, None)],
        [Pairing(5, 6), Pairing(7, None)],
    ]
    assert [b.first for boards in plan for b in boards if b.is_bye] == [5, 6, 7]


def test_second_cycle_swaps_the_first() -> None:
    entrants = IDS[:6]
    plan = round_robin(entrants, cycles=2)
    half = len(plan) // 2
    for one, two in zip(plan[:half], plan[half:], strict=True):
        assert two == [Pairing(b, a) for a, b in one if b is not None]  # six: no byes


def test_third_cycle_repeats_the_first() -> None:
    plan = round_robin(IDS[:4], cycles=3)
    assert plan[:3] == plan[6:]


@pytest.mark.parametrize("entrants", [[], [7]])
def test_fewer_than_two_entrants_play_nothing(entrants: list[int]) -> None:
    assert round_robin(entrants) == []
    assert round_robin_rounds(len(entrants)) == 0


def test_refuses_duplicates_and_no_cycles() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        round_robin([1, 2, 1])
    with pytest.raises(ValueError, match="cycle"):
        round_robin([1, 2], cycles=0)

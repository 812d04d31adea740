"""The Swiss system, checked against brute-force oracles on simulated tournaments.

Each round of every simulation is checked against what an exhaustive search over all
pairings of that round says was possible: a rematch, a second bye or a third first seat
running is only allowed when no pairing could have avoided it.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import combinations

import pytest

from merknera.scheduler.pairing import (
    NO_RESULT,
    Outcome,
    Pairing,
    Result,
    Scoring,
    _complete,
    swiss_round,
)

IDS = [42, 7, 19, 3, 88, 15, 61, 5, 30, 11]  # seed order; ids deliberately unsorted


@dataclass
class Player:
    """The test's own view of an entrant's history, kept independently of the module."""

    score: float = 0.0
    seats: list[int] = field(default_factory=list)  # +1 first, -1 second
    met: set[int] = field(default_factory=set)
    byes: int = 0

    def absolute(self) -> int:
        """The colour this player must get (+1/-1), or 0 when either is allowed."""
        if sum(self.seats) <= -2 or self.seats[-2:] == [-1, -1]:
            return 1
        if sum(self.seats) >= 2 or self.seats[-2:] == [1, 1]:
            return -1
        return 0


def matchings(players: list[int]) -> Iterator[list[tuple[int, int]]]:
    """Every way of pairing up ``players`` (an even number of them)."""
    if not players:
        yield []
        return
    head, rest = players[0], players[1:]
    for i, partner in enumerate(rest):
        for more in matchings(rest[:i] + rest[i + 1:]):
            yield [(head, partner), *more]


def pairable(players: list[int], ok: Callable[[int, int], bool]) -> bool:
    return any(all(ok(a, b) for a, b in m) for m in matchings(players))


Policy = Callable[[int, int, random.Random], Outcome]
POLICIES: dict[str, Policy] = {
    "higher seed wins": lambda a, b, _rng: 1 if IDS.index(a) < IDS.index(b) else 0,
    "lower seed wins": lambda a, b, _rng: 0 if IDS.index(a) < IDS.index(b) else 1,
    "all draws": lambda _a, _b, _rng: 0.5,
    "seeded random": lambda _a, _b, rng: rng.choice([1, 1, 0.5, 0, 0]),
}


def check_round(entrants: list[int], players: dict[int, Player], plan: list[Pairing]) -> None:
    """Assert what must hold of ``plan`` given the history in ``players``."""
    seated = [e for board in plan for e in board if e is not None]
    assert sorted(seated) == sorted(entrants), "everyone exactly once"
    byes = [board.first for board in plan if board.is_bye]
    assert len(byes) == len(entrants) % 2
    assert all(not board.is_bye for board in plan[:-1]), "the bye is listed last"
    ranked = sorted(entrants, key=lambda e: (-players[e].score, IDS.index(e)))

    def fresh(a: int, b: int) -> bool:
        return b not in players[a].met

    if byes:
        bye = byes[0]
        pool = [e for e in ranked if players[e].byes == 0] or ranked
        eligible = [e for e in pool if pairable([p for p in ranked if p != e], fresh)]
        assert bye == (eligible or pool)[-1], "bye to the lowest-ranked eligible"
    rest = [e for e in ranked if e not in byes]
    games = [(board.first, board.second) for board in plan if board.second is not None]

    if pairable(rest, fresh):
        assert all(fresh(a, b) for a, b in games), "a rematch that could be avoided"

        def clean(a: int, b: int) -> bool:
            wish_a, wish_b = players[a].absolute(), players[b].absolute()
            return fresh(a, b) and not (wish_a and wish_a == wish_b)

        if pairable(rest, clean):
            for first, second in games:
                assert players[first].absolute() != -1, (first, players[first].seats)
                assert players[second].absolute() != 1, (second, players[second].seats)

    # Top scores meet: the leader plays within its score group while it has a new opponent
    # there (given that the rest can still be paired without rematches).
    leader = rest[0] if rest else None
    if leader is not None and pairable(rest, fresh):
        peers = [e for e in rest if e != leader and players[e].score == players[leader].score
                 and fresh(leader, e)
                 and pairable([p for p in rest if p not in (leader, e)], fresh)]
        opponent = next(b if a == leader else a for a, b in games if leader in (a, b))
        if peers:
            assert opponent in peers, (leader, opponent, peers)


def simulate(count: int, rounds: int, policy: Policy) -> dict[int, Player]:
    entrants = IDS[:count]
    rng = random.Random(count * 100 + rounds)
    players = {e: Player() for e in entrants}
    results: list[Result] = []
    for rnd in range(1, rounds + 1):
        plan = swiss_round(entrants, results)
        check_round(entrants, players, plan)
        assert swiss_round(entrants, list(reversed(results))) == plan, "deterministic"
        for first, second in plan:
            if second is None:
                results.append(Result(rnd, first, None, 1))
                players[first].byes += 1
                players[first].score += 1
                continue
            outcome = policy(first, second, rng)
            assert outcome != NO_RESULT
            results.append(Result(rnd, first, second, outcome))
            for me, other, seat, points in ((first, second, 1, outcome),
                                            (second, first, -1, 1 - outcome)):
                players[me].met.add(other)
                players[me].seats.append(seat)
                players[me].score += points
    return players


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("count", range(2, 10))
def test_simulated_tournaments(count: int, policy: str) -> None:
    # Every number of rounds R < N, each round checked against the oracles as it is paired.
    for rounds in range(1, count):
        players = simulate(count, rounds, POLICIES[policy])
        for entrant, player in players.items():
            assert player.byes <= 1, entrant
            assert len(player.seats) + player.byes == rounds
            assert abs(sum(player.seats)) <= 2, (entrant, player.seats)


def test_first_two_rounds_of_eight_follow_the_dutch_system() -> None:
    entrants = list(range(1, 9))
    first = swiss_round(entrants, [])
    # Top half against bottom half; the higher-ranked's seat alternates by board.
    assert first == [Pairing(1, 5), Pairing(6, 2), Pairing(3, 7), Pairing(8, 4)]
    results = [Result(1, a, b, 1 if a < b else 0) for a, b in first if b is not None]
    # Winners 1-4 and losers 5-8 pair within their groups.  1 v 3 and 2 v 4 would refuse a
    # colour wish in both games; the exchange 1 v 4, 2 v 3 grants every wish.
    assert swiss_round(entrants, results) == [
        Pairing(4, 1), Pairing(2, 3), Pairing(5, 8), Pairing(7, 6)]


F, S = 1, -1


@pytest.mark.parametrize(("seats_1", "seats_2", "expected", "rule"), [
    ([], [], Pairing(1, 2), "no history: the top seed takes the first seat on board 1"),
    ([F], [S], Pairing(2, 1), "both wishes granted"),
    ([S, F], [F], Pairing(1, 2), "the stronger wish wins over the higher rank"),
    ([S, F, F], [F, F], Pairing(1, 2), "both absolute: the wider colour difference wins"),
    ([S, F, F, S], [F, S, F, S], Pairing(2, 1),
     "equal wishes: alternate from the last game in which their seats differed"),
    ([F, S], [F, S], Pairing(1, 2), "identical histories: the higher-ranked gets its wish"),
])
def test_seat_allocation(seats_1: list[int], seats_2: list[int], expected: Pairing,
                         rule: str) -> None:
    # Histories against withdrawn opponents (ids 100 up), all drawn, so 1 and 2 are level
    # and must meet; 1 is the higher seed.
    results: list[Result] = []
    opponents = iter(range(100, 200))
    for entrant, seats in ((1, seats_1), (2, seats_2)):
        for rnd, seat in enumerate(seats, 1):
            other = next(opponents)
            results.append(Result(rnd, *((entrant, other) if seat == F else (other, entrant)),
                                  0.5))
    assert swiss_round([1, 2], results) == [expected], rule


def test_the_leader_floats_down_rather_than_meeting_anyone_again() -> None:
    entrants = [1, 2, 3, 4]
    results = [Result(1, 1, 3, 1), Result(1, 4, 2, 0),
               Result(2, 2, 1, 0), Result(2, 3, 4, 1)]
    # 1 has met 3 and 2, so it meets 4 though 2 and 3 sit closer in score.
    plan = swiss_round(entrants, results)
    assert {frozenset(p) for p in plan} == {frozenset((1, 4)), frozenset((2, 3))}


@pytest.mark.parametrize(("count", "bye"), [(3, 3), (5, 5), (9, 9)])
def test_round_one_bye_goes_to_the_lowest_seed(count: int, bye: int) -> None:
    plan = swiss_round(list(range(1, count + 1)), [])
    assert plan[-1] == Pairing(bye, None)


def test_bye_skips_those_who_had_one() -> None:
    entrants = [1, 2, 3, 4, 5]
    results = [Result(1, 1, 2, 1), Result(1, 3, 4, 1), Result(1, 5, None, 1)]
    # 5 had the bye and leads with 1 and 3; the lowest-ranked of the rest is 4.
    assert swiss_round(entrants, results)[-1] == Pairing(4, None)


def test_bye_moves_up_when_the_lowest_sitting_out_would_force_a_rematch() -> None:
    entrants = [1, 2, 3, 4, 5]
    # An artificial history: 1 has drawn with 2, 3 and 4.  Were 5 (lowest) to sit out,
    # 1 would have to meet one of them again; with 4 out, 1-5 and 2-3 are both new.
    results = [Result(1, 1, 2, 0.5), Result(2, 1, 3, 0.5), Result(3, 1, 4, 0.5)]
    plan = swiss_round(entrants, results)
    assert plan[-1] == Pairing(4, None)
    assert {frozenset(p) for p in plan[:-1]} == {frozenset((1, 5)), frozenset((2, 3))}


def test_no_result_still_counts_as_met_but_gives_no_points_or_seat() -> None:
    entrants = [1, 2, 3, 4]
    results = [Result(1, 1, 2, NO_RESULT), Result(1, 3, 4, 1)]
    # 3 leads alone and floats to the best of the rest it has not met; 1 has no seat
    # history, so 3 gets the second seat it wants after its first.  1 and 2 must not meet
    # again, and 4 (second last time) takes the first seat against 2.
    assert swiss_round(entrants, results) == [Pairing(1, 3), Pairing(4, 2)]


def test_entrants_missing_from_the_list_are_not_paired() -> None:
    results = [Result(1, 1, 2, 1), Result(1, 3, 4, 0)]
    plan = swiss_round([1, 2, 3], results)  # 4 withdrew
    assert 4 not in {e for board in plan for e in board}
    assert plan[-1].second is None


def test_scoring_decides_score_groups() -> None:
    entrants = [1, 2, 3, 4, 5, 6]
    # 1 and 2 win, 3 and 6 draw with each other, 4 and 5 lose.
    results = [Result(1, 1, 4, 1), Result(1, 2, 5, 1), Result(1, 3, 6, 0.5)]

    def boards(scoring: Scoring) -> set[frozenset[int | None]]:
        return {frozenset(board) for board in swiss_round(entrants, results, scoring=scoring)}

    # Under 1-0.5-0 the winners are a group of two and meet; the drawers, who may not meet
    # again, each float down to a loser.
    assert boards(Scoring()) == {frozenset((1, 2)), frozenset((3, 4)), frozenset((5, 6))}
    # With a draw worth a win the drawers join the winners' group, so 1 and 2 each meet a
    # drawer (which one is the colours' choice) and the losers meet each other.  1 v 2,
    # 3 v 4, 5 v 6 would be no rematch either: only the scores rule it out.
    with_draws_as_wins = boards(Scoring(draw=1.0))
    assert with_draws_as_wins in (
        {frozenset((1, 3)), frozenset((2, 6)), frozenset((4, 5))},
        {frozenset((1, 6)), frozenset((2, 3)), frozenset((4, 5))})


def test_degenerate_fields() -> None:
    assert swiss_round([], []) == []
    assert swiss_round([9], []) == [Pairing(9, None)]
    assert swiss_round([9, 4], []) == [Pairing(9, 4)]


def test_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        swiss_round([1, 2, 2], [])
    with pytest.raises(ValueError, match="outcome"):
        swiss_round([1, 2], [(1, 1, 2, 2.0)])
    with pytest.raises(ValueError, match="itself"):
        swiss_round([1, 2], [(1, 1, 1, 1)])


def test_larger_fields_stay_quick() -> None:
    # Not a benchmark: a guard against the search going exponential.
    entrants = list(range(1, 65))
    rng = random.Random(5)
    results: list[Result] = []
    for rnd in range(1, 8):
        plan = swiss_round(entrants, results)
        results += [Result(rnd, a, b, rng.choice([1, 0.5, 0]) if b is not None else 1)
                    for a, b in plan]
    met = Counter(frozenset((r.first, r.second)) for r in results if r.second is not None)
    assert max(met.values()) == 1


@pytest.mark.parametrize("seed", range(200))
def test_matching_is_maximum(seed: int) -> None:
    """The blossom search against brute force on small random graphs, odd cycles and all."""
    rng = random.Random(seed)
    n = rng.randint(1, 9)
    edges = {e for e in combinations(range(n), 2) if rng.random() < 0.35}
    adj = [[b for b in range(n) if (min(a, b), max(a, b)) in edges] for a in range(n)]
    match = [-1] * n
    _complete(adj, [True] * n, match)
    assert all(match[match[v]] == v for v in range(n) if match[v] != -1)
    assert all((min(v, match[v]), max(v, match[v])) in edges for v in range(n) if match[v] != -1)
    size = sum(m != -1 for m in match) // 2

    def best(vertices: list[int]) -> int:
        if len(vertices) < 2:
            return 0
        head, rest = vertices[0], vertices[1:]
        options = [best(rest)]
        options += [1 + best([v for v in rest if v != w])
                    for w in rest if (head, w) in edges]
        return max(options)

    assert size == best(list(range(n)))

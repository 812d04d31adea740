"""The rating maths: OpenSkill's own numbers for small games, the interval, the tie bands."""

from __future__ import annotations

import itertools
import math

import pytest
from openskill.models import PlackettLuce

from merknera.ratings import DEFAULT, Rating, bands, rank_key, update


def openskill(ratings: list[tuple[float, float]], ranks: list[int]) -> list[tuple[float, float]]:
    """What OpenSkill itself says, called the way its documentation shows."""
    model = PlackettLuce()
    teams = [[model.rating(mu=mu, sigma=sigma)] for mu, sigma in ratings]
    as_given: list[float] = [rank for rank in ranks]  # the ints themselves  # noqa: C416
    return [(team[0].mu, team[0].sigma) for team in model.rate(teams, ranks=as_given)]


def ours(ratings: list[tuple[float, float]], ranks: list[int]) -> list[tuple[float, float]]:
    return [(r.mu, r.sigma) for r in update([Rating(mu, sigma) for mu, sigma in ratings], ranks)]


def test_the_default_rating_is_openskills() -> None:
    model = PlackettLuce()
    assert (DEFAULT.mu, DEFAULT.sigma) == (model.mu, model.sigma) == (25.0, 25.0 / 3.0)
    assert DEFAULT.conservative == model.rating().ordinal() == 0.0
    assert Rating() == DEFAULT


FRESH = (25.0, 25.0 / 3.0)
SEASONED = [(31.5, 2.25), (22.0, 4.0), (27.25, 6.5), (18.0, 1.5), (25.0, 3.0), (29.0, 0.9)]


@pytest.mark.parametrize(("ratings", "ranks"), [
    ([FRESH, FRESH], [0, 1]),               # two seats, seat 0 wins
    ([FRESH, FRESH], [1, 0]),               # two seats, seat 1 wins
    ([FRESH, FRESH], [0, 0]),               # a draw
    (SEASONED[:2], [0, 1]),                 # the favourite wins
    (SEASONED[:2], [1, 0]),                 # an upset
    (SEASONED[:2], [0, 0]),
    ([FRESH, FRESH, FRESH], [0, 1, 1]),     # three seats, two tied behind the winner
    (SEASONED[:3], [0, 0, 1]),              # three seats, two tied in front
    (SEASONED[:3], [2, 0, 1]),
    (SEASONED[:4], [1, 0, 2, 0]),           # four seats with a tie for first
    (SEASONED[:4], [0, 1, 1, 1]),           # one winner, three tied behind
    (SEASONED[:4], [0, 0, 0, 1]),           # a four-seat forfeit: the offender alone last
    (SEASONED[:4], [0, 0, 0, 0]),
    (SEASONED[:6], [3, 1, 0, 2, 4, 5]),     # six seats, all distinct
])
def test_an_update_is_openskills_plackett_luce_to_the_last_bit(
        ratings: list[tuple[float, float]], ranks: list[int]) -> None:
    expected = openskill(ratings, ranks)
    assert ours(ratings, ranks) == expected  # exact float equality, not approximate
    # and the direction is right: a seat that beat everyone gained, one beaten by all lost
    for seat, rank in enumerate(ranks):
        if rank == min(ranks) and ranks.count(rank) == 1:
            assert expected[seat][0] > ratings[seat][0]
        if rank == max(ranks) and ranks.count(rank) == 1:
            assert expected[seat][0] < ratings[seat][0]


def test_ties_share_the_change_and_a_draw_between_equals_changes_no_mean() -> None:
    after = ours([FRESH, FRESH, FRESH], [0, 1, 1])
    assert after[1] == after[2] and after[0][0] > 25.0 > after[1][0]
    draw = ours([FRESH, FRESH], [0, 0])
    assert draw[0] == draw[1] and draw[0][0] == 25.0 and draw[0][1] < 25.0 / 3.0


def test_ranks_need_not_start_at_zero() -> None:
    assert ours(SEASONED[:3], [2, 5, 5]) == ours(SEASONED[:3], [0, 1, 1])


def test_a_sequence_of_updates_is_deterministic() -> None:
    def play() -> list[Rating]:
        field = [DEFAULT] * 4
        for ranks in ([0, 1, 2, 3], [3, 0, 0, 1], [1, 1, 0, 2], [0, 1, 1, 1]):
            field = list(update(field, ranks))
        return field
    assert play() == play()


@pytest.mark.parametrize(("ratings", "ranks"), [
    ([DEFAULT], [0]),
    ([DEFAULT] * 7, list(range(7))),
    ([DEFAULT] * 2, [0]),
])
def test_an_update_refuses_impossible_games(ratings: list[Rating], ranks: list[int]) -> None:
    with pytest.raises(ValueError, match=r"seats|ranks"):
        update(ratings, ranks)


def test_the_conservative_estimate_and_the_95_percent_interval() -> None:
    rating = Rating(30.0, 2.0)
    assert rating.conservative == 24.0
    assert (rating.low, rating.high) == (30.0 - 3.92, 30.0 + 3.92)
    assert math.isclose(rating.high - rating.low, 2 * 1.96 * 2.0)
    model = PlackettLuce()
    assert rating.conservative == model.rating(mu=30.0, sigma=2.0).ordinal()


def test_rank_key_prefers_the_conservative_estimate_over_the_mean() -> None:
    sure = Rating(28.0, 1.0)         # conservative 25
    hopeful = Rating(35.0, 5.0)      # conservative 20, higher mean
    twin = Rating(27.0, 2.0 / 3.0)   # conservative 25 too, lower mean
    assert sorted([hopeful, twin, sure], key=rank_key) == [sure, twin, hopeful]


def interval(low: float, high: float) -> Rating:
    """A rating with exactly this 95% interval (up to rounding)."""
    return Rating((low + high) / 2, (high - low) / 2 / 1.96)


def test_bands_follow_the_first_row_of_each_band() -> None:
    rows = [
        interval(20.0, 30.0),  # band 1 opens
        interval(19.0, 29.0),  # overlaps the leader
        interval(12.0, 20.5),  # overlaps the leader (20.5 >= 20)
        interval(11.0, 19.5),  # overlaps the row above, but not the leader: band 2
        interval(10.0, 19.0),  # overlaps band 2's leader
        interval(1.0, 5.0),    # band 3, alone
    ]
    assert bands(rows) == [1, 1, 1, 2, 2, 3]


def test_a_chain_of_small_steps_does_not_make_one_band() -> None:
    # Each row overlaps the next; chaining would put all ten in one band.
    rows = [interval(20.0 - 0.75 * step, 22.0 - 0.75 * step) for step in range(10)]
    assert all(upper.overlaps(lower) for upper, lower in itertools.pairwise(rows))
    assert bands(rows) == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4]


def test_bands_treat_touching_intervals_as_overlapping_and_look_both_ways() -> None:
    leader = Rating(10.0, 1.0)
    touching = Rating(leader.low - 1.96, 1.0)  # its high is the leader's low exactly
    assert touching.high == leader.low
    assert bands([leader, touching]) == [1, 1]
    # A row ranked lower (smaller mu - 3 sigma) can reach above the leader: still tied.
    wide = Rating(9.0, 6.0)
    assert rank_key(leader) < rank_key(wide) and wide.high > leader.high
    assert bands([leader, wide]) == [1, 1]
    apart = Rating(leader.low - 1.96 - 1e-9, 1.0)
    assert bands([leader, apart]) == [1, 2]


def test_bands_of_no_rows_and_of_unrated_bots() -> None:
    assert bands([]) == []
    assert bands([DEFAULT, DEFAULT, DEFAULT]) == [1, 1, 1]

"""The duel's SPRT: fishtest's own figures, the test's properties, and seeded duels."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from merknera import sprt

# Computed with fishtest's own code (official-stockfish/fishtest at commit
# b8eecff220b562a0dc2c4e68d1fa02521e06d72c, server/fishtest/stats, run with scipy 1.17.1):
# LLRcalc.LLR_logistic(elo0, elo1, pentanomial) for the LLR, stat_util.SPRT(...) for the
# bounds, and stat_util.get_elo(pentanomial) for the estimate, its 95% margin and LOS.
# Their root finder (scipy's brentq) stops at about 1e-12, hence the tolerances below.
#   (pentanomial, elo0, elo1, alpha, beta, llr, lower, upper, elo, margin, los)
FISHTEST = [
    ([0, 0, 0, 0, 0], 0, 5, 0.05, 0.05, -1.0354483502281707e-06, -2.9444389791664403,
     2.9444389791664403, -0.0, 1199.8261952903854, 0.5),
    ([0, 0, 10, 0, 0], 0, 5, 0.05, 0.05, -0.139427638815399, -2.9444389791664403,
     2.9444389791664403, 7.714619732426298e-14, 3.403553665709381, 0.5000000000000178),
    ([0, 0, 0, 0, 10], 0, 5, 0.05, 0.05, 0.1429044325441563, -2.9444389791664403,
     2.9444389791664403, 1199.8261952903777, 188.8974870262287, 1.0),
    ([10, 0, 0, 0, 0], 0, 5, 0.05, 0.05, -0.14497624376179935, -2.9444389791664403,
     2.9444389791664403, -1199.826195290393, 188.89748702623643, 0.0),
    ([1, 4, 10, 4, 1], 0, 5, 0.05, 0.05, -0.010347818418229961, -2.9444389791664403,
     2.9444389791664403, -0.0, 68.9887510667099, 0.5),
    ([3, 20, 51, 30, 6], 0, 5, 0.05, 0.05, 0.5308881105872737, -2.9444389791664403,
     2.9444389791664403, 25.312734217683147, 28.528893591653578, 0.9598677889662779),
    ([2, 10, 30, 40, 25], 0, 5, 0.05, 0.05, 1.354060223047885, -2.9444389791664403,
     2.9444389791664403, 129.0075645990878, 37.33494196684122, 0.9999999999999539),
    ([40, 30, 20, 5, 1], 0, 5, 0.05, 0.05, -1.338396969695503, -2.9444389791664403,
     2.9444389791664403, -208.17280373330007, 47.38704082261992, 3.3436897481284478e-28),
    ([0, 0, 3, 60, 140], 0, 5, 0.05, 0.05, 2.900380418932511, -2.9444389791664403,
     2.9444389791664403, 421.2597660004478, 40.48482916962533, 1.0),
    ([0, 0, 250, 0, 0], 0, 5, 0.05, 0.05, -3.614937463665056, -2.9444389791664403,
     2.9444389791664403, -7.714619732426294e-14, 0.13619007484865797, 0.49999999999977857),
    ([10789, 19328, 33806, 19402, 10543], -3, 1, 0.05, 0.05, 2.1310678117940807,
     -2.9444389791664403, 2.9444389791664403, -0.7735773359165423, 1.2775798957280218,
     0.1176588580327751),
    ([1187, 7410, 13475, 7378, 1164], -3, 1, 0.05, 0.05, 2.86152718059463,
     -2.9444389791664403, 2.9444389791664403, -0.4426077992236841, 1.7298590276177421,
     0.3080138791226903),
    ([39, 2226, 31451, 2412, 40], 0.2, 0.9, 0.05, 0.05, 2.1625425800483593,
     -2.9444389791664403, 2.9444389791664403, 0.902981048809024, 0.6625314859816553,
     0.9962220973354207),
    ([5, 40, 90, 55, 10], 0, 10, 0.1, 0.2, 1.4399909518210763, -1.504077396776274,
     2.0794415416798357, 21.74306492903708, 21.08844061433717, 0.9787505809548736),
    ([12, 80, 200, 120, 30], -5, 20, 0.01, 0.05, 9.947348843355542, -2.9856819377004893,
     4.553876891600541, 29.94394890599288, 14.629415360429944, 0.9999725878090481),
]


@pytest.mark.parametrize(
    ("pentanomial", "elo0", "elo1", "alpha", "beta", "llr", "lower", "upper", "elo",
     "margin", "los"), FISHTEST)
def test_the_figures_are_fishtests(pentanomial: list[int], elo0: float, elo1: float,
                                   alpha: float, beta: float, llr: float, lower: float,
                                   upper: float, elo: float, margin: float,
                                   los: float) -> None:
    result = sprt.sprt(pentanomial, elo0, elo1, alpha, beta)
    assert result.pairs == sum(pentanomial)
    assert result.llr == pytest.approx(llr, rel=1e-9, abs=1e-12)
    assert (result.lower, result.upper) == pytest.approx((lower, upper), rel=1e-15)
    assert result.estimate.elo == pytest.approx(elo, rel=1e-9, abs=1e-9)
    assert result.estimate.margin == pytest.approx(margin, rel=1e-9)
    assert result.estimate.los == pytest.approx(los, rel=1e-9, abs=1e-12)
    expected = "H1" if llr >= upper else "H0" if llr <= lower else None
    assert result.decision == expected


def test_the_bounds_and_decisions() -> None:
    lower, upper = sprt.bounds(0.05, 0.05)
    assert lower == math.log(0.05 / 0.95) and upper == math.log(0.95 / 0.05)
    assert sprt.sprt([0, 0, 250, 0, 0]).decision == "H0"
    assert sprt.sprt([0, 0, 3, 60, 140]).decision is None  # 2.90, just under 2.94
    assert sprt.sprt([0, 0, 3, 60, 150]).decision == "H1"
    assert sprt.sprt([1, 4, 10, 4, 1]).decision is None
    # Looser errors, narrower bounds: the same pairs decide.
    assert sprt.sprt([0, 0, 3, 60, 140], alpha=0.1, beta=0.1).decision == "H1"


def test_more_points_raise_the_llr() -> None:
    """Moving one pair up a bucket (a game won rather than drawn or lost) raises the LLR
    and the estimate, whatever the counts."""
    rng = random.Random(5)
    for _ in range(200):
        counts = [rng.randint(0, 30) for _ in range(5)]
        bucket = rng.randrange(4)
        if counts[bucket] == 0:
            continue
        better = list(counts)
        better[bucket] -= 1
        better[bucket + 1] += 1
        assert sprt.llr(better, 0, 5) > sprt.llr(counts, 0, 5), (counts, bucket)
        assert sprt.estimate(better).elo > sprt.estimate(counts).elo, (counts, bucket)


@pytest.mark.parametrize("pentanomial", [[3, 20, 51, 30, 6], [0, 0, 7, 1, 0], [9, 1, 0, 0, 4],
                                         [0, 0, 0, 0, 0], [100, 0, 0, 0, 0]])
def test_the_candidate_and_the_baseline_swapped(pentanomial: list[int]) -> None:
    """Seen from the baseline, every pair's points are two minus the candidate's: the
    estimate changes sign, and the LLR of the mirrored hypotheses changes sign."""
    mirrored = pentanomial[::-1]
    assert sprt.llr(mirrored, -5, 0) == pytest.approx(-sprt.llr(pentanomial, 0, 5), rel=1e-9,
                                                      abs=1e-12)
    ours, theirs = sprt.estimate(pentanomial), sprt.estimate(mirrored)
    assert theirs.elo == pytest.approx(-ours.elo, abs=1e-9)
    assert theirs.margin == pytest.approx(ours.margin, rel=1e-9)
    assert theirs.los == pytest.approx(1 - ours.los, abs=1e-12)


def test_even_pairs_estimate_no_gain_and_the_interval_narrows() -> None:
    margins = []
    for scale in (1, 4, 16):
        estimate = sprt.estimate([2 * scale, 8 * scale, 20 * scale, 8 * scale, 2 * scale])
        assert estimate.elo == 0.0 and estimate.los == 0.5
        assert estimate.low == -estimate.high
        margins.append(estimate.margin)
    # Four times the pairs, half the margin (nearly: Elo is not linear in the score).
    assert margins[0] / margins[1] == pytest.approx(2, rel=0.01)
    assert margins[1] / margins[2] == pytest.approx(2, rel=0.01)


def test_elo_and_score() -> None:
    assert sprt.score_of_elo(0) == 0.5
    assert sprt.score_of_elo(400) == pytest.approx(10 / 11)
    for elo in (-800, -5, 0, 3.5, 200, 1000):
        assert sprt.elo_of_score(sprt.score_of_elo(elo)) == pytest.approx(elo, abs=1e-9)
    assert sprt.elo_of_score(1.0) == sprt.elo_of_score(0.999)
    assert sprt.elo_of_score(0.0) == pytest.approx(-sprt.elo_of_score(1.0), rel=1e-12)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: sprt.sprt([1, 2, 3, 4]), "5 counts"),
    (lambda: sprt.sprt([1, 2, -3, 4, 5]), "negative"),
    (lambda: sprt.sprt([1, 2, 3, 4, 5], elo0=5, elo1=5), "below"),
    (lambda: sprt.sprt([1, 2, 3, 4, 5], alpha=0), "alpha"),
    (lambda: sprt.sprt([1, 2, 3, 4, 5], alpha=0.5, beta=0.5), "alpha"),
    (lambda: sprt.sprt([1, 2, 3, 4, 5], elo0=0, elo1=1e6), "too far"),
])
def test_wrong_parameters_are_refused(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def duel(elo: float, seed: int, draws: float, max_pairs: int,
         every: int = 1) -> tuple[int, sprt.Decision | None]:
    """Pairs of games between a candidate ``elo`` stronger and its baseline, each game won,
    drawn or lost at random (``draws`` of them drawn, the expected score that of the Elo
    difference), until the test decides (looked at every ``every`` pairs) or
    ``max_pairs``: the pairs played and the decision."""
    rng = random.Random(seed)
    score = sprt.score_of_elo(elo)
    win, loss = score - draws / 2, 1 - score - draws / 2
    counts = [0] * 5
    for pairs in range(1, max_pairs + 1):
        points = 0
        for _ in range(2):
            draw = rng.random()
            points += 2 if draw < win else 0 if draw < win + loss else 1
        counts[points] += 1
        if pairs % every == 0 and (decision := sprt.sprt(counts).decision) is not None:
            return pairs, decision
    return max_pairs, None


@pytest.mark.parametrize("seed", range(4))
def test_a_much_stronger_candidate_passes_h1(seed: int) -> None:
    pairs, decision = duel(200, seed, draws=0.3, max_pairs=1000)
    assert decision == "H1"
    assert 100 < pairs < 400  # H1 is five Elo: even a clear gain needs some pairs


def test_an_equal_candidate_never_passes_h1() -> None:
    """Equal strength is H0 itself: the test ends H0 (or plays on), and within these
    seeded duels it ends H0 in all but the long one."""
    ends = [duel(0, seed, draws=0.3, max_pairs=20_000, every=10) for seed in range(5)]
    assert all(decision != "H1" for _, decision in ends)
    assert sum(decision == "H0" for _, decision in ends) >= 3


def test_identical_perfect_players_end_h0() -> None:
    """Two perfect players draw every game: every pair scores one point, and the test
    ends H0 after a couple of hundred pairs."""
    llrs = [sprt.sprt([0, 0, pairs, 0, 0]) for pairs in range(1, 400)]
    first = next(result for result in llrs if result.decision is not None)
    assert first.decision == "H0"
    assert 100 < first.pairs < 300
    assert all(result.decision is None for result in llrs[:first.pairs - 1])

"""The sequential probability ratio test of a duel: is the candidate stronger than the baseline?

Pure: no I/O.  A duel plays game pairs (the same seed twice, seats swapped) and counts them
by the points the candidate took over the pair: the pentanomial ``[n0, n1, n2, n3, n4]`` of
pairs worth 0, 0.5, 1, 1.5 and 2 points (a win is 1, a draw 0.5).  Counting pairs rather
than games takes out most of the luck of the seat and of the seed, so the test needs fewer
games.

The method is fishtest's (the Stockfish testing framework), with Elo in logistic units:

* **Hypotheses.**  H0: the candidate is ``elo0`` Elo stronger; H1: ``elo1`` Elo stronger
  (``elo0 < elo1``).  An Elo difference ``e`` means an expected score per game of
  ``L(e) = 1 / (1 + 10 ** (-e / 400))``.
* **LLR.**  The generalized log-likelihood ratio (GSPRT) of the pentanomial counts: under
  each hypothesis, the distribution of a pair's score that is closest to the observed one
  (maximum likelihood) among those whose expected score per game is ``L(elo)``; the LLR is
  the log-likelihood of the observed counts under H1's minus under H0's.  The constrained
  maximum likelihood distribution is ``p_i / (1 + x * (v_i - s))`` with ``x`` the root of
  the secular equation ``sum_i p_i * (v_i - s) / (1 + x * (v_i - s)) = 0`` (M. Van den
  Bergh, "Maximum likelihood estimation of a multinomial distribution with given
  expectation value").  Fishtest's ``LLR_logistic``.
* **Bounds.**  Wald's: stop for H1 when the LLR reaches ``log((1 - beta) / alpha)``, for
  H0 when it falls to ``log(beta / (1 - alpha))``.  ``alpha`` is the chance of accepting
  H1 when H0 holds, ``beta`` that of accepting H0 when H1 holds.  (Fishtest also moves
  the bounds in by the overshoot it measures on the LLR's past jumps, since it looks at a
  test only every few pairs; these bounds are Wald's own, to be looked at after each pair.)
* **Elo estimate.**  From the mean and variance of the score per game over the pairs, the
  mean's 95% normal interval, each end turned into Elo by the inverse of ``L``; the margin
  is half the interval's width (fishtest's ``get_elo``: the estimate is shown as ``elo ±
  margin``).  Scores are kept within ``[0.001, 0.999]`` before they become Elo, so an
  estimate is within about ±1200.
* **Regularization.**  A pentanomial count of zero is taken as 0.001 (fishtest's small
  prior), both for the LLR and for the estimate.  Without it the maximum likelihood
  distribution is degenerate when every pair scored the same (the variance is zero) and
  the LLR is undefined; with it, no pairs give an LLR of about 0 and an interval as wide
  as the clamp allows, and pairs that all score the same give a finite LLR that moves
  towards the hypothesis their score is closer to.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The score per game of each pentanomial bucket: a pair's points (0 to 2) over its two
games."""
REGULARIZER = 1e-3
"""What a count of zero is taken as (fishtest's prior)."""
SCORE_CLAMP = 1e-3
"""Scores are kept this far from 0 and 1 before they become Elo."""
Z_95 = 1.959963984540054
"""The standard normal quantile of 0.975: a 95% two-sided interval."""

Decision = Literal["H0", "H1"]


def score_of_elo(elo: float) -> float:
    """The expected score per game of a player ``elo`` logistic Elo stronger."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_of_score(score: float) -> float:
    """The logistic Elo difference whose expected score per game is ``score``, the score
    kept within ``[0.001, 0.999]`` first (so the answer is finite)."""
    score = min(max(score, SCORE_CLAMP), 1.0 - SCORE_CLAMP)
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: no -0.0 for an even score


@dataclass(frozen=True)
class EloEstimate:
    """The candidate's Elo advantage estimated from the pairs, with its 95% interval."""

    elo: float
    margin: float
    """Half the width of the 95% interval: the estimate is ``elo ± margin``."""
    los: float
    """The likelihood of superiority: the probability that the candidate is stronger
    (the score per game above 0.5), from the normal approximation."""

    @property
    def low(self) -> float:
        """The bottom of the 95% interval."""
        return self.elo - self.margin

    @property
    def high(self) -> float:
        """The top of the 95% interval."""
        return self.elo + self.margin


@dataclass(frozen=True)
class SprtResult:
    """Where a duel's test stands after its pairs so far."""

    pairs: int
    llr: float
    lower: float
    """The H0 bound, ``log(beta / (1 - alpha))``: negative."""
    upper: float
    """The H1 bound, ``log((1 - beta) / alpha)``: positive."""
    decision: Decision | None
    """H1 once the LLR reaches the upper bound, H0 once it falls to the lower one, else
    None (play on)."""
    estimate: EloEstimate


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's lower (H0) and upper (H1) bounds of the LLR for these error rates."""
    _check_errors(alpha, beta)
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def llr(pentanomial: Sequence[int], elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for
    these pentanomial counts, regularized (see the module's notes)."""
    if not elo0 < elo1:
        raise ValueError(f"elo0 ({elo0}) must be below elo1 ({elo1})")
    total, shares = _distribution(pentanomial)
    s0, s1 = score_of_elo(elo0), score_of_elo(elo1)
    for score in (s0, s1):
        if not 0.0 < score < 1.0:
            raise ValueError(f"Elo bounds {elo0}, {elo1} are too far from 0")
    x0, x1 = _secular_root(shares, s0), _secular_root(shares, s1)
    # The constrained maximum likelihood distributions are p_i / (1 + x_k (v_i - s_k)), so
    # log(q1_i / q0_i) = log(1 + x0 (v_i - s0)) - log(1 + x1 (v_i - s1)).
    return total * math.fsum(
        share * (math.log1p(x0 * (value - s0)) - math.log1p(x1 * (value - s1)))
        for value, share in zip(PAIR_SCORES, shares, strict=True))


def estimate(pentanomial: Sequence[int]) -> EloEstimate:
    """The Elo advantage of the candidate, its 95% margin and its likelihood of
    superiority, from these pentanomial counts (regularized)."""
    counts = _regularized(pentanomial)
    games = 2.0 * math.fsum(counts)
    # Points per pair are 0, 0.5, .. 2; per game, the mean is their sum over the games.
    mean = math.fsum(count * index / 2.0 for index, count in enumerate(counts)) / games
    # The variance of a pair's points, over two: that of one game's score when the two
    # games of a pair are taken together (their correlation included).
    variance = math.fsum(count * (index / 2.0 - 2.0 * mean) ** 2
                         for index, count in enumerate(counts)) / games
    error = math.sqrt(variance / games)
    low, high = elo_of_score(mean - Z_95 * error), elo_of_score(mean + Z_95 * error)
    los = 0.5 * (1.0 + math.erf((mean - 0.5) / error / math.sqrt(2.0))) if error > 0 else (
        1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5)
    return EloEstimate(elo_of_score(mean), (high - low) / 2.0, los)


def sprt(pentanomial: Sequence[int], elo0: float = 0.0, elo1: float = 5.0,
         alpha: float = 0.05, beta: float = 0.05) -> SprtResult:
    """The test's state for these pentanomial counts: LLR, bounds, decision, estimate.

    The defaults are the duels': H0 no gain, H1 five Elo, 5% error either way.
    """
    lower, upper = bounds(alpha, beta)
    ratio = llr(pentanomial, elo0, elo1)
    decision: Decision | None = "H1" if ratio >= upper else "H0" if ratio <= lower else None
    return SprtResult(sum(pentanomial), ratio, lower, upper, decision, estimate(pentanomial))


def _check_errors(alpha: float, beta: float) -> None:
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ValueError(f"alpha ({alpha}) and beta ({beta}) must be in (0, 1), "
                         "their sum below 1")


def _regularized(pentanomial: Sequence[int]) -> list[float]:
    if len(pentanomial) != len(PAIR_SCORES):
        raise ValueError(f"a pentanomial has {len(PAIR_SCORES)} counts, "
                         f"not {len(pentanomial)}")
    if any(count < 0 for count in pentanomial):
        raise ValueError(f"negative count in {list(pentanomial)}")
    return [float(count) if count > 0 else REGULARIZER for count in pentanomial]


def _distribution(pentanomial: Sequence[int]) -> tuple[float, list[float]]:
    """The regularized total and the observed share of each bucket."""
    counts = _regularized(pentanomial)
    total = math.fsum(counts)
    return total, [count / total for count in counts]


def _secular_root(shares: Sequence[float], score: float) -> float:
    """The root ``x`` of ``f(x) = sum_i p_i a_i / (1 + x a_i)``, ``a_i = v_i - score``, in
    the interval where every ``1 + x a_i`` is positive.

    ``f`` falls strictly from +inf to -inf across that interval (its derivative is
    ``-sum p_i a_i**2 / (1 + x a_i)**2``), so the root is unique: Newton's steps from
    inside a shrinking bracket, halving the bracket when a step would leave it.
    """
    offsets = [value - score for value in PAIR_SCORES]
    low, high = -1.0 / max(offsets), -1.0 / min(offsets)

    def f(x: float) -> tuple[float, float]:
        terms = [share * a / (1.0 + x * a) for share, a in zip(shares, offsets, strict=True)]
        slope = -math.fsum(term * term / share for term, share in zip(terms, shares, strict=True))
        return math.fsum(terms), slope

    x = 0.0  # inside: every 1 + 0 * a_i is 1
    for _ in range(200):
        value, slope = f(x)
        if value == 0.0:
            return x
        if value > 0.0:
            low = x
        else:
            high = x
        step = x - value / slope
        if not low < step < high:
            step = (low + high) / 2.0
        if step in (low, high) or abs(step - x) <= 4.0 * math.ulp(x):
            return step
        x = step
    return x

"""Ratings with uncertainty: OpenSkill's Plackett-Luce model, and the leaderboard's view of it.

Pure: no I/O.  The store (:mod:`merknera.store.ratings`) keeps the numbers and calls
:func:`update` once per finished game with a result, in the order the games finished.

The choices, in one place:

* **Model.**  ``openskill.models.PlackettLuce`` with the library's defaults (mu 25,
  sigma 25/3, beta 25/6, tau 25/300, kappa 0.0001, no sigma limit, no balancing).  Every
  seat is a team of one, so the same model rates two-seat games (tic-tac-toe) and games of
  up to six seats (Scrabble, Squelch).  Tau, the library's additive dynamics, widens every
  sigma a little before each game, so a bot whose play changes is not frozen at an old mean.
* **Result.**  The ranks of :class:`merknera.games.base.Outcome`: 0 is best and equal ranks
  tie.  A forfeit's ranks put the offender last, so a forfeit counts as a loss; a game
  without ranks (superseded, aborted) is not rated at all.  Game points (Scrabble's score)
  are not used: only the order of finish counts.
* **Ranking.**  By the conservative estimate ``mu - 3 * sigma`` (OpenSkill's ``ordinal``):
  a new bot starts at 0 and climbs as its uncertainty shrinks, so one lucky game does not put
  it on top.
* **Interval.**  ``mu ± 1.96 * sigma``, the 95% interval of a normal belief about the skill.
* **Ties.**  See :func:`bands`.
* **Reproducibility.**  :func:`update` is deterministic: the same ratings and ranks give the
  same floats, bit for bit, so replaying the stored results in the same order gives exactly
  the stored ratings (``merknera ratings rebuild``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
"""The one model every rating goes through (the library's defaults)."""

DEFAULT_MU: float = MODEL.mu
"""A new bot's mean skill: 25."""
DEFAULT_SIGMA: float = MODEL.sigma
"""A new bot's uncertainty (one standard deviation): 25/3."""
CONSERVATIVE_Z = 3.0
"""Standard deviations taken off the mean for the conservative estimate that ranks bots."""
INTERVAL_Z = 1.96
"""Standard deviations either side of the mean for the 95% interval."""
MIN_SEATS, MAX_SEATS = 2, 6
"""The seats one rated game may have."""


@dataclass(frozen=True)
class Rating:
    """One bot's belief about its skill: a mean and a standard deviation."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA

    @property
    def conservative(self) -> float:
        """``mu - 3 * sigma``: what the leaderboard ranks by (OpenSkill's ordinal)."""
        return self.mu - CONSERVATIVE_Z * self.sigma

    @property
    def low(self) -> float:
        """The bottom of the 95% interval, ``mu - 1.96 * sigma``."""
        return self.mu - INTERVAL_Z * self.sigma

    @property
    def high(self) -> float:
        """The top of the 95% interval, ``mu + 1.96 * sigma``."""
        return self.mu + INTERVAL_Z * self.sigma

    def overlaps(self, other: Rating) -> bool:
        """Whether the two 95% intervals share a point (closed intervals: touching counts)."""
        return self.low <= other.high and other.low <= self.high


DEFAULT = Rating()
"""The rating of a bot that has played no rated game."""


def update(ratings_by_seat: Sequence[Rating], ranks: Sequence[int]) -> tuple[Rating, ...]:
    """The seats' ratings after one finished game, in seat order.

    ``ranks`` holds one rank per seat, 0 best, equal ranks tied (``Outcome.ranks``).  Each
    seat is its own team.  Raises ValueError for fewer than two or more than six seats or
    a rank list of another length.
    """
    if len(ratings_by_seat) != len(ranks):
        raise ValueError(f"{len(ratings_by_seat)} ratings but {len(ranks)} ranks")
    if not MIN_SEATS <= len(ranks) <= MAX_SEATS:
        raise ValueError(f"a rated game has {MIN_SEATS} to {MAX_SEATS} seats, not {len(ranks)}")
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in ratings_by_seat]
    rated = MODEL.rate(teams, ranks=[float(rank) for rank in ranks])
    return tuple(Rating(team[0].mu, team[0].sigma) for team in rated)


def rank_key(rating: Rating) -> tuple[float, float]:
    """Sort key, best first: the higher conservative estimate, then the higher mean."""
    return (-rating.conservative, -rating.mu)


def bands(ratings_in_rank_order: Sequence[Rating]) -> list[int]:
    """The "statistically tied" band of each row of a leaderboard, numbered from 1.

    Walk the rows in rank order.  The first row opens band 1.  Each later row joins the
    current band if its 95% interval overlaps the interval of the band's *first* row, and
    otherwise opens the next band (its number is one more; numbers have no gaps).

    So every member of a band is statistically indistinguishable from the band's leader;
    bands are consecutive runs of rows, and every row is in exactly one.  Anchoring on the
    leader rather than chaining row to row keeps a long run of slightly different bots from
    merging into one band whose top and bottom clearly differ.  Two members of a band need
    not overlap each other (the leader sits between them).
    """
    found: list[int] = []
    leader: Rating | None = None
    for rating in ratings_in_rank_order:
        if leader is None or not rating.overlaps(leader):
            leader = rating
            found.append(found[-1] + 1 if found else 1)
        else:
            found.append(found[-1])
    return found

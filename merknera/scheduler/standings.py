"""A tournament's table: points and tie-breaks from plain results, no I/O.

Results are the 4-tuples of :mod:`merknera.scheduler.pairing` (``(round, first, second or
None for a bye, outcome from first's view)``).  "No result" games and byes are left out
entirely: nobody scores, and they count as neither games nor byes here.

Tie-breaks, as in chess:

* Buchholz: the sum of the points of the opponents an entrant actually played, so a good
  score against strong opposition ranks above the same score against weak.  Byes add
  nothing (there was no opponent).  ``buchholz_cut=1`` drops the weakest opponent, which
  keeps one bad pairing from deciding a tie.
* Sonneborn-Berger: the points of the opponents an entrant beat, plus half those of the
  ones it drew; rewards beating the strong rather than the weak, and is the one that still
  separates entrants in a round robin, where everyone's Buchholz is alike.
* Wins: more games won rather than drawn.

Complete ties (equal points and every tie-break) share a rank (1, 2, 2, 4); the seed
then only orders the rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Literal, TypeAlias

from merknera.scheduler.pairing import (
    DEFAULT_SCORING,
    NO_RESULT,
    ResultLike,
    Scoring,
    checked_results,
    seed_index,
)

Tiebreak: TypeAlias = Literal["buchholz", "sonneborn_berger", "wins"]
DEFAULT_TIEBREAKS: Final[tuple[Tiebreak, ...]] = ("buchholz", "sonneborn_berger", "wins")


@dataclass(frozen=True)
class StandingRow:
    """One line of the table."""

    entrant: int
    points: float
    buchholz: float
    sonneborn_berger: float
    games: int
    wins: int
    draws: int
    losses: int
    byes: int
    rank: int


@dataclass
class _Tally:
    points: float = 0.0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    byes: int = 0
    # (opponent, outcome from this entrant's view) of every game with a result.
    games: list[tuple[int, float]] = field(default_factory=list)


def standings(entrants: Sequence[int], results: Iterable[ResultLike], *,
              scoring: Scoring = DEFAULT_SCORING, buchholz_cut: int = 0,
              tiebreaks: Sequence[Tiebreak] = DEFAULT_TIEBREAKS) -> list[StandingRow]:
    """The table, best first: by points, then ``tiebreaks`` in order, then seed.

    ``entrants`` in seed order; every entrant named in ``results`` must be among them (a
    stray id is a caller's bug, and silently dropping it would change opponents' Buchholz).
    An entrant in two boards of the same round is refused for the same reason.
    """
    seeds = seed_index(entrants)
    if buchholz_cut < 0:
        raise ValueError("buchholz_cut cannot be negative")
    unknown = set(tiebreaks) - set(DEFAULT_TIEBREAKS)
    if unknown:
        raise ValueError(f"unknown tie-breaks: {sorted(unknown)}")
    tallies = {entrant: _Tally() for entrant in entrants}
    boards: set[tuple[int, int]] = set()
    for result in checked_results(results):
        for entrant in (result.first, result.second):
            if entrant is None:
                continue
            if entrant not in tallies:
                raise ValueError(f"result names an unknown entrant: {result}")
            if (result.round, entrant) in boards:
                raise ValueError(f"entrant {entrant} has two boards in round {result.round}")
            boards.add((result.round, entrant))
        if result.outcome == NO_RESULT:
            continue
        first = tallies[result.first]
        if result.second is None:
            first.byes += 1
            first.points += scoring.bye
            continue
        second = tallies[result.second]
        for me, opponent, view in ((first, result.second, result.outcome),
                                   (second, result.first, 1 - result.outcome)):
            me.games.append((opponent, view))
            me.points += scoring.of(view)
            if view == 1:
                me.wins += 1
            elif view == 0.5:
                me.draws += 1
            else:
                me.losses += 1

    def buchholz(tally: _Tally) -> float:
        faced = sorted(tallies[opponent].points for opponent, _ in tally.games)
        return sum(faced[buchholz_cut:])

    def sonneborn_berger(tally: _Tally) -> float:
        # The outcome (1, 0.5, 0) weights the opponent's points whatever the scoring.
        return sum(tallies[opponent].points * view for opponent, view in tally.games)

    rows = [StandingRow(entrant=e, points=t.points, buchholz=buchholz(t),
                        sonneborn_berger=sonneborn_berger(t), games=len(t.games),
                        wins=t.wins, draws=t.draws, losses=t.losses, byes=t.byes, rank=0)
            for e, t in tallies.items()]

    def merit(row: StandingRow) -> tuple[float, ...]:
        values = {"buchholz": row.buchholz, "sonneborn_berger": row.sonneborn_berger,
                  "wins": float(row.wins)}
        return (row.points, *(values[name] for name in tiebreaks))

    rows.sort(key=lambda row: (tuple(-v for v in merit(row)), seeds[row.entrant]))
    ranked: list[StandingRow] = []
    for i, row in enumerate(rows):
        tied = i > 0 and merit(rows[i - 1]) == merit(row)
        ranked.append(replace(row, rank=ranked[-1].rank if tied else i + 1))
    return ranked

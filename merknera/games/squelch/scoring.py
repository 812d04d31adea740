"""Squelch scoring: the Squelchbot spec's table and the options offered for a roll.

The table (``seeds/000_*``)::

    each 1      100        three 1s    1000
    each 5       50        three n      n * 100   (n = 2..6)
    three pairs 750        123456      1500

There are no bonuses for four, five or six of a kind.  The options of a roll are read as the
Go arena reads them (``research/seed-systems.md`` b.3): every distinct sub-multiset of the
roll that scores when *all* of its dice are used, once per way it scores:

* ``123456`` scores 1500 and nothing else;
* otherwise three or more of a face make one set of three (six of a kind: two sets), and the
  dice left over count singly if they are 1s or 5s; a left-over 2, 3, 4 or 6 spoils the reading;
* besides, three pairs (a face twice counts one pair, four times two pairs) and six of a
  kind score 750, so ``111155`` is offered at 1200 and at 750.

So ``1111`` = 1100, ``11111`` = 1200, ``55555`` = 600, ``555555`` = 1000 or 750.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

FACES = "123456"
STRAIGHT = "123456"
STRAIGHT_POINTS = 1500
THREE_PAIRS_POINTS = 750
SINGLE_POINTS = {"1": 100, "5": 50}
"""The faces that score on their own."""
MAX_DICE = 6
"""The most dice a roll may have: the table knows no combination of more."""


@dataclass(frozen=True, order=True)
class Scoring:
    """One way some dice of a roll score: the dice (sorted) and their points."""

    dice: str
    points: int


def triple_points(face: str) -> int:
    """What three dice of ``face`` score: 1000 for 1s, ``face * 100`` otherwise."""
    return 1000 if face == "1" else int(face) * 100


def is_roll(dice: object, count: int | None = None) -> bool:
    """Whether ``dice`` is a roll as the wire writes it: 1-6 digits ``1``-``6`` sorted
    ascending (and exactly ``count`` of them, when given)."""
    return (isinstance(dice, str) and 1 <= len(dice) <= MAX_DICE
            and (count is None or len(dice) == count)
            and all(die in FACES for die in dice) and list(dice) == sorted(dice))


@functools.cache
def points_using_all(dice: str) -> tuple[int, ...]:
    """Every score of the sorted dice ``dice`` that uses all of them, highest first
    (empty when the dice cannot all score)."""
    if dice == STRAIGHT:
        return (STRAIGHT_POINTS,)
    counts = [dice.count(face) for face in FACES]
    found: set[int] = set()
    pairs = sum(1 if count == 2 else 2 if count == 4 else 0 for count in counts)
    if pairs == 3 or MAX_DICE in counts:
        found.add(THREE_PAIRS_POINTS)
    total = 0
    for face, count in zip(FACES, counts, strict=True):
        while count >= 3:
            total += triple_points(face)
            count -= 3
        if count and face not in SINGLE_POINTS:
            break  # a left-over 2, 3, 4 or 6 scores nothing
        total += count * SINGLE_POINTS.get(face, 0)
    else:
        found.add(total)
    return tuple(sorted(found, reverse=True))


@functools.cache
def scorings(roll: str) -> tuple[Scoring, ...]:
    """The options of ``roll`` without their ids, in the order they are offered: points
    descending, then fewer dice first (as the spec says), then the dice ascending (our
    tie-break, so that the order is fixed).  Empty when the roll squelches.

    :raises ValueError: if ``roll`` is not a roll (see :func:`is_roll`).
    """
    if not is_roll(roll):
        raise ValueError(f"not a roll of 1-{MAX_DICE} sorted dice: {roll!r}")
    counts = [roll.count(face) for face in FACES]
    found: list[Scoring] = []
    for taken in itertools.product(*(range(count + 1) for count in counts)):
        dice = "".join(face * n for face, n in zip(FACES, taken, strict=True))
        if dice:
            found.extend(Scoring(dice, points) for points in points_using_all(dice))
    found.sort(key=lambda option: (-option.points, len(option.dice), option.dice))
    return tuple(found)


def squelches(roll: str) -> bool:
    """Whether ``roll`` scores nothing at all."""
    return not scorings(roll)

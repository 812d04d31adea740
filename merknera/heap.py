"""The garbage collector's settings for a long-running platform process.

Start-up leaves a large heap that lives as long as the process: every game's rules and
assets (the Scrabble lexicon among them), the GraphQL schema, the web application, the
imported modules; about 87,000 tracked objects in all.  Left to the collector, every full
collection walks all of them again (13-15 ms in ``merknera serve`` just after start-up,
more as the heap grows), stopping the event loop and every game on it meanwhile; and the
youngest generation, collected every 700 allocations, is collected about 70 times a
second at a few thousand moves a second.  :func:`settle`, called once start-up is done,
moves that heap out of the collector's sight (:func:`gc.freeze`) and collects the
youngest generation every 5,000 allocations.

Measured in ``merknera serve`` (the registration round robin of ``bench/referee.py``,
4 runs each): the collector's time in a round robin of 0.37-0.40 s fell from 5.0-5.7 ms
(26-29 collections, 3 of the middle generation) to 1.3-1.4 ms (3 collections).  In
a process that ran the platform several times, as the bench's direct mode does, a full
collection of 48 ms came about once in four round robins; none comes after :func:`settle`.

Only the processes that serve (``merknera serve``, ``merknera demo``) call it: it is a
setting of the whole process, which a process embedding the platform, such as a test
runner, makes for itself.
"""

from __future__ import annotations

import gc

YOUNGEST_THRESHOLD = 5_000
"""Allocations between collections of the youngest generation (CPython's default: 700).
Most of a move's objects die by reference counting before the next collection whatever
the threshold; collecting less often walks fewer of the few that are still alive."""


def settle() -> None:
    """Collect the garbage of start-up, then freeze what survives, for good.

    The frozen objects are still freed when their last reference goes; only a cycle among
    them would wait for :func:`gc.unfreeze`, which nothing here calls: start-up's objects
    live as long as the process.
    """
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNGEST_THRESHOLD, middle, oldest)

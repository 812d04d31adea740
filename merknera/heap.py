"""The garbage collector's settings for a long-running platform process.

Start-up leaves a large heap that lives as long as the process: every game's rules and
assets (the Scrabble lexicon among them), the GraphQL schema, the web application, the
imported modules.  Left to the collector, every full collection walks all of them again,
stopping the event loop and every game on it meanwhile, and the youngest generation is
collected many times a second under load.  :func:`settle`, called once start-up is done,
moves that heap out of the collector's sight (:func:`gc.freeze`) and collects the
youngest generation less often.

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

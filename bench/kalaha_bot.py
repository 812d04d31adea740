"""The Kalaha reference bot's ``good`` strategy: sowings and time per move.

    .venv/bin/python bench/kalaha_bot.py [--games N] [--seed S]

Plays N seeded games of ``good`` against ``random`` (``good`` moving first in half of them)
with the bot's own rules, then, on every position ``good`` moved in, times
:func:`choose_good` and counts its sowings, the unit of the search's work that
tests/bots/test_bot_kalaha.py bounds (the count is taken in a second pass, so that counting
does not slow the timed one).  Prints medians, 90th percentiles and maxima, and the time
per sowing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import merknera_bots.kalaha as kalaha
from merknera_bots.kalaha import DEPTH, OVER, Position, choose_good, choose_random, sow

START: Position = (6,) * 6 + (0,) + (6,) * 6 + (0,)


def positions(games: int, seed: int) -> list[tuple[Position, int]]:
    """Every position (and the player to move) in which ``good`` moved."""
    rng = random.Random(seed)
    found: list[tuple[Position, int]] = []
    for game in range(games):
        good = game % 2
        pos, player = START, 0
        while player != OVER:
            if player == good:
                found.append((pos, player))
                pit = choose_good(pos, player)
            else:
                pit = choose_random(pos, player, rng)
            pos, player = sow(pos, player, pit)
    return found


def sowings(pos: Position, player: int) -> int:
    """How many sowings :func:`choose_good` makes from ``pos``."""
    count = 0

    def counted(position: Position, player: int, pit: int) -> tuple[Position, int]:
        nonlocal count
        count += 1
        return sow(position, player, pit)

    # The search looks sow up in its module at every call.
    kalaha.sow = counted
    try:
        choose_good(pos, player)
    finally:
        kalaha.sow = sow
    return count


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    found = positions(args.games, args.seed)
    seconds: list[float] = []
    for pos, player in found:
        started = time.perf_counter()
        choose_good(pos, player)
        seconds.append(time.perf_counter() - started)
    counts = [float(sowings(pos, player)) for pos, player in found]

    print(f"good at depth {DEPTH}: {len(found)} moves of {args.games} games")
    print(f"{'time per move':<18} median {statistics.median(seconds) * 1000:7.1f} ms"
          f"   p90 {_percentile(seconds, 0.9) * 1000:7.1f} ms"
          f"   max {max(seconds) * 1000:7.1f} ms")
    print(f"{'sowings per move':<18} median {statistics.median(counts):9.0f}"
          f"   p90 {_percentile(counts, 0.9):9.0f}   max {max(counts):9.0f}")
    print(f"{'time per sowing':<18} {sum(seconds) / sum(counts) * 1e6:.2f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

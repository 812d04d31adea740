"""The Scrabble bots' move generator: word-graph build time and memory, time per move.

    .venv/bin/python bench/scrabble_bot.py [--games N] [--seed S]

Builds the DAWG of ``merknera/game_assets/scrabble/dictionary-english.txt`` (time, nodes,
memory), then plays N games of the best-move strategy against itself on the standard board, timing
:func:`best_move` (what ``--strategy best`` runs) and :func:`generate_moves` (the full list
``--strategy random`` draws from) on every position. Every chosen play is re-checked by
:func:`check_play`. Prints medians, 90th percentiles and maxima; "mid-game" is the moves
after the first four and before the bag runs out.
"""

from __future__ import annotations

import argparse
import gc
import random
import resource
import statistics
import sys
import time
import tracemalloc

from merknera.assets import default_directory
from merknera_bots.scrabble_check import check_play
from merknera_bots.scrabble_files import BLANK, BoardLayout, LetterSet
from merknera_bots.scrabble_lexicon import Lexicon, Position
from merknera_bots.scrabble_movegen import best_move, generate_moves

ASSETS = default_directory() / "scrabble"


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _line(name: str, values: list[float]) -> str:
    return (f"{name:<34} n={len(values):<4} median {statistics.median(values) * 1000:7.1f} ms"
            f"   p90 {_percentile(values, 0.9) * 1000:7.1f} ms"
            f"   max {max(values) * 1000:7.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    text = (ASSETS / "dictionary-english.txt").read_text()
    layout = BoardLayout.from_json((ASSETS / "board-standard.json").read_text())
    letters = LetterSet.from_json((ASSETS / "letters-english.json").read_text())

    builds = []
    for _ in range(3):
        started = time.perf_counter()
        lexicon = Lexicon.from_text(text)
        builds.append(time.perf_counter() - started)
    # Memory is measured on a separate build: tracing slows building several times over.
    del lexicon
    gc.collect()
    tracemalloc.start()
    lexicon = Lexicon.from_text(text)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"lexicon: {len(lexicon)} words, {lexicon.node_count} DAWG nodes")
    print(f"build: median {statistics.median(builds):.2f} s of {len(builds)} "
          f"(min {min(builds):.2f} s)")
    print(f"memory: the graph holds {held / 2**20:.1f} MiB "
          f"(peak while building {peak / 2**20:.1f} MiB)")

    rng = random.Random(args.seed)
    best_times: list[float] = []
    mid_best: list[float] = []
    all_times: list[float] = []
    mid_all: list[float] = []
    counts: list[int] = []
    with_blank: list[float] = []
    for _ in range(args.games):
        bag = [t for t, n in letters.counts.items() for _ in range(n)]
        rng.shuffle(bag)
        racks = [[bag.pop() for _ in range(letters.rack)] for _ in range(2)]
        position = Position.empty(layout)
        scores = [0, 0]
        turn, passes, moves = 0, 0, 0
        while passes < 4 and all(racks):
            rack = racks[turn]
            started = time.perf_counter()
            move = best_move(position, rack, lexicon, letters)
            elapsed = time.perf_counter() - started
            started = time.perf_counter()
            every = generate_moves(position, rack, lexicon, letters)
            elapsed_all = time.perf_counter() - started
            best_times.append(elapsed)
            all_times.append(elapsed_all)
            counts.append(len(every))
            if BLANK in rack:
                with_blank.append(elapsed_all)
            if moves >= 4 and bag:
                mid_best.append(elapsed)
                mid_all.append(elapsed_all)
            moves += 1
            if move is None:
                passes += 1
            else:
                passes = 0
                score, _ = check_play(position, move.tiles, rack, lexicon, letters)
                assert score == move.score, (move, score)
                assert max(m.score for m in every) == move.score
                position = position.play(move)
                scores[turn] += move.score
                for tile in move.tiles:
                    rack.remove(BLANK if tile.blank else tile.letter)
                while bag and len(rack) < letters.rack:
                    rack.append(bag.pop())
            turn = 1 - turn
        print(f"game: {moves} turns, scores {scores}")
    print(_line("best_move, every position", best_times))
    print(_line("best_move, mid-game", mid_best))
    print(_line("generate_moves, every position", all_times))
    print(_line("generate_moves, mid-game", mid_all))
    if with_blank:
        print(_line("generate_moves, racks with a blank", with_blank))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"whole process: max RSS {rss:.0f} MiB")
    print(f"legal plays per position: median {statistics.median(counts):.0f}, "
          f"max {max(counts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

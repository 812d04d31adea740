"""Scrabble: the referee's time per move, the best-move bot's time per move, the dictionary.

    .venv/bin/python bench/scrabble.py [--games N] [--seed S]

Plays N two-player games on the platform's own rules (merknera/games/scrabble) with the
best-move reference bot choosing every move from the NextMove params the platform would
send.  For every move it times

* the referee: ``parse_move`` + ``apply``, i.e. validating and scoring the bot's reply
  (target: median under 100 microseconds), and
* the bot: ``best_move`` on that position (target: median under 250 ms on mid-game
  boards, the moves after the fourth and before the bag runs out);

and it prints the dictionary's load time and memory for both (the referee's word set and
the bot's DAWG).
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable

from merknera.assets import default_directory
from merknera.games import JSON
from merknera.games.scrabble import Scrabble, ScrabbleState
from merknera_bots.scrabble_files import BoardLayout, LetterSet
from merknera_bots.scrabble_lexicon import Lexicon, Position
from merknera_bots.scrabble_movegen import best_move

ASSETS = default_directory() / "scrabble"
FILES = {"gameboard": "board-standard.json", "dictionary": "dictionary-english.txt",
         "letters": "letters-english.json"}


def _load_time_and_memory(build: Callable[[], object]) -> tuple[float, float]:
    """Median seconds of three builds, and the MiB the built object holds."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        build()
        times.append(time.perf_counter() - started)
    gc.collect()
    tracemalloc.start()
    kept = build()
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return statistics.median(times), size / 2**20


def _wire(move: object) -> JSON:
    """A bot Move as the JSON a bot sends."""
    tiles = getattr(move, "tiles", ())
    return {"type": "PLAY", "playtiles": [
        {"row": t.row, "col": t.col, "tile": "*", "letter": t.letter} if t.blank
        else {"row": t.row, "col": t.col, "tile": t.letter} for t in tiles]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    files = {name: (ASSETS / file).read_bytes() for name, file in FILES.items()}
    referee_load, referee_mib = _load_time_and_memory(lambda: Scrabble().with_assets(files))
    text = files["dictionary"].decode()
    bot_load, bot_mib = _load_time_and_memory(lambda: Lexicon.from_text(text))

    game = Scrabble().with_assets(files)
    layout = BoardLayout.from_json(files["gameboard"].decode())
    letters = LetterSet.from_json(files["letters"].decode())
    lexicon = Lexicon.from_text(text)
    referee_times: list[float] = []
    bot_times: list[float] = []
    for number in range(args.games):
        rng = random.Random(args.seed + number)
        state: ScrabbleState = game.new({}, ["one", "two"], rng)
        turn = 0
        while (seat := game.to_move(state)) is not None:
            params = game.next_move_params(state, seat)
            position = Position.from_wire(layout, params["gamestate"], params["blanks"])
            started = time.perf_counter()
            rack = params["tiles"]
            assert isinstance(rack, list)
            move = best_move(position, [str(tile) for tile in rack], lexicon, letters)
            elapsed = time.perf_counter() - started
            mid_game = turn >= 4 and int(str(params["tilesremaining"])) > 0
            if move is None:
                reply: JSON = {"type": "PASS"}
            else:
                reply = _wire(move)
                if mid_game:
                    bot_times.append(elapsed)
            started = time.perf_counter()
            parsed = game.parse_move(reply)
            after = game.apply(state, seat, parsed)
            if move is not None:
                referee_times.append(time.perf_counter() - started)
            state, turn = after, turn + 1
        print(f"game {number + 1}: {turn} turns, scores {list(game.standings(state) or ())}")
    print(f"referee, validate and score a play: median "
          f"{statistics.median(referee_times) * 1e6:6.1f} us over {len(referee_times)} plays "
          f"(target < 100 us)")
    print(f"best-move bot, mid-game move:       median "
          f"{statistics.median(bot_times) * 1e3:6.1f} ms over {len(bot_times)} moves, "
          f"max {max(bot_times) * 1e3:.0f} ms (target < 250 ms)")
    print(f"dictionary, referee word set:       load {referee_load * 1e3:6.0f} ms, "
          f"{referee_mib:5.1f} MiB")
    print(f"dictionary, bot DAWG:               load {bot_load * 1e3:6.0f} ms, "
          f"{bot_mib:5.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Every registered game's pure rules: random playouts per second, referee time per move.

    .venv/bin/python bench/games.py [--seconds 2] [--seats N]

For each game it plays seeded random games (uniform over ``legal_moves``, chance drawn from
the game's RNG) for about ``--seconds`` and prints the playouts per second, then times the
referee's work on each bot move of those games: ``parse_move`` of the wire form plus
``apply`` (median, in microseconds).  Scrabble's random games are passes and exchanges
(its plays are not listed), so its referee figure is in bench/scrabble.py.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from merknera.assets import AssetStore, default_directory
from merknera.games import CHANCE, REGISTRY, AnyGame


def configured(game: AnyGame) -> AnyGame:
    """The game with its asset files when it has any."""
    if not game.assets:
        return game
    return game.with_assets(AssetStore.load(default_directory()).contents(game.mnemonic))


def playouts(game: AnyGame, seats: int, seconds: float) -> tuple[float, list[float], int]:
    """Playouts per second, referee seconds per bot move, and the moves per playout."""
    players = [f"p{seat}" for seat in range(seats)]
    referee: list[float] = []
    games = moves = 0
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < deadline:
        rng, chooser = random.Random(games), random.Random(-games - 1)
        state = game.new(game.default_settings, players, rng)
        while (seat := game.to_move(state)) is not None:
            if seat == CHANCE:
                state = game.apply(state, CHANCE, game.sample_chance(state, rng))
                continue
            move = chooser.choice(list(game.legal_moves(state, seat)))
            wire = game.move_to_wire(move)
            begun = time.perf_counter()
            state = game.apply(state, seat, game.parse_move(wire))
            referee.append(time.perf_counter() - begun)
            moves += 1
        games += 1
    elapsed = time.perf_counter() - started
    return games / elapsed, referee, moves // max(games, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--seats", type=int, default=2)
    args = parser.parse_args()
    print(f"{'game':<18} {'playouts/s':>11} {'moves/game':>11} {'referee median':>15}")
    for mnemonic, game in sorted(REGISTRY.items()):
        seats = min(max(args.seats, game.min_seats), game.max_seats)
        rate, referee, per_game = playouts(configured(game), seats, args.seconds)
        median = statistics.median(referee) * 1e6 if referee else float("nan")
        print(f"{mnemonic:<18} {rate:11.0f} {per_game:11d} {median:12.1f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

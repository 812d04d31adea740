"""A long game's replay: its JSON's size, plain and gzipped, and the time to build it.

    .venv/bin/python bench/replay.py [--rows 25] [--cols 25] [--seed 7] [--repeat 5]

It plays a Hexagons game through the pure rules (two uniformly random players, seeded:
seed 7 on 25x25 is a game of 1,481 moves, the issue's example), stores it in a temporary
SQLite store as the platform does (bots, the game, its move log row by row, the result),
then builds the replay that ``GET /api/games/<id>/replay`` sends from the stored rows, as
the API does (:func:`merknera.web.replay.encode`: the frames, JSON and gzip), median of
``--repeat`` builds, in both forms: every state whole (``?states=full``, the only form before
keyframes and patches) and keyframes with patches (the default, which the page loads).
Targets for the default: under 1 MB gzipped, under 100 ms to build.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from merknera.games import REGISTRY
from merknera.store import Database, games, results, users
from merknera.store import bots as bot_store
from merknera.store.db import Connection
from merknera.web import replay

GAME = REGISTRY["HEXAGONS"]


async def store_game(db: Database, rows: int, cols: int, seed: int) -> tuple[int, int]:
    """A finished Hexagons game of two random players, stored; its id and its moves."""
    user, _ = await users.create_user(db, "bench")

    def seat_bots(conn: Connection) -> int:
        ids = [bot_store.insert(conn, name=name, version="1", game=GAME.mnemonic,
                                user_id=user.id, secret="s",
                                meta=bot_store.BotMetadata("http://127.0.0.1:9/rpc")).id
               for name in ("Honeycomb", "Hexed")]
        return games.create(conn, GAME.mnemonic, seed, ids,
                            {"rows": rows, "cols": cols})

    game_id = await db.transaction(seat_bots)
    await games.mark_running(db, game_id, [0, 1])
    players = ["Honeycomb", "Hexed"]
    state = GAME.new({"rows": rows, "cols": cols}, players, random.Random(seed))
    chooser, latencies = random.Random(seed + 1000), random.Random(seed + 2000)
    written = []
    seq = 0
    while (seat := GAME.to_move(state)) is not None:
        move = chooser.choice(list(GAME.legal_moves(state, seat)))
        state = GAME.apply(state, seat, move)
        seq += 1
        # A row a move, as a runner writes them (each with its latency).
        written.append(games.record_moves(db, game_id, [games.LoggedCall(
            seq, seat, move=GAME.move_to_wire(move),
            latency_ms=round(latencies.uniform(0.3, 40.0), 2))]))
    assert all(await asyncio.gather(*written))
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert await games.finish(db, game_id, outcome, GAME.state_to_json(state))
    return game_id, seq


def timed(build: Callable[[], replay.EncodedReplay], repeat: int) -> tuple[float,
                                                                          replay.EncodedReplay]:
    """The median seconds of ``repeat`` builds, and the last build."""
    took = []
    built = build()  # a first build out of the count: the lattice's cache warms up
    for _ in range(repeat):
        started = time.perf_counter()
        built = build()
        took.append(time.perf_counter() - started)
    return statistics.median(took), built


def line(name: str, seconds: float, built: replay.EncodedReplay) -> str:
    """One row of the table."""
    return (f"{name:<26} {len(built.plain) / 1e6:10.2f} MB {len(built.gzipped) / 1e6:10.3f} MB"
            f" {seconds * 1e3:10.1f} ms")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=25)
    parser.add_argument("--cols", type=int, default=25)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = await Database.open(Path(tmp) / "replay.db")
        try:
            game_id, moves = await store_game(db, args.rows, args.cols, args.seed)
            header = await db.read(functools.partial(
                replay.load_header, game_id=game_id, games=REGISTRY))
            assert header is not None
            rows = await db.read(functools.partial(results.move_log, game_id=game_id))
        finally:
            await db.close()
    print(f"Hexagons {args.rows}x{args.cols}, seed {args.seed}: {moves} moves, "
          f"{len(rows)} rows; median of {args.repeat} builds")
    print(f"{'replay':<26} {'JSON':>13} {'gzipped':>13} {'build':>13}")
    for name, states in (("every state whole (full)", replay.States.FULL),
                         ("keyframes, patches (delta)", replay.States.DELTA)):
        build = functools.partial(replay.encode, header, rows, states)
        print(line(name, *timed(build, args.repeat)))
    print("targets: under 1 MB gzipped, under 100 ms to build")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))

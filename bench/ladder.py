"""How long one ladder scheduling pass takes, and how it grows with the number of bots.

    .venv/bin/python bench/ladder.py [--sizes 100 1000 10000] [--repeat 5]

For each size it builds a store with that many online tic-tac-toe bots with ratings and a
history of finished games, starts the real platform on it, and times ``Ladder.pass_once``
(reading who is free, rated and recently met; choosing the pairs; creating the games),
median of ``--repeat`` passes, plus the pure pairing step alone and the memory a pass
allocates at its peak.  Target: a pass under 50 ms at 1,000 bots.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from merknera.app import Platform
from merknera.config import Config, LivenessSettings, LogSettings, SchedulingSettings, StoreSettings
from merknera.scheduler.ladder import Candidate, choose_pairs
from merknera.store import Database, bots, games, now
from merknera.store.db import Connection

HISTORY = 40
"""Finished games per bot in the store (the pass's reads must not grow with history)."""


async def build(db_path: Path, size: int) -> None:
    """A store with ``size`` current bots, their ratings and ``HISTORY`` games each."""
    db = await Database.open(db_path)
    rng = random.Random(size)

    def work(conn: Connection) -> None:
        stamp = now()
        conn.execute("INSERT INTO users (name, created_at) VALUES ('bench', ?)", (stamp,))
        conn.executemany(
            "INSERT INTO bots (name, version, game, user_id, endpoint, status, secret, "
            "created_at) VALUES (?, '1', 'TICTACTOE', 1, 'http://127.0.0.1:9/', 'OFFLINE', "
            "'s', ?)", [(f"bot{n}", stamp) for n in range(size)])
        conn.executemany(
            "INSERT INTO ratings (bot_id, game, mu, sigma, rated_games, updated_at) "
            "VALUES (?, 'TICTACTOE', ?, ?, ?, ?)",
            [(n + 1, rng.gauss(25, 5), rng.uniform(1, 8), rng.randint(1, 50), stamp)
             for n in range(size)])
        for n in range(size * HISTORY // 2):
            game_id = games.create(conn, "TICTACTOE", n, (rng.randint(1, size),
                                                          rng.randint(1, size)))
            conn.execute("UPDATE games SET status = 'FINISHED', outcome = 'NO_RESULT', "
                         "reason = 'ABORTED', finished_at = ? WHERE id = ?", (stamp, game_id))

    await db.transaction(work)
    await db.close()


async def measure(size: int, repeat: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "ladder.db"
        await build(db_path, size)
        # No retry pings during the passes (the bots' endpoint does not answer).
        platform = Platform(Config(
            store=StoreSettings(db=str(db_path)),
            scheduling=SchedulingSettings(concurrency=32),
            log=LogSettings(level="WARNING"),
            liveness=LivenessSettings(offline_retry_min=3600.0, offline_retry_max=3600.0),
        ))
        await platform.start()
        try:
            presence = platform.scheduler.arena.presence
            current = await bots.current(platform.db)
            # The platform pings every bot at start-up.  Those pings must be over before
            # the passes are timed: at 1,000 bots they took the first pass to 0.4-0.9 s and
            # often the second to 0.1 s, which made the median of three a ping timing.
            await asyncio.gather(*(presence.ping(bot.id) for bot in current))
            for bot in current:
                presence.registered(bot)  # as if each had just answered
            passes = []
            peak = 0
            for _ in range(repeat):
                tracemalloc.start()
                started = time.perf_counter()
                created = await platform.ladder.pass_once()
                passes.append(time.perf_counter() - started)
                peak = max(peak, tracemalloc.get_traced_memory()[1])
                tracemalloc.stop()
                await platform.scheduler.cancel(created)
                await platform.db.write_one(
                    "UPDATE games SET status = 'FINISHED', outcome = 'NO_RESULT', "
                    "reason = 'ABORTED' WHERE status != 'FINISHED'")
        finally:
            await platform.stop()
    rng = random.Random(1)
    candidates = [Candidate(n, rng.gauss(25, 5), rng.uniform(1, 8), rng.randint(0, 50))
                  for n in range(size)]
    pure = []
    for _ in range(repeat):
        started = time.perf_counter()
        choose_pairs(candidates, 32)
        pure.append(time.perf_counter() - started)
    return statistics.median(passes), statistics.median(pure), peak / 2**20


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'bots':>7} {'pass (ms)':>10} {'pairing (ms)':>13} {'peak MiB':>9}")
    for size in args.sizes:
        full, pure, mib = await measure(size, args.repeat)
        print(f"{size:>7} {full * 1e3:10.1f} {pure * 1e3:13.2f} {mib:9.1f}")
    print("target: a pass under 50 ms at 1,000 bots")


if __name__ == "__main__":
    asyncio.run(main())

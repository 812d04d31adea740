"""How fast does the platform referee moves, against the bare JSON-RPC rate?

Runs instantly-answering bots in a second process (bench/fastbot.py) on loopback, then:

1. **bare**: NextMove calls through the platform's own BotClient (one shared aiohttp
   session) to those bots, ``--concurrency`` at a time: the limit of this machine;
2. **platform**: the real platform (SQLite store on a temporary file, the scheduler, the
   runners) playing ``--games`` tic-tac-toe games among the bots, ``--concurrency`` at once;

and prints both rates in calls (moves) per second and their ratio.  Target: >= 0.5.

    .venv/bin/python bench/referee.py [--bots 8] [--games 600] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from merknera.app import Platform
from merknera.botclient import BotClient
from merknera.config import Config
from merknera.scheduler.registration import RegistrationRequest
from merknera.store import games, users


async def bare_rate(config: Config, urls: list[str], calls: int, concurrency: int) -> float:
    """NextMove calls per second through BotClient, ``concurrency`` in flight."""
    params = {"gameid": 1, "mark": "X", "gamestate": ["X", "O", "", "", "", "", "", "", ""]}
    async with BotClient(config) as client:
        remaining = calls

        async def worker(index: int) -> None:
            nonlocal remaining
            url = urls[index % len(urls)]
            while remaining > 0:
                remaining -= 1
                reply = await client.call(url, "s", "TicTacToe.NextMove", params, 10.0)
                assert reply.ok, reply.fault

        await asyncio.gather(*(worker(i) for i in range(concurrency)))  # warm-up connections
        remaining = calls
        started = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        return calls / (time.perf_counter() - started)


async def platform_rate(config: Config, urls: list[str], game_count: int) -> tuple[float, int]:
    """Accepted moves per second of the whole platform playing ``game_count`` games."""
    platform = Platform(config)
    await platform.start()
    try:
        _, token = await users.create_user(platform.db, "bench")
        bot_ids = []
        for number, url in enumerate(urls):
            await platform.registrar.register(
                RegistrationRequest(token, f"fast{number}", "1", "TICTACTOE", url))
            bot_ids.append(await platform.db.fetchval(
                "SELECT id FROM bots WHERE name = ?", (f"fast{number}",)))
        await platform.scheduler.wait_idle()  # the registration round robin
        moves_before = await platform.db.fetchval("SELECT COUNT(*) FROM moves")
        async with platform.db.write() as conn:
            created = [await games.create(conn, "TICTACTOE", secrets.randbits(63),
                                          [bot_ids[i % len(bot_ids)],
                                           bot_ids[(i + 1) % len(bot_ids)]])
                       for i in range(game_count)]
        started = time.perf_counter()
        platform.scheduler.submit(created)
        await platform.scheduler.wait_idle()
        elapsed = time.perf_counter() - started
        moves = await platform.db.fetchval("SELECT COUNT(*) FROM moves") - moves_before
        faults = await platform.db.fetchval("SELECT COUNT(*) FROM moves WHERE fault IS NOT NULL")
        assert faults == 0, f"{faults} faulty moves"
        return moves / elapsed, moves
    finally:
        await platform.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--games", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    bots = subprocess.Popen([sys.executable, str(Path(__file__).with_name("fastbot.py")),
                             str(args.bots)], stdout=subprocess.PIPE, text=True)
    try:
        assert bots.stdout is not None
        ports = bots.stdout.readline().split()
        urls = [f"http://127.0.0.1:{port}/rpc" for port in ports]
        with tempfile.TemporaryDirectory() as tmp:
            config = Config(db=str(Path(tmp) / "bench.db"), concurrency=args.concurrency,
                            log_level="WARNING")
            moves_per_game = 7  # first-empty vs first-empty: X wins on the 7th move
            bare = await bare_rate(config, urls, args.games * moves_per_game, args.concurrency)
            rate, moves = await platform_rate(dataclasses.replace(config), urls, args.games)
    finally:
        bots.terminate()
        bots.wait()
    print(f"bots: {args.bots} in one process; games: {args.games}; "
          f"concurrency: {args.concurrency}")
    print(f"bare JSON-RPC calls over BotClient: {bare:8.0f} calls/s")
    print(f"platform, refereed and stored:      {rate:8.0f} moves/s ({moves} moves)")
    print(f"ratio platform / bare:              {rate / bare:8.2f}  (target >= 0.50)")


if __name__ == "__main__":
    asyncio.run(main())

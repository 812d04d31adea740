"""How fast does the platform referee moves, against the bare JSON-RPC rate?

Runs instantly-answering bots in a second process (bench/fastbot.py) on loopback, then:

1. **bare, aiohttp**: NextMove calls from one plain aiohttp client session to those bots,
   ``--concurrency`` at a time: the yardstick the targets are set against;
2. **bare, BotClient**: the same calls through the platform's own client
   (merknera/http1/, leaner than aiohttp's): the limit of this machine with it, which is
   the bots' process (aiohttp's server) once the client costs less than it;
3. **platform**: the real platform (SQLite store on a temporary file, the scheduler, the
   runners) playing ``--games`` tic-tac-toe games among the bots, ``--concurrency`` at once;

and prints the rates in calls (moves) per second and the platform's ratio to each bare
rate.  Targets (against the aiohttp yardstick): >= 0.55, and at most 0.3 ms of
the platform's CPU per move.

With ``--registration`` it also measures the platform as a new user meets it: ``merknera
serve`` in a process of its own, and ``--reg-bots`` (20) of those bots registering one
after another over ``/rpc``; Merknera's registration round robin then plays every pair
twice (380 games for 20 bots), and the rate counts from the first registration to the
last result stored.  Target: >= 0.5 of the aiohttp yardstick.

A tic-tac-toe game between these bots is 7 moves but 11 calls (NewGame and Complete to
both seats), so a referee that cost nothing would reach 7/11 = 0.64 of the bare rate of
its own client; the script prints that ceiling and the CPU time each side used.

    .venv/bin/python bench/referee.py [--bots 8] [--games 600] [--concurrency 32]
        [--registration [--reg-bots 20]]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import aiohttp

from merknera import heap, loop
from merknera.app import Platform
from merknera.botclient import BotClient
from merknera.config import Config, LogSettings, SchedulingSettings, StoreSettings
from merknera.games import JSONObject
from merknera.scheduler.registration import RegistrationRequest
from merknera.store import games, users

NEXT_MOVE: JSONObject = {"gameid": 1, "mark": "X",
                         "gamestate": ["X", "O", "", "", "", "", "", "", ""]}


async def timed_calls(call: Callable[[str], Awaitable[None]], urls: list[str], calls: int,
                      concurrency: int) -> tuple[float, float]:
    """``calls`` calls of ``call(url)`` over the urls, ``concurrency`` in flight, after as
    many to warm up connections: calls per second, and this process's CPU seconds per call."""
    remaining = calls

    async def worker(index: int) -> None:
        nonlocal remaining
        url = urls[index % len(urls)]
        while remaining > 0:
            remaining -= 1
            await call(url)

    await asyncio.gather(*(worker(i) for i in range(concurrency)))  # warm-up connections
    remaining = calls
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    return calls / (time.perf_counter() - started), (time.process_time() - cpu) / calls


async def bare_rate(config: Config, urls: list[str], calls: int,
                    concurrency: int) -> tuple[float, float]:
    """NextMove calls per second through BotClient, ``concurrency`` in flight, and the CPU
    seconds this process used per call."""
    async with BotClient(config) as client:
        async def call(url: str) -> None:
            reply = await client.call(url, "s", "TicTacToe.NextMove", NEXT_MOVE, 10.0)
            assert reply.ok, reply.fault

        return await timed_calls(call, urls, calls, concurrency)


async def aiohttp_rate(urls: list[str], calls: int, concurrency: int) -> float:
    """NextMove calls per second from one plain aiohttp client session, ``concurrency`` in
    flight: the yardstick the platform is measured against."""
    async with aiohttp.ClientSession() as session:
        async def call(url: str) -> None:
            async with session.post(url, json={"jsonrpc": "2.0", "method": "TicTacToe.NextMove",
                                               "params": NEXT_MOVE, "id": 1}) as response:
                assert "result" in await response.json()

        return (await timed_calls(call, urls, calls, concurrency))[0]


async def platform_rate(config: Config, urls: list[str],
                        game_count: int) -> tuple[float, int, float]:
    """Accepted moves per second of the whole platform playing ``game_count`` games, the
    moves, and the CPU seconds this process used per move."""
    platform = Platform(config)
    await platform.start()
    heap.settle()  # as merknera serve does once started
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
        seatings = [[bot_ids[i % len(bot_ids)], bot_ids[(i + 1) % len(bot_ids)]]
                    for i in range(game_count)]
        created = await platform.db.transaction(lambda conn: [
            games.create(conn, "TICTACTOE", secrets.randbits(63), seating)
            for seating in seatings])
        started, cpu = time.perf_counter(), time.process_time()
        platform.scheduler.submit(created)
        await platform.scheduler.wait_idle()
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        moves = await platform.db.fetchval("SELECT COUNT(*) FROM moves") - moves_before
        faults = await platform.db.fetchval("SELECT COUNT(*) FROM moves WHERE fault IS NOT NULL")
        assert faults == 0, f"{faults} faulty moves"
        return moves / elapsed, moves, cpu / moves
    finally:
        await platform.stop()


REPO = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"^Merknera listening on (http://\S+) ")


def stamp(text: str) -> float:
    """The POSIX time of one of the store's UTC timestamps."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime, stime in clock ticks


@dataclass(frozen=True)
class RegistrationRun:
    """One run of the registration round robin."""

    rate: float
    """Moves per second from the first registration to the last result."""
    moves: int
    games: int
    cpu_per_move: float
    """The platform's CPU seconds per move."""
    registering: float
    """Seconds the registrations took."""
    rate_registering: float
    """Moves per second while bots were registering (to the last one's registration)."""
    rate_after: float
    """Moves per second after the last bot registered."""


async def registration_rate(tmp: Path, urls: list[str], concurrency: int) -> RegistrationRun:
    """The registration round robin of ``urls`` on ``merknera serve`` in its own process."""
    db = tmp / "registration.db"
    made = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "user", "add", "bench", "--db", str(db), cwd=tmp,
        stdout=asyncio.subprocess.PIPE)
    token = (await made.communicate())[0].decode().strip().splitlines()[-1]
    serve = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "serve", "--db", str(db), "--host", "127.0.0.1",
        "--port", "0", "--log-level", "WARNING", "--concurrency", str(concurrency),
        # One author owns every bot here, as in the direct mode: its fair share is the
        # whole platform, and its registrations are not paced.
        "--max-games-per-owner", str(concurrency), "--registration-burst", str(len(urls)),
        cwd=tmp, stdout=asyncio.subprocess.PIPE)
    try:
        assert serve.stdout is not None
        match = LISTENING.match((await serve.stdout.readline()).decode())
        assert match, "merknera serve did not start"
        rpc = f"{match.group(1)}/rpc"
        expected = len(urls) * (len(urls) - 1)
        async with aiohttp.ClientSession() as session:
            cpu, started = cpu_seconds(serve.pid), time.time()
            for number, url in enumerate(urls):
                async with session.post(rpc, json={
                        "jsonrpc": "2.0", "id": number, "method": "RegistrationService.Register",
                        "params": {"token": token, "botname": f"fast{number}", "botversion": "1",
                                   "game": "TICTACTOE", "rpcendpoint": url}}) as response:
                    reply = await response.json()
                    assert "result" in reply, reply
            registered = time.time() - started
        store = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
        try:
            # Another process writes the file: polled (its finish stamps give the end).
            while store.execute("SELECT COUNT(*) FROM games WHERE status = 'FINISHED'"  # noqa: ASYNC110
                                ).fetchone()[0] < expected:
                await asyncio.sleep(0.02)
            cpu = cpu_seconds(serve.pid) - cpu
            last = store.execute("SELECT MAX(finished_at) FROM games").fetchone()[0]
            moves, faults = store.execute(
                "SELECT COUNT(move), COUNT(fault) FROM moves").fetchone()
            games_played = store.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            last_registered = store.execute("SELECT MAX(created_at) FROM bots").fetchone()[0]
            during = store.execute("SELECT COUNT(move) FROM moves WHERE created_at <= ?",
                                   (last_registered,)).fetchone()[0]
        finally:
            store.close()
        assert faults == 0, f"{faults} faulty moves"
        assert games_played == expected, f"{games_played} games, not {expected}"
        # The end is the last result's own stamp, not when this loop happened to look.
        elapsed = stamp(last) - started
        # Split at the last bot's registration: the play beside the registrations, and after.
        split = stamp(last_registered) - started
        return RegistrationRun(moves / elapsed, moves, games_played, cpu / moves, registered,
                               during / split, (moves - during) / (elapsed - split))
    finally:
        serve.terminate()
        await serve.wait()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--games", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of both measurements; medians are printed (this machine "
                             "is a shared VM whose speed varies from run to run)")
    parser.add_argument("--registration", action="store_true",
                        help="also measure the registration round robin, as a new user would")
    parser.add_argument("--reg-bots", type=int, default=20,
                        help="bots registering in the registration mode")
    args = parser.parse_args()
    bots = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).with_name("fastbot.py")),
        str(max(args.bots, args.reg_bots if args.registration else 0)),
        stdout=asyncio.subprocess.PIPE)
    try:
        assert bots.stdout is not None
        ports = (await bots.stdout.readline()).decode().split()
        urls = [f"http://127.0.0.1:{port}/rpc" for port in ports]
        yardsticks, bares, platforms, registrations = [], [], [], []
        with tempfile.TemporaryDirectory() as tmp:
            moves_per_game = 7  # first-empty vs first-empty: X wins on the 7th move
            for round_number in range(args.rounds):
                # One author owns every bot here: its fair share is the whole platform.
                config = Config(
                    store=StoreSettings(db=str(Path(tmp) / f"bench-{round_number}.db")),
                    scheduling=SchedulingSettings(
                        concurrency=args.concurrency,
                        max_games_per_owner=args.concurrency,
                    ),
                    log=LogSettings(level="WARNING"),
                )
                yardsticks.append(await aiohttp_rate(urls[:args.bots],
                                                     args.games * moves_per_game,
                                                     args.concurrency))
                bares.append(await bare_rate(config, urls[:args.bots],
                                             args.games * moves_per_game, args.concurrency))
                platforms.append(await platform_rate(config, urls[:args.bots], args.games))
                if args.registration:
                    run = Path(tmp) / f"registration-{round_number}"
                    run.mkdir()
                    registrations.append(await registration_rate(
                        run, urls[:args.reg_bots], args.concurrency))
    finally:
        bots.terminate()
        await bots.wait()
    yardstick = statistics.median(yardsticks)
    bare, bare_cpu = statistics.median(r for r, _ in bares), statistics.median(
        c for _, c in bares)
    rate = statistics.median(r for r, _, _ in platforms)
    move_cpu = statistics.median(c for _, _, c in platforms)
    moves = platforms[0][1]

    def ratios(rates: list[float], against: list[float]) -> str:
        each = [r / b for r, b in zip(rates, against, strict=True)]
        return (f"{statistics.median(each):8.2f}  (rounds: "
                f"{', '.join(f'{r:.2f}' for r in each)})")

    print(f"bots: {args.bots} in one process; games: {args.games}; "
          f"concurrency: {args.concurrency}; medians of {args.rounds} rounds")
    print(f"bare JSON-RPC calls, one aiohttp client: {yardstick:8.0f} calls/s  "
          "(the yardstick of the targets)")
    print(f"bare JSON-RPC calls over BotClient:     {bare:8.0f} calls/s  "
          f"({bare_cpu * 1e6:.0f} us CPU per call in this process)")
    print(f"platform, refereed and stored:          {rate:8.0f} moves/s  ({moves} moves; "
          f"{move_cpu * 1e6:.0f} us CPU per move, store threads included; target <= 300)")
    platform_rates = [p[0] for p in platforms]
    print(f"  ratio to the aiohttp yardstick:       {ratios(platform_rates, yardsticks)}"
          "  target >= 0.55")
    print(f"  ratio to the BotClient bare rate:     {ratios(platform_rates, [b[0] for b in bares])}"
          f"  ceiling with a free referee {7 / 11:.2f}")
    if registrations:
        reg_rate = statistics.median(r.rate for r in registrations)
        reg_moves, reg_games = registrations[0].moves, registrations[0].games
        reg_cpu = statistics.median(r.cpu_per_move for r in registrations)
        took = statistics.median(r.registering for r in registrations)
        print(f"registration round robin:               {reg_rate:8.0f} moves/s  "
              f"({args.reg_bots} bots registering over /rpc in {took:.2f} s, {reg_games} "
              f"games, {reg_moves} moves; merknera serve in its own process, "
              f"{reg_cpu * 1e6:.0f} us CPU per move)")
        reg_rates = [r.rate for r in registrations]
        print(f"  ratio to the aiohttp yardstick:       {ratios(reg_rates, yardsticks)}"
              "  target >= 0.50")
        print(f"  ratio to the BotClient bare rate:     {ratios(reg_rates, [b[0] for b in bares])}")
        during = statistics.median(r.rate_registering for r in registrations)
        after = statistics.median(r.rate_after for r in registrations)
        print(f"  while bots register: {during:8.0f} moves/s; after the last: {after:8.0f} "
              "moves/s")


if __name__ == "__main__":
    loop.run(main())  # the loop merknera serve runs on, for every measurement here

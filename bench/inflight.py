"""Many games in flight at once with slow bots: no fault, no late move, cost per game.

Serves ``--bots`` tic-tac-toe bots in this process on loopback; each NextMove waits
``--think`` seconds (1 by default) and answers the first empty cell.  ``merknera serve``
runs in a process of its own with room for ``--games`` games at once; the bots register
over ``/rpc`` (answering instantly while their registration round robin plays), then this
script inserts ``--games`` pending games into the platform's SQLite file through
merknera.store, which the platform's claim loop takes within a second and plays.

It asserts that every game finished normally with no faulty move, and prints the time
from the insert to the last result, the games in flight at the peak, the move latencies
(max, p99, and the moves later than think time + ``--margin``), and the platform's CPU
seconds per game and resident memory per game in flight (``/proc``).

    .venv/bin/python bench/inflight.py [--games 1000] [--bots 40] [--think 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import secrets
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from aiohttp import web

from merknera.server import bind
from merknera.store import Database, games

LISTENING = re.compile(r"^Merknera listening on (http://\S+) ")


class SlowBots:
    """Tic-tac-toe bots that take ``think`` seconds per move."""

    def __init__(self) -> None:
        self.think = 0.0
        self.runners: list[web.AppRunner] = []

    async def handle(self, request: web.Request) -> web.Response:
        call = json.loads(await request.read())
        result: object = None
        if call["method"].endswith(".NextMove"):
            if self.think:
                await asyncio.sleep(self.think)
            result = {"position": call["params"]["gamestate"].index("")}
        elif call["method"] == "Status.Ping":
            result = {"ping": "OK"}
        return web.Response(
            body=json.dumps({"jsonrpc": "2.0", "result": result, "id": call["id"]}),
            content_type="application/json")

    async def start(self, count: int) -> list[str]:
        """Serve ``count`` bots; their endpoints."""
        urls = []
        for _ in range(count):
            app = web.Application()
            app.router.add_post("/rpc", self.handle)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            self.runners.append(runner)
            sock = bind("127.0.0.1", 0)
            await web.SockSite(runner, sock).start()
            urls.append(f"http://127.0.0.1:{sock.getsockname()[1]}/rpc")
        return urls

    async def stop(self) -> None:
        for runner in self.runners:
            await runner.cleanup()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime, stime in clock ticks


def memory_kib(pid: int, key: str) -> int:
    """A ``/proc/<pid>/status`` figure in KiB (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise KeyError(key)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def run(args: argparse.Namespace, tmp: Path, bots: SlowBots) -> None:
    db_path = tmp / "inflight.db"
    made = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "user", "add", "bench", "--db", str(db_path),
        cwd=tmp, stdout=asyncio.subprocess.PIPE)
    token = (await made.communicate())[0].decode().strip().splitlines()[-1]
    urls = await bots.start(args.bots)
    room = str(args.games)
    serve = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "serve", "--db", str(db_path),
        "--host", "127.0.0.1", "--port", "0", "--log-level", "WARNING",
        "--concurrency", room, "--max-games-per-owner", room, "--max-games-per-bot", room,
        "--registration-burst", str(args.bots), "--max-bots-per-user", str(args.bots),
        "--move-timeout", str(args.move_timeout), cwd=tmp, stdout=asyncio.subprocess.PIPE)
    try:
        assert serve.stdout is not None
        match = LISTENING.match((await serve.stdout.readline()).decode())
        assert match, "merknera serve did not start"
        rpc = f"{match.group(1)}/rpc"
        async with aiohttp.ClientSession() as session:
            for number, url in enumerate(urls):
                async with session.post(rpc, json={
                        "jsonrpc": "2.0", "id": number,
                        "method": "RegistrationService.Register",
                        "params": {"token": token, "botname": f"slow{number}",
                                   "botversion": "1", "game": "TICTACTOE",
                                   "rpcendpoint": url}}) as response:
                    reply = await response.json()
                    assert "result" in reply, reply
        store = sqlite3.connect(f"{db_path.as_uri()}?mode=ro", uri=True)
        try:
            # The registration round robin, played with instant moves.
            while store.execute("SELECT COUNT(*) FROM games WHERE status != 'FINISHED'"  # noqa: ASYNC110
                                ).fetchone()[0]:
                await asyncio.sleep(0.1)
            bot_ids = [row[0] for row in store.execute("SELECT id FROM bots ORDER BY id")]
            assert len(bot_ids) == args.bots, bot_ids
            bots.think = args.think
            seatings = [[bot_ids[i % len(bot_ids)], bot_ids[(i + 1) % len(bot_ids)]]
                        for i in range(args.games)]
            rss_before = memory_kib(serve.pid, "VmRSS")
            db = await Database.open(db_path)
            try:
                cpu, started = cpu_seconds(serve.pid), time.monotonic()
                created = await db.transaction(lambda conn: [
                    games.create(conn, "TICTACTOE", secrets.randbits(63), seating)
                    for seating in seatings])
            finally:
                await db.close()
            first, last = min(created), max(created)
            peak_flight = peak_rss = 0
            first_started = None
            while True:
                running, finished = store.execute(
                    "SELECT COUNT(*) FILTER (WHERE status = 'RUNNING'), "
                    "COUNT(*) FILTER (WHERE status = 'FINISHED') "
                    "FROM games WHERE id BETWEEN ? AND ?", (first, last)).fetchone()
                if running and first_started is None:
                    first_started = time.monotonic() - started
                if running > peak_flight:
                    peak_flight = running
                peak_rss = max(peak_rss, memory_kib(serve.pid, "VmRSS"))
                if finished == len(created):
                    break
                if time.monotonic() - started > args.deadline:
                    raise AssertionError(f"only {finished} of {len(created)} games finished "
                                         f"after {args.deadline} s ({running} running)")
                await asyncio.sleep(0.1)
            elapsed = time.monotonic() - started
            cpu = cpu_seconds(serve.pid) - cpu
            hwm = memory_kib(serve.pid, "VmHWM")
            reasons = dict(store.execute(
                "SELECT reason, COUNT(*) FROM games WHERE id BETWEEN ? AND ? GROUP BY reason",
                (first, last)).fetchall())
            moves, faults = store.execute(
                "SELECT COUNT(move), COUNT(fault) FROM moves WHERE game_id BETWEEN ? AND ?",
                (first, last)).fetchone()
            latencies = [row[0] for row in store.execute(
                "SELECT latency_ms FROM moves WHERE game_id BETWEEN ? AND ? "
                "AND latency_ms IS NOT NULL", (first, last))]
        finally:
            store.close()
    finally:
        serve.terminate()
        await serve.wait()
    limit_ms = (args.think + args.margin) * 1000
    late = sum(1 for latency in latencies if latency > limit_ms)
    print(f"games: {len(created)} tic-tac-toe among {args.bots} bots (one process), "
          f"think {args.think:.2f} s per move; merknera serve --concurrency {room}")
    print(f"time from insert to last result: {elapsed:.2f} s (first game running after "
          f"{first_started or 0:.2f} s); games in flight at the peak: {peak_flight}")
    print(f"moves: {moves}; faulty moves: {faults}; end reasons: {reasons}")
    if latencies:
        print(f"move latency: max {max(latencies):.0f} ms, p99 "
              f"{percentile(latencies, 0.99):.0f} ms, median "
              f"{percentile(latencies, 0.5):.0f} ms; late moves (> {limit_ms:.0f} ms, "
              f"think + {args.margin:.2f} s margin): {late}")
    print(f"platform CPU: {cpu:.2f} s in all, {cpu / len(created) * 1000:.1f} ms per game, "
          f"{cpu / max(1, moves) * 1e6:.0f} us per move")
    print(f"platform memory: RSS {rss_before / 1024:.1f} MiB before, peak "
          f"{peak_rss / 1024:.1f} MiB (VmHWM {hwm / 1024:.1f} MiB); "
          f"{(peak_rss - rss_before) / max(1, peak_flight):.1f} KiB per game in flight")
    assert faults == 0, f"{faults} faulty moves"
    assert reasons == {"NORMAL": len(created)}, reasons


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--bots", type=int, default=40)
    parser.add_argument("--think", type=float, default=1.0, help="seconds per move")
    parser.add_argument("--margin", type=float, default=0.5,
                        help="seconds over --think after which a move counts as late")
    parser.add_argument("--move-timeout", type=float, default=10.0)
    parser.add_argument("--deadline", type=float, default=300.0,
                        help="seconds to wait for the games before giving up")
    args = parser.parse_args()
    bots = SlowBots()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            await run(args, Path(tmp), bots)
    finally:
        await bots.stop()


if __name__ == "__main__":
    asyncio.run(main())

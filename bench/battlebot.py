"""Battlebot's WebSocket clients at the listener, with the figures that matter.

    .venv/bin/python bench/battlebot.py [--pairs 10] [--games 20] [--idle 1000]

A real ``merknera serve`` with its Battlebot listener on a temporary SQLite file; this
process is every client, over loopback:

* **play**: ``--pairs`` pairs of clients (one of each protocol per pair, each pair in a
  contest of its own so that pairs stay together) play ``--games`` noughts-and-crosses
  games each, reconnecting after every game as Battlebot's client does; the platform's
  moves per second and CPU per move, and each turn's round trip as a client sees it (from
  sending its turn to reading its echo);
* **idle**: ``--idle`` sockets (from 16 loopback addresses) connect and never log in while
  one pair plays a game; the game's time against the same game with no idle sockets, and
  the platform's memory (RSS) with and without them.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import resource
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"Merknera listening on (http://\S+)")
MUTATION = ("mutation($n: ID!, $o: String!) { registerBot(gameType: NOUGHTS_AND_CROSSES, "
            "name: $n, owner: $o) { password } }")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def serve(workdir: Path, port: int) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "serve", "--db", str(workdir / "bench.db"),
        "--port", "0", "--battlebot-port", str(port), "--battlebot-match-wait", "600",
        "--battlebot-login-timeout", "600", "--log-level", "WARNING",
        "--max-connections-per-client", "2000", "--request-burst", "100000",
        "--request-rate", "100000", "--registration-burst", "100000", cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert process.stdout is not None
    line = (await process.stdout.readline()).decode()
    assert LISTENING.search(line), line
    return process


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0  # utime + stime, in clock ticks


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Player:
    """One bot: registers, then plays games, one connection each."""

    def __init__(self, session: aiohttp.ClientSession, base: str, name: str, era: str,
                 contest: str) -> None:
        self.session, self.base, self.name, self.era, self.contest = (
            session, base, name, era, contest)
        self.secret = ""
        self.round_trips: list[float] = []
        self.moves = 0

    async def register(self) -> None:
        if self.era == "a":
            async with self.session.post(f"{self.base}/bots/noughtsandcrosses",
                                         json={"bot_id": self.name,
                                               "owner": f"o-{self.name}"}) as r:
                self.secret = (await r.json())["pass_hash"]
        else:
            async with self.session.post(f"{self.base}/graphql", json={
                    "query": MUTATION,
                    "variables": {"n": self.name, "o": f"o-{self.name}"}}) as r:
                self.secret = (await r.json())["data"]["registerBot"]["password"]

    async def play(self) -> None:
        async with self.session.ws_connect(self.base.replace("http", "ws", 1)) as ws:
            if self.era == "a":
                salt = (await ws.receive_json())["salt"]
                digest = hashlib.sha256((self.secret + salt).encode()).hexdigest()
                await ws.send_json({"bot_id": self.name, "game": "noughtsandcrosses",
                                    "login_hash": digest, "contest": self.contest})
            else:
                await ws.send_json({"name": self.name, "password": self.secret,
                                    "gameType": "NOUGHTS_AND_CROSSES",
                                    "contest": self.contest})
            assert (await ws.receive_json())["authentication"] == "OK"
            sent_at = 0.0
            async for frame in ws:
                if frame.type is not aiohttp.WSMsgType.TEXT:
                    break
                update: dict[str, Any] = json.loads(frame.data)
                state = update["state"]
                turn = update.get("turn")
                if sent_at and turn and turn.get("valid") and turn.get(
                        "player", turn.get("name")) == self.name:
                    self.round_trips.append(time.perf_counter() - sent_at)
                    sent_at = 0.0
                if state.get("complete") or state.get("result"):
                    return
                mover = state.get("nextPlayer") or (state.get("waitingFor") or [None])[0]
                if mover == self.name:
                    board = state["board"]
                    row, col = next((r, c) for r in range(3) for c in range(3)
                                    if not board[r][c])
                    mark = "X" if state["marks"]["X"] == self.name else "O"
                    sent_at = time.perf_counter()
                    await ws.send_json({"mark": mark, "space": [row, col]})
                    self.moves += 1


async def play_pairs(base: str, pairs: int, games: int, pid: int) -> None:
    async with aiohttp.ClientSession() as session:
        players = [Player(session, base, f"p{i}{era}", era, f"pool-{i}")
                   for i in range(pairs) for era in "ac"]
        await asyncio.gather(*(p.register() for p in players))
        pools = {player.name: player.contest for player in players}
        cpu, start = cpu_seconds(pid), time.perf_counter()
        # A pair meets five times per contest: every five games, a contest of their own.
        for block in range(0, games, 5):
            for player in players:
                player.contest = f"{pools[player.name]}-{block}"
            await asyncio.gather(*(_repeat(player, min(5, games - block)) for player in players))
        elapsed, used = time.perf_counter() - start, cpu_seconds(pid) - cpu
    moves = sum(p.moves for p in players)
    trips = sorted(t for p in players for t in p.round_trips)
    print(f"play: {pairs} pairs x {games} games = {pairs * games} games, {moves} moves in "
          f"{elapsed:.2f} s: {moves / elapsed:,.0f} moves/s, platform CPU "
          f"{used * 1000 / moves:.2f} ms/move")
    print(f"  turn round trip (send a turn, read its echo): p50 "
          f"{statistics.median(trips) * 1000:.2f} ms, p95 "
          f"{trips[int(len(trips) * 0.95)] * 1000:.2f} ms, max {trips[-1] * 1000:.2f} ms")


async def _repeat(player: Player, times: int) -> None:
    for _ in range(times):
        await player.play()


async def one_game(base: str, tag: str) -> float:
    async with aiohttp.ClientSession() as session:
        pair = [Player(session, base, f"{tag}{era}", era, f"solo-{tag}") for era in "ac"]
        await asyncio.gather(*(p.register() for p in pair))
        start = time.perf_counter()
        await asyncio.gather(*(p.play() for p in pair))
        return time.perf_counter() - start


async def idle(base: str, count: int, pid: int) -> None:
    quiet = statistics.median([await one_game(base, f"q{i}") for i in range(5)])
    before = rss_mb(pid)
    sessions = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(
        local_addr=(f"127.0.0.{10 + i}", 0), limit=0)) for i in range(16)]
    try:
        start = time.perf_counter()
        sockets = await asyncio.gather(*(sessions[i % 16].ws_connect(base)
                                         for i in range(count)))
        opened = time.perf_counter() - start
        await asyncio.sleep(1.5)  # each has had its salt
        during = statistics.median([await one_game(base, f"b{i}") for i in range(5)])
        print(f"idle: {count} sockets that never log in opened in {opened:.2f} s; platform RSS "
              f"{before:.0f} MB before, {rss_mb(pid):.0f} MB with them "
              f"({(rss_mb(pid) - before) * 1024 / count:.1f} KB each)")
        print(f"  a whole game (7 moves, login to close): {quiet * 1000:.1f} ms without them, "
              f"{during * 1000:.1f} ms with them (median of 5)")
        await asyncio.gather(*(ws.close() for ws in sockets))
    finally:
        await asyncio.gather(*(s.close() for s in sessions))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--idle", type=int, default=1000)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 16384)), hard))
    with tempfile.TemporaryDirectory() as workdir:
        port = free_port()
        process = await serve(Path(workdir), port)
        base = f"http://127.0.0.1:{port}"
        try:
            await play_pairs(base, args.pairs, args.games, process.pid)
            await idle(base, args.idle, process.pid)
        finally:
            process.terminate()
            await process.wait()


if __name__ == "__main__":
    asyncio.run(main())

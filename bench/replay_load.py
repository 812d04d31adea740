"""What requests for replays, live streams, a game's move log and a stored hexagons game
cost the platform's event loop: its longest stall, the latency another client sees
meanwhile, and the server's memory.

    .venv/bin/python bench/replay_load.py [--seconds 3] [--clients 8] [--tree DIR]

A real platform run as ``merknera serve`` runs it (``merknera.server.running`` on
``merknera.loop``'s loop, :func:`merknera.heap.settle` once it serves; hexagons listener
on, a temporary SQLite file) in a process of its own, which stores three games first: A, a
25x25 Hexagons game of 1,481 moves still running (leased to another node, so that this one
leaves it be, and known to the hexagons listener by a handle: a stored game that is not
over, rebuilt for every request); B, a finished 9x9 Hexagons game with the JSON-RPC calls
stored as the platform stores them; C, a finished 25x25 Hexagons game known to the
hexagons listener by a handle, 400 of whose replies are 64 KiB of ``[{},{},...]`` (a bot
may pad a move so).  Their bots are owned by a user whose token the owner's phases send
(the owner is sent the calls' bodies).  A task on the server's loop wakes every
millisecond and keeps the longest gap between wake-ups: the loop's longest stall.

Then, phase by phase, ``--clients`` clients (each from an address of its own on
127.0.0.0/8, so that each has the per-address limits to itself) make one kind of request
as fast as they are answered (two at a time, at most 90 a second), for ``--seconds``;
meanwhile another client asks ``GET /api/games?limit=1`` every 10 ms.  Each phase prints
the answers' statuses, the loop's longest stall, the other client's median and worst
latency, and the server's peak RSS in the phase.  The last phases open 40 connections
from one address that ask for a long answer and never read it: what they cost in memory.

``MERKNERA_BENCH_NO_GC=1`` turns the server's garbage collector off, to tell its pauses
from the requests' own work.  ``--tree DIR`` serves the platform of another checkout (a
copy of another working tree: the figures before a change); this process only speaks
HTTP to it.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import random
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

SCRIPT = Path(__file__).resolve()
REPO = SCRIPT.parent.parent
Bodies = tuple[str | None, str | None]
"""A call's request and reply as stored."""
HANDLE = "c0ffee25"
"""Game C's id at the hexagons listener."""
RUNNING_HANDLE = "a11ea25"
"""Game A's id at the hexagons listener."""
SLOW_READERS = 40
"""Connections that ask for a long answer and never read it (an address may hold 64)."""
RATE = 90
"""Requests a second each client makes at most (the platform's default limit is 100)."""
OTHER = "127.0.0.1"
"""The other client's address (the clients making the costly requests use 127.0.0.2 on)."""


# -- the server's process ---------------------------------------------------------------------


async def _serve(db: str) -> None:  # pragma: no cover - runs in the server's process
    """Serve the platform, store the games, report the loop's longest stall and the
    process's peak RSS on request."""
    from merknera import heap
    from merknera.config import (
        Config,
        HexagonsSettings,
        ListenerSettings,
        LogSettings,
        StoreSettings,
    )
    from merknera.server import running

    loop = asyncio.get_running_loop()
    longest = [0.0]

    async def ticker() -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            longest[0] = max(longest[0], now - last)
            last = now

    config = Config(
        store=StoreSettings(db=db),
        listeners=ListenerSettings(port=0),
        hexagons=HexagonsSettings(port=_free_port()),
        log=LogSettings(level="WARNING"),
    )
    async with running(config) as (live, platform):
        ids = await _store_games(platform.db)
        heap.settle()  # as merknera serve does once it serves
        if os.environ.get("MERKNERA_BENCH_NO_GC"):
            import gc
            gc.disable()
        tick = asyncio.create_task(ticker())
        _reset_peak()
        print(json.dumps({"port": live.listeners.port, "hexagons_port": live.hexagons.port, **ids}),
              flush=True)
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            if line.strip() == b"mark":
                peak, now = _rss_mb()
                print(json.dumps({"stall_ms": longest[0] * 1000, "peak_mb": peak,
                                  "rss_mb": now}), flush=True)
                longest[0] = 0.0
                _reset_peak()
        tick.cancel()


def _rss_mb() -> tuple[float, float]:  # pragma: no cover - the server's process
    """The process's peak RSS since the last :func:`_reset_peak`, and its RSS now (Linux:
    -1 elsewhere)."""
    found = {"VmHWM:": -1.0, "VmRSS:": -1.0}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, *value = line.split()
        if name in found:
            found[name] = int(value[0]) / 1024
    return found["VmHWM:"], found["VmRSS:"]


def _reset_peak() -> None:  # pragma: no cover - the server's process
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")  # the peak RSS starts from the RSS now


async def _store_games(db: Any) -> dict[str, Any]:  # pragma: no cover - the server's process
    """Games A, B and C (see the module's docstring); their ids, and the owner's token."""
    from merknera.games import REGISTRY
    from merknera.store import bots, games, users
    from merknera.store.bots import BotMetadata, BotStatus

    game = REGISTRY["HEXAGONS"]
    user, token = await users.create_user(db, "bench")

    async def stored(label: str, size: int, seed: int, finish: bool, handle: str | None,
                     call: Callable[[int, Any, int], Bodies]) -> int:
        names = [f"{label}-Honeycomb", f"{label}-Hexed"]

        def seat(conn: Any) -> int:
            ids = [bots.insert(conn, name=name, version="1", game="HEXAGONS", user_id=user.id,
                               secret="s", meta=BotMetadata("http://127.0.0.1:9/rpc"),
                               status=BotStatus.OFFLINE).id for name in names]
            # Leased to another node: this one's runners leave it be.
            return int(games.create(conn, "HEXAGONS", seed, ids, {"rows": size, "cols": size},
                                    handle=handle, lease=("another node", time.time() + 3600)))

        game_id = await db.transaction(seat)
        await games.mark_running(db, game_id, [0, 1])
        state = game.new({"rows": size, "cols": size}, names, random.Random(seed))
        chooser = random.Random(seed + 1)
        calls: list[games.LoggedCall] = []
        while (to_move := game.to_move(state)) is not None:
            move = chooser.choice(list(game.legal_moves(state, to_move)))
            request, reply = call(len(calls) + 1, state, to_move)
            state = game.apply(state, to_move, move)
            calls.append(games.LoggedCall(len(calls) + 1, to_move, move=game.move_to_wire(move),
                                          latency_ms=1.0, request=request, reply=reply))
        for at in range(0, len(calls), 100):
            assert await games.record_moves(db, game_id, calls[at:at + 100])
        if finish:
            outcome = game.outcome(state)
            assert outcome is not None
            assert await games.finish(db, game_id, outcome, game.state_to_json(state))
        return int(game_id)

    def none(seq: int, state: Any, seat: int) -> Bodies:
        return None, None

    def next_move(seq: int, state: Any, seat: int) -> Bodies:
        params = {"gameid": 1, **game.next_move_params(state, seat)}
        return (json.dumps({"jsonrpc": "2.0", "method": "Hexagons.NextMove", "params": params,
                            "id": seq}),
                json.dumps({"jsonrpc": "2.0", "result": {}, "id": seq}))

    padding = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {
        "line": [], "pad": [{} for _ in range(21700)]}}, separators=(",", ":"))

    def padded(seq: int, state: Any, seat: int) -> Bodies:
        return None, padding if seq <= 400 else None

    return {"running": await stored("A", 25, 7, False, RUNNING_HANDLE, none),
            "calls": await stored("B", 9, 7, True, None, next_move),
            "padded": await stored("C", 25, 8, True, HANDLE, padded), "token": token}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# -- the clients ------------------------------------------------------------------------------


class Server:
    """The server's process: its ports, its games, its loop's longest stall and its peak
    RSS."""

    def __init__(self, process: asyncio.subprocess.Process, started: dict[str, Any]) -> None:
        self.process = process
        self.port = started["port"]
        self.hexagons_port = started["hexagons_port"]
        self.ids = started
        self.token: str = started["token"]

    @classmethod
    async def start(cls, tree: Path, workdir: Path) -> Server:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(SCRIPT), "--serve", str(workdir / "bench.db"),
            cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL)
        return cls(process, await cls._line(process))

    @staticmethod
    async def _line(process: asyncio.subprocess.Process) -> dict[str, Any]:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 300)
        if not line:
            raise RuntimeError("the server's process ended")
        found: dict[str, Any] = json.loads(line)
        return found

    async def mark(self) -> tuple[float, float, float]:
        """The loop's longest stall (ms) and the process's peak RSS (MB) since the last
        call, and its RSS now (MB)."""
        assert self.process.stdin is not None
        self.process.stdin.write(b"mark\n")
        found = await self._line(self.process)
        return float(found["stall_ms"]), float(found["peak_mb"]), float(found["rss_mb"])

    async def stall_ms(self) -> float:
        """The loop's longest stall since the last call."""
        return (await self.mark())[0]

    async def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 30)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


def session(address: str) -> aiohttp.ClientSession:
    # Answers are read, never inflated: this process's CPU is not what is measured.
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(local_addr=(address, 0), limit=4),
        timeout=aiohttp.ClientTimeout(total=60), auto_decompress=False)


Request = Callable[[aiohttp.ClientSession], Awaitable[int]]


def get(url: str, token: str | None = None) -> Request:
    headers = {"Accept-Encoding": "gzip"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"

    async def request(client: aiohttp.ClientSession) -> int:
        async with client.get(url, headers=headers) as answer:
            await answer.read()
            return answer.status
    return request


def live(url: str) -> Request:
    """Open a live stream, take its first event, and leave."""
    async def request(client: aiohttp.ClientSession) -> int:
        async with client.get(url) as answer:
            if answer.status == 200:
                async for line in answer.content:
                    if not line.strip():
                        break
            return answer.status
    return request


async def other_client(server: Server, stop: float) -> list[float]:
    """``GET /api/games?limit=1`` every 10 ms until ``stop``; the latencies."""
    latencies: list[float] = []
    url = f"http://127.0.0.1:{server.port}/api/games?limit=1"
    async with session(OTHER) as client:
        while time.monotonic() < stop:
            began = time.perf_counter()
            async with client.get(url) as answer:
                await answer.read()
            latencies.append(time.perf_counter() - began)
            await asyncio.sleep(0.01)
    return latencies


def report(name: str, answered: str, stall: float, rss: tuple[float, float],
           latencies: list[float]) -> None:
    """A phase's figures: ``rss`` is the RSS when it began and its peak in it."""
    print(f"{name:46s} {answered:26s} stall {stall:6.1f} ms  other p50 "
          f"{statistics.median(latencies) * 1000:5.1f} ms, worst {max(latencies) * 1000:6.1f} ms"
          f"  RSS {rss[0]:5.0f} -> {rss[1]:5.0f} MB", flush=True)


async def phase(server: Server, name: str, request: Request | None, seconds: float,
                clients: int) -> None:
    """One kind of request from every client for ``seconds``; the figures."""
    statuses: collections.Counter[int | str] = collections.Counter()
    stop = time.monotonic() + seconds

    async def attack(client: aiohttp.ClientSession) -> None:
        assert request is not None
        while time.monotonic() < stop:
            began = time.monotonic()
            try:
                statuses[await request(client)] += 1
            except (aiohttp.ClientError, TimeoutError) as exc:
                statuses[type(exc).__name__] += 1
            # Within the per-address request rate (two at a time): what is measured is the
            # requests' work, not the refusals of too many.
            await asyncio.sleep(max(0.0, began + 2 / RATE - time.monotonic()))

    sessions = [session(f"127.0.0.{2 + n}") for n in range(clients)]
    try:
        *_, began = await server.mark()
        attacks = [attack(client) for client in sessions for _ in range(2)] if request else []
        latencies = asyncio.create_task(other_client(server, stop))
        await asyncio.gather(latencies, *attacks)
        stall, peak, _ = await server.mark()
    finally:
        for client in sessions:
            await client.close()
    answered = ", ".join(f"{status}: {count}" for status, count in sorted(
        statuses.items(), key=lambda item: str(item[0]))) or "-"
    report(name, answered, stall, (began, peak), latencies.result())


async def slow_readers(server: Server, name: str, path: str, seconds: float,
                       token: str | None = None) -> None:
    """:data:`SLOW_READERS` connections from one address ask for ``path`` and never read
    their answers, for ``seconds``; the figures (the peak RSS is what they cost)."""
    loop = asyncio.get_running_loop()
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    sockets = []
    *_, began = await server.mark()
    stop = time.monotonic() + seconds
    other = asyncio.create_task(other_client(server, stop))
    try:
        for _ in range(SLOW_READERS):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.bind(("127.0.0.60", 0))
            sock.setblocking(False)
            await loop.sock_connect(sock, ("127.0.0.1", server.port))
            await loop.sock_sendall(sock, (f"GET {path} HTTP/1.1\r\nHost: bench\r\n{auth}"
                                           "\r\n").encode())
            sockets.append(sock)
        latencies = await other
    finally:
        for sock in sockets:
            sock.close()
    stall, peak, _ = await server.mark()
    report(name, f"{SLOW_READERS} never read", stall, (began, peak), latencies)


async def main(args: argparse.Namespace, tree: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = await Server.start(tree, Path(tmp))
        try:
            base = f"http://127.0.0.1:{server.port}/api/games"
            hexagons = f"http://127.0.0.1:{server.hexagons_port}"
            a, b, c = server.ids["running"], server.ids["calls"], server.ids["padded"]
            owner = server.token
            print(f"{args.tree}: A {a} (running, 25x25, 1,481 moves), B {b} (9x9 with its "
                  f"calls), C {c} (25x25, 400 padded replies); {args.clients} clients, "
                  f"{args.seconds:g} s a phase", flush=True)
            phases: list[tuple[str, Request | None]] = [
                ("idle", None),
                ("A: GET replay (running)", get(f"{base}/{a}/replay")),
                ("A: GET replay?states=full (running)", get(f"{base}/{a}/replay?states=full")),
                ("A: live stream, from move 0", live(f"{base}/{a}/live")),
                ("A: live stream ?states=full, from move 0",
                 live(f"{base}/{a}/live?states=full")),
                ("A: hexagons GET /<handle> (stored, running)",
                 get(f"{hexagons}/{RUNNING_HANDLE}")),
                ("B: GET /api/games/<id> (its calls stored)", get(f"{base}/{b}")),
                ("B: owner's GET /api/games/<id> (bodies)", get(f"{base}/{b}", owner)),
                ("C: GET /api/games/<id> (padded replies)", get(f"{base}/{c}")),
                ("C: owner's GET /api/games/<id> (bodies)", get(f"{base}/{c}", owner)),
                ("C: owner's GET ?limit=60 (bodies)", get(f"{base}/{c}?limit=60", owner)),
                ("C: GET replay?states=full (finished)", get(f"{base}/{c}/replay?states=full")),
                ("C: hexagons GET /<handle> (stored game)", get(f"{hexagons}/{HANDLE}")),
            ]
            for name, request in phases:
                await phase(server, name, request, args.seconds, args.clients)
            path = f"/api/games/{a}/replay?states=full"
            await slow_readers(server, "A: replay?states=full, unread", path, args.seconds)
            path = f"/api/games/{c}/replay?states=full"
            await slow_readers(server, "C: replay?states=full, unread", path, args.seconds)
            path = f"/api/games/{c}?limit=60"
            await slow_readers(server, "C: owner's ?limit=60, unread", path, args.seconds,
                               owner)
        finally:
            await server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--tree", default=str(REPO), help="the checkout to serve")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parsed = parser.parse_args()
    if parsed.serve:
        from merknera import loop  # the served tree's: the loop merknera serve runs on
        loop.run(_serve(parsed.serve))
    else:
        asyncio.run(main(parsed, Path(parsed.tree).resolve()))

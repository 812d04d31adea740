"""The hexagons observers' streams and ``GET /<id>`` late in a long game: the event loop's
time per move with N observers, and per ``GET``.

    .venv/bin/python bench/hexagons_observers.py [--lines 1200] [--moves 40]
                                                 [--observers 0,16,64,256] [--wrapper]

A real ``merknera serve`` (hexagons listener on, a temporary SQLite file); this process is
every client, over loopback.  Two clients play both seats of one 25x25 game (random legal
lines) until ``--lines`` lines are drawn (of 1,739; a game ends when no legal line is
left, some 1,450 to 1,500 lines in); then, for each N of ``--observers``, N observers
watch it (``POST /<id>/observers``, each reading its stream) while the players make
``--moves`` more moves.  The loop's time is the CPU time of the server's main thread (its
event loop; ``/proc/<pid>/task/<pid>/schedstat``), from the first move until every
observer has read the last move's line.  Then ``--moves`` moves with a ``GET /<id>`` after
each (the first request of each moment of the game); then, with the game standing still,
``GET /<id>`` and ``GET /<id>`` with an ``X-Observer-Token`` ``--gets`` times each, and
``GET /`` (a small answer: the HTTP overhead) for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from merknera.games.hexagons import lattice
from tests.support import free_port

REPO = Path(__file__).resolve().parent.parent
HEXAGONS = re.compile(r"Hexagons listener on (http://\S+)")

Point = tuple[int, int]
WRAPPER = "<script>parent.update(%s);</script>"


async def serve(workdir: Path) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "serve", "--db", str(workdir / "bench.db"),
        "--port", "0", "--hexagons-port", str(free_port()), "--log-level", "WARNING",
        "--max-connections-per-client", "2000", "--request-burst", "100000",
        "--request-rate", "100000", "--max-streams", "1024",
        "--max-streams-per-client", "1024", "--hexagons-turn-limit", "600",
        "--stream-send-timeout", "120", cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert process.stdout is not None
    while line := (await process.stdout.readline()).decode():
        if match := HEXAGONS.search(line):
            return process, match.group(1)
    raise AssertionError("the server did not start its hexagons listener")


def loop_seconds(pid: int) -> float:
    """CPU time of the process's main thread (the event loop), in seconds."""
    return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0]) / 1e9


class Pacer:
    """Lets the players make a given number of moves, then holds them."""

    def __init__(self) -> None:
        self.budget = 0
        self.waiting = 0
        self.over = False
        self._changed = asyncio.Condition()

    async def take(self) -> None:
        async with self._changed:
            self.waiting += 1
            self._changed.notify_all()
            await self._changed.wait_for(lambda: self.budget > 0)
            self.waiting -= 1
            self.budget -= 1

    async def allow(self, moves: int) -> None:
        async with self._changed:
            self.budget += moves
            self._changed.notify_all()

    async def held(self) -> None:
        """Until every move allowed was made and a player waits for more."""
        async with self._changed:
            await self._changed.wait_for(
                lambda: self.over or (self.budget == 0 and self.waiting > 0))
        if self.over:
            raise SystemExit("the game is over (no legal line left): ask for fewer --lines "
                             "or --moves")

    async def end(self) -> None:
        async with self._changed:
            self.over = True
            self._changed.notify_all()


class Board:
    """The lines drawn and hexagons claimed, as both players' answers told them."""

    def __init__(self, rows: int, cols: int) -> None:
        self.lines = lattice(rows, cols).lines
        self.drawn: set[tuple[Point, ...]] = set()
        self.claimed: set[Point] = set()

    def merge(self, game: dict[str, Any]) -> None:
        self.drawn.update(tuple(sorted((e["row"], e["col"]) for e in line["endpoints"]))
                          for line in game["lines"])
        self.claimed.update((h["center"]["row"], h["center"]["col"])
                            for h in game["hexagons"])

    def free(self) -> list[list[dict[str, int]]]:
        return [[{"row": p.row, "col": p.col} for p in line] for line in self.lines
                if tuple((p.row, p.col) for p in line) not in self.drawn
                and (line[0].row, line[0].col) not in self.claimed
                and (line[1].row, line[1].col) not in self.claimed]


async def player(session: aiohttp.ClientSession, url: str, name: str, board: Board,
                 pacer: Pacer, chooser: random.Random) -> None:
    async with session.post(f"{url}/players", json={"name": name}) as response:
        assert response.status == 200, await response.text()
        token = response.headers.get("X-Turn-Token")
        board.merge(await response.json())
    while token:
        await pacer.take()
        async with session.post(f"{url}/moves", json=chooser.choice(board.free()),
                                headers={"X-Turn-Token": token}) as response:
            assert response.status == 200, await response.text()
            token = response.headers.get("X-Turn-Token")
            board.merge(await response.json())
    await pacer.end()


class Observer:
    """One stream, read to its end; how many lines of the game it has been shown."""

    def __init__(self) -> None:
        self.drawn = 0
        self.token = ""
        self.started = asyncio.Event()
        self.moved = asyncio.Event()

    async def watch(self, session: aiohttp.ClientSession, url: str,
                    wrapper: str | None) -> None:
        body = {} if wrapper is None else {"wrapper": wrapper}
        async with session.post(f"{url}/observers", json=body) as response:
            assert response.status == 200, await response.text()
            self.token = response.headers["X-Observer-Token"]
            prefix, _, suffix = (wrapper or "%s").partition("%s")
            async for line in response.content:
                document = json.loads(line.strip()[len(prefix):len(line.strip()) - len(suffix)])
                self.drawn += len(document["lines"])
                self.started.set()
                self.moved.set()


async def until_shown(observers: list[Observer], drawn: int) -> None:
    for observer in observers:
        while observer.drawn < drawn:
            observer.moved.clear()
            await observer.moved.wait()


async def gets(session: aiohttp.ClientSession, url: str, pid: int, count: int,
               headers: dict[str, str] | None = None) -> float:
    """Loop time per GET of ``url``, in ms."""
    before = loop_seconds(pid)
    for _ in range(count):
        async with session.get(url, headers=headers) as response:
            assert response.status == 200, await response.text()
            await response.read()
    return (loop_seconds(pid) - before) / count * 1000


async def run(options: argparse.Namespace) -> None:
    counts = [int(n) for n in options.observers.split(",")]
    wrapper = WRAPPER if options.wrapper else None
    with tempfile.TemporaryDirectory() as directory:
        process, base = await serve(Path(directory))
        pid = process.pid
        tasks: list[asyncio.Task[None]] = []
        try:
            async with aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(limit=0),
                    timeout=aiohttp.ClientTimeout(total=None)) as session:
                async with session.post(f"{base}/", json={"rows": 25, "cols": 25}) as answer:
                    url = base + answer.headers["Location"]
                board, pacer = Board(25, 25), Pacer()
                chooser = random.Random(7)
                tasks += [asyncio.create_task(player(session, url, name, board, pacer, chooser))
                          for name in ("Ann", "Bob")]
                await pacer.allow(options.lines)
                await pacer.held()
                print(f"25x25, {len(board.drawn)} lines drawn; "
                      f"{'wrapper ' + WRAPPER if wrapper else 'no wrapper'}")
                per_move: dict[int, float] = {}
                for count in counts:
                    observers = [Observer() for _ in range(count)]
                    watching = [asyncio.create_task(o.watch(session, url, wrapper))
                                for o in observers]
                    tasks += watching
                    for observer in observers:
                        await observer.started.wait()
                    await until_shown(observers, len(board.drawn))
                    await asyncio.sleep(0.2)  # the streams' first deltas
                    before = loop_seconds(pid)
                    await pacer.allow(options.moves)
                    await pacer.held()
                    await until_shown(observers, len(board.drawn))
                    per_move[count] = (loop_seconds(pid) - before) / options.moves * 1000
                    extra = per_move[count] - per_move.get(0, per_move[count])
                    each = f", {extra / count:.3f} ms per observer" if count and 0 in per_move \
                        else ""
                    print(f"  {count:4d} observers: {per_move[count]:8.2f} ms of loop per move"
                          f"{each} (at {len(board.drawn)} lines)")
                    for task in watching:
                        task.cancel()
                    await asyncio.gather(*watching, return_exceptions=True)
                before = loop_seconds(pid)
                for _ in range(options.moves):
                    await pacer.allow(1)
                    await pacer.held()
                    async with session.get(url) as response:
                        await response.read()
                with_get = (loop_seconds(pid) - before) / options.moves * 1000
                print(f"  a GET /<id> after every move: {with_get:8.2f} ms of loop per move "
                      f"and GET (at {len(board.drawn)} lines)")
                observer = Observer()
                tasks.append(asyncio.create_task(observer.watch(session, url, None)))
                await observer.started.wait()
                plain = await gets(session, url, pid, options.gets)
                token = await gets(session, url, pid, options.gets,
                                   {"X-Observer-Token": observer.token})
                listing = await gets(session, f"{base}/", pid, options.gets)
                print(f"  GET /<id>:                  {plain:6.2f} ms of loop per request")
                print(f"  GET /<id>, X-Observer-Token: {token:5.2f} ms of loop per request")
                print(f"  GET / (HTTP overhead):      {listing:6.2f} ms of loop per request")
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            process.terminate()
            await process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1200)
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--observers", default="0,16,64,256")
    parser.add_argument("--gets", type=int, default=200)
    parser.add_argument("--wrapper", action="store_true")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()

"""The MebiPenny hexagons listener and the Kalaha board API, with the figures that matter.

    .venv/bin/python bench/gateways.py [--hexagons 20] [--boards 20] [--people 5]

A real ``merknera serve`` with both listeners on a temporary SQLite file; this process is
every client, over loopback:

* **hexagons**: ``--hexagons`` games on a 7x7 board, all at once, each between two clients
  that join by name and draw random legal lines, every move a long poll held until the
  mover's next turn; the platform's moves per second and CPU per move;
* **boards**: ``--boards`` Kalaha boards played to the end at once, moving for both players
  (the original's hot seat); each PUT's round trip (send the move, read the BoardState);
* **people**: ``--people`` boards against the reference Kalaha bot (``merknera_bots/kalaha.py``, its
  own process): each PUT's round trip, the bot's move included.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from merknera.games.hexagons import lattice

REPO = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"Merknera listening on (http://\S+)")
HEXAGONS = re.compile(r"Hexagons listener on (http://\S+)")
KALAHA = re.compile(r"Kalaha listener on (http://\S+)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def serve(workdir: Path) -> tuple[asyncio.subprocess.Process, str, str, str]:
    # The listeners need port numbers (0 is "off").
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "serve", "--db", str(workdir / "bench.db"),
        "--port", "0", "--hexagons-port", str(free_port()), "--kalaha-port", str(free_port()),
        "--log-level", "WARNING",
        "--max-connections-per-client", "2000", "--request-burst", "100000",
        "--request-rate", "100000", "--max-open-games-per-client", "1000",
        "--registration-burst", "100000", cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert process.stdout is not None
    found: list[str] = []
    for pattern in (LISTENING, HEXAGONS, KALAHA):
        line = (await process.stdout.readline()).decode()
        match = pattern.search(line)
        assert match, line
        found.append(match.group(1))
    return process, found[0], found[1], found[2]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0  # utime + stime, in clock ticks


def figures(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return (f"p50 {statistics.median(ordered) * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms, "
            f"max {ordered[-1] * 1000:.2f} ms ({len(ordered)} moves)")


# -- hexagons --------------------------------------------------------------------------------

async def hexagon_player(session: aiohttp.ClientSession, url: str, name: str) -> int:
    """Join and play random legal lines until the end; the moves made."""
    async with session.post(f"{url}/players", json={"name": name}) as response:
        token = response.headers.get("X-Turn-Token")
        game: dict[str, Any] = await response.json()
    board = lattice(game["rows"], game["cols"])
    drawn = {tuple(sorted((e["row"], e["col"]) for e in line["endpoints"]))
             for line in game["lines"]}
    claimed = {(h["center"]["row"], h["center"]["col"]) for h in game["hexagons"]}
    moves = 0
    while token:
        free = [line for line in board.lines if tuple(line) not in drawn
                and line[0] not in claimed and line[1] not in claimed]
        line = random.choice(free)
        body = [{"row": p.row, "col": p.col} for p in line]
        async with session.post(f"{url}/moves", json=body,
                                headers={"X-Turn-Token": token}) as response:
            assert response.status == 200, await response.text()
            token = response.headers.get("X-Turn-Token")
            delta = await response.json()
        moves += 1
        drawn.update(tuple(sorted((e["row"], e["col"]) for e in item["endpoints"]))
                     for item in delta["lines"])
        claimed.update((h["center"]["row"], h["center"]["col"]) for h in delta["hexagons"])
    return moves


async def hexagons(base: str, count: int, pid: int) -> None:
    async with aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0),
            timeout=aiohttp.ClientTimeout(total=600)) as session:
        urls = []
        for _ in range(count):
            async with session.post(f"{base}/", json={"rows": 7, "cols": 7}) as response:
                urls.append(base + response.headers["Location"])
        cpu, started = cpu_seconds(pid), time.perf_counter()
        played = await asyncio.gather(*(hexagon_player(session, url, f"p{n}{side}")
                                        for n, url in enumerate(urls) for side in "ab"))
        elapsed, used = time.perf_counter() - started, cpu_seconds(pid) - cpu
    moves = sum(played)
    print(f"hexagons: {count} games (7x7) at once, {moves} moves in {elapsed:.2f} s: "
          f"{moves / elapsed:.0f} moves/s, {used / moves * 1000:.2f} ms platform CPU per move")


# -- Kalaha ----------------------------------------------------------------------------------

async def board(session: aiohttp.ClientSession, url: str, opponent: int | None,
                samples: list[float]) -> None:
    """One board to the end: random non-empty pits for the player to move."""
    body = {} if opponent is None else {"opponent": opponent}
    async with session.post(url, json=body) as response:
        state = await response.json()
    while not state["gameOver"]:
        player = state["nextPlayer"]
        row = state["rowOne" if player == "ONE" else "rowTwo"]["pits"]
        pit = random.choice([n for n, pit in enumerate(row) if pit["stones"]])
        started = time.perf_counter()
        async with session.put(f"{url}/{state['boardId']}",
                               json={"pitIndex": pit, "player": player}) as response:
            assert response.status == 200, await response.text()
            state = await response.json()
        samples.append(time.perf_counter() - started)


async def boards(url: str, count: int, opponent: int | None, label: str) -> None:
    samples: list[float] = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        started = time.perf_counter()
        await asyncio.gather(*(board(session, url, opponent, samples) for _ in range(count)))
        elapsed = time.perf_counter() - started
    print(f"{label}: {count} boards at once in {elapsed:.2f} s; a PUT's round trip: "
          f"{figures(samples)}")


async def reference_bot(base: str, workdir: Path) -> tuple[asyncio.subprocess.Process, int]:
    user = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "user", "add", "bench", "--db",
        str(workdir / "bench.db"), cwd=REPO, stdout=asyncio.subprocess.PIPE)
    out, _ = await user.communicate()
    token = out.decode().strip().splitlines()[-1]
    bot = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera_bots.kalaha", "--platform", base, "--token", token,
        "--port", "0", "--name", "Sower", "--strategy", "good", cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert bot.stdout is not None
    line = (await bot.stdout.readline()).decode()
    assert line.startswith("READY"), line
    async with aiohttp.ClientSession() as session, session.get(
            f"{base}/api/bots?game=KALAHA") as response:
        listed = (await response.json())["bots"]
    return bot, next(b["id"] for b in listed if b["name"] == "Sower")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hexagons", type=int, default=20)
    parser.add_argument("--boards", type=int, default=20)
    parser.add_argument("--people", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        process, base, hexagons_url, kalaha_url = await serve(workdir)
        bot = None
        try:
            await hexagons(hexagons_url, options.hexagons, process.pid)
            await boards(kalaha_url, options.boards, None, "boards (hot seat)")
            bot, sower = await reference_bot(base, workdir)
            await boards(kalaha_url, options.people, sower, "people against merknera_bots.kalaha")
        finally:
            for child in (bot, process):
                if child is not None:
                    child.terminate()
                    await child.wait()
    print(json.dumps({"ok": True}))


if __name__ == "__main__":
    asyncio.run(main())

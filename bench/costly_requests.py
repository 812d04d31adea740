"""Requests whose input is small and whose cost could be large, against a real platform,
with what another client sees meanwhile (the security issue's "no request freezes the
platform").

    .venv/bin/python bench/costly_requests.py [--only graphql,gzip] [--rounds 5] [--repo PATH]

Each part starts ``merknera serve`` (every listener on, a temporary SQLite file) and sends
its costly requests from 127.0.0.2 while another client, from 127.0.0.1, asks for
``GET /api/games`` every 20 ms; it prints that client's latency before and during, and how
long the costly requests took to be answered:

* **graphql**: the documents of the issue, 8 at a time, rounds 0.25 s apart: 5,950 ``__typename``
  (64 KiB), 80 x 80 aliased introspection (3.3 KB), a fragment bomb (2**16 fields), a
  fragment of 191 ``__typename`` never spread (2.1 KB), and the standard introspection
  query;
* **gzip**: 255 KiB of gzip (256 MiB of zeros) to ``POST /rpc``, 4 at a time, rounds
  0.25 s apart.

``--repo`` runs the platform of another checkout (``git worktree add /tmp/before <commit>``)
to compare with the figures of this one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiohttp
from graphql import get_introspection_query

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support import free_port

REPO = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"Merknera listening on (http://\S+)")
ATTACKER = "127.0.0.2"
ROUND_PAUSE = 0.25
"""Seconds between rounds (the issue's point: one request every few seconds is enough)."""


@contextlib.asynccontextmanager
async def platform(repo: Path, workdir: Path) -> AsyncIterator[tuple[str, int]]:
    """``merknera serve`` of ``repo``: its main URL and its Battlebot port."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERKNERA_")}
    env["PYTHONPATH"] = str(repo)
    battlebot = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "serve", "--db", str(workdir / "merknera.db"),
        "--port", "0", "--battlebot-port", str(battlebot), cwd=repo, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        found = LISTENING.search(line)
        assert found, f"the platform did not start: {line!r}"
        yield found.group(1), battlebot
    finally:
        process.terminate()
        await process.wait()


def session(source: str) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(local_addr=(source, 0), limit=0),
        timeout=aiohttp.ClientTimeout(total=120))


def spread(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]
    return (f"p50 {statistics.median(ordered) * 1000:8.1f} ms, p95 {p95 * 1000:8.1f} ms, "
            f"max {ordered[-1] * 1000:8.1f} ms ({len(ordered)} requests)")


async def observe(url: str, stop: asyncio.Event) -> list[float]:
    """Another client's latencies until ``stop``."""
    samples = []
    async with session("127.0.0.1") as client:
        while not stop.is_set():
            started = time.monotonic()
            async with client.get(url + "/api/games?limit=5") as response:
                await response.read()
            samples.append(time.monotonic() - started)
            await asyncio.sleep(0.02)
    return samples


async def under(url: str, attack: Callable[[], Awaitable[list[float]]]) -> None:
    stop = asyncio.Event()
    watching = asyncio.create_task(observe(url, stop))
    await asyncio.sleep(2.0)
    stop.set()
    before = await watching
    stop = asyncio.Event()
    watching = asyncio.create_task(observe(url, stop))
    answered = await attack()
    stop.set()
    during = await watching
    print(f"  another client, before:   {spread(before)}")
    print(f"  another client, during:   {spread(during)}")
    print(f"  the costly requests:      {spread(answered)}")


def documents() -> dict[str, str]:
    types = " ".join(f"a{i}: types {{ ...F }}" for i in range(80))
    fields = " ".join(f"b{j}: fields {{ name }}" for j in range(80))
    return {
        "5,950 __typename": "{" + " ".join(["__typename"] * 5950) + "}",
        "80 x 80 aliases": f"{{ __schema {{ {types} }} }} fragment F on __Type {{ {fields} }}",
        "fragment bomb": "\n".join(["query { bots(gameType: NUMBERWANG) { ...F0 } }", *(
            f"fragment F{i} on Bot {{ ...F{i + 1} ...F{i + 1} }}" for i in range(16)),
            "fragment F16 on Bot { name }"]),
        "a fragment never spread": ("{ gameTypes } fragment F on Query { "
                                    + " ".join(["__typename"] * 191) + " }"),
        "introspection": get_introspection_query(descriptions=True),
    }


async def graphql(repo: Path, workdir: Path, rounds: int) -> None:
    print(f"== graphql: the issue's documents, 8 at a time, {rounds} rounds of each")
    async with platform(repo, workdir) as (url, battlebot):
        endpoint = f"http://127.0.0.1:{battlebot}/graphql"

        async def attack() -> list[float]:
            times: list[float] = []
            async with session(ATTACKER) as client:
                async def one(query: str) -> None:
                    started = time.monotonic()
                    async with client.post(endpoint, json={"query": query}) as response:
                        body = await response.read()
                    times.append(time.monotonic() - started)
                    sizes.append(len(body))

                for name, query in documents().items():
                    sizes: list[int] = []
                    for _ in range(rounds):
                        await asyncio.gather(*(one(query) for _ in range(8)))
                        await asyncio.sleep(ROUND_PAUSE)
                    print(f"  {name}: {len(query)} characters, answers of "
                          f"{min(sizes)}-{max(sizes)} bytes")
            return times

        await under(url, attack)


async def gzipped(repo: Path, workdir: Path, rounds: int) -> None:
    print(f"== gzip: 255 KiB of gzip (256 MiB of zeros) to POST /rpc, 4 at a time, "
          f"{rounds} rounds")
    bomb = gzip.compress(bytes(256 * 1024 * 1024), compresslevel=9)
    async with platform(repo, workdir) as (url, _):
        async def attack() -> list[float]:
            times: list[float] = []
            statuses: list[int] = []
            async with session(ATTACKER) as client:
                async def one() -> None:
                    started = time.monotonic()
                    with contextlib.suppress(aiohttp.ClientError):
                        async with client.post(url + "/rpc", data=bomb, headers={
                                "Content-Type": "application/json",
                                "Content-Encoding": "gzip"}) as response:
                            await response.read()
                            statuses.append(response.status)
                    times.append(time.monotonic() - started)

                for _ in range(rounds):
                    await asyncio.gather(*(one() for _ in range(4)))
                    await asyncio.sleep(ROUND_PAUSE)
            print(f"  answered {sorted(set(statuses))}")
            return times

        await under(url, attack)


PARTS: dict[str, Callable[[Path, Path, int], Awaitable[None]]] = {"graphql": graphql,
                                                                  "gzip": gzipped}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(PARTS))
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each request")
    parser.add_argument("--repo", type=Path, default=REPO,
                        help="the checkout whose platform is run (default: this one)")
    args = parser.parse_args()
    for name in args.only.split(","):
        with tempfile.TemporaryDirectory() as workdir:
            await PARTS[name](args.repo.resolve(), Path(workdir), args.rounds)


if __name__ == "__main__":
    asyncio.run(main())

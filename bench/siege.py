"""The platform under the attacks of the hardening issue, with the figures that matter.

    .venv/bin/python bench/siege.py [--only flood,tokens,registrations,streams,share]

Each part starts a real ``merknera serve`` in its own process on a temporary SQLite file,
attacks it from this process over loopback (the attacker from 127.0.0.2 and 127.0.0.3, the
others from 127.0.0.1: every address of 127.0.0.0/8 reaches the loopback interface), and
prints what the others saw:

* **flood**: the platform at an open-files limit of 1,024 with four reference bots playing
  on the ladder; 1,100 sockets that send ``GET / HTTP/1.1`` and wait, and 100 that send
  their headers a byte at a time.  Other clients' latency before and during the flood,
  registrations during it, how the flood's sockets were let go, the games' results and
  the size of the platform's log;
* **tokens**: wrong tokens sent as fast as one client can, to ``/rpc`` and to a bot's log;
  how many the platform checked per second;
* **registrations**: 100 new versions registered as fast as possible against another
  author's bot; how many were taken, games made and NewGame calls that bot got;
* **streams**: one client opens 256 live streams; how many it got, whether another client
  still gets one, and how soon a stream's place is free after its client leaves;
* **share**: an author's seven bot names on one endpoint that takes 9 s a move, then
  another author's new bot: how long until it is asked for its first move.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

REPO = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"Merknera listening on (http://\S+)")
ATTACKER, SLOW_ATTACKER = "127.0.0.2", "127.0.0.3"


@dataclass
class Served:
    """A running ``merknera serve``."""

    process: asyncio.subprocess.Process
    url: str
    db: Path
    stderr: Path

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERKNERA_")}
    env["PYTHONPATH"] = str(REPO)
    return env


async def add_user(db: Path, name: str) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "user", "add", name, "--db", str(db),
        env=environment(), stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate()
    return out.decode().split()[-1]


@contextlib.asynccontextmanager
async def platform(workdir: Path, *options: str,
                   open_files: int | None = None) -> AsyncIterator[Served]:
    db, stderr = workdir / "merknera.db", workdir / "platform.stderr"

    def cap() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with stderr.open("wb") as errors:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "merknera", "serve", "--db", str(db), "--port", "0",
            *options, env=environment(), stdout=asyncio.subprocess.PIPE, stderr=errors,
            preexec_fn=cap if open_files is not None else None)
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        found = LISTENING.search(line)
        assert found, f"the platform did not start: {stderr.read_text()[-2000:]}"
        yield Served(process, found.group(1), db, stderr)
    finally:
        if process.returncode is None:
            process.terminate()
            await process.wait()


@contextlib.asynccontextmanager
async def reference_bot(url: str, token: str, name: str, strategy: str,
                        delay: float) -> AsyncIterator[None]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera_bots.tictactoe", "--strategy", strategy, "--platform", url,
        "--token", token, "--port", "0", "--name", name, "--delay", str(delay),
        env=environment(), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        await asyncio.wait_for(process.stdout.readline(), 30)
        yield
    finally:
        process.terminate()
        await process.wait()


@dataclass
class CountingBot:
    """A bot served from this process: answers everything, counts the calls by method,
    and takes ``delay`` seconds a move."""

    delay: float = 0.0
    calls: Counter[str] | None = None
    first_move_at: float | None = None

    async def handle(self, request: web.Request) -> web.Response:
        call = json.loads(await request.read())
        method = call["method"]
        assert self.calls is not None
        self.calls[method] += 1
        result: object = {"ping": "OK"}
        if method.endswith(".NextMove"):
            if self.first_move_at is None:
                self.first_move_at = time.monotonic()
            await asyncio.sleep(self.delay)
            result = {"position": call["params"]["gamestate"].index("")}
        return web.json_response({"jsonrpc": "2.0", "result": result, "id": call["id"]})


@contextlib.asynccontextmanager
async def counting_bot(delay: float = 0.0) -> AsyncIterator[tuple[CountingBot, str]]:
    bot = CountingBot(delay, Counter())
    app = web.Application()
    app.router.add_post("/{tail:.*}", bot.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield bot, f"http://127.0.0.1:{port}/rpc"
    finally:
        await runner.cleanup()


def session(source: str = "127.0.0.1", limit: int = 100) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(local_addr=(source, 0), limit=limit),
        timeout=aiohttp.ClientTimeout(total=30))


async def rpc(client: aiohttp.ClientSession, url: str, method: str,
              params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    async with client.post(url + "/rpc", json={"jsonrpc": "2.0", "id": 1, "method": method,
                                               "params": params}) as response:
        return response.status, await response.json()


def register_params(token: str, name: str, version: str, endpoint: str) -> dict[str, Any]:
    return {"token": token, "botname": name, "botversion": version, "game": "TICTACTOE",
            "rpcendpoint": endpoint}


def spread(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]
    return (f"p50 {statistics.median(ordered) * 1000:7.1f} ms, p95 {p95 * 1000:7.1f} ms, "
            f"max {ordered[-1] * 1000:7.1f} ms ({len(ordered)} requests)")


async def timed_gets(url: str, count: int) -> list[float]:
    samples = []
    async with session() as client:
        for _ in range(count):
            started = time.monotonic()
            async with client.get(url + "/api/bots") as response:
                await response.read()
                assert response.status == 200, response.status
            samples.append(time.monotonic() - started)
            await asyncio.sleep(0.02)
    return samples


# -- the parts ---------------------------------------------------------------------------


async def flood(workdir: Path) -> None:
    print("== flood: 1,100 idle sockets and 100 slowloris against an open-files limit of 1,024")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    async with platform(workdir, "--ladder", "--ladder-interval", "0.5",
                        open_files=1024) as served:
        token = await add_user(served.db, "alice")
        async with contextlib.AsyncExitStack() as bots:
            for number, strategy in enumerate(("perfect", "random", "perfect", "random")):
                await bots.enter_async_context(
                    reference_bot(served.url, token, f"bot{number}", strategy, 0.05))
            await asyncio.sleep(2.0)
            before = await timed_gets(served.url, 100)
            print(f"  GET /api/bots, no flood:     {spread(before)}")
            finished_before = await finished(served)
            attackers = await open_idle(served.port, 1100)
            opened = time.monotonic()
            slow = [asyncio.create_task(trickle(served.port)) for _ in range(100)]
            during = await timed_gets(served.url, 100)
            registered = []
            _, late_url = await bots.enter_async_context(counting_bot())
            async with session() as client:
                for number in range(5):
                    started = time.monotonic()
                    status, reply = await rpc(client, served.url, "RegistrationService.Register",
                                              register_params(token, f"late{number}", "1",
                                                              late_url))
                    registered.append(time.monotonic() - started)
                    assert status == 200 and "result" in reply, reply
            print(f"  GET /api/bots, during flood: {spread(during)}")
            print(f"  Register, during flood:      {spread(registered)}")
            closed = await asyncio.gather(*(let_go(reader, opened) for reader, _ in attackers))
            refused = [at for at, answer in closed if answer.startswith((b"HTTP/1.1 429",
                                                                          b"RESET"))]
            held = [at for at, answer in closed if not answer]
            print(f"  the flood's sockets: {len(refused)} refused at once (429 or reset), all "
                  f"within {max(refused, default=0) * 1000:.0f} ms of the flood's start; "
                  f"{len(held)} held, closed after {min(held, default=0):.1f}.."
                  f"{max(held, default=0):.1f} s (idle_timeout 15 s)")
            for _, writer in attackers:
                writer.close()
            for task in slow:
                task.cancel()
            await asyncio.gather(*slow, return_exceptions=True)
            after = await finished(served)
            games = Counter((row[0], row[1]) for row in after[len(finished_before):])
            print(f"  games finished while flooded: {sum(games.values())}, by result: "
                  f"{dict(games)}")
        log = served.stderr.read_text("utf-8", errors="replace")
        print(f"  the platform's log: {len(log)} bytes, {len(log.splitlines())} lines, "
              f"{log.count('Too many open files')} mentions of EMFILE")
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def finished(served: Served) -> list[tuple[str, str]]:
    async with session() as client, client.get(
            served.url + "/api/games?status=FINISHED&limit=500") as response:
        found = (await response.json())["games"]
    return [(game["outcome"], game["reason"]) for game in reversed(found)]


async def open_idle(port: int, count: int) -> list[tuple[asyncio.StreamReader,
                                                         asyncio.StreamWriter]]:
    async def one() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                       local_addr=(ATTACKER, 0))
        writer.write(b"GET / HTTP/1.1\r\n")
        return reader, writer

    return list(await asyncio.gather(*(one() for _ in range(count))))


async def let_go(reader: asyncio.StreamReader, since: float) -> tuple[float, bytes]:
    """When the platform let a socket go, and what it said first (b"RESET" for a reset:
    a refused socket whose request line was left unread)."""
    try:
        answer = await asyncio.wait_for(reader.read(), 60)
    except ConnectionResetError:
        answer = b"RESET"
    return time.monotonic() - since, answer


async def trickle(port: int) -> None:
    with contextlib.suppress(OSError):
        reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                       local_addr=(SLOW_ATTACKER, 0))
        for byte in b"GET / HTTP/1.1\r\nHost: merknera\r\nX-Slow: " + b"x" * 10_000:
            if reader.at_eof() or writer.is_closing():
                return
            writer.write(bytes([byte]))
            await asyncio.sleep(0.5)


async def tokens(workdir: Path) -> None:
    print("== tokens: wrong tokens as fast as one client can send them, for 5 s")
    async with platform(workdir) as served:
        await add_user(served.db, "alice")
        for where in ("/rpc", "/api/bots/1/log"):
            checked, limited, elapsed = await guess_tokens(served.url, where, 5.0)
            print(f"  {where:<16} {checked:5d} wrong tokens checked ({checked / elapsed:5.1f}/s; "
                  f"a burst of 10, then 1/s), {limited:6d} answered 429 unread")


async def guess_tokens(url: str, where: str, seconds: float) -> tuple[int, int, float]:
    """Wrong tokens from eight requests at a time: (checked, refused unread, seconds)."""
    checked = limited = 0
    deadline = time.monotonic() + seconds
    async with session(ATTACKER) as client:
        async def guess(number: int) -> None:
            nonlocal checked, limited
            while time.monotonic() < deadline:
                token = f"guess-{number}-{time.monotonic_ns()}"
                if where == "/rpc":
                    request = client.post(url + "/rpc", json={
                        "jsonrpc": "2.0", "id": 1, "method": "RegistrationService.Register",
                        "params": register_params(token, "x", "1", "x")})
                else:
                    request = client.get(url + where,
                                         headers={"Authorization": f"Bearer {token}"})
                async with request as response:
                    if response.status == 429:
                        limited += 1
                    else:
                        checked += 1

        started = time.monotonic()
        await asyncio.gather(*(guess(n) for n in range(8)))
        return checked, limited, time.monotonic() - started


async def registrations(workdir: Path) -> None:
    print("== registrations: 100 new versions as fast as possible, against bob's bot")
    async with platform(workdir) as served, counting_bot() as (victim, victim_url), \
            counting_bot() as (_, flood_url):
        alice, bob = await add_user(served.db, "alice"), await add_user(served.db, "bob")
        async with session() as client:
            await rpc(client, served.url, "RegistrationService.Register",
                      register_params(bob, "victim", "1", victim_url))
            await asyncio.sleep(0.5)
            assert victim.calls is not None
            victim.calls.clear()
            started = time.monotonic()
            answers = await asyncio.gather(*(
                rpc(client, served.url, "RegistrationService.Register",
                    register_params(alice, "flood", str(n), flood_url))
                for n in range(100)))
            elapsed = time.monotonic() - started
            await asyncio.sleep(max(0.0, 1.0 - elapsed))
            taken = sum(1 for status, reply in answers if status == 200 and "result" in reply)
            limited = sum(1 for status, _ in answers if status == 429)
            async with client.get(served.url + "/api/games?limit=500") as response:
                made = len((await response.json())["games"])
        print(f"  {taken} taken, {limited} answered 429 in {elapsed * 1000:.0f} ms; games made: "
              f"{made}; NewGame calls to bob's bot within 1 s: "
              f"{victim.calls['TicTacToe.NewGame']}")


async def streams(workdir: Path) -> None:
    print("== streams: one client opens 256 live streams")
    async with platform(workdir) as served, session(ATTACKER, limit=300) as hog:
        responses = await asyncio.gather(*(hog.get(served.url + "/api/live")
                                           for _ in range(256)))
        got = [r for r in responses if r.status == 200]
        refused = [r for r in responses if r.status == 429]
        async with session() as other, other.get(served.url + "/api/live") as own:
            other_status = own.status
        got[0].close()
        started = time.monotonic()
        async with session(ATTACKER) as again:
            while True:
                async with again.get(served.url + "/api/live") as answer:
                    if answer.status == 200:
                        break
                await asyncio.sleep(0.01)
        freed = time.monotonic() - started
        for response in responses:
            response.close()
        print(f"  {len(got)} streams given, {len(refused)} answered 429; another client's "
              f"stream: HTTP {other_status}; a place free again {freed * 1000:.0f} ms after "
              "its client left")


async def share(workdir: Path) -> None:
    print("== share: seven names on one endpoint at 9 s a move, then another author's bot")
    async with platform(workdir) as served, counting_bot(9.0) as (_, slow_url), \
            counting_bot() as (carol_bot, carol_url), counting_bot() as (newcomer, new_url):
        alice, bob = await add_user(served.db, "alice"), await add_user(served.db, "bob")
        carol = await add_user(served.db, "carol")
        async with session() as client:
            await rpc(client, served.url, "RegistrationService.Register",
                      register_params(carol, "carol", "1", carol_url))
            for number in range(7):
                await rpc(client, served.url, "RegistrationService.Register",
                          register_params(alice, f"slow{number}", "1", slow_url))
            await asyncio.sleep(3.0)
            async with client.get(served.url + "/api/games?status=RUNNING&limit=500") as r:
                running = len((await r.json())["games"])
            started = time.monotonic()
            await rpc(client, served.url, "RegistrationService.Register",
                      register_params(bob, "newcomer", "1", new_url))
            while newcomer.first_move_at is None:
                if time.monotonic() - started > 120:
                    break
                await asyncio.sleep(0.01)
        waited = (newcomer.first_move_at or time.monotonic()) - started
        print(f"  games running with the slow author's bots: {running} of 32 places "
              f"(its share: 8); the new bot's first NextMove {waited * 1000:.0f} ms after "
              "it registered")
        del carol_bot


PARTS: dict[str, Callable[[Path], Awaitable[None]]] = {
    "flood": flood, "tokens": tokens, "registrations": registrations, "streams": streams,
    "share": share}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(PARTS),
                        help="comma-separated parts: " + ", ".join(PARTS))
    args = parser.parse_args()
    for name in args.only.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            await PARTS[name.strip()](Path(tmp))


if __name__ == "__main__":
    asyncio.run(main())

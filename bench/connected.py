"""What do bots that connect out (``/rpc/ws``) cost the platform, against bots it calls over
HTTP?

Both setups run the real platform as ``merknera serve`` in a process of its own, on a fresh
SQLite store, and the bots in a second process; this script only starts them, registers,
watches the store and reads both processes' CPU time from ``/proc/<pid>/stat`` (user +
system, every thread's) and their memory from ``/proc/<pid>/status`` (VmRSS).

**Play** (each round, both setups, in alternating order): ``--bots`` instantly-answering
tic-tac-toe bots of one owner register one after another, and Merknera's registration
round robin plays every pair twice, ``--concurrency`` games at once (the owner's fair share
is the whole platform, as in bench/referee.py --registration):

* **http**: bench/fastbot.py serves the bots, one port each; this script registers them
  over ``POST /rpc``;
* **connected**: bench/fastsocketbot.py opens one WebSocket per bot to ``/rpc/ws`` and
  registers each on its socket (the registrations are the bot process's work here, and
  the WebSocket handshakes the platform's).

The same games, the same moves (first empty cell against first empty cell), the same
concurrency.  The window runs from the first registration to the last result stored, and
the CPU is read once every result is stored and rated.  Printed per setup: moves per
second (moves of finished games over the window), the platform's and the bots' process's
CPU microseconds per move, faults and closed sockets (both should be nil), and the
connected setup's ratios to the http one; medians of ``--rounds`` rounds with their
spread (min-max), since this shared 2-core machine's speed varies from run to run.

The connected bots reply to every call, ``Complete`` included, as the HTTP bots must; the
platform takes a reply to a call it does not wait for as an answer (not as a frame that
answers nothing, which would count against the address's request rate).  The play setups
run with the request rate lifted all the same (the same flags for both setups), so that the
comparison is of the wires alone; ``--platform-request-rate`` keeps the platform's default,
and ``--socket-replies needed`` has the bots omit the replies the protocol lets them omit.

**Hold** (``--hold N``): N connected bots held open and idle, which is what connected bots
are between games.  Registering N bots of one game would schedule N(N-1) round-robin
games, since a registration schedules two games against every current bot of its game
that is online, whoever owns it: spreading the bots over users changes nothing, versions
of one name supersede each other, and there are too few games to give each bot its own.
What schedules no game is a registration of a version already registered, and that is
the case the hold is about: a platform restarted (which marks every bot offline) while its
connected bots come back.
So the N bots are written into the store beforehand, offline, as one user's bots that
connect out (the rule of bot names per user applies only to names registered over the
protocol), and ``merknera serve`` starts on it with the ladder off (its default).  Each
bot then opens its socket and registers again (same name and version), ``--hold-parallel``
at a time.  Printed: the platform's VmRSS before (started, the N bots known to it and
being pinged, no socket open) and after (every bot registered on its socket and the
platform quiet again), the difference per socket, the bots' process's VmRSS, and both
processes' CPU over ``--idle-seconds`` while the sockets sit idle.  The platform sends a
socket a WebSocket ping ``HEARTBEAT_SECONDS`` (30 s) after the last frame it read from it,
and each bot a ``Status.Ping`` every ``ping_interval`` (60 s); the window opens just after
every bot answered its ping of the restart, so a window under 30 s sees neither (only the
platform's own background work), and one of 65 s sees one of each for every socket.
The platform's per-client limits (connections, request burst, registration burst) are
raised to let N sockets come from one address.

    .venv/bin/python bench/connected.py [--bots 30] [--concurrency 32] [--rounds 3]
        [--socket-replies all|needed] [--platform-request-rate]
        [--hold 1000 [--hold-parallel 32] [--idle-seconds 10] [--hold-rounds 3]] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp

from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.signing import new_secret
from merknera.store import Database, bots, users
from merknera.store.bots import BotMetadata, BotStatus

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LISTENING = re.compile(r"^Merknera listening on (http://\S+) ")
TICKS = os.sysconf("SC_CLK_TCK")
LIFTED = "1000000"
"""A per-client limit that a bench from one address never reaches."""


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far, its threads' included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def rss_kib(pid: int) -> int:
    """A process's resident memory (VmRSS) in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ValueError(f"no VmRSS for process {pid}")


def stamp(text: str) -> float:
    """The POSIX time of one of the store's UTC timestamps."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


async def quiet(pid: int, window: float = 0.5, most: float = 30.0) -> None:
    """Wait until a process uses at most two clock ticks of CPU in ``window`` seconds (it
    has done what it was doing), or ``most`` seconds."""
    deadline = time.monotonic() + most
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        await asyncio.sleep(window)
        if cpu_seconds(pid) - before <= 2 / TICKS:
            return


class Line:
    """A child process spoken to in lines (stdin, stdout)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @property
    def pid(self) -> int:
        return self.process.pid

    async def read(self, within: float = 60.0) -> str:
        """The next line it prints."""
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), within)
        if not line:
            raise SystemExit(f"process {self.pid} ended (exit code {self.process.returncode})")
        return line.decode().strip()

    async def ask(self, command: str, within: float = 60.0) -> str:
        """Write a line, and return the next one it prints."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"{command}\n".encode())
        await self.process.stdin.drain()
        return await self.read(within)

    async def stop(self) -> None:
        """Terminate it (killed if it takes more than 30 s)."""
        if self.process.returncode is None:
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 30)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


def child_env() -> dict[str, str]:
    """The environment of the processes started here: this checkout's merknera first on
    the path, whatever their working directory."""
    path = [str(REPO), *(str(Path(entry).resolve())
                         for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                         if entry)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


async def start(*argv: str, cwd: Path | None = None) -> Line:
    """A Python process of this interpreter, spoken to in lines."""
    return Line(await asyncio.create_subprocess_exec(
        sys.executable, *argv, cwd=cwd, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, env=child_env()))


async def user_add(db: Path) -> str:
    """A user made with ``merknera user add``: its token."""
    made = await start("-m", "merknera", "user", "add", "bench", "--db", str(db), cwd=db.parent)
    return (await made.process.communicate())[0].decode().strip().splitlines()[-1]


async def serve(db: Path, flags: Sequence[str]) -> tuple[Line, str]:
    """``merknera serve`` on ``db`` and its base URL."""
    platform = await start("-m", "merknera", "serve", "--db", str(db), "--host", "127.0.0.1",
                           "--port", "0", "--log-level", "WARNING", *flags, cwd=db.parent)
    match = LISTENING.match(await platform.read())
    if match is None:
        await platform.stop()
        raise SystemExit("merknera serve did not start")
    return platform, match.group(1)


def median_spread(values: Sequence[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


# -- play --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayRun:
    """One round of one setup."""

    setup: str
    games: int
    moves: int
    faults: int
    abnormal: int
    """Games that ended otherwise than normally (timeout, unreachable...)."""
    closed: int
    """Bots' sockets that closed during the round (connected setup)."""
    seconds: float
    """From the first registration to the last result stored."""
    registering: float
    """Seconds the registrations took."""
    moves_per_s: float
    platform_cpu_us: float
    """The platform process's CPU microseconds per move."""
    bots_cpu_us: float
    """The bots' process's CPU microseconds per move."""
    load: float
    """The 1-minute load average at the round's end."""


def store_figures(db: Path) -> tuple[int, int, int, int, int, str | None]:
    """Finished games, games not yet rated, moves and faults of finished games, games that
    ended abnormally, and the last result's stamp."""
    store = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        finished, last = store.execute(
            "SELECT COUNT(*), MAX(finished_at) FROM games WHERE status = 'FINISHED'").fetchone()
        unrated = store.execute("SELECT COUNT(*) FROM rating_queue").fetchone()[0]
        moves, faults = store.execute(
            "SELECT COUNT(moves.move), COUNT(moves.fault) FROM moves "
            "JOIN games ON games.id = moves.game_id WHERE games.status = 'FINISHED'").fetchone()
        abnormal = store.execute(
            "SELECT COUNT(*) FROM games WHERE status = 'FINISHED' AND reason != 'NORMAL'"
        ).fetchone()[0]
    finally:
        store.close()
    return finished, unrated, moves, faults, abnormal, last


async def register_http(base: str, token: str, urls: list[str]) -> None:
    """Register the HTTP bots over ``POST /rpc``, one after another."""
    async with aiohttp.ClientSession() as session:
        for number, url in enumerate(urls):
            async with session.post(f"{base}/rpc", json={
                    "jsonrpc": "2.0", "id": number, "method": "RegistrationService.Register",
                    "params": {"token": token, "botname": f"fast{number}", "botversion": "1",
                               "game": "TICTACTOE", "rpcendpoint": url}}) as response:
                reply = await response.json()
                if "result" not in reply:
                    raise SystemExit(f"registration refused: {reply}")


def play_flags(args: argparse.Namespace) -> list[str]:
    """``merknera serve``'s flags for both play setups."""
    flags = ["--concurrency", str(args.concurrency),
             "--max-games-per-owner", str(args.concurrency),
             "--registration-burst", str(args.bots),
             "--max-bots-per-user", str(args.bots),
             "--max-connections-per-client", str(args.bots + 64)]
    if not args.platform_request_rate:
        flags += ["--request-burst", LIFTED, "--request-rate", LIFTED]
    return flags


async def play(setup: str, tmp: Path, args: argparse.Namespace) -> PlayRun:
    """One round of the registration round robin among ``args.bots`` bots of ``setup``."""
    run = Path(tempfile.mkdtemp(prefix=f"{setup}-", dir=tmp))
    db = run / "play.db"
    token = await user_add(db)
    platform, base = await serve(db, play_flags(args))
    bots: Line | None = None
    try:
        if setup == "http":
            bots = await start(str(HERE / "fastbot.py"), str(args.bots))
            urls = [f"http://127.0.0.1:{port}/rpc" for port in (await bots.read()).split()]
        else:
            bots = await start(str(HERE / "fastsocketbot.py"),
                               f"{base.replace('http', 'ws', 1)}/rpc/ws", token, str(args.bots),
                               "--replies", args.socket_replies)
            await bots.read()  # ready
        await quiet(platform.pid)
        await quiet(bots.pid)
        cpu, bots_cpu, started = cpu_seconds(platform.pid), cpu_seconds(bots.pid), time.time()
        if setup == "http":
            await register_http(base, token, urls)
        else:
            registered = (await bots.ask("go")).split()
            if registered[2] != "0":
                raise SystemExit(f"{registered[2]} connected bots were refused")
        registering = time.time() - started
        expected = args.bots * (args.bots - 1)
        deadline = time.monotonic() + args.timeout
        looks = 0
        while True:
            finished, unrated, moves, faults, abnormal, last = store_figures(db)
            if finished >= expected and unrated == 0:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"{setup}: {finished} of {expected} games finished after "
                                 f"{args.timeout:g} s")
            looks += 1
            if setup == "connected" and looks % 25 == 0:
                # A bot whose socket the platform closed is offline: its games would wait
                # for it (offline_grace) instead of ending.
                stats = (await bots.ask("stats")).split()
                if stats[4] != "0":
                    raise SystemExit(
                        f"connected: the platform closed {stats[4]} of the bots' sockets "
                        f"(close code:count {' '.join(stats[5:])}) after {finished} of "
                        f"{expected} games")
            await asyncio.sleep(0.02)  # another process writes the store
        cpu, bots_cpu = cpu_seconds(platform.pid) - cpu, cpu_seconds(bots.pid) - bots_cpu
        closed = 0
        if setup == "connected":
            closed = int((await bots.ask("stats")).split()[4])
        assert last is not None
        seconds = stamp(last) - started  # the last result's own stamp, not this loop's look
        return PlayRun(setup, finished, moves, faults, abnormal, closed, seconds, registering,
                       moves / seconds, cpu / moves * 1e6, bots_cpu / moves * 1e6,
                       os.getloadavg()[0])
    finally:
        if bots is not None:
            await bots.stop()
        await platform.stop()


# -- hold --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HoldRun:
    """One round of the hold."""

    sockets: int
    refused: int
    registering: float
    """Seconds the N registrations on their sockets took."""
    rss_before_kib: int
    rss_after_kib: int
    per_socket_kib: float
    bots_rss_kib: int
    idle_seconds: float
    platform_idle_cpu_ms_per_s: float
    """The platform's CPU milliseconds per second while the sockets sat idle."""
    bots_idle_cpu_ms_per_s: float
    pings: int
    """Status.Ping calls the bots answered, from their registration to the end."""
    calls: int
    """Calls of any kind the bots answered."""
    still_open: int
    games: int
    """Games in the store (the hold should schedule none)."""
    load: float


async def seed(db: Path, count: int) -> str:
    """A store with one user and ``count`` of its bots that connect out, offline, as a
    restarted platform finds them; the user's token."""
    store = await Database.open(db)
    try:
        user, token = await users.create_user(store, "holder")
        meta = BotMetadata("", "Python", "", "", BotProtocol.JSONRPC_SOCKET)
        await store.transaction(lambda conn: [
            bots.insert(conn, name=f"Hold{number}", version="1", game="TICTACTOE",
                        user_id=user.id, meta=meta, secret=new_secret(),
                        status=BotStatus.OFFLINE)
            for number in range(count)])
    finally:
        await store.close()
    return token


async def hold(tmp: Path, args: argparse.Namespace) -> HoldRun:
    """``args.hold`` connected bots registered on their sockets, then left idle."""
    run = Path(tempfile.mkdtemp(prefix="hold-", dir=tmp))
    db = run / "hold.db"
    token = await seed(db, args.hold)
    platform, base = await serve(db, [
        "--max-connections-per-client", str(args.hold + 64),
        "--request-burst", str(args.hold + 300),
        "--registration-burst", str(args.hold + 10)])
    bots: Line | None = None
    try:
        bots = await start(str(HERE / "fastsocketbot.py"),
                           f"{base.replace('http', 'ws', 1)}/rpc/ws", token, str(args.hold),
                           "--prefix", "Hold", "--parallel", str(args.hold_parallel))
        await bots.read()  # ready
        await quiet(platform.pid)
        before = rss_kib(platform.pid)
        started = time.perf_counter()
        _, ok, refused = (await bots.ask("go", within=args.timeout)).split()
        registering = time.perf_counter() - started
        await quiet(platform.pid)  # the pings that waited for the sockets, answered
        await quiet(bots.pid)
        after = rss_kib(platform.pid)
        cpu, bots_cpu, idle = cpu_seconds(platform.pid), cpu_seconds(bots.pid), time.monotonic()
        await asyncio.sleep(args.idle_seconds)
        idle = time.monotonic() - idle
        cpu, bots_cpu = cpu_seconds(platform.pid) - cpu, cpu_seconds(bots.pid) - bots_cpu
        _, calls, pings, still_open, *_ = (await bots.ask("stats")).split()
        store = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
        try:
            games = store.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            store.close()
        sockets = int(ok)
        return HoldRun(sockets, int(refused), registering, before, after,
                       (after - before) / max(sockets, 1), rss_kib(bots.pid), idle,
                       cpu / idle * 1e3, bots_cpu / idle * 1e3, int(pings), int(calls),
                       int(still_open), games, os.getloadavg()[0])
    finally:
        if bots is not None:
            await bots.stop()
        await platform.stop()


# -- report ------------------------------------------------------------------------------------


def summary(runs: Sequence[Any], fields: Sequence[str]) -> dict[str, dict[str, float]]:
    """Median, min and max of each field over the runs."""
    figures = {}
    for name in fields:
        middle, low, high = median_spread([getattr(run, name) for run in runs])
        figures[name] = {"median": middle, "min": low, "max": high}
    return figures


def ratios(connected: Sequence[PlayRun], http: Sequence[PlayRun],
           field: str) -> dict[str, float]:
    """The connected setup's figure over the http one's, round by round."""
    each = [getattr(c, field) / getattr(h, field) for c, h in zip(connected, http, strict=True)]
    middle, low, high = median_spread(each)
    return {"median": middle, "min": low, "max": high}


PLAY_FIELDS = ("moves_per_s", "platform_cpu_us", "bots_cpu_us", "seconds", "registering")
HOLD_FIELDS = ("registering", "rss_before_kib", "rss_after_kib", "per_socket_kib",
               "bots_rss_kib", "platform_idle_cpu_ms_per_s", "bots_idle_cpu_ms_per_s")


def spread(figure: dict[str, float], form: str) -> str:
    return (f"{figure['median']:{form}}  ({figure['min']:{form}} - "
            f"{figure['max']:{form}})")


def row(label: str, text: str) -> None:
    print(f"  {label:<44}{text}")


def print_play(setup: str, runs: list[PlayRun], against: list[PlayRun] | None) -> None:
    figures = summary(runs, PLAY_FIELDS)
    first = runs[0]
    print(f"{setup}: {first.games} games, {first.moves} moves; faults "
          f"{sum(r.faults for r in runs)}, abnormal ends {sum(r.abnormal for r in runs)}, "
          f"sockets closed {sum(r.closed for r in runs)} (all rounds)")
    row("moves/s", spread(figures["moves_per_s"], "8.0f"))
    row("platform CPU per move (us)", spread(figures["platform_cpu_us"], "8.0f"))
    row("bots' process CPU per move (us)", spread(figures["bots_cpu_us"], "8.0f"))
    row("window (s)", spread(figures["seconds"], "8.2f"))
    row("of which registering (s)", spread(figures["registering"], "8.2f"))
    if against is not None:
        for field, label in (("moves_per_s", "moves/s"),
                             ("platform_cpu_us", "platform CPU per move"),
                             ("bots_cpu_us", "bots' CPU per move")):
            row(f"connected / http, {label}", spread(ratios(runs, against, field), "8.2f"))


def print_hold(runs: list[HoldRun]) -> None:
    figures = summary(runs, HOLD_FIELDS)
    first = runs[0]
    print(f"hold: {first.sockets} connected bots held idle ({sum(r.refused for r in runs)} "
          f"refused, {min(r.still_open for r in runs)} open at the end at least, games "
          f"scheduled {max(r.games for r in runs)}); medians (min - max) of {len(runs)} rounds")
    row("registering on their sockets (s)", spread(figures["registering"], "8.2f"))
    row("platform VmRSS before (KiB)", spread(figures["rss_before_kib"], "8.0f"))
    row("platform VmRSS after (KiB)", spread(figures["rss_after_kib"], "8.0f"))
    row("platform VmRSS per socket (KiB)", spread(figures["per_socket_kib"], "8.1f"))
    row("bots' process VmRSS (KiB)", spread(figures["bots_rss_kib"], "8.0f"))
    idle = f"idle {first.idle_seconds:.0f} s"
    row(f"{idle}: platform CPU (ms/s)", spread(figures["platform_idle_cpu_ms_per_s"], "8.2f"))
    row(f"{idle}: bots' process CPU (ms/s)",
        spread(figures["bots_idle_cpu_ms_per_s"], "8.2f"))
    middle = figures["platform_idle_cpu_ms_per_s"]["median"]
    row(f"{idle}: platform CPU per socket (us/s)",
        f"{middle * 1e3 / max(first.sockets, 1):8.2f}")
    row("Status.Ping answered, each round", ", ".join(str(r.pings) for r in runs))


def json_line(setup: str, runs: Sequence[Any], fields: Sequence[str],
              extra: dict[str, Any]) -> str:
    return json.dumps({"setup": setup, **summary(runs, fields), **extra,
                       "rounds": [asdict(run) for run in runs]})


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=30, help="bots in each play setup")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each play setup")
    parser.add_argument("--socket-replies", choices=("all", "needed"), default="all",
                        help="the connected bots reply to every call, or only to those "
                             "whose reply the platform waits for")
    parser.add_argument("--platform-request-rate", action="store_true",
                        help="keep the platform's per-address request rate in play")
    parser.add_argument("--hold", type=int, default=0,
                        help="also hold this many connected bots open and idle")
    parser.add_argument("--hold-parallel", type=int, default=32,
                        help="registrations under way at once in the hold")
    parser.add_argument("--hold-rounds", type=int, default=3)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--no-play", action="store_true", help="only the hold")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="the longest a round may take, in seconds")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per setup instead of the text")
    args = parser.parse_args()
    load = os.getloadavg()
    runs: dict[str, list[PlayRun]] = {"http": [], "connected": []}
    holds: list[HoldRun] = []
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_play:
            for round_number in range(args.rounds):
                order = ("http", "connected") if round_number % 2 == 0 else (
                    "connected", "http")
                for setup in order:
                    runs[setup].append(await play(setup, Path(tmp), args))
        for _ in range(args.hold_rounds if args.hold else 0):
            holds.append(await hold(Path(tmp), args))
    if args.json:
        if runs["http"]:
            print(json_line("http", runs["http"], PLAY_FIELDS,
                            {"bots": args.bots, "concurrency": args.concurrency}))
            print(json_line("connected", runs["connected"], PLAY_FIELDS, {
                "bots": args.bots, "concurrency": args.concurrency,
                "socket_replies": args.socket_replies,
                "ratio_to_http": {field: ratios(runs["connected"], runs["http"], field)
                                  for field in PLAY_FIELDS[:3]}}))
        if holds:
            print(json_line("hold", holds, HOLD_FIELDS, {"idle_seconds": args.idle_seconds}))
        return
    print(f"load average at the start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; at the end: "
          + " ".join(f"{value:.2f}" for value in os.getloadavg()) + f"; {os.cpu_count()} CPUs")
    if runs["http"]:
        print(f"play: {args.bots} tic-tac-toe bots of one owner, registration round robin, "
              f"concurrency {args.concurrency}; connected bots reply to "
              f"{args.socket_replies} calls; medians (min - max) of {args.rounds} rounds")
        print_play("http", runs["http"], None)
        print_play("connected", runs["connected"], runs["http"])
    if holds:
        print_hold(holds)


if __name__ == "__main__":
    asyncio.run(main())

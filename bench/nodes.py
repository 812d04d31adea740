"""The ladder's throughput on one node (SQLite) and on one, two and three nodes (PostgreSQL).

    .venv/bin/python bench/nodes.py [--bots 8] [--duration 20] [--warmup 5] [--setups ...]

Each setup is a fresh store (a temporary SQLite file, or a new database on one throwaway
PostgreSQL cluster, ``tests/support/postgres.py``) served by real ``merknera serve``
processes with the ladder on, and the same ``--bots`` reference tic-tac-toe bots
(``python -m merknera_bots.tictactoe --strategy random``, no delay: they answer at once), started
anew for each setup and registered at the first node.  Once the registration round robin
is over and a warm-up has passed, it counts for ``--duration`` seconds:

* the ladder games finished and the moves stored (from the store), moves per second;
* the platform's CPU: user + system time of the node processes (``/proc/<pid>/stat``),
  per stored move; PostgreSQL's (the postmaster, its live children and those it reaped)
  and the bots' apart;
* how the finished games spread over the nodes (``*`` marks the coordinator, which runs
  the ladder), and the live nodes as ``GET /api/nodes`` shows them at the end.

Bots, nodes and PostgreSQL share this machine's CPUs: the figures compare the setups,
they are not a node's capacity on a machine of its own.

The ladder runs every ``--ladder-interval`` (0.02 s) with ``--max-games-per-bot`` 32, so
that games wait for the platform rather than the platform for the ladder; ``--concurrency``
and ``--lease-seconds`` are the platform's defaults.  With several nodes the coordinator
offers its new games to every node (a PostgreSQL notification), and each node's claim loop
takes its share at once (``merknera/scheduler/leases.py``); with one node they start at
once on it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

# ``python bench/nodes.py`` puts bench/ on sys.path, not the repository's root; the
# throwaway cluster's helpers live in tests/, which the editable install does not map.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.postgres import Cluster, start_cluster

REPO = Path(__file__).resolve().parent.parent

LISTENING = re.compile(r"^Merknera listening on (http://\S+) ")
READY = re.compile(r"^READY (\d+) (.+)$")
ADMIN_TOKEN = "bench-admin-token"
"""The nodes' admin token: GET /api/nodes lists the nodes to the admin only."""
TICK = os.sysconf("SC_CLK_TCK")
START_SECONDS = 60.0
"""How long a node may take to listen, or a bot to register, at most."""
REGISTRATION_SECONDS = 180.0
"""How long the registration round robin may take, at most."""


# -- processes and their CPU -------------------------------------------------------------


def cpu_seconds(pid: int, *, reaped: bool = False) -> float:
    """User + system CPU of a process (all its threads), with ``reaped`` that of the
    children it has waited for; 0 when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    fields = text.rsplit(")", 1)[1].split()  # fields[0] is the state (field 3)
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if reaped:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / TICK


def children_of(parent: int) -> list[int]:
    """The pids of the live processes whose parent is ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[1]) == parent:
            found.append(int(entry.name))
    return found


def cluster_cpu(cluster: Cluster) -> float:
    """CPU seconds of the whole PostgreSQL server so far: the postmaster, its live
    children (backends, checkpointer, WAL writer...) and the children it has reaped."""
    postmaster = int((cluster.directory / "data" / "postmaster.pid").read_text().split()[0])
    return cpu_seconds(postmaster, reaped=True) + sum(
        cpu_seconds(child, reaped=True) for child in children_of(postmaster))


@dataclass
class Child:
    """A process this bench started, its stdout and stderr in files."""

    name: str
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    def first_line(self, pattern: re.Pattern[str], seconds: float) -> re.Match[str]:
        """Wait for the first line of its stdout that matches ``pattern``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for line in self.stdout.read_text(errors="replace").splitlines():
                if match := pattern.match(line):
                    return match
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} printed no line like {pattern.pattern!r} "
                           f"(exit code {self.process.poll()}):\n{self.tail()}")

    def tail(self, chars: int = 2000) -> str:
        text = self.stderr.read_text(errors="replace") if self.stderr.exists() else ""
        return text[-chars:]


class Processes:
    """Starts children; stops them all (SIGTERM, then SIGKILL after a while), last first."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.children: list[Child] = []
        # The repository's root first, and a working directory without config.toml: the
        # nodes run on the defaults and the options below only.
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")]))}

    def start(self, name: str, *args: str) -> Child:
        out, err = self.workdir / f"{name}.out", self.workdir / f"{name}.err"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen([sys.executable, *args], cwd=self.workdir,
                                       env=self.env, stdin=subprocess.DEVNULL,
                                       stdout=stdout, stderr=stderr)
        child = Child(name, process, out, err)
        self.children.append(child)
        return child

    def run(self, *args: str) -> str:
        """A short command; its stdout."""
        done = subprocess.run([sys.executable, *args], cwd=self.workdir, env=self.env,
                              capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def stop(self, children: Sequence[Child] | None = None, seconds: float = 20.0) -> None:
        chosen = list(self.children if children is None else children)
        for child in reversed(chosen):
            if child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + seconds
        for child in chosen:
            try:
                child.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(f"  ({child.name} did not stop within {seconds:.0f} s: killed)")
                child.process.kill()
                child.process.wait()
        self.children = [child for child in self.children if child not in chosen]


# -- the store, read by the bench ----------------------------------------------------------


class Store:
    """Read-only queries on the setup's store (no parameters: the SQL is constant)."""

    def __init__(self, db: str) -> None:
        self._pg: psycopg.Connection[tuple[Any, ...]] | None = None
        self._lite: sqlite3.Connection | None = None
        if db.startswith("postgresql://"):
            self._pg = psycopg.connect(db, autocommit=True)
        else:
            self._lite = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
            self._lite.execute("PRAGMA busy_timeout = 5000")

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        if self._pg is not None:
            return self._pg.execute(sql).fetchall()
        assert self._lite is not None
        return self._lite.execute(sql).fetchall()

    def value(self, sql: str) -> int:
        return int(self.rows(sql)[0][0] or 0)

    def close(self) -> None:
        if self._pg is not None:
            self._pg.close()
        if self._lite is not None:
            self._lite.close()


def get_json(url: str) -> Any:
    """GET ``url`` as the admin; its JSON."""
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 (our node)
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (our node)
        return json.load(response)


def wait_for(what: str, check: Callable[[], bool], seconds: float,
             interval: float = 0.2) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up waiting for {what} after {seconds:.0f} s")
        time.sleep(interval)


# -- one setup -----------------------------------------------------------------------------


@dataclass
class Snapshot:
    at: float
    moves: int
    faults: int
    finished: dict[str, int]
    """Finished games by the node that played them."""
    node_cpu: list[float]
    pg_cpu: float
    bot_cpu: float


@dataclass
class Result:
    label: str
    nodes: int
    seconds: float
    games: int
    moves: int
    faults: int
    node_cpu: list[float]
    pg_cpu: float | None
    bot_cpu: float
    spread: list[int] = field(default_factory=list)
    """Games finished in the window by node 1, 2, ... (by its pid; others: not ours)."""
    coordinator: int | None = None
    """The index of the coordinating node."""

    @property
    def rate(self) -> float:
        return self.moves / self.seconds

    def per_move(self, seconds: float | None) -> str:
        if seconds is None:
            return "-"
        return f"{seconds / self.moves * 1e3:.2f}" if self.moves else "n/a"

    def spread_text(self) -> str:
        return "/".join(f"{count}{'*' if index == self.coordinator else ''}"
                        for index, count in enumerate(self.spread))


@dataclass(frozen=True)
class Setup:
    backend: str
    """``sqlite`` or ``postgresql``."""
    nodes: int

    @property
    def label(self) -> str:
        return f"{'SQLite' if self.backend == 'sqlite' else 'PostgreSQL'} x{self.nodes}"


def node_options(options: argparse.Namespace) -> list[str]:
    bots = str(options.bots)
    return [
        "--host", "127.0.0.1", "--port", "0", "--log-level", "WARNING",
        "--admin-token", ADMIN_TOKEN,
        "--ladder", "true", "--ladder-interval", str(options.ladder_interval),
        "--concurrency", str(options.concurrency),
        "--max-games-per-bot", str(options.max_games_per_bot),
        "--lease-seconds", str(options.lease_seconds),
        # One author owns every bot here: its fair share is a whole node, and it may
        # register them all at once.
        "--max-games-per-owner", str(options.concurrency),
        "--registration-burst", bots, "--max-bots-per-user", bots,
    ]


def snapshot(store: Store, nodes: Sequence[Child], bots: Sequence[Child],
             cluster: Cluster | None) -> Snapshot:
    at = time.monotonic()
    node_cpu = [cpu_seconds(node.process.pid) for node in nodes]
    pg_cpu = cluster_cpu(cluster) if cluster is not None else 0.0
    bot_cpu = sum(cpu_seconds(bot.process.pid) for bot in bots)
    moves = store.value("SELECT COUNT(*) FROM moves")
    faults = store.value("SELECT COUNT(*) FROM moves WHERE fault IS NOT NULL")
    finished = {str(node): int(count) for node, count in store.rows(
        "SELECT node, COUNT(*) FROM games WHERE status = 'FINISHED' GROUP BY node")}
    return Snapshot(at, moves, faults, finished, node_cpu, pg_cpu, bot_cpu)


def run_setup(setup: Setup, db: str, cluster: Cluster | None, options: argparse.Namespace,
              workdir: Path) -> Result:
    processes = Processes(workdir)
    store: Store | None = None
    print(f"== {setup.label} ==", flush=True)
    try:
        out = processes.run("-m", "merknera", "user", "add", "bench", "--db", db)
        token = out.strip().splitlines()[-1].strip()
        serve = ["-m", "merknera", "serve", "--db", db, *node_options(options)]
        # The first node migrates the fresh store; the others start once it listens.
        nodes = [processes.start("node1", *serve)]
        urls = [nodes[0].first_line(LISTENING, START_SECONDS).group(1)]
        nodes += [processes.start(f"node{n + 1}", *serve) for n in range(1, setup.nodes)]
        urls += [node.first_line(LISTENING, START_SECONDS).group(1) for node in nodes[1:]]
        store = Store(db)

        def all_live() -> bool:
            listed = get_json(urls[0] + "/api/nodes")["nodes"]
            return (len(listed) == setup.nodes
                    and sum(node["coordinator"] for node in listed) == 1)

        wait_for(f"{setup.nodes} live nodes, one coordinating", all_live, START_SECONDS)
        # Each node counts the live nodes at its heartbeat (every third of a lease); until
        # then the coordinator may think it is alone and start the ladder's games itself.
        settled = time.monotonic() + options.lease_seconds / 3 + 1.0

        started = time.monotonic()
        bots = [processes.start(
            f"bot{n}", "-m", "merknera_bots.tictactoe", "--strategy", "random", "--seed", str(n),
            "--platform", urls[0], "--token", token, "--host", "127.0.0.1", "--port", "0",
            "--name", f"bench{n}") for n in range(options.bots)]
        for bot in bots:
            bot.first_line(READY, START_SECONDS)
        registration: int = options.bots * (options.bots - 1)  # two games each way a pair

        def registered() -> bool:
            assert store is not None
            return store.value("SELECT COUNT(*) FROM games WHERE origin = 'REGISTRATION' "
                               "AND status = 'FINISHED'") == registration

        wait_for(f"the {registration} registration games", registered, REGISTRATION_SECONDS)
        print(f"  {options.bots} bots registered at node 1 and their {registration} "
              f"registration games played in {time.monotonic() - started:.1f} s", flush=True)
        time.sleep(max(options.warmup, settled - time.monotonic()))

        before = snapshot(store, nodes, bots, cluster)
        time.sleep(options.duration)
        after = snapshot(store, nodes, bots, cluster)
        listed = get_json(urls[0] + "/api/nodes")["nodes"]
        known = {str(node_id): int(pid) for node_id, pid in store.rows(
            "SELECT id, pid FROM nodes")}
        coordinators = [str(row[0]) for row in store.rows(
            "SELECT id FROM nodes WHERE coordinator = 1 AND stopped_at IS NULL")]
    except Exception:
        for child in processes.children:
            print(f"----- {child.name} (exit code {child.process.poll()}), stderr tail:\n"
                  f"{child.tail()}")
        raise
    finally:
        if store is not None:
            store.close()
        # The nodes first (their leases end and their runners stop), then the bots.
        processes.stop([child for child in processes.children
                        if child.name.startswith("node")])
        processes.stop()

    pids = [node.process.pid for node in nodes]
    spread = [0] * len(nodes)
    for node_id, count in after.finished.items():
        gained = count - before.finished.get(node_id, 0)
        pid = known.get(node_id)
        if gained and pid in pids:
            spread[pids.index(pid)] += gained
        elif gained:
            print(f"  ({gained} games finished by a node not started here: {node_id})")
    coordinator = next((pids.index(known[node_id]) for node_id in coordinators
                        if known.get(node_id) in pids), None)
    result = Result(
        setup.label, setup.nodes, after.at - before.at,
        sum(after.finished.values()) - sum(before.finished.values()),
        after.moves - before.moves, after.faults - before.faults,
        [a - b for a, b in zip(after.node_cpu, before.node_cpu, strict=True)],
        after.pg_cpu - before.pg_cpu if cluster is not None else None,
        after.bot_cpu - before.bot_cpu, spread, coordinator)
    report(result, listed, pids)
    return result


def report(result: Result, listed: list[dict[str, Any]], pids: list[int]) -> None:
    cpu = sum(result.node_cpu)
    print(f"  window: {result.seconds:.1f} s; ladder games finished: {result.games} "
          f"(by node: {result.spread_text()}; * = coordinator)")
    print(f"  moves stored: {result.moves} ({result.faults} faults): "
          f"{result.rate:.0f} moves/s")
    print(f"  platform CPU: {cpu:.1f} s (by node: "
          f"{' / '.join(f'{seconds:.1f}' for seconds in result.node_cpu)}) = "
          f"{result.per_move(cpu)} ms per move")
    if result.pg_cpu is not None:
        print(f"  PostgreSQL CPU: {result.pg_cpu:.1f} s = {result.per_move(result.pg_cpu)} "
              f"ms per move")
    print(f"  bots' CPU: {result.bot_cpu:.1f} s = {result.per_move(result.bot_cpu)} ms per "
          f"move")
    shown = []
    for node in listed:
        index = pids.index(node["pid"]) + 1 if node["pid"] in pids else "?"
        shown.append(f"node {index}{' (coordinator)' if node['coordinator'] else ''}: "
                     f"{node['playing']} playing")
    print(f"  GET /api/nodes at the end: {'; '.join(shown)}", flush=True)


# -- the run -------------------------------------------------------------------------------


def parse_setup(text: str) -> Setup:
    backend, _, count = text.partition(":")
    if backend not in ("sqlite", "postgresql") or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: want sqlite:1 or postgresql:N")
    if backend == "sqlite" and int(count) != 1:
        raise argparse.ArgumentTypeError("a SQLite file is served by one node")
    return Setup(backend, int(count))


@contextmanager
def lazy_cluster() -> Iterator[Callable[[], Cluster]]:
    """The throwaway PostgreSQL cluster, started on first use, stopped at the end."""
    started: list[Cluster] = []

    def get() -> Cluster:
        if not started:
            started.append(start_cluster())
        return started[0]

    try:
        yield get
    finally:
        for cluster in started:
            cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--duration", type=float, default=20.0,
                        help="seconds measured per setup, after the warm-up")
    parser.add_argument("--warmup", type=float, default=5.0,
                        help="seconds of ladder games before the measure")
    parser.add_argument("--setups", type=parse_setup, nargs="+",
                        default=[Setup("sqlite", 1), *(Setup("postgresql", n)
                                                       for n in (1, 2, 3))])
    # A pass gives each bot one new game at most (4 games with 8 bots), and a bot at its
    # cap gets none: the platform's defaults (5 s, 4) would measure the ladder's pace.
    parser.add_argument("--ladder-interval", type=float, default=0.02)
    parser.add_argument("--max-games-per-bot", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--lease-seconds", type=float, default=15.0)
    options = parser.parse_args()
    began = time.monotonic()
    print(f"{options.bots} reference tic-tac-toe bots (merknera_bots.tictactoe --strategy "
          f"random, no delay), one process each; bots, nodes and PostgreSQL share this machine's "
          f"{os.cpu_count()} CPUs")
    print(f"nodes: --ladder true --ladder-interval {options.ladder_interval} "
          f"--max-games-per-bot {options.max_games_per_bot} --concurrency "
          f"{options.concurrency} --lease-seconds {options.lease_seconds}; measured "
          f"{options.duration:.0f} s per setup after a {options.warmup:.0f} s warm-up")
    print("(with several nodes the ladder's games are offered to every node, each taking "
          "its share; with one node they start on it at once)", flush=True)
    results = []
    with ExitStack() as stack:
        cluster = stack.enter_context(lazy_cluster())
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="nodes-")))
        for number, setup in enumerate(options.setups):
            setup_dir = workdir / f"setup{number}"
            setup_dir.mkdir()
            if setup.backend == "sqlite":
                results.append(run_setup(setup, str(setup_dir / "bench.db"), None, options,
                                         setup_dir))
            else:
                pg = cluster()
                results.append(run_setup(setup, pg.new_database(), pg, options, setup_dir))
    print()
    print(f"{'setup':<15} {'games':>6} {'moves':>7} {'moves/s':>8} {'node ms/move':>13} "
          f"{'PG ms/move':>11} {'bots ms/move':>13}  games by node (* coordinator)")
    for result in results:
        print(f"{result.label:<15} {result.games:>6} {result.moves:>7} {result.rate:>8.0f} "
              f"{result.per_move(sum(result.node_cpu)):>13} {result.per_move(result.pg_cpu):>11} "
              f"{result.per_move(result.bot_cpu):>13}  {result.spread_text()}")
    print(f"(CPU is user + system time per stored move; total run {time.monotonic() - began:.0f} "
          f"s)")


if __name__ == "__main__":
    main()

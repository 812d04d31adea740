"""End-to-end harness: the platform and reference bots as real processes (the e2e tests'
``e2e`` fixture, and the web tests' store builder).

Everything here starts real programs (``python -m merknera serve``, ``python -m merknera user
add``, ``python -m merknera_bots.tictactoe``) in the test's ``tmp_path``, talks to them over
HTTP and reads the SQLite file they write.  Every process is stopped when the test ends, passed or
failed (SIGTERM, then SIGKILL), and a failed test prints the tail of every process's stderr.

Timeouts here are safety nets against a hung process, never measurements: a condition is
polled until it holds or :data:`PATIENCE` runs out, and then the error says what was awaited,
what was last seen, and what the platform logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import resource
import signal
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiohttp

REPO = Path(__file__).resolve().parents[2]

PATIENCE = 60.0
"""Seconds to wait for a condition (all games finished, ...) before giving up."""
START_PATIENCE = 30.0
"""Seconds for a process to print its first line (the platform's or a bot's READY)."""
STOP_PATIENCE = 10.0
"""Seconds for a process to exit after SIGTERM before it is killed."""

ADMIN_TOKEN = "e2e-admin-token"
"""The platform's admin token: the harness reads games as the admin, who sees the bodies of
every call (others see them only for their own bots)."""
CALLS_PAGE = 100
"""Calls of a move log read at once (a 15-column Hexagons game's 100 calls carry about 1.1
million characters of bodies, within the 4 MiB one answer may carry)."""

PLATFORM_OPTIONS: dict[str, str] = {
    "admin-token": ADMIN_TOKEN,
    "ping-interval": "5",
    "offline-grace": "10",
    "offline-retry-min": "0.2",
    "offline-retry-max": "1",
    "ping-timeout": "2",
    "connect-timeout": "2",
}
"""Short liveness timings so that a platform restart picks its bots up quickly."""

LISTENING = re.compile(r"^Merknera listening on (https?://\S+) \(database (.*)\)$")
READY = re.compile(r"^READY (\d+) (.+)$")
COMPLETE_LOGGED = re.compile(r"\bTicTacToe\.Complete (\{.*\})\s*$")
"""How the bot kit logs a ``TicTacToe.Complete`` call it received (its params as JSON)."""

MARKS = ("X", "O")
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))

T = TypeVar("T")


# --- processes ---------------------------------------------------------------------------


@dataclass
class Child:
    """One started process: its label, the asyncio process, and where its stderr goes."""

    label: str
    process: asyncio.subprocess.Process
    stderr_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def stderr_tail(self, limit: int = 4000) -> str:
        """The last ``limit`` characters the process wrote to stderr."""
        try:
            text = self.stderr_path.read_text("utf-8", errors="replace")
        except OSError as exc:
            return f"(cannot read {self.stderr_path}: {exc})"
        return text if len(text) <= limit else "...\n" + text[-limit:]

    def describe(self) -> str:
        state = "running" if self.running else f"exited with {self.process.returncode}"
        return f"{self.label} (pid {self.pid}, {state})"


class Processes:
    """Starts processes in ``workdir`` and guarantees that every one of them is stopped."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.python = sys.executable
        """The interpreter every process runs on (a test may give another virtual
        environment's)."""
        self.merknera: tuple[str, ...] = ("-m", "merknera")
        """The ``merknera`` command, as arguments of :attr:`python`."""
        self.children: list[Child] = []
        self._env = {k: v for k, v in os.environ.items() if not k.startswith("MERKNERA_")}
        self._env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])

    def installed(self, python: Path) -> None:
        """Run every process on ``python``, a virtual environment where Merknera is installed,
        as an operator runs it: its ``merknera`` console script, and nothing of the
        repository on the path."""
        self.python = str(python)
        self.merknera = (str(python.with_name("merknera")),)
        self._env.pop("PYTHONPATH", None)

    async def start(self, label: str, *args: str, open_files: int | None = None,
                    program: str | None = None,
                    env: Mapping[str, str] | None = None) -> Child:
        """``python <args>`` (or ``program <args>``) with stdout piped (read it with
        :meth:`first_line`); ``open_files`` caps its open-files limit (soft and hard);
        ``env`` adds to its environment."""
        stem = re.sub(r"[^\w.-]+", "_", label)  # a bot's name may be anything
        stderr_path = self.workdir / f"{stem}.stderr"
        counter = 1
        while stderr_path.exists():
            counter += 1
            stderr_path = self.workdir / f"{stem}.{counter}.stderr"
        def cap() -> None:
            if open_files is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

        with stderr_path.open("wb") as stderr:
            process = await asyncio.create_subprocess_exec(
                program or self.python, *args, cwd=self.workdir,
                env={**self._env, **(env or {})},
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=stderr, preexec_fn=cap if open_files is not None else None)
        child = Child(label, process, stderr_path)
        self.children.append(child)
        return child

    async def first_line(self, child: Child, pattern: re.Pattern[str]) -> re.Match[str]:
        """The first stdout line of ``child``, which must match ``pattern``."""
        assert child.process.stdout is not None
        try:
            raw = await asyncio.wait_for(child.process.stdout.readline(), START_PATIENCE)
        except TimeoutError:
            raise AssertionError(
                f"{child.describe()} printed no line in {START_PATIENCE:g} s; stderr:\n"
                f"{child.stderr_tail()}") from None
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        match = pattern.match(line)
        if match is None:
            if not raw:  # EOF: the process ended (or closed stdout) without the line
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(child.process.wait(), STOP_PATIENCE)
            raise AssertionError(
                f"{child.describe()} printed {line!r}, expected /{pattern.pattern}/; stderr:\n"
                f"{child.stderr_tail()}")
        return match

    async def run(self, label: str, *args: str) -> str:
        """Run ``python <args>`` to completion; returns its stdout (it must exit 0)."""
        child = await self.start(label, *args)
        try:
            stdout, _ = await asyncio.wait_for(child.process.communicate(), START_PATIENCE)
        except TimeoutError:
            raise AssertionError(f"{child.describe()} did not finish in {START_PATIENCE:g} s; "
                                 f"stderr:\n{child.stderr_tail()}") from None
        text = stdout.decode("utf-8", errors="replace")
        assert child.process.returncode == 0, (
            f"{child.describe()}; stdout:\n{text}\nstderr:\n{child.stderr_tail()}")
        return text

    async def stop(self, child: Child, signum: int = signal.SIGTERM) -> int:
        """Send ``signum`` and wait for the exit (SIGKILL after :data:`STOP_PATIENCE`)."""
        if child.running:
            with contextlib.suppress(ProcessLookupError):
                child.process.send_signal(signum)
            try:
                await asyncio.wait_for(child.process.wait(), STOP_PATIENCE)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    child.process.kill()
        return await child.process.wait()

    async def kill_hard(self, child: Child) -> None:
        """SIGKILL, as a crash would: no clean-up code runs in the child."""
        assert child.running, f"{child.describe()} is not running"
        os.kill(child.pid, signal.SIGKILL)
        code = await child.process.wait()
        assert code == -signal.SIGKILL, f"{child.describe()} did not die of SIGKILL"

    async def close(self) -> None:
        """Stop every process still running: SIGTERM to all, then SIGKILL the stubborn."""
        alive = [child for child in self.children if child.running]
        for child in alive:
            with contextlib.suppress(ProcessLookupError):
                child.process.send_signal(signal.SIGTERM)
        if alive:
            _, pending = await asyncio.wait(
                [asyncio.ensure_future(child.process.wait()) for child in alive],
                timeout=STOP_PATIENCE)
            for child in alive:
                if child.running:
                    with contextlib.suppress(ProcessLookupError):
                        child.process.kill()
            for child in alive:
                await child.process.wait()
            for task in pending:
                await task

    def report(self) -> str:
        """Every process with the tail of its stderr."""
        return "\n".join(f"===== {child.describe()}: {child.stderr_path}\n"
                         f"{child.stderr_tail(2500)}" for child in self.children)


# --- the platform, users and bots ----------------------------------------------------------


@dataclass
class PlatformProcess:
    """A running ``merknera serve``."""

    child: Child
    url: str


@dataclass
class BotProcess:
    """A running ``python -m merknera_bots.tictactoe``, registered with the platform."""

    child: Child
    name: str
    port: int
    strategy: str


@dataclass
class E2E:
    """The harness a test drives: processes, the database file, an HTTP session."""

    tmp_path: Path
    processes: Processes
    session: aiohttp.ClientSession
    db: Path
    platform: PlatformProcess | None = None
    bots: list[BotProcess] = field(default_factory=list)

    # -- starting things --------------------------------------------------------------------

    async def add_user(self, name: str) -> str:
        """``merknera user add NAME``; returns the token (the last line it prints)."""
        out = await self.processes.run(f"user-{name}", *self.processes.merknera, "user", "add",
                                       name, "--db", str(self.db))
        lines = out.strip().splitlines()
        assert lines, f"merknera user add {name} printed nothing"
        token = lines[-1].strip()
        assert token and " " not in token, f"the last line is not a token: {out!r}"
        return token

    async def start_platform(self, open_files: int | None = None,
                             **options: str) -> PlatformProcess:
        """``merknera serve`` on a free port with :data:`PLATFORM_OPTIONS` (+ ``options``),
        its open-files limit capped at ``open_files`` if given."""
        assert self.platform is None or not self.platform.child.running, \
            "a platform is running already"
        settings = {**PLATFORM_OPTIONS, **{k.replace("_", "-"): v for k, v in options.items()}}
        args = [*self.processes.merknera, "serve", "--db", str(self.db), "--host", "127.0.0.1",
                "--port", "0"]
        for key, value in settings.items():
            args += [f"--{key}", value]
        child = await self.processes.start("platform", *args, open_files=open_files)
        match = await self.processes.first_line(child, LISTENING)
        assert match.group(2) == str(self.db), match.group(0)
        self.platform = PlatformProcess(child, match.group(1))
        return self.platform

    async def start_bot(self, strategy: str, name: str, token: str, *, delay: float = 0.0,
                        seed: int | None = None, version: str = "1.0.0",
                        module: str = "merknera_bots.tictactoe",
                        extra: Sequence[str] = ()) -> BotProcess:
        """A reference bot (tic-tac-toe unless ``module`` says otherwise), registered (its
        READY line read)."""
        args = ["-m", module, "--strategy", strategy, "--platform", self.url,
                "--token", token, "--port", "0", "--name", name, "--version", version, *extra]
        if delay:
            args += ["--delay", str(delay)]
        if seed is not None:
            args += ["--seed", str(seed)]
        child = await self.processes.start(f"bot-{name}", *args)
        match = await self.processes.first_line(child, READY)
        assert match.group(2) == name, match.group(0)
        bot = BotProcess(child, name, int(match.group(1)), strategy)
        self.bots.append(bot)
        return bot

    async def start_bots(self, token: str,
                         specs: Sequence[tuple[str, str, float]]) -> list[BotProcess]:
        """Several bots ``(strategy, name, delay)`` started in parallel; all registered."""
        return list(await asyncio.gather(*(
            self.start_bot(strategy, name, token, delay=delay, seed=index)
            for index, (strategy, name, delay) in enumerate(specs))))

    async def kill_platform(self) -> None:
        """SIGKILL the platform (a crash: no shutdown code runs)."""
        assert self.platform is not None
        await self.processes.kill_hard(self.platform.child)

    # -- the results API ----------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self.platform is not None, "no platform started"
        return self.platform.url

    async def get(self, path: str, token: str | None = None) -> Any:
        """GET ``path`` from the platform's API (with ``Authorization: Bearer <token>``
        when a token is given); it must answer 200 with JSON."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with self.session.get(self.url + path, headers=headers) as response:
            text = await response.text()
            assert response.status == 200, f"GET {path}: HTTP {response.status}: {text[:500]}"
            return json.loads(text)

    async def games(self) -> list[dict[str, Any]]:
        """Every game (the API's list, up to 500)."""
        found: list[dict[str, Any]] = (await self.get("/api/games?limit=500"))["games"]
        assert len(found) < 500, "more games than one page of the API holds"
        return found

    async def game(self, game_id: int) -> dict[str, Any]:
        """One game with its seats and its move log, as the admin sees it (with the calls'
        bodies), read :data:`CALLS_PAGE` calls at a time: one answer carries at most so many
        characters of bodies, which a long game's calls may pass."""
        path = f"/api/games/{game_id}?limit={CALLS_PAGE}"
        detail: dict[str, Any] = await self.get(path, ADMIN_TOKEN)
        page = detail["moves"]
        while len(page) == CALLS_PAGE:
            after = page[-1]["seq"]
            page = (await self.get(f"{path}&after={after}", ADMIN_TOKEN))["moves"]
            detail["moves"].extend(page)
        return detail

    async def wait_until(self, what: str, check: Callable[[], Awaitable[tuple[T | None, str]]],
                         *, patience: float = PATIENCE, interval: float = 0.1) -> T:
        """Poll ``check`` until it returns ``(value, _)`` with a value other than None.

        ``check`` returns ``(None, "what it saw")`` while waiting.  After ``patience`` seconds
        this raises, naming ``what``, the last observation and the platform's log.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + patience
        seen = "nothing yet"
        while True:
            if self.platform is not None and not self.platform.child.running:
                raise AssertionError(
                    f"waiting for {what}: the platform exited "
                    f"({self.platform.child.process.returncode}); last seen: {seen}\n"
                    f"{self.processes.report()}")
            try:
                value, seen = await check()
            except (aiohttp.ClientError, TimeoutError) as exc:
                value, seen = None, f"request failed: {exc!r}"
            if value is not None:
                return value
            if loop.time() >= deadline:
                raise AssertionError(
                    f"gave up after {patience:g} s waiting for {what}; last seen: {seen}\n"
                    f"{self.processes.report()}")
            await asyncio.sleep(interval)

    async def wait_all_finished(self, expected: int) -> list[dict[str, Any]]:
        """Wait until exactly ``expected`` games exist and all are FINISHED; returns them."""
        async def check() -> tuple[list[dict[str, Any]] | None, str]:
            found = await self.games()
            counts: dict[str, int] = {}
            for game in found:
                counts[game["status"]] = counts.get(game["status"], 0) + 1
            done = len(found) == expected and counts.get("FINISHED", 0) == expected
            return (found if done else None), f"{len(found)} games by status {counts}"

        return await self.wait_until(f"{expected} games, all FINISHED", check)

    @staticmethod
    def check_tictactoe_game(game: dict[str, Any]) -> list[str]:
        """See :func:`check_tictactoe_game`."""
        return check_tictactoe_game(game)

    # -- what the bots were told ----------------------------------------------------------

    @staticmethod
    def completes_received(bot: BotProcess) -> list[dict[str, Any]]:
        """The params of every ``TicTacToe.Complete`` the bot logged receiving."""
        text = bot.child.stderr_path.read_text("utf-8", errors="replace")
        return [json.loads(match.group(1)) for line in text.splitlines()
                if (match := COMPLETE_LOGGED.search(line))]

    # -- the store --------------------------------------------------------------------------

    def read_db(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Rows of a query on the database file, opened read-only."""
        conn = sqlite3.connect(f"{self.db.as_uri()}?mode=ro", uri=True, timeout=30.0)
        try:
            conn.row_factory = sqlite3.Row
            return conn.execute(sql, tuple(params)).fetchall()
        finally:
            conn.close()

    def platform_log(self) -> str:
        """Everything every platform process so far wrote to stderr."""
        return "\n".join(child.stderr_path.read_text("utf-8", errors="replace")
                         for child in self.processes.children if child.label == "platform")


# --- checking a tic-tac-toe game from its move log -------------------------------------------


def line_winner(board: Sequence[str]) -> str | None:
    """The mark holding a full line, if any."""
    for a, b, c in LINES:
        if board[a] and board[a] == board[b] == board[c]:
            return board[a]
    return None


def check_tictactoe_game(game: dict[str, Any]) -> list[str]:
    """Check a finished game's move log against its stored result; returns the final board.

    The accepted moves, replayed from an empty board, must be legal, in turn, and stop
    exactly when the game ended; they must reproduce the stored final board and outcome
    (a WIN needs a line of the winner's mark, a DRAW a full board with no line). The log's
    ``seq`` must run 1, 2, 3, ... and every row must carry the request sent (whose board is
    the board before that move), the reply and a latency.
    """
    gid = game["id"]
    where = f"game {gid}"
    assert game["status"] == "FINISHED", f"{where} is {game['status']}"
    moves = game["moves"]
    seqs = [move["seq"] for move in moves]
    assert seqs == list(range(1, len(moves) + 1)), f"{where}: seq numbers {seqs}"
    board = [""] * 9
    for move in moves:
        at = f"{where} seq {move['seq']}"
        request, reply = move["request"], move["reply"]
        assert isinstance(request, dict), f"{at}: request {request!r}"
        assert request.get("method") == "TicTacToe.NextMove", f"{at}: request {request!r}"
        params = request.get("params") or {}
        assert params.get("gameid") == gid, f"{at}: request {request!r}"
        assert params.get("mark") == MARKS[move["seat"]], f"{at}: request {request!r}"
        assert params.get("gamestate") == board, (
            f"{at}: the request showed {params.get('gamestate')}, the log's board is {board}")
        assert isinstance(reply, dict), f"{at}: reply {reply!r}"
        assert reply.get("id") == request.get("id"), f"{at}: reply {reply!r} to {request!r}"
        latency = move["latency_ms"]
        assert isinstance(latency, int | float) and latency >= 0, f"{at}: latency {latency!r}"
        if move["fault"] is not None:
            continue
        assert line_winner(board) is None and "" in board, f"{at}: a move after the game ended"
        filled = 9 - board.count("")
        assert move["seat"] == filled % 2, f"{at}: seat {move['seat']} moved out of turn"
        position = move["move"]["position"]
        assert reply.get("result") == {"position": position}, f"{at}: reply {reply!r}"
        assert isinstance(position, int) and 0 <= position <= 8, f"{at}: move {move['move']}"
        assert board[position] == "", f"{at}: position {position} is taken: {board}"
        board[position] = MARKS[move["seat"]]
    assert game["final_state"] == board, (
        f"{where}: final_state {game['final_state']} but the log replays to {board}")
    results = [seat["result"] for seat in sorted(game["seats"], key=lambda s: s["seat"])]
    mark = line_winner(board)
    if game["reason"] == "NORMAL":
        if mark is not None:
            winner = MARKS.index(mark)
            assert game["outcome"] == "WIN", f"{where}: {mark} has a line but {game['outcome']}"
            expected = ["WIN" if seat == winner else "LOSS" for seat in range(2)]
            assert results == expected, f"{where}: seat results {results}, expected {expected}"
        else:
            assert "" not in board, f"{where}: ended NORMAL with no line and a free cell: {board}"
            assert game["outcome"] == "DRAW", f"{where}: a full board but {game['outcome']}"
            assert results == ["DRAW", "DRAW"], f"{where}: seat results {results}"
    else:
        assert mark is None and "" in board, (
            f"{where}: ended {game['reason']} though the board was decided: {board}")
    return board

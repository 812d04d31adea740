"""The starter bots of ``starters/`` (JavaScript on Node, and Go) against a real platform,
each both ways: serving HTTP, and connecting out over the platform's WebSocket.

The Go starter is built offline (``GOPROXY=off GOFLAGS=-mod=mod``) against Debian's
gorilla/websocket, through a go.mod of the test's own that replaces the module with that
directory; the JavaScript starter's one dependency is installed by ``npm ci`` from its lock
file. Both starters play perfect tic-tac-toe: every game must end normally with no fault,
a starter must never lose to the random reference bots, and two starters must draw. A
serving starter refuses a call that the platform did not sign. A connected starter
registers again when the platform comes back, and stops when a newer connection of the same
bot replaces its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import E2E, PATIENCE, REPO, Child
from tests.support import free_port

pytestmark = pytest.mark.xdist_group("starters")
"""Every test here on one worker (make test's --dist loadgroup): each starter is built once."""

STARTERS = REPO / "starters"
GORILLA = Path("/usr/share/gocode/src/github.com/gorilla/websocket")
"""Debian's golang-github-gorilla-websocket-dev: the Go starter's dependency, offline."""
BUILD_PATIENCE = 600.0
"""Seconds for go build or npm ci (a safety net: npm downloads its package)."""
REGISTERED = re.compile(r"^registered: Hello, ([\w-]+)\b")
RESULT = re.compile(r"^game (\d+): (won|drawn|lost)$")
"""What a starter prints for each ``TicTacToe.Complete`` it receives."""
REPLACED = re.compile(r"^replaced by a newer connection")
RANDOM_BOTS = ("random-1", "random-2", "random-3")
WINNING_CALL = {"jsonrpc": "2.0", "id": 7, "method": "TicTacToe.NextMove",
                "params": {"gameid": 1, "mark": "X",
                           "gamestate": ["X", "X", "", "O", "O", "", "", "", ""]}}
"""A move with one winning cell, 2 (a signed call to a serving starter must get it)."""


def require(program: str, need: str) -> str:
    """The path of ``program``; the test fails naming the command that installs it."""
    found = shutil.which(program)
    if found is None:
        pytest.fail(f"no {program} here: make test installs it "
                    f"(scripts/system-packages {need})")
    return found


def build(args: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    """Run a build command to its end; it must succeed."""
    done = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=BUILD_PATIENCE,
                          check=False)
    assert done.returncode == 0, f"{' '.join(args)} in {cwd}:\n{done.stdout}"


@dataclass(frozen=True)
class Starter:
    """A built starter: the command that runs it, before its options."""

    language: str
    command: tuple[str, ...]


@pytest.fixture(scope="module")
def go_starter(tmp_path_factory: pytest.TempPathFactory) -> Starter:
    """``starters/go`` built offline against Debian's gorilla/websocket, the repository's
    files untouched (the replacing go.mod and its go.sum are the test's)."""
    go = require("go", "go")
    if not (GORILLA / "go.mod").exists():
        pytest.fail(f"no {GORILLA}: make test installs golang-github-gorilla-websocket-dev "
                    "(scripts/system-packages go)")
    folder = tmp_path_factory.mktemp("go-starter")
    modfile = folder / "go.mod"
    modfile.write_text((STARTERS / "go" / "go.mod").read_text("utf-8")
                       + f"\nreplace github.com/gorilla/websocket => {GORILLA}\n")
    shutil.copy(STARTERS / "go" / "go.sum", folder / "go.sum")
    binary = folder / "tictactoe-bot"
    env = {**os.environ, "GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}
    build([go, "build", f"-modfile={modfile}", "-o", str(binary), "."], STARTERS / "go", env)
    return Starter("go", (str(binary),))


@pytest.fixture(scope="module")
def js_starter(tmp_path_factory: pytest.TempPathFactory) -> Starter:
    """``starters/javascript`` copied out with its dependency installed by ``npm ci``."""
    node, npm = require("node", "node"), require("npm", "node")
    folder = tmp_path_factory.mktemp("js-starter")
    for name in ("bot.js", "package.json", "package-lock.json"):
        shutil.copy(STARTERS / "javascript" / name, folder / name)
    build([npm, "ci", "--no-audit", "--no-fund"], folder)
    return Starter("javascript", (node, str(folder / "bot.js")))


@dataclass
class Running:
    """A starter's process and the stdout lines read from it so far."""

    child: Child
    name: str
    lines: list[str] = field(default_factory=list)

    async def read_until(self, pattern: re.Pattern[str]) -> re.Match[str]:
        """Read stdout lines until one matches ``pattern`` (kept with the others)."""
        assert self.child.process.stdout is not None
        async with asyncio.timeout(PATIENCE):
            while True:
                raw = await self.child.process.stdout.readline()
                if not raw:
                    await self.child.process.wait()
                    raise AssertionError(
                        f"{self.child.describe()} ended its output without /{pattern.pattern}/;"
                        f" stdout: {self.lines}; stderr:\n{self.child.stderr_tail()}")
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                self.lines.append(line)
                if match := pattern.match(line):
                    return match

    async def results(self, count: int) -> dict[int, str]:
        """The results the starter printed for its games, once it has printed ``count``."""
        while sum(1 for line in self.lines if RESULT.match(line)) < count:
            await self.read_until(RESULT)
        found = [match.groups() for line in self.lines if (match := RESULT.match(line))]
        return {int(game): result for game, result in found}


async def start(e2e: E2E, starter: Starter, name: str, token: str, *,
                connect: bool) -> Running:
    """``starter`` registered as ``name`` (its ``registered:`` line read)."""
    mode = ["--connect"] if connect else ["--host", "127.0.0.1", "--port", "0"]
    program, *args = starter.command
    child = await e2e.processes.start(
        f"starter-{name}", *args, "--platform", e2e.url, "--token", token, "--name", name,
        "--version", "1.0.0", *mode, program=program)
    running = Running(child, name)
    match = await running.read_until(REGISTERED)
    assert match.group(1) == name, running.lines
    return running


def check_games(e2e: E2E, games: list[dict[str, Any]], starters: set[str]) -> None:
    """Every game is legal and finished normally with no fault; a starter never lost, and
    two starters drew."""
    for game in games:
        e2e.check_tictactoe_game(game)
        names = [seat["name"] for seat in sorted(game["seats"], key=lambda s: s["seat"])]
        assert game["reason"] == "NORMAL", (game["id"], names, game["reason"], game["detail"])
        assert [m for m in game["moves"] if m["fault"] is not None] == [], (game["id"], names)
        for seat in game["seats"]:
            if seat["name"] in starters:
                assert seat["result"] != "LOSS", (game["id"], names, game["final_state"])
        if set(names) <= starters:
            assert game["outcome"] == "DRAW", (game["id"], names, game["final_state"])


def expected_result(game: dict[str, Any], name: str) -> str:
    """What a starter should print for ``game``: won, drawn or lost."""
    result = next(seat["result"] for seat in game["seats"] if seat["name"] == name)
    return {"WIN": "won", "DRAW": "drawn", "LOSS": "lost"}[result]


async def signed_post(e2e: E2E, url: str, secret: str | None, body: bytes,
                      age: int = 0) -> tuple[int, str]:
    """POST ``body`` to ``url``, signed with ``secret`` as the platform signs, ``age``
    seconds ago (unsigned without a secret); returns the status and the text."""
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        stamp = str(int(time.time()) - age)
        mac = hmac.new(secret.encode(), stamp.encode() + b"." + body, hashlib.sha256)
        headers |= {"X-Merknera-Timestamp": stamp,
                    "X-Merknera-Signature": "sha256=" + mac.hexdigest()}
    async with e2e.session.post(url, data=body, headers=headers) as response:
        return response.status, await response.text()


@pytest.mark.parametrize("connect", [False, True], ids=["serving", "connected"])
async def test_starters_play_perfectly(e2e: E2E, js_starter: Starter, go_starter: Starter,
                                       connect: bool) -> None:
    token = await e2e.add_user("e2e")
    await e2e.start_platform()
    names = {"js-starter": js_starter, "go-starter": go_starter}
    starters, randoms = await asyncio.gather(
        asyncio.gather(*(start(e2e, starter, name, token, connect=connect)
                         for name, starter in names.items())),
        e2e.start_bots(token, [("random", name, 0.0) for name in RANDOM_BOTS]))
    everyone = len(names) + len(randoms)
    summaries = await e2e.wait_all_finished(everyone * (everyone - 1))
    games = list(await asyncio.gather(*(e2e.game(summary["id"]) for summary in summaries)))
    check_games(e2e, games, set(names))

    protocols = {row["name"]: row["protocol"] for row in e2e.read_db(
        "SELECT name, protocol FROM bots WHERE name IN (?, ?)", list(names))}
    assert protocols == dict.fromkeys(names, "jsonrpc-socket" if connect else "jsonrpc")
    for running in starters:
        own = {game["id"]: game for game in games
               if running.name in {seat["name"] for seat in game["seats"]}}
        # Two games against each other bot, and each ended with the Complete it printed.
        assert len(own) == 2 * (everyone - 1), (running.name, sorted(own))
        printed = await running.results(len(own))
        assert printed == {gid: expected_result(game, running.name)
                           for gid, game in own.items()}, running.name
        # Perfect play against random movers: no loss, and more than one win.
        against_random = Counter(printed[gid] for gid, game in own.items()
                                 if {s["name"] for s in game["seats"]} & set(RANDOM_BOTS))
        assert against_random["lost"] == 0 and against_random["won"] >= 2, (
            running.name, against_random)

    if not connect:
        body = json.dumps(WINNING_CALL).encode()
        for running in starters:
            row = e2e.read_db("SELECT endpoint, secret FROM bots WHERE name = ?",
                              [running.name])[0]
            url, secret = row["endpoint"], row["secret"]
            status, text = await signed_post(e2e, url, secret, body)
            assert status == 200, (running.name, status, text)
            assert json.loads(text) == {"jsonrpc": "2.0", "id": 7,
                                        "result": {"position": 2}}, running.name
            for refused in [await signed_post(e2e, url, None, body),
                            await signed_post(e2e, url, secret, body, age=120),
                            await signed_post(e2e, url, secret[::-1], body)]:
                assert refused[0] == 401, (running.name, refused)

    log = e2e.platform_log()
    assert "Traceback" not in log, log[-4000:]


@pytest.mark.parametrize("language", ["javascript", "go"])
async def test_connected_starter_comes_back_and_yields_to_a_newer_connection(
        e2e: E2E, js_starter: Starter, go_starter: Starter, language: str) -> None:
    starter = js_starter if language == "javascript" else go_starter
    name = f"{language}-starter"
    token = await e2e.add_user("e2e")
    port = str(free_port())
    await e2e.start_platform(port=port)
    first = await start(e2e, starter, name, token, connect=True)
    await e2e.start_bot("random", "random-1", token, seed=1)
    await e2e.wait_all_finished(2)

    # The platform dies and comes back at the same address: the starter connects again
    # and registers again, and plays the games a new bot's registration schedules.
    await e2e.kill_platform()
    await e2e.start_platform(port=port)
    await first.read_until(REGISTERED)
    await e2e.start_bot("random", "random-2", token, seed=2)

    async def played_again() -> tuple[list[dict[str, Any]] | None, str]:
        # Two more games for the starter; random-1's two with random-2 are scheduled only
        # if the new platform had heard from random-1 by then.
        found = await e2e.games()
        own = [game for game in found if name in {seat["name"] for seat in game["seats"]}]
        status = Counter(game["status"] for game in found)
        done = len(own) == 4 and status["FINISHED"] == len(found)
        return (found if done else None), f"{len(own)} games of {name}; all by status {status}"

    summaries = await e2e.wait_until(f"4 finished games of {name}", played_again)
    games = list(await asyncio.gather(*(e2e.game(summary["id"]) for summary in summaries)))
    check_games(e2e, games, {name})

    # A second process of the same bot: its connection replaces the first one's, which
    # says so and stops.
    second = await start(e2e, starter, name, token, connect=True)
    await first.read_until(REPLACED)
    assert await asyncio.wait_for(first.child.process.wait(), PATIENCE) == 0, first.lines
    assert second.child.running
    log = e2e.platform_log()
    assert "Traceback" not in log, log[-4000:]

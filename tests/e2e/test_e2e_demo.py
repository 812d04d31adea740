"""``make run`` end to end: ``python -m merknera demo``, what it runs, as a real process.

The demo starts its own reference bots (:data:`merknera.demo.DEMO_BOTS`) as processes of
their own session; the test reads what they did through the results API only, so that it
follows the demo's list whatever bots it gains.  Options shorten the ladder's pauses and keep
each bot to one game at a time (the load of a small machine), nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from pathlib import Path
from typing import Any

from merknera.demo import DEMO_BOTS, DEMO_GAMES
from tests.e2e.harness import E2E, PATIENCE, PlatformProcess
from tests.support import free_port

RUNNING = re.compile(r"^Merknera is running at (http://\S+) \(database (.*)\)$")
GAME_LINE = re.compile(r"^game +(\d+) ")
"""The line the demo prints for a finished game."""


def bot_processes(url: str) -> list[int]:
    """Processes started with ``--platform URL``: the demo's bots (the URL has the port the
    platform picked, so no other run's bots)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # it ended meanwhile
            continue
        if b"--platform" in args and url.encode() in args:
            found.append(int(entry.name))
    return found


async def collect(stream: asyncio.StreamReader, lines: list[str]) -> None:
    """Read ``stream`` to its end, a line at a time (the demo would block on a full pipe)."""
    while raw := await stream.readline():
        lines.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))


async def test_make_run_plays_every_game_of_its_bots(e2e: E2E) -> None:
    child = await e2e.processes.start(
        "demo", "-m", "merknera", "demo", "--db", str(e2e.db), "--host", "127.0.0.1",
        "--port", "0", "--ladder-interval", "0.2", "--max-games-per-bot", "1",
        # Not make run's 8083-8085: they may be taken on a developer's machine.
        "--battlebot-port", str(free_port()), "--hexagons-port", str(free_port()),
        "--kalaha-port", str(free_port()))
    match = await e2e.processes.first_line(child, RUNNING)
    assert match.group(2) == str(e2e.db), match.group(0)
    url = match.group(1)
    e2e.platform = PlatformProcess(child, url)  # what e2e.get and e2e.wait_until watch
    assert child.process.stdout is not None
    lines: list[str] = []
    reader = asyncio.create_task(collect(child.process.stdout, lines))
    names = {bot.name for bot in DEMO_BOTS}
    try:
        # Every bot of the demo's list registers, each for its game; those are the games.
        async def registered() -> tuple[dict[str, str] | None, str]:
            listed = (await e2e.get("/api/bots"))["bots"]
            games = {bot["name"]: bot["game"] for bot in listed if bot["name"] in names}
            return (games if len(games) == len(names) else None), f"registered: {sorted(games)}"

        game_of = await e2e.wait_until("every demo bot registered", registered)
        # The demo prints the standings of these games, so it must know every one of them.
        assert set(game_of.values()) == set(DEMO_GAMES)

        # Then every bot finishes a game with a result; every game so far ended by its rules.
        async def played() -> tuple[list[dict[str, Any]] | None, str]:
            finished = (await e2e.get("/api/games?status=FINISHED&limit=500"))["games"]
            seated = {seat["name"] for game in finished for seat in game["seats"]
                      if seat["result"] in ("WIN", "DRAW", "LOSS")}
            waiting = sorted(names - seated)
            return (finished if not waiting else None), f"no finished game yet of {waiting}"

        finished = await e2e.wait_until("a finished game of every demo bot", played)
        assert {game["game"] for game in finished} == set(game_of.values())
        assert [(g["id"], g["reason"], g["detail"]) for g in finished
                if g["reason"] != "NORMAL"] == []

        # A line for each of those games on the terminal.
        async def printed() -> tuple[bool | None, str]:
            shown = {int(m.group(1)) for line in lines if (m := GAME_LINE.match(line))}
            missing = sorted({game["id"] for game in finished} - shown)
            return (True if not missing else None), f"no line yet for games {missing}"

        await e2e.wait_until("a printed line per finished game", printed)

        # Ctrl-C stops the games, the bots and the platform, and the demo exits cleanly.  It
        # may wait for calls under way and for each bot to exit, some seconds each: more
        # than the harness's patience with a process told to stop.
        child.process.send_signal(signal.SIGINT)
        code = await asyncio.wait_for(child.process.wait(), PATIENCE)
        await asyncio.wait_for(reader, PATIENCE)
        assert code == 0, lines[-5:]
        assert lines[-1] == "stopped", lines[-5:]
        assert bot_processes(url) == []
    finally:
        await e2e.processes.stop(child)  # if a failure left it running: it stops its bots
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        # Bots of a demo that could not stop them (in their own session) would outlive it.
        for pid in bot_processes(url):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

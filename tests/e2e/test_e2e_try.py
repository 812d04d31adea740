"""``merknera try`` as an author runs it: a process of its own, trying a bot process (a
reference bot) and a bot served here, and leaving nothing behind."""

from __future__ import annotations

import asyncio
import json
import re
import signal
from typing import Any

from pytest_aiohttp import AiohttpServer

from merknera.games import JSON
from tests.e2e.harness import E2E, PATIENCE, READY, START_PATIENCE, Child
from tests.support import ScriptedBot, serve_bot


async def finished(child: Child) -> tuple[int, list[str]]:
    """The exit status and the stdout lines of a process run to its end."""
    try:
        out, _ = await asyncio.wait_for(child.process.communicate(), PATIENCE)
    except TimeoutError:
        raise AssertionError(f"{child.describe()} did not end in {PATIENCE:g} s; stderr:\n"
                             f"{child.stderr_tail()}") from None
    assert child.process.returncode is not None
    return child.process.returncode, out.decode("utf-8").splitlines()


async def test_a_reference_bot_passes_and_nothing_is_left_behind(e2e: E2E) -> None:
    bot = await e2e.processes.start("perfect", "-m", "merknera_bots.tictactoe", "--strategy",
                                    "perfect", "--no-register", "--port", "0")
    port = (await e2e.processes.first_line(bot, READY)).group(1)
    scratch = e2e.tmp_path / "scratch"
    scratch.mkdir()
    before = sorted(path.name for path in e2e.tmp_path.iterdir())
    child = await e2e.processes.start(
        "try", *e2e.processes.merknera, "try", f"http://127.0.0.1:{port}/rpc", "--game",
        "tictactoe", "--games", "2", "--seed", "9", "--json", env={"TMPDIR": str(scratch)})
    status, lines = await finished(child)
    assert status == 0, (lines, child.stderr_tail())
    records = [json.loads(line) for line in lines]
    games = [record for record in records if record["kind"] == "game"]
    # Perfect play against perfect play: two draws.
    assert [(g["seat"], g["opponent"], g["result"]) for g in games] == [
        (1, "tictactoe-perfect", "DRAW"), (0, "tictactoe-perfect", "DRAW")]
    moves = [r for r in records if r["kind"] == "call" and r["call"] == "TicTacToe.NextMove"]
    assert len(moves) == 4 + 5  # O moves four times in a drawn game, X five
    assert records[-1] == {"kind": "summary", "games": 2, "seed": 9, "wins": 0, "draws": 2,
                           "losses": 0, "no_result": 0, "faults": {}}
    # Its store was a temporary file, deleted at exit; it wrote nothing where it ran (its
    # stderr file is the harness's).
    assert list(scratch.iterdir()) == []
    assert sorted(path.name for path in e2e.tmp_path.iterdir()) == sorted(
        [*before, "try.stderr"])


async def test_a_faulty_bot_fails_the_try(e2e: E2E, aiohttp_server: AiohttpServer) -> None:
    async def off_board(params: dict[str, Any], _id: Any) -> JSON:
        return {"position": 9}

    url = await serve_bot(aiohttp_server, ScriptedBot(next_move=off_board))
    child = await e2e.processes.start("try", *e2e.processes.merknera, "try", url, "--game",
                                      "TICTACTOE", "--games", "1")
    status, lines = await finished(child)
    assert status == 1, (lines, child.stderr_tail())
    faults = [line for line in lines if " INVALID_MOVE (strike " in line]
    assert len(faults) == 3 and "forfeit" in faults[-1]
    assert lines[-1] == "faults: 3 INVALID_MOVE: the platform would count them against the bot"


async def test_a_try_stopped_midway_leaves_nothing_behind(
        e2e: E2E, aiohttp_server: AiohttpServer) -> None:
    thinking = asyncio.Event()  # never set: the bot thinks until the try is stopped

    async def forever(params: dict[str, Any], _id: Any) -> JSON:
        await thinking.wait()
        return None

    url = await serve_bot(aiohttp_server, ScriptedBot(next_move=forever))
    scratch = e2e.tmp_path / "scratch"
    scratch.mkdir()
    child = await e2e.processes.start("try", *e2e.processes.merknera, "try", url, "--game",
                                      "TICTACTOE", "--games", "2", env={"TMPDIR": str(scratch)})
    await e2e.processes.first_line(child, re.compile(r"^ping +Status\.Ping "))
    assert child.process.stdout is not None
    # The games have begun: NewGame went out, and the private platform's files exist.
    line = await asyncio.wait_for(child.process.stdout.readline(), START_PATIENCE)
    assert b"TicTacToe.NewGame" in line, line
    assert [path.name.startswith("merknera-try-") for path in scratch.iterdir()] == [True]
    assert await e2e.processes.stop(child, signal.SIGTERM) == 128 + signal.SIGTERM
    assert "merknera try: stopped by SIGTERM" in child.stderr_tail()
    assert list(scratch.iterdir()) == []

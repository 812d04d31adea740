"""The store the web tests browse, made by real processes: ``merknera serve``, reference
bots of every game (a good one and a random one each, three Scrabble bots so that a table
of three plays too), a tic-tac-toe bot named ``<script>alert(1)</script>`` whose description
and website are markup, and a finished round-robin tournament.

``python -m tests.web.store_builder DIR`` builds ``DIR/merknera.db`` and writes the owner's
token to ``DIR/token``; the web tests' ``web_store`` fixture runs it once per session.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import aiohttp

from tests.e2e.harness import E2E, Processes

HOSTILE_NAME = "<script>alert(1)</script>"
HOSTILE_DESCRIPTION = '<img src=x onerror="alert(2)"> & <b>bold</b>'
HOSTILE_WEBSITE = "javascript:alert(3)"

BOTS: tuple[tuple[str, str, str], ...] = (
    ("merknera_bots.tictactoe", "perfect", "Perfect Polly"),
    ("merknera_bots.tictactoe", "random", "Random Rita"),
    ("merknera_bots.tictactoe", "random", HOSTILE_NAME),
    ("merknera_bots.scrabble", "best", "Wordsmith"),
    ("merknera_bots.scrabble", "random", "Scribbler"),
    ("merknera_bots.scrabble", "random", "Doodler"),
    ("merknera_bots.squelch", "good", "Dicey Dora"),
    ("merknera_bots.squelch", "random", "Reckless Rick"),
    ("merknera_bots.hexagons", "good", "Honeycomb"),
    ("merknera_bots.hexagons", "random", "Hexed"),
    ("merknera_bots.noughtsandcrosses", "perfect", "Noughty"),
    ("merknera_bots.noughtsandcrosses", "random", "Crossed Wires"),
    ("merknera_bots.numberwang", "good", "That's Numberwang"),
    ("merknera_bots.numberwang", "random", "Wangernumb"),
    ("merknera_bots.kalaha", "good", "Sower"),
    ("merknera_bots.kalaha", "random", "Scatter"),
)
GAMES = frozenset(("TICTACTOE", "SCRABBLE", "SQUELCH", "HEXAGONS", "NOUGHTSANDCROSSES",
                   "NUMBERWANG", "KALAHA"))


async def _all_played(e2e: E2E) -> tuple[list[dict[str, Any]] | None, str]:
    found = await e2e.games()
    unfinished = [game["id"] for game in found if game["status"] != "FINISHED"]
    kinds = {game["game"] for game in found}
    done = not unfinished and kinds == GAMES
    return (found if done else None), f"{len(found)} games, unfinished {unfinished[:10]}, " \
                                      f"kinds {sorted(kinds)}"


async def build(workdir: Path) -> None:
    """Play the games, then stop every process: ``workdir/merknera.db`` is the store."""
    processes = Processes(workdir)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            e2e = E2E(workdir, processes, session, workdir / "merknera.db")
            token = await e2e.add_user("web")
            (workdir / "token").write_text(token)
            # One user registers every bot at once (and one of them again, in _disguise):
            # more than the default registration_burst allows.
            await e2e.start_platform(registration_burst=str(len(BOTS) + 1))
            await asyncio.gather(*(
                e2e.start_bot(strategy, name, token, seed=index, module=module,
                              extra=("--cache", str(workdir / f"cache-{index}"))
                              if module == "merknera_bots.scrabble" else ())
                for index, (module, strategy, name) in enumerate(BOTS)))
            await e2e.wait_until("every game of every kind finished",
                                 lambda: _all_played(e2e), patience=120)
            await _disguise(e2e, session, token)
            await processes.run("tournament", "-m", "merknera", "tournament", "create",
                                "--game", "TICTACTOE", "--format", "round-robin",
                                "--rounds", "1", "--db", str(e2e.db), "--wait")
            await e2e.wait_until("every game of every kind finished",
                                 lambda: _all_played(e2e), patience=60)
    finally:
        await processes.close()


async def _disguise(e2e: E2E, session: aiohttp.ClientSession, token: str) -> None:
    """Register the hostile bot's version again (same name, version and endpoint) with
    markup for a description and a javascript: website."""
    row = e2e.read_db("SELECT version, endpoint FROM bots WHERE name = ?", (HOSTILE_NAME,))[0]
    async with session.post(e2e.url + "/rpc", json={
            "jsonrpc": "2.0", "id": 1, "method": "RegistrationService.Register", "params": {
                "token": token, "botname": HOSTILE_NAME, "botversion": row["version"],
                "game": "TICTACTOE", "rpcendpoint": row["endpoint"],
                "description": HOSTILE_DESCRIPTION, "website": HOSTILE_WEBSITE}}) as response:
        reply = await response.json()
    assert "result" in reply and reply.get("error") is None, reply


if __name__ == "__main__":
    asyncio.run(build(Path(sys.argv[1])))

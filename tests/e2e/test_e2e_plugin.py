"""A game added without forking: the worked example, Connect Four as a
distribution of its own (``tests/plugin_example``), built and installed by pip into a
temporary virtual environment beside the platform, passes its own tests (which run the
platform's public conformance check) and mypy --strict there, and is then played end to
end by its reference bots, in processes of their own on that environment: registration,
the round robin, the ladder, ratings, a tournament, replays, the API and the pages, with no
change to the platform.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import sysconfig
import venv
from pathlib import Path
from typing import Any

from tests.e2e.harness import ADMIN_TOKEN, E2E, REPO

EXAMPLE = Path(__file__).resolve().parent.parent / "plugin_example"
GAME = "CONNECTFOUR"


def environment(where: Path) -> Path:
    """A virtual environment that sees the platform's (this one's packages and the
    repository, as a path file) and has nothing else; its interpreter."""
    venv.create(where, with_pip=False)
    python = where / "bin" / "python"
    purelib = Path(sysconfig.get_paths(vars={"base": str(where), "platbase": str(where)})[
        "purelib"])
    (purelib / "merknera-platform.pth").write_text(
        f"{sysconfig.get_paths()['purelib']}\n{REPO}\n")
    return python


async def run(*args: str, cwd: Path) -> str:
    """A command to its end; its output (it must succeed)."""
    process = await asyncio.create_subprocess_exec(
        *args, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output = (await process.communicate())[0].decode("utf-8", errors="replace")
    assert await process.wait() == 0, f"{args} failed:\n{output}"
    return output


async def test_a_game_plugin_plays_end_to_end_with_no_change_to_the_platform(
        e2e: E2E) -> None:
    source = e2e.tmp_path / "merknera-connect4"
    shutil.copytree(EXAMPLE, source)  # the build writes beside its sources
    python = environment(e2e.tmp_path / "venv")
    await run(sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
              "--no-deps", "--no-build-isolation", "--no-index", str(source), cwd=source)
    tested = await run(str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests",
                       cwd=source)
    assert "11 passed" in tested, tested
    await run(str(python), "-m", "mypy", "--strict", "merknera_connect4", "tests", cwd=source)

    e2e.processes.python = str(python)  # the platform and the bots run there
    await e2e.start_platform(ladder="true", ladder_interval="0.2")
    token = await e2e.add_user("ada")
    for strategy, name in (("greedy", "Greedy Four"), ("random", "Random Four")):
        await e2e.start_bot(strategy, name, token, module="merknera_connect4.bot")

    async def finished(count: int) -> list[dict[str, Any]]:
        async def check() -> tuple[list[dict[str, Any]] | None, str]:
            found = (await e2e.get(f"/api/games?game={GAME}&status=FINISHED"))["games"]
            return (found if len(found) >= count else None), f"{len(found)} finished"

        return await e2e.wait_until(f"{count} finished {GAME} games", check)

    games = await finished(2)  # the round robin: each bot X once
    assert {game["reason"] for game in games} == {"NORMAL"}, games
    hosted = {game["mnemonic"] for game in (await e2e.get("/api/games-hosted"))["games"]}
    assert GAME in hosted

    # Ratings, the leaderboard, a replay and the pages.
    board = (await e2e.get(f"/api/leaderboard?game={GAME}"))["bots"]
    assert sorted(bot["name"] for bot in board) == ["Greedy Four", "Random Four"]
    assert all(bot["rating"]["rated_games"] >= 2 for bot in board), board  # the ladder goes on
    replay = await e2e.get(f"/api/games/{games[0]['id']}/replay")
    assert replay["game"] == GAME and replay["frames"] and replay["error"] is None
    assert replay["frames"][0]["text"].startswith("X in column ")
    for page in (f"/games/{games[0]['id']}", f"/bots/{board[0]['id']}",
                 f"/leaderboard/{GAME}", "/"):
        async with e2e.session.get(f"{e2e.url}{page}") as answer:
            assert answer.status == 200, (page, answer.status)

    # A tournament of the plugin's game: a round robin of both bots, played and tabled.
    async with e2e.session.post(
            f"{e2e.url}/api/admin/tournaments", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            json={"game": GAME, "format": "round-robin", "rounds": 1}) as made:
        assert made.status == 201, await made.text()
        tournament = (await made.json())["id"]

    async def tabled() -> tuple[dict[str, Any] | None, str]:
        found = await e2e.get(f"/api/tournaments/{tournament}")
        return (found if found["status"] == "FINISHED" else None), found["status"]

    table = await e2e.wait_until("the tournament to finish", tabled)
    assert len(table["table"]) == 2, table
    # And the ladder goes on pairing them: more games than the round robin and the
    # tournament made.
    await finished(5)

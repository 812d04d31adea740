"""Game plugins (merknera.games.plugins): games from installed distributions' entry points,
and the broken ones reported with their distribution's name and skipped.  The plugins here
are real distributions on disk (a module and its ``*.dist-info``), found as Python finds
any installed distribution."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from merknera.games import REGISTRY
from merknera.games.plugins import GROUP, discover

TOE = '''
from merknera.games.tictactoe import TicTacToe

class Toe(TicTacToe):
    mnemonic = "{mnemonic}"
    name = "Toe"
'''


def install(site: Path, distribution: str, module: str, source: str, entry: str) -> None:
    """A distribution with one module and one ``merknera.games`` entry point, in ``site``."""
    (site / f"{module}.py").write_text(source)
    info = site / f"{distribution}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{entry}\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory of installed distributions on ``sys.path`` (their modules unloaded
    after the test)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]


def entry_points(site: Path) -> list[metadata.EntryPoint]:
    return [point for dist in metadata.distributions(path=[str(site)])
            for point in dist.entry_points if point.group == GROUP]


def test_a_plugin_adds_its_game_and_broken_ones_are_skipped_saying_why(site: Path) -> None:
    install(site, "toe-game", "toe_game", TOE.format(mnemonic="TOE"), "toe = toe_game:Toe")
    install(site, "toe-twin", "toe_twin", TOE.format(mnemonic="TOE"), "twin = toe_twin:Toe")
    install(site, "kalaha-again", "kalaha_again", TOE.format(mnemonic="KALAHA"),
            "kalaha = kalaha_again:Toe")
    install(site, "lower-toe", "lower_toe", TOE.format(mnemonic="toe"),
            "lower = lower_toe:Toe")
    install(site, "no-game", "no_game", "GAME = 42\n", "number = no_game:GAME")
    install(site, "broken-import", "broken_import", "import not_a_module_anywhere\n",
            "broken = broken_import:Game")
    found, problems = discover(REGISTRY, entry_points(site))
    assert [(type(game).__name__, game.mnemonic) for game in found] == [("Toe", "TOE")]
    assert sorted((problem.distribution, problem.reason) for problem in problems) == [
        ("broken-import", "it cannot be loaded (ModuleNotFoundError: No module named "
                          "'not_a_module_anywhere')"),
        ("kalaha-again", "its mnemonic KALAHA is taken by the platform"),
        ("lower-toe", "it breaks a house rule: the mnemonic 'toe' is not upper-case letters "
                      "and digits"),
        ("no-game", "it gives int, not a merknera.games.Game"),
        ("toe-twin", "its mnemonic TOE is taken by the distribution toe-game"),
    ]
    twin = next(problem for problem in problems if problem.distribution == "toe-twin")
    assert str(twin) == ("the game plugin 'twin = toe_twin:Toe' of the distribution toe-twin "
                         "is skipped: its mnemonic TOE is taken by the distribution toe-game")


def test_installed_entry_points_are_found_without_being_named(site: Path) -> None:
    install(site, "toe-game", "toe_game", TOE.format(mnemonic="TOE"), "toe = toe_game:Toe")
    found, problems = discover(REGISTRY)
    assert [game.mnemonic for game in found] == ["TOE"] and problems == []


async def test_the_platform_reports_a_broken_plugin_at_start_up_and_starts(
        tmp_path: Path) -> None:
    install(tmp_path, "broken-import", "broken_import", "raise RuntimeError('boom')\n",
            "broken = broken_import:Game")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", "serve", "--db", str(tmp_path / "m.db"),
        "--host", "127.0.0.1", "--port", "0",
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert process.stdout is not None and process.stderr is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        assert line.startswith("Merknera listening on http://127.0.0.1:"), line
    finally:
        process.terminate()
        _, errors = await process.communicate()
    assert ("the game plugin 'broken = broken_import:Game' of the distribution broken-import "
            "is skipped: it cannot be loaded (RuntimeError: boom)") in errors.decode()

"""Merknera as an operator installs it: the wheel, built from what the Dockerfile's build
stage copies, installed by pip into fresh virtual environments outside the tree, and run
from directories of their own with nothing of the repository on the path.

Two environments, each made once for this module: the wheel alone (an arena on SQLite:
``merknera --version``, ``merknera serve`` playing the installed reference bots, ``merknera
demo``, and what a ``postgresql://`` store says without the extra), and the wheel with the
Dockerfile's extras (the image's steps: its environment and command on PostgreSQL, and its
HEALTHCHECK).  The wheel is built as the Dockerfile builds it, but with this environment's
setuptools instead of an isolated build's, so that no build backend is downloaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import venv
import zipfile
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

import pytest

import merknera
from merknera.demo import DEMO_BOTS
from tests.e2e.harness import E2E, LISTENING, PATIENCE, REPO
from tests.support import free_port
from tests.support.dockerfile import read_dockerfile
from tests.support.postgres import Cluster

BUILD, IMAGE = read_dockerfile()

pytestmark = pytest.mark.xdist_group("wheel")
"""Every test here on one worker (make test's --dist loadgroup): the wheel and its
environments are made once."""

INSTALL_PATIENCE = 600
"""Seconds for pip to build or install (a safety net: it may download the dependencies)."""
BANNER = re.compile(r"^started (\d+) reference bots ")
"""The demo's line once it has started its bots."""
MISSING_EXTRA = "pip install 'merknera[postgresql]'"


@dataclass(frozen=True)
class Installed:
    """A virtual environment with Merknera installed by pip."""

    python: Path

    @property
    def merknera(self) -> Path:
        """Its ``merknera`` console script."""
        return self.python.with_name("merknera")

    def environ(self, **settings: str) -> dict[str, str]:
        """This process's environment without anything of Merknera's (``MERKNERA_*``, the
        repository on ``PYTHONPATH``), the environment's scripts first on ``PATH``, plus
        ``settings``."""
        kept = {key: value for key, value in os.environ.items()
                if not key.startswith("MERKNERA_") and key != "PYTHONPATH"}
        path = os.pathsep.join([str(self.python.parent), os.environ.get("PATH", "")])
        return {**kept, "PATH": path, **settings}


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None,
        patience: float = INSTALL_PATIENCE) -> subprocess.CompletedProcess[str]:
    """A command to its end, with its output (stdout and stderr together)."""
    return subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=patience, check=False)


def succeed(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """A command that must exit 0; its output."""
    done = run(args, cwd, env)
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of exactly what the Dockerfile's build stage copies."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    for name in BUILD.copied():
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(REPO / name, source / name)
    succeed([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
             "--no-build-isolation", "--wheel-dir", str(root / "dist"), "."], source)
    (built,) = (root / "dist").glob("merknera-*.whl")
    return built


def install(root: Path, requirement: str) -> Installed:
    """A fresh virtual environment in ``root`` and ``requirement`` installed there by pip,
    with its dependencies from the package index."""
    venv.create(root / "venv", with_pip=False)
    python = root / "venv" / "bin" / "python"
    succeed([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
             requirement], root)
    return Installed(python)


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """What an operator of an arena on SQLite installs: the wheel and no extra."""
    return install(tmp_path_factory.mktemp("installed"), str(wheel))


@pytest.fixture(scope="module")
def image(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """What the image installs: the wheel with the Dockerfile's ``EXTRAS``."""
    return install(tmp_path_factory.mktemp("image"), f"{wheel}{IMAGE.arg_default('EXTRAS')}")


def test_the_wheel_holds_the_platform_its_data_and_its_bots(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"merknera-{merknera.__version__}.dist-info"
        metadata = HeaderParser().parsestr(archive.read(f"{info}/METADATA").decode("utf-8"))
        manifest = json.loads(archive.read("merknera/game_assets/manifest.json"))
    assert {"merknera/config.toml", "merknera/py.typed", "merknera_bots/kit.py",
            "merknera_bots/tictactoe.py", "merknera_bots/py.typed",
            f"{info}/licenses/LICENSE"} <= names
    assert {f"merknera/game_assets/{path}" for path in manifest["files"]} <= names
    assert {name.split("/")[0] for name in names} == {"merknera", "merknera_bots", info}
    assert metadata["Version"] == merknera.__version__
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("Provides-Extra") == ["postgresql", "dev"]
    drivers = [line for line in metadata.get_all("Requires-Dist") or []
               if line.startswith("psycopg")]
    assert drivers and all('extra == "postgresql"' in line for line in drivers), drivers


def test_the_installed_command_names_its_version(installed: Installed, tmp_path: Path) -> None:
    env = installed.environ()
    assert succeed([str(installed.merknera), "--version"], tmp_path, env).strip() == \
        f"merknera {merknera.__version__}"
    where = succeed([str(installed.python), "-c", "import merknera, merknera_bots; "
                     "print(merknera.__file__); print(merknera_bots.__file__)"], tmp_path, env)
    site = installed.python.parents[1]
    assert all(Path(line).is_relative_to(site) for line in where.split()), where
    printed = succeed([str(installed.merknera), "config"], tmp_path, env)
    assert printed == (REPO / "merknera" / "config.toml").read_text("utf-8")


async def test_serve_plays_the_installed_reference_bots(installed: Installed,
                                                        e2e: E2E) -> None:
    e2e.processes.installed(installed.python)
    await e2e.start_platform()
    token = await e2e.add_user("operator")
    await e2e.start_bot("perfect", "Installed Polly", token, module="merknera_bots.tictactoe")
    await e2e.start_bot("random", "Installed Rob", token, module="merknera_bots.tictactoe")
    for summary in await e2e.wait_all_finished(2):  # each bot X once
        game = await e2e.game(summary["id"])
        e2e.check_tictactoe_game(game)
        assert game["reason"] == "NORMAL", game


async def test_the_demo_starts_its_bots_and_stops_on_ctrl_c(installed: Installed,
                                                            e2e: E2E) -> None:
    e2e.processes.installed(installed.python)
    child = await e2e.processes.start(
        "demo", str(installed.merknera), "demo", "--db", str(e2e.db), "--host", "127.0.0.1",
        "--port", "0", "--battlebot-port", str(free_port()), "--hexagons-port",
        str(free_port()), "--kalaha-port", str(free_port()))
    try:
        await e2e.processes.first_line(child, re.compile(r"^Merknera is running at "))
        lines: list[str] = []

        async def banner() -> None:
            assert child.process.stdout is not None
            while raw := await child.process.stdout.readline():
                lines.append(raw.decode("utf-8", errors="replace").rstrip())
                if match := BANNER.match(lines[-1]):
                    assert int(match.group(1)) == len(DEMO_BOTS), lines[-1]
                    return
            raise AssertionError(f"the demo ended without starting its bots: {lines}\n"
                                 f"{child.stderr_tail()}")

        await asyncio.wait_for(banner(), PATIENCE)
        child.process.send_signal(signal.SIGINT)
        rest, _ = await asyncio.wait_for(child.process.communicate(), PATIENCE)
        assert child.process.returncode == 0, (rest, child.stderr_tail())
        assert rest.decode("utf-8").splitlines()[-1] == "stopped", rest
    finally:
        await e2e.processes.stop(child)


def test_a_postgresql_store_without_the_extra_names_the_extra(installed: Installed,
                                                              tmp_path: Path) -> None:
    url = f"postgresql://merknera@127.0.0.1:{free_port()}/arena"
    for command in (["serve", "--port", "0"], ["db", "migrate"]):
        done = run([str(installed.merknera), *command, "--db", url], tmp_path,
                   installed.environ(), patience=60)
        assert done.returncode == 1, done.stdout
        assert MISSING_EXTRA in done.stdout and "Traceback" not in done.stdout, done.stdout


async def test_the_image_serves_on_postgresql_and_passes_its_health_check(
        image: Installed, postgres: Cluster, tmp_path: Path) -> None:
    port = free_port()
    # The image's environment, then compose.yaml's: a node on PostgreSQL.
    env = image.environ(**{**IMAGE.environment(), "MERKNERA_PORT": str(port),
                           "MERKNERA_DB": postgres.new_database()})
    program, *args = IMAGE.command()
    health_check = ["sh", "-c", IMAGE.health_check()]
    log = tmp_path / "node.stderr"
    with log.open("wb") as stderr:
        node = await asyncio.create_subprocess_exec(
            str(image.python.with_name(program)), *args, cwd=tmp_path, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=stderr)
    try:
        assert node.stdout is not None
        first = (await asyncio.wait_for(node.stdout.readline(), PATIENCE)).decode()
        assert LISTENING.match(first.strip()), (first, log.read_text())
        checked = await asyncio.to_thread(run, health_check, tmp_path, env, 60)
        assert checked.returncode == 0, checked.stdout
    finally:
        with contextlib.suppress(ProcessLookupError):
            node.send_signal(signal.SIGTERM)
        await asyncio.wait_for(node.wait(), PATIENCE)
    assert node.returncode == 0
    stopped = await asyncio.to_thread(run, health_check, tmp_path, env, 60)
    assert stopped.returncode != 0, stopped.stdout

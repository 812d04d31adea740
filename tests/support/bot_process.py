"""Reference bots as real processes: ``python -m bots.<game>`` run from the repository."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PATIENCE = 30.0
"""A guard against a hung process, not a measurement: a bot starts well within a second."""


@asynccontextmanager
async def bot_process(module: str, *args: str) -> AsyncIterator[asyncio.subprocess.Process]:
    """``python -m <module> <args>`` in the repository, its stdout and stderr piped; killed
    on the way out if it is still running."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", module, *args, cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def ready_line(process: asyncio.subprocess.Process) -> list[str]:
    """The bot's first line on stdout split into its three words: ``READY``, the port and
    the bot's name.  Fails with the bot's stderr when it ends without one."""
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), PATIENCE)
    if not line:
        assert process.stderr is not None
        raise AssertionError(f"no READY line; stderr: {await process.stderr.read()!r}")
    return line.decode().rstrip("\n").split(" ", 2)

"""``merknera serve`` runs on uvloop (merknera/loop.py) and stops cleanly on either signal;
``merknera demo`` keeps asyncio's loop (see the module's docstring)."""

from __future__ import annotations

import asyncio
import signal

import pytest

from merknera import loop
from tests.e2e.harness import E2E


def test_the_loop_runs_a_coroutine_to_its_value_on_uvloop() -> None:
    async def which() -> str:
        await asyncio.sleep(0)
        return type(asyncio.get_running_loop()).__module__

    assert loop.run(which()).startswith("uvloop")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
async def test_serve_on_uvloop_stops_cleanly_on_either_signal(e2e: E2E, signum: int) -> None:
    platform = await e2e.start_platform(log_level="INFO")
    assert (await e2e.get("/api/bots"))["bots"] == []
    assert await e2e.processes.stop(platform.child, signum) == 0
    err = platform.child.stderr_path.read_text()
    assert "event loop uvloop" in err, err
    assert "Traceback" not in err, err

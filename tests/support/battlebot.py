"""Running Battlebot clients (``tests/support/battlebot_client.py``) as processes against a
platform with its Battlebot listener, and reading what they printed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tests.e2e.harness import E2E, REPO, Child
from tests.support import free_port

CLIENT = str(REPO / "tests" / "support" / "battlebot_client.py")

CLIENT_PATIENCE = 90.0
"""Seconds a client process may run before the test gives up on it (a safety net)."""


@dataclass
class ClientRun:
    """What a client process printed, and how it ended."""

    name: str
    code: int
    events: list[dict[str, Any]]

    def of(self, kind: str) -> list[dict[str, Any]]:
        """Its events of one kind."""
        return [event for event in self.events if event["event"] == kind]

    @property
    def received(self) -> list[Any]:
        """Every message it received, in order."""
        return [event["message"] for event in self.of("received")]

    @property
    def results(self) -> list[dict[str, Any]]:
        """The results of its games, in order."""
        return self.of("result")

    @property
    def secret(self) -> str:
        """The credential its registration gave (pass_hash or password)."""
        body = self.of("registered")[0]["body"]
        if "pass_hash" in body:
            return str(body["pass_hash"])
        return str(body["data"]["registerBot"]["password"])

    def updates(self) -> list[dict[str, Any]]:
        """The messages that carried a state."""
        return [m for m in self.received if isinstance(m, dict) and "state" in m]


async def start_client(e2e: E2E, url: str, name: str, *, era: str = "a",
                       game: str = "noughtsandcrosses", behaviour: str = "normal",
                       register: bool = True, secret: str | None = None,
                       extra: Sequence[str] = ()) -> Child:
    """A client process (registering first unless a secret is given)."""
    args = [CLIENT, "--url", url, "--era", era, "--game", game, "--name", name,
            "--behaviour", behaviour, "--timeout", str(CLIENT_PATIENCE - 10), *extra]
    if secret is not None:
        args += ["--secret", secret]
    elif register:
        args.append("--register")
    return await e2e.processes.start(f"client-{name}", *args)


async def finish(child: Child, name: str) -> ClientRun:
    """Wait for a client process to end, and read its events."""
    try:
        stdout, _ = await asyncio.wait_for(child.process.communicate(), CLIENT_PATIENCE)
    except TimeoutError:
        raise AssertionError(f"{child.describe()} did not end; stderr:\n"
                             f"{child.stderr_tail()}") from None
    events = [json.loads(line) for line in stdout.decode().splitlines() if line.strip()]
    code = child.process.returncode
    assert code is not None
    return ClientRun(name, code, events)


async def run_clients(e2e: E2E, url: str,
                      specs: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, ClientRun]:
    """Several clients at once, ``(name, start_client keywords)``; their runs by name."""
    children = [(name, await start_client(e2e, url, name, **options))
                for name, options in specs]
    runs = await asyncio.gather(*(finish(child, name) for name, child in children))
    return {run.name: run for run in runs}


async def start_listener(e2e: E2E, **options: str) -> str:
    """The platform with its Battlebot listener on a free port (a number: 0 is off); the
    listener's URL."""
    port = free_port()
    await e2e.start_platform(None, battlebot_port=str(port), **options)
    return f"http://127.0.0.1:{port}"

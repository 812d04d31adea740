"""Running MebiPenny hexagons clients (``tests/support/hexagons_client.py``) as processes against a
platform with its hexagons listener, following what they print as they run, and the tests'
own requests to the listener."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.e2e.harness import E2E, REPO, Child
from tests.support import free_port

CLIENT = str(REPO / "tests" / "support" / "hexagons_client.py")

CLIENT_PATIENCE = 90.0
"""Seconds a client process may run, or an awaited event take, before the test gives up on
it (a safety net, not a measurement)."""

LISTENER_OPTIONS: dict[str, str] = {
    "hexagons_turn_limit": "1",
    # Every client of a test comes from 127.0.0.1, several games at once with moves a few
    # milliseconds apart: more than one address's default request rate.
    "request_burst": "100000",
    "request_rate": "100000",
}
"""The platform's settings for these tests (``start_listener``'s options add to them)."""


@dataclass
class HexRun:
    """What a client process printed, and how it ended."""

    name: str
    code: int
    events: list[dict[str, Any]]

    def of(self, kind: str) -> list[dict[str, Any]]:
        """Its events of one kind, in order."""
        return [event for event in self.events if event["event"] == kind]

    def answers(self, request: str) -> list[dict[str, Any]]:
        """The answers to its requests of one kind (``join``, ``move``, ``observe`` ...)."""
        return [event for event in self.of("answer") if event["request"] == request]

    @property
    def end(self) -> dict[str, Any]:
        """Its ``end`` event (exactly one)."""
        ends = self.of("end")
        assert len(ends) == 1, f"{self.name}: {len(ends)} end events; last: {self.events[-3:]}"
        return ends[0]

    @property
    def game(self) -> dict[str, Any]:
        """Its own copy of the Game, merged from the answers it got."""
        game = self.end.get("game")
        assert isinstance(game, dict), f"{self.name} ended without a game: {self.end}"
        return game

    @property
    def last_answer(self) -> dict[str, Any]:
        """The answer to its last request."""
        return self.of("answer")[-1]

    @property
    def inconsistencies(self) -> list[str]:
        """What it found the server's answers contradicting (its geometry, or themselves)."""
        return [event["problem"] for event in self.of("inconsistent")]


@dataclass
class HexClient:
    """A running client process whose events are read as they come."""

    name: str
    child: Child
    events: list[dict[str, Any]] = field(default_factory=list)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _done: bool = False
    _reader: asyncio.Task[None] | None = None

    def start_reading(self) -> None:
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        """Read stdout to its end in chunks (a line can be longer than a stream's limit)."""
        stdout = self.child.process.stdout
        assert stdout is not None
        pending = b""
        try:
            while chunk := await stdout.read(65536):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        self.events.append(json.loads(line))
                self._arrived.set()
        finally:
            if pending.strip():
                self.events.append({"event": "unparsed", "text": pending.decode(errors="replace")})
            self._done = True
            self._arrived.set()

    async def event(self, kind: str) -> dict[str, Any]:
        """The first event of ``kind``, waiting for it while the process runs."""
        async with asyncio.timeout(CLIENT_PATIENCE):
            while True:
                found = next((e for e in self.events if e["event"] == kind), None)
                if found is not None:
                    return found
                if self._done:
                    await self.child.process.wait()
                    raise AssertionError(
                        f"{self.child.describe()} ended without a {kind} event: "
                        f"{self.events[-3:]}; stderr:\n{self.child.stderr_tail()}")
                self._arrived.clear()
                await self._arrived.wait()

    async def finish(self) -> HexRun:
        """Wait for the process to end; what it printed."""
        assert self._reader is not None
        try:
            await asyncio.wait_for(asyncio.shield(self._reader), CLIENT_PATIENCE)
            code = await asyncio.wait_for(self.child.process.wait(), CLIENT_PATIENCE)
        except TimeoutError:
            raise AssertionError(f"{self.child.describe()} did not end; events "
                                 f"{self.events[-3:]}; stderr:\n"
                                 f"{self.child.stderr_tail()}") from None
        return HexRun(self.name, code, list(self.events))


async def start_listener(e2e: E2E, **options: str) -> str:
    """The platform with its hexagons listener on a free port and :data:`LISTENER_OPTIONS`
    (``options`` added); the listener's URL."""
    port = free_port()
    await e2e.start_platform(None, hexagons_port=str(port), **{**LISTENER_OPTIONS, **options})
    return f"http://127.0.0.1:{port}"


async def start_client(e2e: E2E, url: str, name: str, *, game: str | None = None,
                       create: str | None = None, match: bool = False,
                       behaviour: str = "normal", after: int | None = None,
                       wrapper: str | None = None, extra: Sequence[str] = (),
                       source: str | None = None) -> HexClient:
    """A client process for one game: ``game`` (its id), ``create`` ("5x4") or ``match``;
    from the loopback address ``source`` if given."""
    args = [CLIENT, "--url", url, "--name", name, "--behaviour", behaviour,
            "--timeout", str(CLIENT_PATIENCE - 10), *extra]
    if source is not None:
        args += ["--source", source]
    if game is not None:
        args += ["--game", game]
    elif create is not None:
        args += ["--create", create]
    else:
        assert match, "a client needs --game, --create or --match"
        args.append("--match")
    if after is not None:
        args += ["--after", str(after)]
    if wrapper is not None:
        args += ["--wrapper", wrapper]
    child = await e2e.processes.start(f"hexagons-{name}", *args)
    client = HexClient(name, child)
    client.start_reading()
    return client


async def finish_all(clients: Sequence[HexClient]) -> dict[str, HexRun]:
    """Wait for every client; their runs by name."""
    runs = await asyncio.gather(*(client.finish() for client in clients))
    return {run.name: run for run in runs}


@dataclass
class Answer:
    """An answer of the listener to a test's own request."""

    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


async def call(e2e: E2E, method: str, url: str, body: Any = None,
               headers: dict[str, str] | None = None) -> Answer:
    """One request of the test's own to the listener."""
    data = None if body is None else json.dumps(body).encode()
    async with e2e.session.request(method, url, data=data, headers=headers or {}) as response:
        text = await response.text()
        return Answer(response.status, dict(response.headers), text)


async def create_game(e2e: E2E, url: str, rows: int = 5, cols: int = 4) -> str:
    """``POST /`` a game; its id."""
    answer = await call(e2e, "POST", f"{url}/", {"rows": rows, "cols": cols})
    assert answer.status == 201, (answer.status, answer.text)
    location = answer.headers["Location"]
    assert location.startswith("/") and len(location) == 9, location
    return location[1:]


async def view(e2e: E2E, url: str, game: str) -> dict[str, Any]:
    """``GET /<id>``: the Game object now."""
    answer = await call(e2e, "GET", f"{url}/{game}")
    assert answer.status == 200, (answer.status, answer.text)
    found = answer.json()
    assert isinstance(found, dict)
    return found


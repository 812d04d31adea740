"""The hexagons observers' streams are live streams like the main site's: held by the
same caps (``max_streams_per_client``, ``max_streams``), a stream whose place goes to
another network's newcomer really ends, and an observer that does not read what it is
sent is cut off after ``stream_send_timeout`` while the game goes on.

The platform is served as ``merknera serve`` serves it (guarded sockets), the observers
are real clients on loopback, each address of 127.0.0.0/8 a client of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import aiohttp
import pytest

from merknera.app import Platform
from merknera.config import Config
from merknera.games.hexagons import Point, lattice, line_between
from merknera.server import running
from tests.support import free_port, until

PATIENCE = 20.0
"""Seconds to wait for what must happen well within that (a guard against a hang)."""
PLAYERS = "127.0.0.1"
WRAPPER = "x" * 4000 + "%s"
"""The largest wrapper an observer's body may hold: every line of its stream ~4 KB."""


@dataclasses.dataclass
class Hexagons:
    """The platform with its hexagons listener, served on real sockets."""

    config: Config
    platform: Platform

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.config.hexagons.port}{path}"


Serve = Callable[..., Awaitable[Hexagons]]


@pytest.fixture
async def serve(config: Config) -> AsyncIterator[Serve]:
    """``await serve(**config changes)``: the platform and its hexagons listener, served by
    ``merknera.server.running``."""
    async with AsyncExitStack() as stack:
        async def start(**changes: Any) -> Hexagons:
            changed = config.replace(
                port=0, hexagons_port=free_port(), request_burst=100000,
                request_rate=100000.0, **changes)
            live, platform = await stack.enter_async_context(running(changed))
            return Hexagons(live, platform)

        yield start


def session(source: str) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(source, 0)),
                                 timeout=aiohttp.ClientTimeout(total=None,
                                                               sock_connect=PATIENCE))


async def create_game(served: Hexagons, rows: int, cols: int) -> str:
    async with session(PLAYERS) as client, client.post(
            served.url("/"), json={"rows": rows, "cols": cols}) as answer:
        assert answer.status == 201, await answer.text()
        return answer.headers["Location"].lstrip("/")


@dataclasses.dataclass
class Observer:
    """An observer that reads its stream to the end, from its own address."""

    source: str
    status: int = 0
    lines: list[Any] = dataclasses.field(default_factory=list)
    ended: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    @property
    def open(self) -> bool:
        return self.status == 200 and not self.ended.is_set()


async def observe(client: aiohttp.ClientSession, url: str, observer: Observer,
                  answered: asyncio.Event) -> None:
    """Read the stream to its end (or until cancelled); ``answered`` once the first line
    came (or the refusal)."""
    try:
        async with client.post(url, data=b"") as answer:
            observer.status = answer.status
            if answer.status != 200:
                return
            async for line in answer.content:
                observer.lines.append(json.loads(line))
                answered.set()
            observer.ended.set()
    finally:
        answered.set()


async def test_observers_over_the_stream_cap_are_refused_or_turn_the_oldest_out(
        serve: Serve) -> None:
    served = await serve(max_streams=4, max_streams_per_client=2)
    handle = await create_game(served, 5, 4)  # waits for its players: nothing but a line
    streams = served.platform.guard.streams
    observers: list[Observer] = []
    async with AsyncExitStack() as stack:
        readers = []
        for host in range(2, 7):
            client = await stack.enter_async_context(session(f"127.0.0.{host}"))
            for _ in range(3):
                observer, answered = Observer(f"127.0.0.{host}"), asyncio.Event()
                observers.append(observer)
                readers.append(asyncio.ensure_future(observe(
                    client, served.url(f"/{handle}/observers"), observer, answered)))
                async with asyncio.timeout(PATIENCE):
                    await answered.wait()  # one after the other: the oldest is known
                assert len(streams) <= 4
        answered_with = [(o.source, o.status) for o in observers]
        assert answered_with == [
            ("127.0.0.2", 200), ("127.0.0.2", 200), ("127.0.0.2", 429),
            ("127.0.0.3", 200), ("127.0.0.3", 200), ("127.0.0.3", 429),
            # every place taken: the busiest network gives up its oldest to a newcomer,
            ("127.0.0.4", 200),
            # unless it holds no more than the newcomer's would with the newcomer in
            ("127.0.0.4", 503), ("127.0.0.4", 503),
            ("127.0.0.5", 200), ("127.0.0.5", 503), ("127.0.0.5", 503),
            ("127.0.0.6", 503), ("127.0.0.6", 503), ("127.0.0.6", 503),
        ], answered_with
        # The streams turned out end (the game has not started: they would have waited
        # for its players); no more than the cap stay open.
        await until(lambda: sum(o.open for o in observers) <= 4, within=PATIENCE)
        ended = [observers.index(o) for o in observers if o.ended.is_set()]
        assert ended == [0, 3], ended  # the oldest of 127.0.0.2's, then of 127.0.0.3's
        assert all(len(observers[i].lines) == 1 for i in ended)  # the Game, then the end
        assert sum(o.open for o in observers) == len(streams) == 4
        # A place turned out is free for its address again.
        assert streams.held("127.0.0.2") == 1
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    # The clients left: every place is free at once.
    await until(lambda: len(streams) == 0, within=PATIENCE)


def _legal_line(game: dict[str, Any]) -> list[dict[str, int]]:
    """The first line that may be drawn on the Game object's board."""
    def point(coordinate: dict[str, int]) -> Point:
        return Point(coordinate["row"], coordinate["col"])

    drawn = {line_between(*map(point, line["endpoints"])) for line in game["lines"]}
    claimed = {point(hexagon["center"]) for hexagon in game["hexagons"]}
    board = lattice(game["rows"], game["cols"])
    for line in board.lines:
        if line not in drawn and line[0] not in claimed and line[1] not in claimed:
            return [{"row": end.row, "col": end.col} for end in line]
    raise AssertionError("no legal line left, but the server gave the move")


async def play(client: aiohttp.ClientSession, served: Hexagons, handle: str,
               name: str) -> None:
    """Join and move (the first legal line) while the answers carry a turn token."""
    async with client.post(served.url(f"/{handle}/players"), json={"name": name}) as answer:
        assert answer.status == 200, await answer.text()
        token = answer.headers.get("X-Turn-Token")
    while token:
        async with client.get(served.url(f"/{handle}")) as answer:
            game = await answer.json()
        async with client.post(served.url(f"/{handle}/moves"), json=_legal_line(game),
                               headers={"X-Turn-Token": token}) as answer:
            assert answer.status == 200, await answer.text()
            token = answer.headers.get("X-Turn-Token")


async def lines_drawn(served: Hexagons, handle: str) -> tuple[int, str]:
    async with session(PLAYERS) as client, client.get(served.url(f"/{handle}")) as answer:
        game = await answer.json()
        return len(game["lines"]), game["state"]


async def test_an_observer_that_does_not_read_is_cut_off_while_the_game_goes_on(
        serve: Serve) -> None:
    served = await serve(stream_send_timeout=0.5)
    handle = await create_game(served, 25, 25)  # 1,739 lines: far more than it takes
    stranger = "127.0.0.7"
    # An observer that never reads, with a small receive buffer (and segments) so that
    # what the server sends it backs up after a few dozen lines.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
    sock.bind((stranger, 0))
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1",
                                                         served.config.hexagons.port))
    reader, writer = await asyncio.open_connection(sock=sock)
    body = json.dumps({"wrapper": WRAPPER}).encode()
    writer.write(f"POST /{handle}/observers HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                 "\r\n".encode() + body)
    streams, connections = served.platform.guard.streams, served.platform.guard.connections
    await until(lambda: streams.held(stranger) == 1, within=PATIENCE)
    async with session(PLAYERS) as first, session(PLAYERS) as second, \
            session("127.0.0.8") as watcher:
        reading, answered = Observer("127.0.0.8"), asyncio.Event()
        watching = asyncio.ensure_future(observe(
            watcher, served.url(f"/{handle}/observers"), reading, answered))
        players = [asyncio.ensure_future(play(client, served, handle, name))
                   for client, name in ((first, "Ann"), (second, "Bob"))]
        try:
            # It is cut off: its place and its connection are free, though it never
            # read and the game is still being played.
            await until(lambda: streams.held(stranger) == 0, within=PATIENCE)
            await until(lambda: connections.open_from(stranger) == 0, within=PATIENCE)
            drawn, state = await lines_drawn(served, handle)
            assert state == "in play"
            assert not any(player.done() for player in players)
            # The game goes on, and the observer that reads sees it.
            await until(lambda: sum(len(document["lines"]) for document in reading.lines)
                        > drawn + 20, within=PATIENCE)
            assert reading.open
            assert (await lines_drawn(served, handle))[0] > drawn
        finally:
            for task in (*players, watching):
                task.cancel()
            await asyncio.gather(*players, watching, return_exceptions=True)
    # What it was sent was dropped with its connection, not kept for it.
    with contextlib.suppress(ConnectionResetError):
        async with asyncio.timeout(PATIENCE):
            while await reader.read(65536):
                pass
    writer.close()

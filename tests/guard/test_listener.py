"""The platform's listener against clients that hold on: real sockets on loopback.

The strangers connect from 127.0.0.2, the well-behaved clients from 127.0.0.1 (the whole of
127.0.0.0/8 reaches the loopback interface), so that each is a client of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import aiohttp
import pytest

from merknera.app import Platform
from merknera.config import Config
from merknera.protocol import jsonrpc
from merknera.server import running
from merknera.store import users
from tests.support import until

STRANGER = "127.0.0.2"
PATIENCE = 10.0
"""Seconds to wait for what must happen within an idle timeout of a fraction of that."""


@dataclasses.dataclass
class Served:
    """A platform serving on a real socket, with its user alice's token."""

    config: Config
    platform: Platform
    token: str

    @property
    def port(self) -> int:
        return self.config.listeners.port

    def url(self, path: str) -> str:
        return f"{self.config.listeners.base_url}{path}"

    async def connect(self, source: str = STRANGER) -> tuple[asyncio.StreamReader,
                                                             asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", self.port, local_addr=(source, 0))


Serve = Callable[..., Awaitable[Served]]


@pytest.fixture
async def serve(config: Config) -> AsyncIterator[Serve]:
    """``await serve(**config changes)``: the platform served by ``merknera.server.running``
    (the guarded listener, unlike the test client's server)."""
    async with AsyncExitStack() as stack:
        async def start(**changes: Any) -> Served:
            changed = config.replace(port=0, **changes)
            live, platform = await stack.enter_async_context(running(changed))
            _, token = await users.create_user(platform.db, "alice")
            return Served(live, platform, token)

        yield start


def session(source: str = STRANGER) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(source, 0)),
                                 timeout=aiohttp.ClientTimeout(total=PATIENCE))


async def closed_by_server(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection."""
    async with asyncio.timeout(PATIENCE):
        return await reader.read()


async def test_idle_half_sent_and_kept_alive_connections_are_closed(serve: Serve) -> None:
    served = await serve(idle_timeout=0.5)
    idle = await served.connect()
    half = await served.connect()
    half[1].write(b"GET / HTTP/1.1\r\n")
    kept = await served.connect()
    kept[1].write(b"GET /api/games-hosted HTTP/1.1\r\nHost: x\r\n\r\n")
    assert await closed_by_server(idle[0]) == b""
    assert await closed_by_server(half[0]) == b""
    answered = await closed_by_server(kept[0])
    assert answered.startswith(b"HTTP/1.1 200 OK")  # answered, then closed while idle
    assert served.platform.guard.connections.open == 0
    for _, writer in (idle, half, kept):
        writer.close()


async def test_a_client_holds_no_more_than_its_share_of_connections(serve: Serve) -> None:
    served = await serve(max_connections_per_client=8)
    held = [await served.connect() for _ in range(8)]
    reader, writer = await served.connect()
    refused = await closed_by_server(reader)
    assert refused.startswith(b"HTTP/1.1 429 Too Many Requests\r\n")
    assert b"Retry-After: 5" in refused and b"too many connections" in refused
    assert served.platform.guard.connections.open_from(STRANGER) == 8
    # Everybody else is served as usual.
    async with session("127.0.0.1") as others, others.get(served.url("/api/bots")) as answer:
        assert answer.status == 200
    # Once the stranger lets go of one, it may connect again.
    held[0][1].close()
    await held[0][1].wait_closed()
    await until(lambda: served.platform.guard.connections.open_from(STRANGER) == 7)
    async with session() as stranger, stranger.get(served.url("/api/bots")) as answer:
        assert answer.status == 200
    for _, other in [*held[1:], (reader, writer)]:
        other.close()


async def test_when_every_place_is_taken_the_busiest_make_room(serve: Serve) -> None:
    """A few addresses that fill every place do not keep the others out."""
    served = await serve(max_connections=16, max_connections_per_client=6)
    held = {source: [await served.connect(source) for _ in range(count)]
            for source, count in (("127.0.0.2", 6), ("127.0.0.3", 6), ("127.0.0.4", 4))}
    await until(lambda: served.platform.guard.connections.open == 16)
    async with session("127.0.0.1") as others, others.get(served.url("/api/bots")) as answer:
        assert answer.status == 200
    # The oldest connection of the busiest address made room.
    with contextlib.suppress(ConnectionResetError):
        assert await closed_by_server(held["127.0.0.2"][0][0]) == b""
    # Full again (the newcomer has gone): an address that holds about as much as the
    # busiest is refused rather than served.
    await until(lambda: served.platform.guard.connections.open == 15)
    held["127.0.0.4"].append(await served.connect("127.0.0.4"))
    reader, writer = await served.connect("127.0.0.2")
    assert (await closed_by_server(reader)).startswith(b"HTTP/1.1 503 Service Unavailable")
    writer.close()
    for connections in held.values():
        for _, other in connections:
            other.close()


async def test_a_client_that_asks_too_often_is_slowed_down(serve: Serve) -> None:
    served = await serve(request_burst=5, request_rate=0.5)
    async with session() as stranger:
        for _ in range(5):
            async with stranger.get(served.url("/api/games-hosted")) as answer:
                assert answer.status == 200
        async with stranger.get(served.url("/api/games-hosted")) as answer:
            assert (answer.status, answer.headers["Retry-After"]) == (429, "2")
            assert "too many requests from your address" in (await answer.json())["error"]
    async with session("127.0.0.1") as other, other.get(served.url("/")) as page:
        assert page.status == 200


async def test_a_body_sent_slowly_is_cut_off(serve: Serve) -> None:
    served = await serve(body_timeout=0.5)
    reader, writer = await served.connect()
    writer.write(b"POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 100\r\n\r\n{\"jsonrpc\": ")
    async with asyncio.timeout(PATIENCE):
        head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    error = json.loads(await reader.readexactly(length))["error"]
    assert error["code"] == jsonrpc.INVALID_REQUEST
    assert error["message"] == "Invalid request: the body did not arrive within 0.5 s"
    assert await closed_by_server(reader) == b""  # and the connection is let go
    writer.close()


async def test_a_compressed_body_is_refused_as_it_is_never_inflated(serve: Serve) -> None:
    # 255 KiB of gzip is 256 MiB of zeros (16 KiB and 16 MiB here): aiohttp inflated it on
    # the event loop as it came (a second of the loop), and the body reader then refused
    # 413.  Bodies are read as sent; a compressed one is refused before it is read.
    served = await serve()
    bomb = gzip.compress(bytes(16 * 1024 * 1024), compresslevel=9)
    async with session() as stranger:
        async with stranger.post(served.url("/rpc"), data=bomb, headers={
                "Content-Type": "application/json", "Content-Encoding": "gzip"}) as answer:
            assert answer.status == 415, answer.status
            error = (await answer.json())["error"]
        assert error["message"] == ("Invalid request: the body is sent with Content-Encoding "
                                    "'gzip'; bodies are read as sent (identity) only")
        # The body aiohttp reads on after the answer is not inflated either: the platform
        # answers at once.
        async with stranger.get(served.url("/api/games-hosted")) as answer:
            assert answer.status == 200


async def test_wrong_tokens_slow_their_sender_down(serve: Serve) -> None:
    served = await serve(auth_failure_burst=3, auth_failure_interval=30.0)
    params = {"botname": "guess", "botversion": "1", "game": "TICTACTOE",
              "rpcendpoint": "http://127.0.0.1:9/rpc"}

    async def call(client: aiohttp.ClientSession, token: str) -> tuple[int, dict[str, Any],
                                                                       str | None]:
        body = {"jsonrpc": "2.0", "method": "RegistrationService.Register", "id": 1,
                "params": {**params, "token": token}}
        async with client.post(served.url("/rpc"), json=body) as response:
            return response.status, await response.json(), response.headers.get("Retry-After")

    async with session() as stranger:
        for guess in range(3):
            status, reply, _ = await call(stranger, f"guess-{guess}")
            assert (status, reply["error"]["code"]) == (200, jsonrpc.UNKNOWN_TOKEN)
        # Now even the right token is refused unread: trying tells the stranger nothing.
        status, reply, retry = await call(stranger, served.token)
        assert (status, reply["error"]["code"], retry) == (429, jsonrpc.RATE_LIMITED, "30")
        assert "too many wrong tokens" in reply["error"]["message"]
        async with stranger.get(served.url("/api/bots/1/log"),
                                headers={"Authorization": "Bearer x"}) as log:
            assert (log.status, log.headers.get("Retry-After")) == (429, "30")
        async with stranger.get(served.url("/api/bots")) as public:
            assert public.status == 200  # what needs no token is served as usual
    async with session("127.0.0.1") as owner:
        status, reply, _ = await call(owner, served.token)
        assert status == 200 and "result" in reply, reply


async def test_a_client_holds_its_share_of_live_streams_and_frees_it_on_leaving(
        serve: Serve) -> None:
    served = await serve(max_streams_per_client=2)
    streams = served.platform.guard.streams
    async with session() as first, session() as second, session() as third:
        one = await first.get(served.url("/api/live"))
        two = await second.get(served.url("/api/live"))
        assert (one.status, two.status) == (200, 200)
        async with third.get(served.url("/api/live")) as refused:
            assert (refused.status, refused.headers["Retry-After"]) == (429, "5")
            assert "holds 2 live streams" in (await refused.json())["error"]
        async with session("127.0.0.1") as other, other.get(served.url("/api/live")) as own:
            assert own.status == 200  # another client has a share of its own
            await own.content.readuntil(b"\n\n")
        assert streams.held(STRANGER) == 2
        one.close()  # the client goes away: its place is free at once, not at a heartbeat
        await until(lambda: streams.held(STRANGER) == 1, within=2.0)
        async with third.get(served.url("/api/live")) as again:
            assert again.status == 200
            await again.content.readuntil(b"\n\n")
        two.close()

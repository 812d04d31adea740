"""The bot client's wire runs each of its tests on asyncio's loop and on uvloop (the loop
of merknera serve): their transports differ in what they raise and when they call back.
``serve`` starts the scripted servers they call."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

import pytest
import uvloop

from tests.http1.support import Script, Server


def pytest_asyncio_loop_factories(
        config: pytest.Config,
        item: pytest.Item) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Awaitable[Server]]]:
    """Start TCP servers that run a script per connection (closed after the test)."""
    servers: list[asyncio.Server] = []

    async def start(script: Script, tls: ssl.SSLContext | None = None) -> Server:
        found = Server(0)

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            found.connections += 1
            found.open_now += 1
            found.most_open = max(found.most_open, found.open_now)
            try:
                await script(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                found.open_now -= 1
                writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls)
        servers.append(server)
        found.port = server.sockets[0].getsockname()[1]
        return found

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()

"""The platform behind a trusted reverse proxy: real sockets on loopback.

The proxy here is the test itself, connecting from 127.0.0.1 (``trusted_proxies``) and
naming its clients in ``X-Forwarded-For`` as a proxy does; strangers connect from
127.0.0.2 and up, which are no proxy, whatever headers they send.
"""

from __future__ import annotations

import asyncio
import logging
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

PROXY = "127.0.0.1"
STRANGER = "127.0.0.2"
PATIENCE = 10.0


class Served:
    """A platform serving on a real socket behind the proxy, with alice's token."""

    def __init__(self, config: Config, platform: Platform, token: str) -> None:
        self.config, self.platform, self.token = config, platform, token

    def url(self, path: str) -> str:
        return f"{self.config.listeners.base_url}{path}"

    async def connect(self, source: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", self.config.listeners.port,
                                             local_addr=(source, 0))


Serve = Callable[..., Awaitable[Served]]


@pytest.fixture
async def serve(config: Config) -> AsyncIterator[Serve]:
    """``await serve(**config changes)``: the platform served by ``merknera.server.running``
    with 127.0.0.1 for its trusted proxy."""
    async with AsyncExitStack() as stack:
        async def start(**changes: Any) -> Served:
            changed = config.replace(port=0, trusted_proxies=f"{PROXY}/32", **changes)
            live, platform = await stack.enter_async_context(running(changed))
            _, token = await users.create_user(platform.db, "alice")
            return Served(live, platform, token)

        yield start


def session(source: str) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(source, 0)),
                                 timeout=aiohttp.ClientTimeout(total=PATIENCE))


def of(client: str) -> dict[str, str]:
    """The header the proxy names ``client`` in, as nginx writes it (after whatever the
    client sent)."""
    return {"X-Forwarded-For": client}


async def status(client: aiohttp.ClientSession, url: str, **headers: str) -> int:
    async with client.get(url, headers={k.replace("_", "-"): v for k, v in headers.items()}
                          ) as answer:
        await answer.read()
        return answer.status


async def test_the_request_rate_counts_the_client_the_proxy_names(serve: Serve) -> None:
    served = await serve(request_burst=3, request_rate=0.01)
    url = served.url("/api/games-hosted")
    async with session(PROXY) as proxy, session(STRANGER) as stranger:
        assert [await status(proxy, url, **of("192.0.2.1")) for _ in range(4)] == [
            200, 200, 200, 429]
        # Another client behind the same proxy, and the proxy's own requests, go on.
        assert await status(proxy, url, **of("192.0.2.2")) == 200
        assert await status(proxy, url, **of("198.51.100.7, 192.0.2.3")) == 200
        assert await status(proxy, url) == 200
        # The client spoofing an address left of its own is still itself.
        assert await status(proxy, url, **of("192.0.2.2, 192.0.2.1")) == 429
        # A stranger's forwarding headers are ignored: it is not the client it names.
        assert await status(stranger, url, **of("192.0.2.1")) == 200
        assert await status(stranger, url, Forwarded="for=192.0.2.1") == 200
        # A header the proxy passed on that cannot be read counts as the proxy's own.
        for _ in range(2):
            assert await status(proxy, url, **of("192.0.2.9, not-an-address")) == 200
        assert await status(proxy, url, **of("a" * 300)) == 429
        assert await status(proxy, url) == 429
        assert await status(proxy, url, **of("192.0.2.9")) == 200
    refused = served.platform.guard.requests
    assert refused.take("192.0.2.1") > 0 and refused.take("192.0.2.4") == 0


async def test_wrong_tokens_slow_down_only_the_client_that_sent_them(serve: Serve) -> None:
    served = await serve(auth_failure_burst=2, auth_failure_interval=30.0)

    async def register(client: aiohttp.ClientSession, token: str,
                       headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        body = {"jsonrpc": "2.0", "method": "RegistrationService.Register", "id": 1,
                "params": {"botname": "guess", "botversion": "1", "game": "TICTACTOE",
                           "rpcendpoint": "http://127.0.0.1:9/rpc", "token": token}}
        async with client.post(served.url("/rpc"), json=body, headers=headers) as response:
            return response.status, await response.json()

    async with session(PROXY) as proxy:
        for guess in range(2):
            status_code, reply = await register(proxy, f"guess-{guess}", of("192.0.2.66"))
            assert reply["error"]["code"] == jsonrpc.UNKNOWN_TOKEN
        status_code, reply = await register(proxy, served.token, of("192.0.2.66"))
        assert (status_code, reply["error"]["code"]) == (429, jsonrpc.RATE_LIMITED)
        # alice, behind the same proxy, is not locked out with the guesser.
        status_code, reply = await register(proxy, served.token, of("192.0.2.10"))
        assert status_code == 200 and "result" in reply, reply


async def test_a_proxy_s_connections_are_not_capped_as_one_client_s(serve: Serve) -> None:
    served = await serve(max_connections_per_client=2)
    held = [await served.connect(PROXY) for _ in range(5)]
    for number, (reader, writer) in enumerate(held):
        writer.write(f"GET /api/games-hosted HTTP/1.1\r\nHost: x\r\n"
                     f"X-Forwarded-For: 192.0.2.{number}\r\n\r\n".encode())
        async with asyncio.timeout(PATIENCE):
            assert (await reader.readline()).startswith(b"HTTP/1.1 200 ")
    assert served.platform.guard.connections.open_from(PROXY) == 5
    # A stranger's third connection is refused as before, whatever it claims.
    strangers = [await served.connect(STRANGER) for _ in range(3)]
    async with asyncio.timeout(PATIENCE):
        refused = await strangers[2][0].read()
    assert refused.startswith(b"HTTP/1.1 429 Too Many Requests")
    for _, writer in [*held, *strangers]:
        writer.close()


async def test_live_streams_are_held_by_the_client_the_proxy_names(serve: Serve) -> None:
    served = await serve(max_streams_per_client=1)
    streams = served.platform.guard.streams
    async with session(PROXY) as proxy:
        first = await proxy.get(served.url("/api/live"), headers=of("192.0.2.1"))
        assert first.status == 200
        await first.content.readuntil(b"\n\n")
        async with proxy.get(served.url("/api/live"), headers=of("192.0.2.1")) as refused:
            assert refused.status == 429
        async with proxy.get(served.url("/api/live"), headers=of("192.0.2.2")) as other:
            assert other.status == 200
            await other.content.readuntil(b"\n\n")
            assert (streams.held("192.0.2.1"), streams.held("192.0.2.2")) == (1, 1)
        first.close()
        await until(lambda: streams.held("192.0.2.1") == 0, within=PATIENCE)


async def test_the_client_s_scheme_address_and_metrics_access(
        serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    served = await serve(log_access=True)
    host = f"arena.example:{served.config.listeners.port}"
    with caplog.at_level(logging.INFO, logger="merknera.access"):
        async with session(PROXY) as proxy, session(STRANGER) as stranger:
            # The proxy ended the client's TLS: links are made for https.
            async with proxy.get(served.url("/protocol"), headers={
                    **of("192.0.2.1"), "X-Forwarded-Proto": "https", "Host": host}) as page:
                assert f"https://{host}/rpc" in await page.text()
            async with stranger.get(served.url("/protocol"), headers={
                    **of("192.0.2.1"), "X-Forwarded-Proto": "https", "Host": host}) as page:
                assert f"http://{host}/rpc" in await page.text()
            # metrics_networks (loopback) is the client's network, not the proxy's.
            assert await status(proxy, served.url("/metrics"), **of("192.0.2.1")) == 403
            assert await status(proxy, served.url("/metrics"), **of("127.0.0.9")) == 200
            # A request the proxy does not say whose it is has no address to be allowed by.
            assert await status(proxy, served.url("/metrics")) == 403
    lines = [(record.remote_address, record.first_request_line)  # type: ignore[attr-defined]
             for record in caplog.records if record.name == "merknera.access"]
    assert lines == [("192.0.2.1", "GET /protocol HTTP/1.1"),
                     (STRANGER, "GET /protocol HTTP/1.1"),
                     ("192.0.2.1", "GET /metrics HTTP/1.1"),
                     ("127.0.0.9", "GET /metrics HTTP/1.1"),
                     (PROXY, "GET /metrics HTTP/1.1")]
    assert caplog.records[0].getMessage().startswith('192.0.2.1 "GET /protocol HTTP/1.1" 200 ')


async def test_the_forwarded_header_when_the_proxy_writes_that(serve: Serve) -> None:
    served = await serve(proxy_header="Forwarded", request_burst=1, request_rate=0.01)
    url = served.url("/api/games-hosted")
    async with session(PROXY) as proxy:
        assert await status(proxy, url, Forwarded='for="[2001:db8::1]:80";proto=https') == 200
        # One client: an IPv6 host by its /64.
        assert await status(proxy, url, Forwarded="for=\"[2001:db8::2]\"") == 429
        assert await status(proxy, url, Forwarded="for=192.0.2.1") == 200
        # X-Forwarded-For is what a client may have written: not read.
        assert await status(proxy, url, **of("192.0.2.77")) == 200
        assert await status(proxy, url, **of("192.0.2.78")) == 429

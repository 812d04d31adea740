"""Two nodes on one PostgreSQL database behind a real nginx that ends TLS: every
per-client limit counts the client nginx names, and nobody else's forwarding headers are
believed.

The nodes are real ``merknera serve`` processes trusting 127.0.0.1, where nginx connects
from; the clients connect from addresses of their own on loopback (127.0.0.2 and up), to
nginx (which adds their address to ``X-Forwarded-For``) or, the stranger, to a node
straight.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import aiohttp

from tests.e2e.harness import E2E, LISTENING, PLATFORM_OPTIONS, PlatformProcess
from tests.support import until
from tests.support.nginx import UPSTREAM_ADDRESS, running_proxy
from tests.support.postgres import Cluster
from tests.support.tls import throwaway_ca, trusting

BURST = 5
"""Requests a client may send in a row to each node (and hardly one more during the test)."""
LIMITS = {"trusted-proxies": f"{UPSTREAM_ADDRESS}/32", "request-burst": str(BURST),
          "request-rate": "0.01", "max-streams-per-client": "1",
          "max-connections-per-client": "2", "log-access": "true", "log-format": "json"}


async def start_node(e2e: E2E, url: str, label: str) -> PlatformProcess:
    args = ["-m", "merknera", "serve", "--db", url, "--host", "127.0.0.1", "--port", "0"]
    for key, value in {**PLATFORM_OPTIONS, **LIMITS}.items():
        args += [f"--{key}", value]
    child = await e2e.processes.start(label, *args)
    match = await e2e.processes.first_line(child, LISTENING)
    return PlatformProcess(child, match.group(1))


@asynccontextmanager
async def client_at(address: str, tls: ssl.SSLContext) -> AsyncIterator[aiohttp.ClientSession]:
    """A client whose connections come from ``address``, trusting ``tls``'s authorities."""
    connector = aiohttp.TCPConnector(local_addr=(address, 0), ssl=tls)
    async with aiohttp.ClientSession(connector=connector,
                                     timeout=aiohttp.ClientTimeout(total=20)) as session:
        yield session


async def statuses(client: aiohttp.ClientSession, url: str, times: int,
                   headers: dict[str, str] | None = None) -> list[int]:
    found = []
    for _ in range(times):
        async with client.get(url, headers=headers) as answer:
            await answer.read()
            found.append(answer.status)
    return found


async def test_per_client_limits_follow_the_address_nginx_forwards(
        e2e: E2E, postgres: Cluster) -> None:
    url = postgres.new_database()
    nodes = [await start_node(e2e, url, f"node{number}") for number in range(2)]
    e2e.platform = nodes[0]
    ca, cert, key = throwaway_ca(e2e.tmp_path)
    upstreams = [node.url.removeprefix("http://") for node in nodes]
    with running_proxy(e2e.tmp_path / "nginx", upstreams, cert, key) as proxy:
        tls = trusting(ca)
        hosted = f"{proxy.url()}/api/games-hosted"
        async with AsyncExitStack() as stack:
            first, second, spoofer, stranger = [
                await stack.enter_async_context(client_at(address, tls))
                for address in ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5")]
            # One client's requests beyond its burst on both nodes are refused...
            seen = await statuses(first, hosted, 2 * BURST + 2)
            assert set(seen) <= {200, 429} and seen.count(429) >= 2, seen
            # ...not another's, behind the same nginx.
            assert await statuses(second, hosted, 4) == [200] * 4
            # A client that names the first in its own X-Forwarded-For is still itself:
            # nginx adds its real address on the right.
            spoofed = {"X-Forwarded-For": "127.0.0.2", "X-Forwarded-Proto": "http"}
            assert await statuses(spoofer, hosted, 4, spoofed) == [200] * 4
            # A stranger straight at a node is not a trusted proxy: its headers are ignored.
            assert await statuses(stranger, f"{nodes[0].url}/api/games-hosted", 4,
                                  spoofed) == [200] * 4
            async with stranger.get(f"{nodes[0].url}/protocol", headers={
                    "X-Forwarded-Proto": "https"}) as page:
                assert f"{nodes[0].url}/rpc" in await page.text()
            # nginx ended the client's TLS: the node makes its links for https.
            async with second.get(f"{proxy.url()}/protocol") as page:
                assert f"{proxy.url()}/rpc" in await page.text()

            # Live streams are held per client (one each here) on each node, and the
            # nodes take more connections from nginx than one client may hold (2).
            watchers = [await stack.enter_async_context(client_at(f"127.0.0.{10 + n}", tls))
                        for n in range(6)]
            streams = [await watcher.get(f"{proxy.url()}/api/live") for watcher in watchers]
            assert [stream.status for stream in streams] == [200] * 6
            for stream in streams:
                async with asyncio.timeout(20):
                    await stream.content.readuntil(b"\n\n")
            # A seventh client's three streams: at most one on each of the two nodes.
            greedy = await stack.enter_async_context(client_at("127.0.0.20", tls))
            more = [await greedy.get(f"{proxy.url()}/api/live") for _ in range(3)]
            assert sorted(stream.status for stream in more)[-1] == 429, more
            assert [stream.status for stream in more].count(200) <= 2
            for stream in [*streams, *more]:
                stream.close()

    # Each node's access log names the clients nginx named, never nginx itself.  A stream's
    # line is written when its node notices that it ended, at its next write.
    def logged() -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for child in e2e.processes.children:
            for line in child.stderr_path.read_text("utf-8").splitlines():
                entry = json.loads(line)
                if entry["logger"] == "merknera.access":
                    found.setdefault(entry["first_request_line"].split()[1], set()).add(
                        entry["remote_address"])
        return found

    watched = {*(f"127.0.0.{10 + n}" for n in range(6)), "127.0.0.20"}
    with contextlib.suppress(TimeoutError):
        await until(lambda: logged().get("/api/live") == watched, within=60, every=0.2)
    assert logged()["/api/games-hosted"] == {"127.0.0.2", "127.0.0.3", "127.0.0.4",
                                             "127.0.0.5"}, logged()
    assert logged()["/api/live"] == watched

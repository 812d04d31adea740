"""``merknera serve`` (on its own event loop, uvloop) with TLS on every listener from one
certificate and key of a throwaway authority: the URLs it prints are ``https://``, each
listener answers over TLS only, and Battlebot's clients of both protocols play over it."""

from __future__ import annotations

import asyncio
import re

import aiohttp

from tests.e2e.harness import E2E, START_PATIENCE
from tests.support import free_port
from tests.support.battlebot import finish, run_clients, start_client
from tests.support.tls import throwaway_ca, trusting

PRINTED = re.compile(r"^(Battlebot|Hexagons|Kalaha) listener on (https?://\S+)$")
PAGES = {"Battlebot": "/openapi.json", "Hexagons": "/", "Kalaha": "/api/openapi.json"}
"""What each gateway's listener is asked over TLS."""


async def test_every_listener_of_a_served_platform_speaks_tls(e2e: E2E) -> None:
    ca, cert, key = throwaway_ca(e2e.tmp_path)
    platform = await e2e.start_platform(
        tls_cert=str(cert), tls_key=str(key), battlebot_port=str(free_port()),
        hexagons_port=str(free_port()), kalaha_port=str(free_port()))
    assert platform.url.startswith("https://127.0.0.1:"), platform.url
    stdout = platform.child.process.stdout
    assert stdout is not None
    printed = {}
    for _ in range(3):
        line = (await asyncio.wait_for(stdout.readline(), START_PATIENCE)).decode().strip()
        found = PRINTED.match(line)
        assert found is not None, line
        printed[found.group(1)] = found.group(2)
    assert all(url.startswith("https://127.0.0.1:") for url in printed.values()), printed
    urls = {"main": f"{platform.url}/api/games-hosted", **{
        name: url.removesuffix("/api/boards") + PAGES[name]
        for name, url in printed.items()}}
    connector = aiohttp.TCPConnector(ssl=trusting(ca))
    async with aiohttp.ClientSession(connector=connector) as client:
        for name, url in urls.items():
            async with client.get(url.replace("127.0.0.1", "localhost")) as answer:
                assert answer.status == 200, (name, answer.status)
                assert answer.url.scheme == "https"
    async with aiohttp.ClientSession() as plain:
        for name, url in urls.items():
            try:
                async with plain.get(url.replace("https://", "http://")) as answer:
                    refused = f"HTTP {answer.status}"
            except aiohttp.ClientError:
                refused = ""
            assert not refused, (name, refused)

    # Battlebot's clients of both protocols play over TLS, trusting the authority only.
    secure = printed["Battlebot"].replace("127.0.0.1", "localhost")
    runs = await run_clients(e2e, secure, [
        ("tls-a", {"era": "a", "extra": ["--cafile", str(ca)]}),
        ("tls-c", {"era": "c", "extra": ["--cafile", str(ca)]})])
    assert [run.code for run in runs.values()] == [0, 0]
    assert {run.results[0]["reason"] for run in runs.values()} == {"complete"}
    untrusting = await finish(await start_client(e2e, secure, "no-ca"), "no-ca")
    assert untrusting.code != 0 and not untrusting.of("registered")

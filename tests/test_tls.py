"""TLS on every listener from one certificate and key (``tls_cert``, ``tls_key``), with a
throwaway certificate authority: real sockets on loopback."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from merknera.app import Platform
from merknera.config import Config
from merknera.server import battlebot_url, running
from merknera.tls import TlsError
from tests.support import free_port, until
from tests.support.tls import throwaway_ca, trusting

STRANGER = "127.0.0.2"
PATIENCE = 10.0
LISTENERS = ("port", "battlebot_port", "hexagons_port", "kalaha_port")
PATHS = {"port": "/api/games-hosted", "battlebot_port": "/openapi.json",
         "hexagons_port": "/", "kalaha_port": "/api/openapi.json"}
"""A page each listener answers 200 to."""


def authority(tmp_path: Path, name: str) -> tuple[Path, Path, Path]:
    directory = tmp_path / name
    directory.mkdir()
    return throwaway_ca(directory)


@asynccontextmanager
async def served(config: Config, **changes: Any) -> AsyncIterator[tuple[Config, Platform]]:
    """The platform with every listener on a free port."""
    ports: dict[str, Any] = {key: free_port() for key in LISTENERS[1:]}
    async with running(config.replace(port=0, **ports, **changes)) as live:
        yield live


def session(tls: ssl.SSLContext | bool, source: str = "127.0.0.1") -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(ssl=tls, local_addr=(source, 0)),
        timeout=aiohttp.ClientTimeout(total=PATIENCE))


def port_of(live: Config, key: str) -> int:
    return {"port": live.listeners.port, "battlebot_port": live.battlebot.port,
            "hexagons_port": live.hexagons.port, "kalaha_port": live.kalaha.port}[key]


async def test_every_listener_speaks_tls_with_the_one_certificate(
        config: Config, tmp_path: Path) -> None:
    ca, cert, key = authority(tmp_path, "ca")
    async with served(config, tls_cert=str(cert), tls_key=str(key)) as (live, _):
        assert live.listeners.base_url == f"https://127.0.0.1:{live.listeners.port}"
        assert battlebot_url(live) == f"https://127.0.0.1:{live.battlebot.port}"
        assert live.listeners.url(live.kalaha.port).startswith("https://")
        async with session(trusting(ca)) as client, session(True) as untrusting, \
                session(False) as plain:
            for name in LISTENERS:
                port = port_of(live, name)
                async with client.get(f"https://localhost:{port}{PATHS[name]}") as answer:
                    assert answer.status == 200, (name, await answer.text())
                # Not without the authority, and not in plain HTTP.
                with pytest.raises(aiohttp.ClientConnectorCertificateError):
                    await untrusting.get(f"https://localhost:{port}{PATHS[name]}")
                with pytest.raises(aiohttp.ClientError):
                    await plain.get(f"http://127.0.0.1:{port}{PATHS[name]}")
            # The play page points the browser at the Kalaha listener over TLS.
            async with client.get(f"https://localhost:{live.listeners.port}/play") as page:
                assert f"connect-src 'self' https://localhost:{live.kalaha.port}" in \
                    page.headers["Content-Security-Policy"]


async def test_the_battlebot_listener_may_have_a_certificate_of_its_own(
        config: Config, tmp_path: Path) -> None:
    ca, cert, key = authority(tmp_path, "main")
    own_ca, own_cert, own_key = authority(tmp_path, "battlebot")
    async with served(config, tls_cert=str(cert), tls_key=str(key),
                      battlebot_tls_cert=str(own_cert), battlebot_tls_key=str(own_key)
                      ) as (live, _), session(trusting(ca)) as main, \
            session(trusting(own_ca)) as own:
        url = f"https://localhost:{live.battlebot.port}/openapi.json"
        async with own.get(url) as answer:
            assert answer.status == 200
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await main.get(url)
        async with main.get(f"https://localhost:{live.hexagons.port}/") as answer:
            assert answer.status == 200
    # The Battlebot listener alone over TLS, as before there was tls_cert.
    async with served(config, battlebot_tls_cert=str(own_cert), battlebot_tls_key=str(own_key)
                      ) as (live, _):
        assert live.listeners.base_url.startswith("http://")
        assert battlebot_url(live).startswith("https://")
        async with session(trusting(own_ca)) as own, session(False) as plain:
            async with own.get(f"https://localhost:{live.battlebot.port}/openapi.json"
                               ) as answer:
                assert answer.status == 200
            async with plain.get(f"http://127.0.0.1:{live.hexagons.port}/") as answer:
                assert answer.status == 200


async def test_a_connection_counts_from_before_its_handshake(
        config: Config, tmp_path: Path) -> None:
    ca, cert, key = authority(tmp_path, "ca")
    async with served(config, tls_cert=str(cert), tls_key=str(key), idle_timeout=0.5,
                      max_connections_per_client=2) as (live, platform):
        connections = platform.guard.connections
        port = live.listeners.port
        silent = [await asyncio.open_connection("127.0.0.1", port, local_addr=(STRANGER, 0))
                  for _ in range(3)]
        # The third is closed at once: the two that never start their handshake hold the
        # stranger's share...
        async with asyncio.timeout(PATIENCE):
            assert await silent[2][0].read() == b""
        assert connections.open_from(STRANGER) == 2
        # ...until the handshake's time (idle_timeout) is up.
        async with asyncio.timeout(PATIENCE):
            assert [await reader.read() for reader, _ in silent[:2]] == [b"", b""]
        await until(lambda: connections.open_from(STRANGER) == 0, within=PATIENCE)
        for _, writer in silent:
            writer.close()
        # One that leaves in the middle of its handshake gives its place back too.
        _, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(STRANGER, 0))
        await until(lambda: connections.open_from(STRANGER) == 1, within=PATIENCE)
        writer.write(b"\x16\x03\x01\x00\x05")  # the start of a ClientHello
        writer.close()
        await until(lambda: connections.open_from(STRANGER) == 0, within=PATIENCE)
        # And those that speak TLS are served meanwhile.
        async with session(trusting(ca), STRANGER) as client, client.get(
                f"https://localhost:{port}/api/games-hosted") as answer:
            assert answer.status == 200
        await until(lambda: connections.open == 0, within=PATIENCE)
        # A handshake under way when the listener stops is cut short.
        last = await asyncio.open_connection("127.0.0.1", port, local_addr=(STRANGER, 0))
        await until(lambda: connections.open == 1, within=PATIENCE)
    assert connections.open == 0
    last[1].close()


async def test_a_certificate_that_cannot_be_served_stops_the_start(
        config: Config, tmp_path: Path) -> None:
    _, cert, _ = authority(tmp_path, "ca")
    _, _, other_key = authority(tmp_path, "other")
    with pytest.raises(TlsError, match=f"cannot serve TLS with the certificate {cert} and "
                                       f"the key {other_key}: .*KEY_VALUES_MISMATCH"):
        async with served(config, tls_cert=str(cert), tls_key=str(other_key)):
            pass
    missing = tmp_path / "missing.pem"
    with pytest.raises(TlsError, match="No such file or directory"):
        async with served(config, battlebot_tls_cert=str(missing),
                          battlebot_tls_key=str(missing)):
            pass

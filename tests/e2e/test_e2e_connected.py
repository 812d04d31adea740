"""Bots that connect out to ``merknera serve``: over TLS (wss://), and within the
listener's per-client connection cap."""

from __future__ import annotations

import re

import aiohttp
import pytest

from tests.e2e.harness import ADMIN_TOKEN, E2E
from tests.support import until
from tests.support.socket_bot import SocketBot
from tests.support.tls import throwaway_ca, trusting


async def test_connected_bots_play_over_wss(e2e: E2E) -> None:
    ca, cert, key = throwaway_ca(e2e.tmp_path)
    platform = await e2e.start_platform(tls_cert=str(cert), tls_key=str(key))
    token = await e2e.add_user("alice")
    url = platform.url.replace("https://127.0.0.1", "wss://localhost") + "/rpc/ws"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=trusting(ca))) as tls:
        bots = [SocketBot(tls, token, f"secure-{n}", url=url) for n in range(2)]
        for bot in bots:
            reply = await bot.connect()
            assert "result" in reply, reply
        # The harness's client does not trust the throwaway authority: the store is read.
        await until(lambda: [tuple(row) for row in e2e.read_db(
            "SELECT status, reason FROM games")] == [("FINISHED", "NORMAL")] * 2, within=60)
    assert all(len(bot.methods(".NextMove")) >= 4 for bot in bots)
    async with aiohttp.ClientSession() as plain:
        try:
            async with plain.ws_connect(url.replace("wss://", "ws://")):
                refused = False
        except aiohttp.ClientError:
            refused = True
    assert refused


async def test_sockets_count_against_the_clients_connections(e2e: E2E) -> None:
    platform = await e2e.start_platform(max_connections_per_client="3")
    token = await e2e.add_user("alice")
    url = platform.url + "/rpc/ws"

    def from_address(address: str) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(local_addr=(address, 0), force_close=True))

    async with from_address("127.0.0.5") as crowded, from_address("127.0.0.6") as other:
        held = [SocketBot(crowded, token, f"held-{n}", url=url) for n in range(3)]
        for bot in held:
            assert "result" in await bot.connect()
        fourth = SocketBot(crowded, token, "held-3", url=url)
        with pytest.raises(aiohttp.ClientError):
            await fourth.connect()
        async with e2e.session.get(f"{platform.url}/metrics", headers={
                "Authorization": f"Bearer {ADMIN_TOKEN}"}) as answer:
            metrics = await answer.text()
        found = re.search(r'merknera_refusals_total\{limit="connections_per_client"\} (\S+)',
                          metrics)
        assert found is not None and float(found.group(1)) >= 1, metrics
        # Another client is not held up by this one's cap.
        assert "result" in await SocketBot(other, token, "elsewhere", url=url).connect()
        for bot in held:
            await bot.drop()

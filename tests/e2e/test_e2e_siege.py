"""The platform under a connection flood, as real processes: ``merknera serve`` with the
common open-files limit of 1,024, reference bots playing, and 1,100 sockets that send a
request line (or their headers a byte at a time) and wait.

Others must be served all along, every game must end as its bots played it, and the log
must not drown: measured before the listener was guarded, the same flood timed out every
other client, ended running games UNREACHABLE as the bots' forfeits, and wrote 19 MB of
tracebacks in 14 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource

import aiohttp

from tests.e2e.harness import E2E

IDLE = 1100
"""Sockets that send ``GET / HTTP/1.1`` and nothing more."""
SLOW = 50
"""Sockets that send their headers a byte every half second (from another address)."""


Socket = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def flood(port: int, source: str, count: int) -> list[Socket]:
    async def one() -> Socket | None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                           local_addr=(source, 0))
        except OSError:
            return None
        writer.write(b"GET / HTTP/1.1\r\n")
        return reader, writer

    opened = await asyncio.gather(*(one() for _ in range(count)))
    return [socket for socket in opened if socket is not None]


async def trickle(port: int, source: str) -> None:
    """A slowloris: headers a byte at a time, never finished."""
    with contextlib.suppress(OSError):
        reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                       local_addr=(source, 0))
        try:
            for byte in b"GET / HTTP/1.1\r\nHost: merknera\r\nX-Slow: " + b"x" * 1000:
                if reader.at_eof() or writer.is_closing():
                    return
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.5)
        finally:
            writer.close()


async def test_a_flood_of_idle_sockets_starves_nobody(e2e: E2E) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard >= 2 * IDLE, f"the test needs {2 * IDLE} descriptors; the hard limit is {hard}"
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        await siege(e2e)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def siege(e2e: E2E) -> None:
    token = await e2e.add_user("alice")
    platform = await e2e.start_platform(open_files=1024, idle_timeout="2")
    port = int(platform.url.rsplit(":", 1)[1])
    await e2e.start_bots(token, [("perfect", "Polly", 0.05), ("random", "Rita", 0.05),
                                 ("perfect", "Pete", 0.05)])
    attackers = await flood(port, "127.0.0.2", IDLE)
    slow = [asyncio.create_task(trickle(port, "127.0.0.3")) for _ in range(SLOW)]
    assert len(attackers) == IDLE
    try:
        # Others are served while the flood holds on (e2e.get requires a 200 within the
        # session's 10 s), and a new bot registers and plays too.
        newcomer = asyncio.create_task(e2e.start_bot("random", "Newcomer", token, delay=0.05))
        for _ in range(30):
            assert len((await e2e.get("/api/bots"))["bots"]) >= 3
            await asyncio.sleep(0.1)
        await newcomer
        # Every socket of the flood is let go: refused at once beyond its address's share
        # (a 429, or a reset when the request line it sent was left unread), closed after
        # idle_timeout within it.
        async with asyncio.timeout(10.0):
            for reader, _ in attackers:
                with contextlib.suppress(ConnectionResetError):
                    await reader.read()
    finally:
        for _, writer in attackers:
            writer.close()
        for task in slow:
            task.cancel()
        await asyncio.gather(*slow, return_exceptions=True)
    games = await e2e.wait_all_finished(4 * 3)  # round robin of four bots, both seatings
    assert {(game["outcome"] in ("WIN", "DRAW"), game["reason"]) for game in games} == {
        (True, "NORMAL")}
    log = platform.child.stderr_tail(200_000)
    assert "Too many open files" not in log
    assert len(log.splitlines()) < 100, log[-3000:]
    # The platform kept serving at the end too.
    async with aiohttp.ClientSession() as session, session.get(platform.url + "/") as page:
        assert page.status == 200

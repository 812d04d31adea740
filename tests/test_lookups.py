"""Host name lookups on threads of their own: one lookup per name in flight, a slow name
holding only its own callers, a caller's time limit ending only its own wait.

The system resolver is asked for real names where the answer is fixed (localhost, an
address literal); a name server that does not answer cannot be arranged on this machine,
so the slow names are a lookup function that blocks until the test lets it go.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import subprocess
import sys
import threading
from collections import Counter

import pytest

from merknera.config import Config
from merknera.endpoints import Resolver
from merknera.lookups import AddrInfo, Lookups
from tests.support import until


class Held:
    """A lookup function: ``slow.test`` blocks until :attr:`release` is set, ``gone.test``
    does not resolve, every other name resolves to 10.0.0.1."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls: Counter[str] = Counter()

    def __call__(self, host: str, port: int, family: int, flags: int) -> list[AddrInfo]:
        self.calls[host] += 1
        if host == "slow.test":
            self.release.wait(10)
        if host == "gone.test":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.1", port))]


async def test_the_system_resolver_answers_for_real_names() -> None:
    lookups = Lookups()
    found = await lookups.getaddrinfo("localhost", 8080)
    assert {address[0] for *_, address in found} <= {"127.0.0.1", "::1"}
    assert {address[1] for *_, address in found} == {8080}
    loopback = Resolver(Config().calls.networks, lookups)
    assert {host for host, _ in await loopback.resolve("localhost", 8080)} <= {"127.0.0.1", "::1"}
    assert await loopback.resolve("127.0.0.1", 9) == [("127.0.0.1", socket.AF_INET)]
    with pytest.raises(OSError):
        await lookups.getaddrinfo("no-such-host.invalid", 80)


async def test_a_slow_name_is_looked_up_once_and_holds_no_other_name() -> None:
    held = Held()
    lookups = Lookups(threads=2, lookup=held)
    waiting = [asyncio.create_task(lookups.getaddrinfo("slow.test", 80)) for _ in range(5)]
    await until(lambda: held.calls["slow.test"] >= 1)  # a thread is held by the slow name
    # Five callers of one name hold one thread: another name is answered meanwhile.
    fast = await asyncio.wait_for(lookups.getaddrinfo("fast.test", 80), 2)
    assert fast[0][4] == ("10.0.0.1", 80)
    assert not any(task.done() for task in waiting)
    held.release.set()
    answers = await asyncio.gather(*waiting)
    assert all(answer == answers[0] for answer in answers)
    assert held.calls == Counter({"slow.test": 1, "fast.test": 1})


async def test_a_caller_that_gives_up_ends_only_its_own_wait() -> None:
    held = Held()
    lookups = Lookups(lookup=held)
    patient = asyncio.create_task(lookups.getaddrinfo("slow.test", 80))
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await lookups.getaddrinfo("slow.test", 80)
    held.release.set()
    assert (await patient)[0][4] == ("10.0.0.1", 80)
    assert held.calls["slow.test"] == 1


async def test_a_failed_lookup_reaches_every_caller_and_is_not_kept() -> None:
    held = Held()
    lookups = Lookups(lookup=held)
    failures = await asyncio.gather(*(lookups.getaddrinfo("gone.test", 80) for _ in range(3)),
                                    return_exceptions=True)
    assert all(isinstance(failure, socket.gaierror) for failure in failures)
    with pytest.raises(socket.gaierror):
        await lookups.getaddrinfo("gone.test", 80)
    assert held.calls["gone.test"] == 2  # once for the three at once, once for the last


async def test_the_resolver_keeps_a_link_local_address_s_scope() -> None:
    def lookup(host: str, port: int, family: int, flags: int) -> list[AddrInfo]:
        assert flags & socket.AI_ADDRCONFIG
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("fe80::1", port, 0, 3)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.1", port))]

    networks = (ipaddress.ip_network("fe80::/10"), ipaddress.ip_network("10.0.0.0/8"))
    found = await Resolver(networks, Lookups(lookup=lookup)).resolve("bot.test", 443)
    assert found == [("fe80::1%3", socket.AF_INET6), ("10.0.0.1", socket.AF_INET)]


def test_a_lookup_still_blocked_does_not_hold_up_the_exit() -> None:
    script = """
import asyncio, threading
from merknera.lookups import Lookups
never = threading.Event()
lookups = Lookups(lookup=lambda *_: never.wait() or [])
async def main():
    try:
        async with asyncio.timeout(0.1):
            await lookups.getaddrinfo("slow.test", 80)
    except TimeoutError:
        print("gave up")
asyncio.run(main())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "gave up")

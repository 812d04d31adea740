"""The event loop's helper threads run as batch threads (merknera.threads): waking one to
write, read or look up a name does not preempt the loop's thread, which holds the GIL the
helper would wait for."""

from __future__ import annotations

import os
import threading

import pytest

from merknera.lookups import AddrInfo, Lookups
from merknera.store import Database
from merknera.threads import as_helper


def _batch_allowed() -> bool:
    """Whether this machine lets a thread take SCHED_BATCH (Linux does, unless a sandbox
    forbids the call: then as_helper leaves threads as they are, and there is nothing to
    test)."""
    if not hasattr(os, "SCHED_BATCH"):
        return False
    allowed: list[bool] = []

    def attempt() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
            allowed.append(True)
        except OSError:
            allowed.append(False)

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    return allowed == [True]


def is_helper() -> bool:
    """Whether the calling thread runs as a helper (SCHED_BATCH)."""
    return os.sched_getscheduler(0) == os.SCHED_BATCH


pytestmark = pytest.mark.skipif(not _batch_allowed(),
                                reason="threads may not take SCHED_BATCH here")


def test_a_thread_marks_itself_and_nothing_else() -> None:
    seen: list[bool] = []

    def helper() -> None:
        as_helper()
        seen.append(is_helper())

    thread = threading.Thread(target=helper)
    thread.start()
    thread.join()
    assert seen == [True]
    assert not is_helper()  # this thread (pytest's) is left as it was


async def test_the_stores_connections_are_helpers(db: Database) -> None:
    assert await db.transaction(lambda _conn: is_helper())  # the writer
    assert all([await db.read(lambda _conn: is_helper()) for _ in range(4)])  # readers
    assert not is_helper()


async def test_lookups_run_on_helpers() -> None:
    helpers: list[bool] = []

    def lookup(host: str, port: int, family: int, flags: int) -> list[AddrInfo]:
        helpers.append(is_helper())
        return []

    lookups = Lookups(threads=2, lookup=lookup)
    await lookups.getaddrinfo("a.example", 80)
    await lookups.getaddrinfo("b.example", 80)
    assert helpers == [True, True]

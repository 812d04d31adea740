"""One node at a time runs the ladder, the tournaments and the pinger: the coordinator.

On PostgreSQL the coordinator is the node that holds a session advisory lock
(:data:`LOCK`) on a connection of its own; the server lets the lock go when that
connection ends: at once when the node's process ends, however it ends, and within about
15 s (TCP keepalives, :data:`SERVER_KEEPALIVES`) when its machine or network dies.
Another node takes it at its next try (every third of a lease).  A node that loses its
connection stops its duties at once.  On SQLite there is one node, which coordinates from
the start.

Every node keeps its bot directory in step with the store meanwhile, every third of a lease:
other nodes' registrations and the pinger's findings, and what the command line changed
beside a running node (``merknera bot disable|enable``, ``merknera user
suspend|unsuspend``), on PostgreSQL and SQLite alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from merknera.scheduler.leases import Leases
from merknera.scheduler.presence import Presence
from merknera.store import Database
from merknera.store.db import StoreUnavailableError

log = logging.getLogger(__name__)

LOCK = 0x6D726B63  # "mrkc"
"""The advisory lock of the coordinator."""

KEEPALIVES: dict[str, Any] = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2,
                               "keepalives_count": 3, "tcp_user_timeout": 15000}
"""This node's side of the coordinator's connection: a server gone quiet (a dead machine,
a cut network) ends it within about 15 s, and the node stops coordinating."""
SERVER_KEEPALIVES = ("SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; "
                     "SET tcp_keepalives_count = 3; SET tcp_user_timeout = 15000")
"""The server's side: a node gone quiet loses the lock within about 15 s (by default the
server would wait for its TCP keepalive, two hours), so another node takes over."""


@dataclass(frozen=True)
class Duty:
    """Something only the coordinator does: how to start it and how to stop it."""

    name: str
    start: Callable[[], None]
    stop: Callable[[], Awaitable[None]]


class Coordinator:
    """Takes the coordinator's lock when it is free and runs the duties while it holds it."""

    def __init__(self, db: Database, leases: Leases, presence: Presence,
                 duties: Sequence[Duty]) -> None:
        self._db = db
        self._leases = leases
        self._presence = presence
        self._duties = list(duties)
        self._task: asyncio.Task[None] | None = None

    @property
    def coordinating(self) -> bool:
        """Whether this node runs the duties now."""
        return self._leases.coordinator

    def start(self) -> None:
        """Coordinate now (SQLite), or start trying for the lock (PostgreSQL); and keep the
        bot directory in step with the store."""
        if not self._db.dialect.shared:
            self._take()
            self._task = asyncio.create_task(self._follow(), name="directory")
        else:
            self._task = asyncio.create_task(self._loop(), name="coordinator")

    async def stop(self) -> None:
        """Stop trying, and stop the duties (the lock goes with the connection)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        await self._resign()

    def _take(self) -> None:
        self._leases.coordinator = True
        for duty in self._duties:
            duty.start()
        log.info("node %s coordinates: %s", self._leases.node,
                 ", ".join(duty.name for duty in self._duties))

    async def _resign(self) -> None:
        if not self._leases.coordinator:
            return
        self._leases.coordinator = False
        for duty in reversed(self._duties):
            try:
                await duty.stop()
            except Exception:
                log.exception("could not stop %s", duty.name)

    async def _follow(self) -> None:
        """The one node of a SQLite file: refresh the directory every third of a lease."""
        every = self._leases.seconds / 3
        while True:
            await asyncio.sleep(every)
            try:
                await self._presence.refresh()
            except Exception:
                log.exception("could not refresh the bots from the store")

    async def _loop(self) -> None:
        """The nodes of a PostgreSQL database: hold the lock or try for it, every third of a
        lease."""
        import psycopg  # PostgreSQL's driver, an extra: only nodes on PostgreSQL get here

        every = self._leases.seconds / 3
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                        self._db.path, autocommit=True, connect_timeout=10,
                        **KEEPALIVES) as conn:
                    # The server must notice a dead node soon, or its lock outlives it.
                    await conn.execute(SERVER_KEEPALIVES)
                    while True:
                        async with asyncio.timeout(every):
                            if not self.coordinating:
                                cursor = await conn.execute(
                                    "SELECT pg_try_advisory_lock(%s)", (LOCK,))
                                row = await cursor.fetchone()
                                if row is not None and row[0]:
                                    self._take()
                                    await self._leases.announce()
                            else:  # the lock lives while this connection does
                                await conn.execute("SELECT 1")
                        try:
                            await self._presence.refresh()
                        except (psycopg.Error, StoreUnavailableError):
                            raise  # the store is gone: resign and reconnect
                        except Exception:
                            log.exception("could not refresh the bots from the store")
                        await asyncio.sleep(every)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("node %s: the coordinator's connection failed (%s); trying "
                            "again", self._leases.node, exc)
            await self._resign()
            with contextlib.suppress(Exception):  # the store may be what failed
                await self._leases.announce()
            await asyncio.sleep(every)

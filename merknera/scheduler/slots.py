"""Places in play: ``concurrency`` games at once, and a fair share of them per owner.

Without the share, one author whose bots are slow (a legal 9 s a move) could fill every
place with their own games, and another author's new bot would wait for minutes.  A game
counts against the share of every owner seated in it, and a game waiting for its owners'
share does not hold up the games behind it that fit: waiters are served first come, first
served among those that fit.  Only for a while: a game of two owners fits only when both
have room at once, which later games of either could forever prevent, so once a waiter has
waited :data:`PATIENCE` seconds the places its owners free are kept for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field

PATIENCE = 5.0
"""Seconds a waiter lets later games of its owners go first."""


@dataclass(eq=False)
class _Waiter:
    owners: frozenset[int]
    granted: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future())
    since: float = field(default_factory=time.monotonic)


class Slots:
    """At most ``total`` games in play, at most ``per_owner`` of them with any one owner's
    bots."""

    def __init__(self, total: int, per_owner: int) -> None:
        if total < 1 or per_owner < 1:
            raise ValueError("total and per_owner must be at least 1")
        self.total = total
        self.per_owner = per_owner
        self._in_use = 0
        self._by_owner: Counter[int] = Counter()
        self._waiters: list[_Waiter] = []

    @property
    def in_use(self) -> int:
        """Games holding a place now."""
        return self._in_use

    def held_by(self, owner: int) -> int:
        """Places held now by games with ``owner``'s bots."""
        return self._by_owner[owner]

    def _fits(self, owners: frozenset[int]) -> bool:
        return self._in_use < self.total and all(
            self._by_owner[owner] < self.per_owner for owner in owners)

    def _take(self, owners: frozenset[int]) -> None:
        self._in_use += 1
        for owner in owners:
            self._by_owner[owner] += 1

    async def acquire(self, owners: Iterable[int]) -> None:
        """Wait for a place for a game of these owners' bots, and take it."""
        wanted = frozenset(owners)
        if not self._waiters and self._fits(wanted):
            self._take(wanted)
            return
        waiter = _Waiter(wanted)
        self._waiters.append(waiter)
        self._grant()
        try:
            await waiter.granted
        except asyncio.CancelledError:
            if waiter.granted.done() and not waiter.granted.cancelled():
                self.release(wanted)  # granted just as it was cancelled
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise

    def release(self, owners: Iterable[int]) -> None:
        """Give back the place of a game of these owners' bots."""
        self._in_use -= 1
        for owner in frozenset(owners):
            self._by_owner[owner] -= 1
            if self._by_owner[owner] <= 0:
                del self._by_owner[owner]
        self._grant()

    def _grant(self) -> None:
        """Wake the waiters that fit, in the order they came, keeping the owners of a
        waiter that has waited long enough for it."""
        kept: set[int] = set()
        now = time.monotonic()
        for waiter in list(self._waiters):
            if self._in_use >= self.total:
                break
            if waiter.granted.done():
                self._waiters.remove(waiter)
            elif self._fits(waiter.owners) and not waiter.owners & kept:
                self._waiters.remove(waiter)
                self._take(waiter.owners)
                waiter.granted.set_result(None)
            elif now - waiter.since >= PATIENCE:
                kept |= waiter.owners


class Place:
    """A game runner's place in play: taken while it makes calls to bots, given up while it
    waits (for a bot to come online, to prepare, for a person to move).

    The game counts against the share of every owner in ``owners``: those of the bots it
    calls.  A game of no such owners (every seat held by a client that connects) needs no
    place.
    """

    def __init__(self, slots: Slots, owners: Iterable[int] = ()) -> None:
        self._slots = slots
        self._owners = frozenset(owners)
        self._held = False

    async def take(self) -> None:
        """Wait for the place, unless it is held already (or not needed)."""
        if not self._held and self._owners:
            await self._slots.acquire(self._owners)
            self._held = True

    def give_up(self) -> None:
        """Give the place back, if it is held."""
        if self._held:
            self._held = False
            self._slots.release(self._owners)

    @contextlib.asynccontextmanager
    async def given_up(self) -> AsyncIterator[None]:
        """Give the place up while the block waits, and take it back after.  Not after a
        block that raised (the runner was cancelled, or failed): it has nothing to give
        back then."""
        self.give_up()
        yield
        await self.take()

"""In-process events: what happened in the arena, for live listeners (demo output, pages).

Publishing never blocks: a listener that falls behind loses its oldest events.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from merknera.games.base import JSON


@dataclass(frozen=True)
class GameFinished:
    """A game ended and its result is stored."""

    game_id: int
    game: str
    bots: tuple[str, ...]
    """Seated bots in seat order, as "name (version)"."""
    results: tuple[str, ...]
    """WIN, DRAW, LOSS or NONE per seat."""
    reason: str
    detail: str
    scores: tuple[float, ...] | None = None
    """Game points per seat, for games that keep a score."""
    bot_ids: tuple[int, ...] = ()
    """The seated bots' ids in seat order."""
    at_fault: tuple[int, ...] = ()
    """Ids of the bots that made a faulty reply in the game or forfeited it."""


@dataclass(frozen=True)
class MovePlayed:
    """A row of a game's move log was committed: a bot's accepted move, a chance move
    (``seat`` -1), or a faulty reply (``fault`` set, ``move`` None)."""

    game_id: int
    seq: int
    seat: int
    move: JSON
    fault: str | None = None


@dataclass(frozen=True)
class BotStatusChanged:
    """A bot went online or offline."""

    bot_id: int
    name: str
    status: str


Event = GameFinished | MovePlayed | BotStatusChanged


class EventBus:
    """Fan-out of events to any number of listeners."""

    def __init__(self, backlog: int = 1000) -> None:
        self._backlog = backlog
        self._queues: set[asyncio.Queue[Event]] = set()

    def publish(self, event: Event) -> None:
        """Hand an event to every listener, dropping its oldest if it is full."""
        for queue in self._queues:
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)

    @contextlib.asynccontextmanager
    async def listen(self) -> AsyncIterator[asyncio.Queue[Event]]:
        """A queue receiving every event published while the context is open."""
        queue: asyncio.Queue[Event] = asyncio.Queue(self._backlog)
        self._queues.add(queue)
        try:
            yield queue
        finally:
            self._queues.discard(queue)

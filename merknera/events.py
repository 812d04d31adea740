"""In-process events: what happened in the arena, for live listeners (demo output, pages).

Publishing never blocks: a listener that falls behind loses its oldest events.  A bus may
also hand its own events to one forwarder (:attr:`EventBus.forward`: the relay to the other
nodes, :mod:`merknera.relay`) and to watchers that miss none (:meth:`EventBus.watch`: the
metrics), which must not block either.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from merknera.games.base import JSON, SeatResult, Termination
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.faults import FaultKind
from merknera.store.bots import BotStatus


@dataclass(frozen=True)
class GameFinished:
    """A game ended and its result is stored."""

    game_id: int
    game: str
    bots: tuple[str, ...]
    """Seated bots in seat order, as "name (version)"."""
    results: tuple[SeatResult, ...]
    """How the game ended for each seat, in seat order."""
    termination: Termination
    """Why the game ended."""
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
    fault: FaultKind | None = None
    latency: float | None = None
    """Seconds the seat's call took, from its request to its whole reply (None when no
    call was made: a chance move)."""
    protocol: BotProtocol | None = None
    """The protocol the seat's call was made in (None when no call was made)."""
    detail: str | None = None
    """What was wrong, for a fault (as the move log keeps it); None for a move."""


@dataclass(frozen=True)
class BotStatusChanged:
    """A bot went online or offline."""

    bot_id: int
    name: str
    status: BotStatus
    """ONLINE or OFFLINE."""


Event = GameFinished | MovePlayed | BotStatusChanged


class EventBus:
    """Fan-out of events to any number of listeners: to every event, or to one game's."""

    def __init__(self, backlog: int = 1000) -> None:
        self._backlog = backlog
        self._queues: set[asyncio.Queue[Event]] = set()
        self._by_game: dict[int, set[asyncio.Queue[Event]]] = {}
        self.forward: Callable[[Event], None] | None = None
        """Called with every event published with ``forward`` (this node's own events), after
        the listeners have it; it must return at once and not raise (it runs in
        :meth:`publish`, on the game runners' path)."""
        self._watchers: list[Callable[[Event], None]] = []

    def publish(self, event: Event, *, forward: bool = True) -> None:
        """Hand an event to every listener it concerns, dropping a full queue's oldest, then
        to :attr:`forward`; ``forward=False`` for an event that came from another node, which
        must not be sent back out."""
        for queue in self._queues:
            _put(queue, event)
        if not isinstance(event, BotStatusChanged):
            for queue in self._by_game.get(event.game_id, ()):
                _put(queue, event)
        if forward:
            for watcher in self._watchers:
                watcher(event)
            if self.forward is not None:
                self.forward(event)

    def watch(self, watcher: Callable[[Event], None]) -> None:
        """Call ``watcher`` with every event of this node's own (those published with
        ``forward``), none dropped; like :attr:`forward`, it must return at once and not
        raise."""
        self._watchers.append(watcher)

    @contextlib.asynccontextmanager
    async def listen(self, game_id: int | None = None) -> AsyncIterator[asyncio.Queue[Event]]:
        """A queue receiving every event published while the context is open, or only the
        events of one game (a game's live page: it must not wake for every other game)."""
        queue: asyncio.Queue[Event] = asyncio.Queue(self._backlog)
        found = self._queues if game_id is None else self._by_game.setdefault(game_id, set())
        found.add(queue)
        try:
            yield queue
        finally:
            found.discard(queue)
            if game_id is not None and not found:
                self._by_game.pop(game_id, None)


def _put(queue: asyncio.Queue[Event], event: Event) -> None:
    if queue.full():
        with contextlib.suppress(asyncio.QueueEmpty):
            queue.get_nowait()
    queue.put_nowait(event)

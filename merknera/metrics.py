"""The platform's metrics, for Prometheus (``GET /metrics``: :mod:`merknera.web.metrics`).

What happens is counted where it happens, at the cost of an increment: the moves, faults
and bot calls of this node's games and the games it finishes (from the event bus:
:meth:`Metrics.observe`), and the store writer's batches (:attr:`Database.on_batch`).
What is, is read when the metrics are asked for (:class:`_Current`): open connections by
listener, refusals by limit (kept by the guard and the other limits:
:class:`merknera.refused.Refusals`), the store writer's queue, the leases held, and from
the store the games in play and the rating queue (:meth:`Metrics.read_store`).

Every platform has a registry of its own, never Prometheus' default one: several
platforms may run in one process (the tests').
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from merknera.events import Event, GameFinished, MovePlayed
from merknera.guard.connections import ConnectionGuard
from merknera.protocol.bot_protocols import BotProtocol
from merknera.refused import Limit, Refusals
from merknera.scheduler.leases import Leases
from merknera.store import Database, nodes, ratings

log = logging.getLogger(__name__)

CALL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                30.0, 60.0, 300.0)
"""Upper bounds (seconds) of the bot calls' latency histogram: a bot on the same machine
answers in a millisecond, a person at a board in minutes."""

BATCH_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                 5.0)
"""Upper bounds (seconds) of the store writer's batch time histogram."""

STORE_READ_SECONDS = 2.0
"""How long the values read from the store may take, before the metrics go without them."""


@dataclass
class _Stored:
    """The values read from the store at the last scrape."""

    running: dict[str, int] = field(default_factory=dict)
    rating_queue: int = 0
    answered: bool = False
    """Whether the store answered (the values are its)."""


@dataclass
class _Platform:
    """What a started platform's current values are read from."""

    db: Database
    leases: Leases
    games: tuple[str, ...]


class _Current:
    """A collector of the values that are read, not counted, when the metrics are asked
    for."""

    def __init__(self, connections: ConnectionGuard, refusals: Refusals) -> None:
        self.connections = connections
        self.refusals = refusals
        self.platform: _Platform | None = None
        self.stored = _Stored()

    def collect(self) -> Iterable[Metric]:
        listeners = GaugeMetricFamily("merknera_open_connections",
                                      "Client connections open now, by listener.",
                                      labels=["listener"])
        for name, count in sorted(self.connections.open_by_listener().items()):
            listeners.add_metric([name], count)
        yield listeners
        refused = CounterMetricFamily("merknera_refusals",
                                      "Clients refused by a limit of the platform, by limit.",
                                      labels=["limit"])
        for limit in Limit:
            refused.add_metric([limit.value], self.refusals.counts[limit])
        yield refused
        platform = self.platform
        if platform is None:
            return
        yield GaugeMetricFamily("merknera_store_queue",
                                "Writes waiting for the store writer's next batch.",
                                value=platform.db.queued)
        yield GaugeMetricFamily("merknera_leases_held",
                                "Games this node holds the lease of (it plays them).",
                                value=len(platform.leases.holds()))
        stored = self.stored
        yield GaugeMetricFamily("merknera_store_up",
                                "Whether the store answered the metrics' reads (1) or not "
                                "(0: the values read from it are left out).",
                                value=int(stored.answered))
        if not stored.answered:
            return
        running = GaugeMetricFamily("merknera_games_running",
                                    "Games this node plays that have begun, by game.",
                                    labels=["game"])
        for game in sorted({*platform.games, *stored.running}):
            running.add_metric([game], stored.running.get(game, 0))
        yield running
        yield GaugeMetricFamily("merknera_rating_queue",
                                "Finished games waiting to be rated (every node's).",
                                value=stored.rating_queue)


class Metrics:
    """The metrics of one platform: its own registry, the counters fed as things happen,
    and the values read when the metrics are asked for."""

    def __init__(self, connections: ConnectionGuard, refusals: Refusals) -> None:
        self.registry = CollectorRegistry()
        """Every metric of this platform (and nothing else)."""
        registry = self.registry
        self._moves = Counter("merknera_moves", "Moves the rules accepted in this node's "
                              "games.", registry=registry)
        self._faults = Counter("merknera_faults", "Faulty calls in this node's games (their "
                               "moves' calls), by kind.", ["kind"], registry=registry)
        self._calls = Histogram("merknera_bot_call_seconds", "Seconds a move's call took, "
                                "from its request to its whole reply, by the protocol of the "
                                "seat called.", ["protocol"], buckets=CALL_BUCKETS,
                                registry=registry)
        self._finished = Counter("merknera_games_finished", "Games this node finished with "
                                 "their result stored, by game and termination.",
                                 ["game", "termination"], registry=registry)
        self._batches = Histogram("merknera_store_batch_seconds", "Seconds each batch of the "
                                  "store writer took, from being sent to its thread to its answer.",
                                  buckets=BATCH_BUCKETS, registry=registry)
        self._written = Counter("merknera_store_writes", "Works the store writer ran (each "
                                "a transaction's worth of statements).", registry=registry)
        self._by_protocol: dict[BotProtocol, Histogram] = {}
        self._current = _Current(connections, refusals)
        registry.register(self._current)

    def read_from(self, db: Database, leases: Leases, games: Sequence[str]) -> None:
        """Read the current values of a started platform from its store, its leases and
        its games (their mnemonics)."""
        self._current.platform = _Platform(db, leases, tuple(games))

    def observe(self, event: Event) -> None:
        """Count an event of this node's (an :class:`~merknera.events.EventBus` watcher)."""
        if isinstance(event, MovePlayed):
            if event.fault is not None:
                self._faults.labels(event.fault.value).inc()
            elif event.seat >= 0:
                self._moves.inc()
            if event.latency is not None and event.protocol is not None:
                calls = self._by_protocol.get(event.protocol)
                if calls is None:
                    calls = self._by_protocol[event.protocol] = self._calls.labels(
                        event.protocol.value)
                calls.observe(event.latency)
        elif isinstance(event, GameFinished):
            self._finished.labels(event.game, event.termination.value).inc()

    def batch_written(self, seconds: float, works: int) -> None:
        """Count a batch of the store writer (:attr:`Database.on_batch`)."""
        self._batches.observe(seconds)
        self._written.inc(works)

    async def read_store(self) -> None:
        """Read the values that come from the store, within :data:`STORE_READ_SECONDS`
        (without them when it does not answer: ``merknera_store_up`` 0)."""
        current = self._current
        platform = current.platform
        if platform is None:
            return
        try:
            async with asyncio.timeout(STORE_READ_SECONDS):
                running = await nodes.running_by_game(platform.db, platform.leases.node)
                queued = await ratings.queued_count(platform.db)
        except Exception as exc:  # any failure to answer: the metrics say so
            log.debug("the metrics could not read the store: %r", exc)
            current.stored = _Stored()
            return
        current.stored = _Stored(running, queued, answered=True)

    def exposition(self) -> bytes:
        """Every metric in Prometheus' text format."""
        return generate_latest(self.registry)

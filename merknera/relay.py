"""The event relay between nodes: each node's events reach every other node's event bus,
through PostgreSQL's ``LISTEN``/``NOTIFY`` on the database the nodes share.

Every event published on this node's bus (:attr:`EventBus.forward`) is queued and sent as a
notification on :data:`CHANNEL`; every notification from another node is turned back into
its event and published on this node's bus without being sent out again.  A live page on
any node thus wakes when a game on any node moves.

What a relayed event is worth: a wake-up, not a record.  The pages read the store when they
open and whenever an event wakes them (and every few seconds anyway), so an event lost
costs only a little delay, and the relay loses some rather than ever block or raise:

- events published while the listening connection is down (a server restart) are lost to
  this node: it logs a warning and reconnects, waiting 0.5 s, then twice as long each time
  up to 10 s;
- events that cannot be sent are kept while the sending connection reconnects, but at most
  :data:`QUEUE_LIMIT` of them: the oldest go first;
- a batch sent just as its connection broke may have gone through: it is sent again, so a
  node may hear those events twice.

Each node's events arrive in the order it published them.

The listening connection serves other channels too (:meth:`EventRelay.on`: the games the
coordinator offers to every node), so that a node keeps one connection that listens.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import enum
import json
import logging
from collections.abc import Callable
from typing import Any

import psycopg

from merknera.events import BotStatusChanged, Event, EventBus, GameFinished, MovePlayed
from merknera.games.base import SeatResult, Termination
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.faults import FaultKind
from merknera.store.bots import BotStatus
from merknera.store.db import redacted

log = logging.getLogger(__name__)

CHANNEL = "merknera_events"
MAX_PAYLOAD = 7999
"""The longest notification payload PostgreSQL takes, in bytes (it must be shorter than
8000).  Payloads are ASCII (JSON with every other character escaped), so characters are
bytes whatever the database's encoding."""
BATCH = 500
"""Events sent in one statement, at most: one round trip for a burst."""
QUEUE_LIMIT = 10_000
"""Events waiting to be sent, at most; beyond it the oldest are dropped."""
BACKOFF_MIN = 0.5
BACKOFF_MAX = 10.0
STOP_SECONDS = 2.0
"""How long :meth:`EventRelay.stop` waits for the queued events to be sent."""
CUT = " [...]"
"""Ends a ``GameFinished.detail`` shortened to fit a notification."""

# One statement for a whole batch (on CHANNEL): unnest hands the payloads to pg_notify in
# array order, and notifications sent in one transaction are delivered in the order sent.
_SEND = ("SELECT count(pg_notify('merknera_events', payload)) "
         "FROM unnest(%s::text[]) AS sent(payload)")

_KINDS: dict[str, type[Event]] = {
    kind.__name__: kind for kind in (GameFinished, MovePlayed, BotStatusChanged)}


class EventRelay:
    """Relays the events of ``bus`` to and from the other nodes on the database at ``url``;
    ``node`` is this node's id (a node ignores the notifications it sent itself)."""

    def __init__(self, url: str, node: str, bus: EventBus) -> None:
        self.url = url
        self.node = node
        self.bus = bus
        self._channels: dict[str, Callable[[str], None]] = {CHANNEL: self._receive}
        self._queue: collections.deque[Event] = collections.deque(maxlen=QUEUE_LIMIT)
        self._dropped = 0
        self._queued = asyncio.Event()
        self._stopping = False
        self._sequence = 0
        self._listener: psycopg.AsyncConnection[Any] | None = None
        self._sender: psycopg.AsyncConnection[Any] | None = None
        self._listening: asyncio.Task[None] | None = None
        self._sending: asyncio.Task[None] | None = None

    @property
    def backend_pid(self) -> int | None:
        """The server process of the listening connection; None while it reconnects."""
        return None if self._listener is None else self._listener.info.backend_pid

    def on(self, channel: str, handler: Callable[[str], None]) -> None:
        """Hand the payloads of another channel's notifications to ``handler`` (before
        :meth:`start`; it must return at once and not raise)."""
        self._channels[channel] = handler

    async def start(self) -> None:
        """Connect, listen, and start relaying this node's events.

        :raises psycopg.Error: when the database cannot be reached now.
        :raises RuntimeError: when the bus forwards its events somewhere already.
        """
        if self.bus.forward is not None:
            raise RuntimeError("the event bus forwards its events already")
        # Two connections: psycopg holds a connection for as long as its notifies() runs,
        # and a sender waiting for it would hold up every event behind it.
        self._listener = await self._listen()
        try:
            self._sender = await _connect(self.url)
        except BaseException:
            await _close(self._listener)
            self._listener = None
            raise
        self._stopping = False
        self.bus.forward = self._enqueue
        self._listening = asyncio.create_task(self._receive_all(), name="event relay: listen")
        self._sending = asyncio.create_task(self._send_all(), name="event relay: send")

    async def stop(self) -> None:
        """Stop relaying: send what is queued (for :data:`STOP_SECONDS` at most), stop
        listening, close the connections."""
        if self.bus.forward == self._enqueue:
            self.bus.forward = None
        self._stopping = True
        self._queued.set()
        if self._sending is not None:
            await asyncio.wait([self._sending], timeout=STOP_SECONDS)
        for task in (self._sending, self._listening):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._sending = self._listening = None
        for connection in (self._listener, self._sender):
            await _close(connection)
        self._listener = self._sender = None

    # -- sending ------------------------------------------------------------------------

    def _enqueue(self, event: Event) -> None:
        """The bus's forwarder: queues the event for :meth:`_send_all` and returns."""
        if len(self._queue) == QUEUE_LIMIT:
            self._dropped += 1  # the deque drops the oldest itself
        self._queue.append(event)
        self._queued.set()

    async def _send_all(self) -> None:
        """Send the queued events, a batch per statement, until stopped."""
        batch: list[str] = []
        delay = BACKOFF_MIN
        while True:
            if not batch:
                if not self._queue:
                    if self._stopping:
                        return
                    self._queued.clear()
                    await self._queued.wait()
                    continue
                batch = self._take()
                if not batch:
                    continue
            try:
                if self._sender is None or self._sender.closed:
                    self._sender = await _connect(self.url)
                await self._sender.execute(_SEND, (batch,))
            except Exception as exc:  # nothing may end the relay
                if isinstance(exc, psycopg.Error) and self._sender is not None \
                        and not self._sender.closed and not self._sender.broken:
                    # The connection is fine: the server refused these payloads, and would
                    # refuse them again.
                    log.error("event relay: %d events not sent: %s", len(batch), exc)
                    batch = []
                    continue
                log.warning("event relay: cannot send to %s (%s); trying again in %.1f s",
                            redacted(self.url), exc, delay,
                            exc_info=not isinstance(exc, psycopg.Error | OSError))
                sender, self._sender = self._sender, None
                await _close(sender)
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
            else:
                batch = []
                delay = BACKOFF_MIN

    def _take(self) -> list[str]:
        """The next batch's payloads, out of the queue."""
        if self._dropped:
            log.warning("event relay: %d events dropped, the queue to the other nodes being "
                        "full", self._dropped)
            self._dropped = 0
        batch: list[str] = []
        while self._queue and len(batch) < BATCH:
            event = self._queue.popleft()
            self._sequence += 1
            try:
                payload = encode(self.node, self._sequence, event)
            except (TypeError, ValueError) as exc:  # a move that is not JSON: a bug
                log.error("event relay: cannot encode %r: %s", event, exc)
                continue
            if payload is None:
                log.warning("event relay: %s of game %s is too big for a notification, and "
                            "not sent", type(event).__name__, getattr(event, "game_id", None))
            else:
                batch.append(payload)
        return batch

    # -- receiving ----------------------------------------------------------------------

    async def _listen(self) -> psycopg.AsyncConnection[Any]:
        connection = await _connect(self.url)
        try:
            for channel in self._channels:
                await connection.execute(f"LISTEN {channel}")
        except BaseException:
            await connection.close()
            raise
        return connection

    async def _receive_all(self) -> None:
        """Publish what the other nodes send, reconnecting whenever the connection drops;
        never raises (but for cancellation)."""
        delay = BACKOFF_MIN
        while True:
            if self._listener is None:
                try:
                    self._listener = await self._listen()
                except Exception as exc:  # nothing may end the relay
                    log.warning("event relay: cannot listen on %s (%s); trying again in "
                                "%.1f s", redacted(self.url), exc, delay)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, BACKOFF_MAX)
                    continue
                delay = BACKOFF_MIN
                log.info("event relay: listening again (the other nodes' events since the "
                         "connection dropped are lost to this node)")
            try:
                async with contextlib.aclosing(self._listener.notifies()) as notifies:
                    async for notify in notifies:
                        self._channels[notify.channel](notify.payload)
            except Exception as exc:  # nothing may end the relay
                log.warning("event relay: the listening connection to %s dropped (%s); "
                            "reconnecting in %.1f s", redacted(self.url), exc, delay,
                            exc_info=not isinstance(exc, psycopg.Error | OSError))
            listener, self._listener = self._listener, None
            await _close(listener)
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)

    def _receive(self, payload: str) -> None:
        try:
            node, event = decode(payload)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("event relay: a notification that is no event (%s): %.200s",
                        exc, payload)
            return
        if node != self.node:
            self.bus.publish(event, forward=False)


async def _connect(url: str) -> psycopg.AsyncConnection[Any]:
    return await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=30)


async def _close(connection: psycopg.AsyncConnection[Any] | None) -> None:
    if connection is not None:
        with contextlib.suppress(psycopg.Error, OSError):
            await connection.close()


# -- the payload -----------------------------------------------------------------------


def encode(node: str, seq: int, event: Event) -> str | None:
    """The notification of an event: JSON ``{"node", "seq", "type", "event"}``, shorter than
    :data:`MAX_PAYLOAD`.  An event too big is cut to fit: a ``MovePlayed`` without its move
    (``"move_dropped": true``: it arrives with ``move`` None), a ``GameFinished`` with its
    ``detail`` shortened; None if even that is too big.

    ``seq`` counts the node's events: it keeps two equal events apart (PostgreSQL delivers
    only one of equal notifications sent in one transaction).
    """
    fields = {field.name: _plain(getattr(event, field.name))
              for field in dataclasses.fields(event)}
    message: dict[str, Any] = {"node": node, "seq": seq, "type": type(event).__name__,
                               "event": fields}
    payload = json.dumps(message, separators=(",", ":"))  # ASCII: ensure_ascii
    if len(payload) <= MAX_PAYLOAD:
        return payload
    if isinstance(event, MovePlayed):
        del fields["move"]
        message["move_dropped"] = True
    elif isinstance(event, GameFinished):
        # Each character cut shortens the payload by one at least.
        keep = len(event.detail) - (len(payload) - MAX_PAYLOAD) - len(CUT)
        fields["detail"] = event.detail[:max(keep, 0)] + CUT
    payload = json.dumps(message, separators=(",", ":"))
    return payload if len(payload) <= MAX_PAYLOAD else None


def decode(payload: str) -> tuple[str, Event]:
    """The sending node and the event of a notification made by :func:`encode`.

    :raises ValueError, TypeError, KeyError, AttributeError: when the payload is not such
        a notification.
    """
    message = json.loads(payload)
    fields = message["event"]
    kind = _KINDS[message["type"]]
    event: Event
    if kind is GameFinished:
        scores = fields["scores"]
        event = GameFinished(
            game_id=int(fields["game_id"]), game=str(fields["game"]),
            bots=tuple(str(bot) for bot in fields["bots"]),
            results=tuple(SeatResult(result) for result in fields["results"]),
            termination=Termination(fields["termination"]), detail=str(fields["detail"]),
            scores=None if scores is None else tuple(float(score) for score in scores),
            bot_ids=tuple(int(bot) for bot in fields["bot_ids"]),
            at_fault=tuple(int(bot) for bot in fields["at_fault"]))
    elif kind is MovePlayed:
        fault, latency, protocol, detail = (fields["fault"], fields.get("latency"),
                                            fields.get("protocol"), fields.get("detail"))
        event = MovePlayed(
            game_id=int(fields["game_id"]), seq=int(fields["seq"]), seat=int(fields["seat"]),
            move=None if message.get("move_dropped") else fields["move"],
            fault=None if fault is None else FaultKind(fault),
            latency=None if latency is None else float(latency),
            protocol=None if protocol is None else BotProtocol(protocol),
            detail=None if detail is None else str(detail))
    else:
        event = BotStatusChanged(bot_id=int(fields["bot_id"]), name=str(fields["name"]),
                                 status=BotStatus(fields["status"]))
    return str(message["node"]), event


def _plain(value: Any) -> Any:
    """A field's value as JSON: enums by value, tuples as lists."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value

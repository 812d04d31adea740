"""The event relay between nodes, on a real PostgreSQL: two buses, each with its relay (nodes
"a" and "b"), on one database."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass

import psycopg
import pytest

from merknera.events import BotStatusChanged, Event, EventBus, GameFinished, MovePlayed
from merknera.games import SeatResult, Termination
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.faults import FaultKind
from merknera.relay import CUT, MAX_PAYLOAD, EventRelay, decode, encode
from merknera.store.bots import BotStatus
from tests.support import until
from tests.support.postgres import Cluster

WAIT = 30.0
"""A safety net for every wait: the tests never depend on how fast anything is."""

EVENTS: list[Event] = [
    GameFinished(7, "TICTACTOE", ("a (1)", "b (2)"), (SeatResult.WIN, SeatResult.LOSS),
                 Termination.NORMAL, "three in a row", scores=(1.0, 0.5), bot_ids=(3, 4),
                 at_fault=(4,)),
    GameFinished(8, "HEXAGONS", ("ä (1)",), (SeatResult.NONE,), Termination.TIMEOUT, ""),
    MovePlayed(7, 1, 0, {"position": 4, "tiles": ["é", "☃"], "pass": False, "x": None}),
    MovePlayed(7, 2, -1, [1, 2.5, "three"]),
    MovePlayed(7, 3, 1, None, FaultKind.TIMEOUT),
    MovePlayed(7, 4, 0, None, FaultKind.ILLEGAL_MOVE, 0.002, BotProtocol.JSONRPC,
               "position 4 is already taken by X"),
    BotStatusChanged(3, "a", BotStatus.ONLINE),
    BotStatusChanged(3, "a", BotStatus.ONLINE),  # equal events are two events
    BotStatusChanged(4, "b", BotStatus.OFFLINE),
]


@dataclass
class Node:
    """A bus, its relay, and a listener to everything on the bus."""

    bus: EventBus
    relay: EventRelay
    heard: asyncio.Queue[Event]

    async def next(self) -> Event:
        async with asyncio.timeout(WAIT):
            return await self.heard.get()

    async def take(self, count: int) -> list[Event]:
        return [await self.next() for _ in range(count)]


@dataclass
class Nodes:
    a: Node
    b: Node
    url: str


@pytest.fixture
async def nodes(postgres: Cluster) -> AsyncIterator[Nodes]:
    url = postgres.new_database()
    async with contextlib.AsyncExitStack() as stack:
        started = []
        for name in ("a", "b"):
            bus = EventBus(backlog=10_000)
            heard = await stack.enter_async_context(bus.listen())
            relay = EventRelay(url, name, bus)
            await relay.start()
            stack.push_async_callback(relay.stop)
            started.append(Node(bus, relay, heard))
        yield Nodes(started[0], started[1], url)


async def exchange(nodes: Nodes) -> None:
    """A round trip a → b → a: every notification sent before it has been delivered to
    both nodes once it is back (the notification queue is one, in commit order)."""
    ping = BotStatusChanged(-1, "ping", BotStatus.ONLINE)
    pong = BotStatusChanged(-2, "pong", BotStatus.ONLINE)
    nodes.a.bus.publish(ping)
    assert await nodes.a.next() == ping
    assert await nodes.b.next() == ping
    nodes.b.bus.publish(pong)
    assert await nodes.b.next() == pong
    assert await nodes.a.next() == pong


async def test_every_kind_of_event_reaches_the_other_node_once(nodes: Nodes) -> None:
    for event in EVENTS:
        nodes.a.bus.publish(event)
    assert await nodes.b.take(len(EVENTS)) == EVENTS
    assert await nodes.a.take(len(EVENTS)) == EVENTS  # its own, heard at once
    # Neither b's copies nor a's own notifications come back to either node.
    await exchange(nodes)
    assert nodes.a.heard.empty() and nodes.b.heard.empty()


async def test_both_ways(nodes: Nodes) -> None:
    nodes.b.bus.publish(EVENTS[0])
    assert await nodes.a.next() == EVENTS[0]
    nodes.a.bus.publish(EVENTS[2])
    assert await nodes.b.take(2) == [EVENTS[0], EVENTS[2]]


async def test_a_move_too_big_arrives_without_it(nodes: Nodes) -> None:
    huge = MovePlayed(9, 5, 1, {"word": "é" * 5000})  # 5000 UTF-8 bytes x2, escaped x6
    nodes.a.bus.publish(huge)
    assert await nodes.b.next() == dataclasses.replace(huge, move=None)
    assert await nodes.a.next() == huge  # the node's own listeners have it whole


async def test_a_long_detail_arrives_shortened(nodes: Nodes) -> None:
    finished = GameFinished(9, "TICTACTOE", ("a (1)", "b (2)"),
                            (SeatResult.DRAW, SeatResult.DRAW), Termination.NORMAL,
                            "ü" * 3000, bot_ids=(1, 2))
    nodes.a.bus.publish(finished)
    heard = await nodes.b.next()
    assert isinstance(heard, GameFinished)
    assert heard.detail.endswith(CUT) and finished.detail.startswith(heard.detail[:-len(CUT)])
    assert dataclasses.replace(heard, detail=finished.detail) == finished


def test_payloads_fit_a_notification() -> None:
    for event in [*EVENTS, MovePlayed(1, 1, 0, "x" * 20_000),
                  MovePlayed(1, 1, 0, "\U0001f600" * 2000),
                  GameFinished(1, "G", (), (), Termination.NORMAL, "\U0001f600" * 5000)]:
        payload = encode("a", 1, event)
        assert payload is not None and len(payload.encode("utf-8")) <= MAX_PAYLOAD
        assert payload.isascii()
        assert decode(payload)[0] == "a"
    # An event that cannot be cut to fit is not sent.
    assert encode("a", 1, BotStatusChanged(1, "x" * 10_000, BotStatus.ONLINE)) is None


def test_a_move_keeps_its_calls_latency_and_protocol() -> None:
    move = MovePlayed(7, 4, 1, {"position": 2}, None, 0.0125, BotProtocol.SQUELCH_REST)
    payload = encode("a", 1, move)
    assert payload is not None
    assert decode(payload) == ("a", move)


async def test_a_burst_arrives_whole_and_in_order(nodes: Nodes) -> None:
    burst = [MovePlayed(game_id, seq, seq % 2, {"n": seq})
             for seq in range(1, 1001) for game_id in (1, 2)]
    for event in burst:
        nodes.a.bus.publish(event)
    assert await nodes.b.take(len(burst)) == burst


async def test_what_is_queued_is_sent_when_the_relay_stops(nodes: Nodes) -> None:
    nodes.a.bus.publish(EVENTS[0])
    await nodes.a.relay.stop()  # publish handed it over; the relay has not sent it yet
    assert await nodes.b.next() == EVENTS[0]
    assert nodes.a.bus.forward is None
    await nodes.a.relay.stop()  # once more: nothing to do


async def terminate(url: str, pids: list[int]) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        await connection.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) "
                                 "AS killed(pid)", (pids,))


async def relistened(relay: EventRelay, old: int) -> None:
    """Wait until the relay listens on a connection other than ``old``."""
    # Polled: the relay tells nobody when it reconnects (its pages do not need to know).
    await until(lambda: relay.backend_pid not in (None, old), within=WAIT)


async def test_the_relay_listens_again_after_its_connection_drops(nodes: Nodes) -> None:
    old = nodes.b.relay.backend_pid
    assert old is not None
    await terminate(nodes.url, [old])
    await relistened(nodes.b.relay, old)
    nodes.a.bus.publish(EVENTS[2])
    assert await nodes.b.next() == EVENTS[2]
    assert await nodes.a.next() == EVENTS[2]
    await exchange(nodes)


async def test_the_relays_recover_from_every_connection_dropping(nodes: Nodes) -> None:
    """As after a server restart: both nodes' listening and sending connections drop."""
    async with await psycopg.AsyncConnection.connect(nodes.url, autocommit=True) as conn:
        found = await (await conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid != pg_backend_pid()")).fetchall()
    pids = [pid for pid, in found]
    assert len(pids) == 4  # two relays, each listening and sending
    old = [nodes.a.relay.backend_pid or 0, nodes.b.relay.backend_pid or 0]
    await terminate(nodes.url, pids)
    await relistened(nodes.a.relay, old[0])
    await relistened(nodes.b.relay, old[1])
    # The senders find their connections gone when they send, and send again.
    nodes.a.bus.publish(EVENTS[0])
    assert await nodes.b.next() == EVENTS[0]
    nodes.b.bus.publish(EVENTS[5])
    assert await nodes.a.take(2) == [EVENTS[0], EVENTS[5]]


async def test_a_notification_that_is_no_event_is_ignored(nodes: Nodes) -> None:
    async with await psycopg.AsyncConnection.connect(nodes.url, autocommit=True) as conn:
        await conn.execute("SELECT pg_notify('merknera_events', 'not json'), "
                           "pg_notify('merknera_events', '{\"node\": \"x\"}')")
    nodes.a.bus.publish(EVENTS[3])
    assert await nodes.b.next() == EVENTS[3]


async def test_a_bus_has_one_relay(nodes: Nodes) -> None:
    with pytest.raises(RuntimeError):
        await EventRelay(nodes.url, "c", nodes.a.bus).start()


async def test_another_channel_is_heard_on_the_same_listening_connection(
        postgres: Cluster) -> None:
    url = postgres.new_database()
    heard: asyncio.Queue[str] = asyncio.Queue()
    relay = EventRelay(url, "a", EventBus())
    relay.on("merknera_offers", heard.put_nowait)
    await relay.start()
    try:
        postgres.psql("SELECT pg_notify('merknera_offers', 'node-b 3')",
                      database=url.rsplit("/", 1)[1])
        async with asyncio.timeout(WAIT):
            assert await heard.get() == "node-b 3"
        # One connection listens to both channels (the other one sends).
        listening = postgres.psql("SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
                                  "'LISTEN%'", database=url.rsplit("/", 1)[1])
        assert listening == "1"
    finally:
        await relay.stop()

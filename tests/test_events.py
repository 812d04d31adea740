"""The event bus: listeners to everything, and listeners to one game."""

from __future__ import annotations

from merknera.events import BotStatusChanged, Event, EventBus, GameFinished, MovePlayed
from merknera.games import SeatResult, Termination
from merknera.protocol.faults import FaultKind
from merknera.store.bots import BotStatus


async def test_a_game_listener_hears_only_its_game() -> None:
    bus = EventBus()
    async with bus.listen() as everything, bus.listen(7) as seven, bus.listen(8) as eight:
        events: list[Event] = [
            MovePlayed(7, 1, 0, {"position": 4}),
            MovePlayed(8, 1, 0, None, FaultKind.TIMEOUT),
            BotStatusChanged(1, "bot", BotStatus.ONLINE),
            GameFinished(7, "TICTACTOE", ("a", "b"), (SeatResult.WIN, SeatResult.LOSS),
                         Termination.NORMAL, "")]
        for event in events:
            bus.publish(event)
        assert [everything.get_nowait() for _ in range(4)] == events
        assert [seven.get_nowait(), seven.get_nowait()] == [events[0], events[3]]
        assert eight.get_nowait() == events[1]
        assert seven.empty() and eight.empty()
    bus.publish(events[0])  # nobody listens: nothing is kept
    assert not bus._by_game and not bus._queues


async def test_a_full_queue_drops_its_oldest() -> None:
    bus = EventBus(backlog=2)
    async with bus.listen(1) as queue:
        moves = [MovePlayed(1, seq, 0, None) for seq in (1, 2, 3)]
        for move in moves:
            bus.publish(move)
        assert [queue.get_nowait() for _ in range(2)] == moves[1:]


async def test_a_watcher_hears_every_event_of_this_node_and_none_of_another() -> None:
    bus = EventBus(backlog=1)
    watched: list[Event] = []
    bus.watch(watched.append)
    own = [MovePlayed(1, seq, 0, {"position": seq}) for seq in (1, 2, 3)]
    async with bus.listen():  # a listener that falls behind loses events; a watcher none
        for event in own:
            bus.publish(event)
        bus.publish(MovePlayed(2, 1, 0, None), forward=False)  # another node's
    assert watched == own

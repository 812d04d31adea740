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

"""A held client's turns: which messages are turns, which are faults, and when its turn
runs out (merknera.seats.turns)."""

from __future__ import annotations

import asyncio
import time

from merknera.protocol.faults import FaultKind
from merknera.seats.turns import Received, Turns, next_turn

VIEW = {"nextPlayer": "me"}


def seated(to_move: bool) -> tuple[Turns, list[Received]]:
    """Turns shown a state, and the list of messages answered as invalid."""
    answered: list[Received] = []
    turns = Turns(1)
    turns.moved_on(dict(VIEW), to_move, 30.0, answered.append)
    return turns, answered


async def test_a_message_while_to_move_is_the_turn() -> None:
    turns, answered = seated(True)
    turns.take(Received.text_frame('{"n": 2}'), answered.append)
    turn = await next_turn(turns, asyncio.Event(), 30.0, "me")
    assert turn.ok and turn.result == {"n": 2} and turn.reply == b'{"n": 2}'
    assert answered == [] and turns.judging is not None


async def test_a_message_out_of_turn_is_answered_at_once_and_a_fault_at_the_next_turn() -> None:
    turns, answered = seated(False)
    early = Received.text_frame('{"n": 1}')
    turns.take(early, answered.append)
    assert answered == [early] and early.answered
    turns.moved_on(dict(VIEW), True, 30.0, answered.append)
    turns.take(Received.text_frame('{"n": 2}'), answered.append)
    first = await next_turn(turns, asyncio.Event(), 30.0, "me")
    assert first.fault is not None and first.fault.kind is FaultKind.ILLEGAL_MOVE
    assert "not its turn" in first.fault.message and turns.judging is early
    second = await next_turn(turns, asyncio.Event(), 30.0, "me")
    assert second.ok and second.result == {"n": 2}


async def test_turns_queued_behind_a_valid_one_become_out_of_turn() -> None:
    turns, answered = seated(True)
    extra = Received.text_frame('{"n": 3}')
    turns.take(Received.text_frame('{"n": 2}'), answered.append)
    turns.take(extra, answered.append)
    await next_turn(turns, asyncio.Event(), 30.0, "me")
    turns.moved_on({"nextPlayer": "you"}, False, 30.0, answered.append)
    assert answered == [extra] and list(turns.early) == [extra] and not turns.inbox


async def test_a_frame_that_is_not_json_is_a_malformed_turn() -> None:
    turns, answered = seated(True)
    turns.take(Received.text_frame("{nope"), answered.append)
    turn = await next_turn(turns, asyncio.Event(), 30.0, "me")
    assert turn.fault is not None and turn.fault.kind is FaultKind.MALFORMED_REPLY
    assert turn.fault.message.startswith("the message is not JSON")


async def test_the_clock_runs_from_the_last_valid_update_not_from_the_ask() -> None:
    turns, _ = seated(True)
    turns.deadline = time.monotonic() - 0.001  # ran out while invalid turns were judged
    turn = await next_turn(turns, asyncio.Event(), 30.0, "me")
    assert turn.fault is not None and turn.fault.kind is FaultKind.TIMEOUT


async def test_a_closed_connection_is_unreachable() -> None:
    turns, _ = seated(True)
    closed = asyncio.Event()
    closed.set()
    turn = await next_turn(turns, closed, 30.0, "me")
    assert turn.fault is not None and turn.fault.kind is FaultKind.UNREACHABLE


def test_messages_before_the_first_state_or_after_the_end_are_no_turns() -> None:
    answered: list[Received] = []
    turns = Turns(1)
    turns.take(Received.text_frame('{"n": 2}'), answered.append)
    assert not turns.inbox and not turns.early and answered == []
    turns.moved_on(dict(VIEW), True, 30.0, answered.append)
    turns.finished = True
    turns.take(Received.text_frame('{"n": 2}'), answered.append)
    assert not turns.inbox and answered == []

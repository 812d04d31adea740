"""A connected client's seating: which messages are turns, which are faults, and when its
turn runs out (merknera.seats.connected)."""

from __future__ import annotations

import asyncio
import time

from merknera.protocol.faults import FaultKind
from merknera.seats.connected import Received, Seating, next_turn

VIEW = {"nextPlayer": "me"}


def seated(to_move: bool) -> tuple[Seating, list[Received]]:
    """A seating shown a state, and the list of messages it answered as invalid."""
    answered: list[Received] = []
    seating = Seating(1)
    seating.moved_on(dict(VIEW), to_move, 30.0, answered.append)
    return seating, answered


async def test_a_message_while_to_move_is_the_turn() -> None:
    seating, answered = seated(True)
    seating.take(Received.text_frame('{"n": 2}'), answered.append)
    turn = await next_turn(seating, asyncio.Event(), 30.0, "me")
    assert turn.ok and turn.result == {"n": 2} and turn.reply == b'{"n": 2}'
    assert answered == [] and seating.judging is not None


async def test_a_message_out_of_turn_is_answered_at_once_and_a_fault_at_the_next_turn() -> None:
    seating, answered = seated(False)
    early = Received.text_frame('{"n": 1}')
    seating.take(early, answered.append)
    assert answered == [early] and early.answered
    seating.moved_on(dict(VIEW), True, 30.0, answered.append)
    seating.take(Received.text_frame('{"n": 2}'), answered.append)
    first = await next_turn(seating, asyncio.Event(), 30.0, "me")
    assert first.fault is not None and first.fault.kind is FaultKind.ILLEGAL_MOVE
    assert "not its turn" in first.fault.message and seating.judging is early
    second = await next_turn(seating, asyncio.Event(), 30.0, "me")
    assert second.ok and second.result == {"n": 2}


async def test_turns_queued_behind_a_valid_one_become_out_of_turn() -> None:
    seating, answered = seated(True)
    extra = Received.text_frame('{"n": 3}')
    seating.take(Received.text_frame('{"n": 2}'), answered.append)
    seating.take(extra, answered.append)
    await next_turn(seating, asyncio.Event(), 30.0, "me")
    seating.moved_on({"nextPlayer": "you"}, False, 30.0, answered.append)
    assert answered == [extra] and list(seating.early) == [extra] and not seating.inbox


async def test_a_frame_that_is_not_json_is_a_malformed_turn() -> None:
    seating, answered = seated(True)
    seating.take(Received.text_frame("{nope"), answered.append)
    turn = await next_turn(seating, asyncio.Event(), 30.0, "me")
    assert turn.fault is not None and turn.fault.kind is FaultKind.MALFORMED_REPLY
    assert turn.fault.message.startswith("the message is not JSON")


async def test_the_clock_runs_from_the_last_valid_update_not_from_the_ask() -> None:
    seating, _ = seated(True)
    seating.deadline = time.monotonic() - 0.001  # ran out while invalid turns were judged
    turn = await next_turn(seating, asyncio.Event(), 30.0, "me")
    assert turn.fault is not None and turn.fault.kind is FaultKind.TIMEOUT


async def test_a_closed_connection_is_unreachable() -> None:
    seating, _ = seated(True)
    closed = asyncio.Event()
    closed.set()
    turn = await next_turn(seating, closed, 30.0, "me")
    assert turn.fault is not None and turn.fault.kind is FaultKind.UNREACHABLE


def test_messages_before_the_first_state_or_after_the_end_are_no_turns() -> None:
    answered: list[Received] = []
    seating = Seating(1)
    seating.take(Received.text_frame('{"n": 2}'), answered.append)
    assert not seating.inbox and not seating.early and answered == []
    seating.moved_on(dict(VIEW), True, 30.0, answered.append)
    seating.finished = True
    seating.take(Received.text_frame('{"n": 2}'), answered.append)
    assert not seating.inbox and answered == []

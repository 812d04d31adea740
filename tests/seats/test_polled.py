"""Seats held by polling clients (merknera.seats.polled): when a client's move is taken,
what the runner gets for it, how its requests wait, and how a seat ends."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from merknera.games import REGISTRY, Seat
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.faults import FaultKind
from merknera.seats import SeatCall, Witnessed
from merknera.seats.polled import PolledSeat, PolledTransport
from merknera.store.bots import Bot, BotStatus

GAME = REGISTRY["TICTACTOE"]
GAME_ID = 7


def guest(bot_id: int = 1, name: str = "bob") -> Bot:
    return Bot(bot_id, name, "tictactoe", "TICTACTOE", 1, "(guests)", "", "", "", "",
               BotStatus.ONLINE, "", "now", None, protocol=BotProtocol.GUEST)


async def show(transport: PolledTransport, bot: Bot, seat: Seat, to_move: bool) -> None:
    await transport.witness(bot, GAME, Witnessed(GAME_ID, {"seat": seat}, seat=seat,
                                                 to_move=to_move))


def move_call(seat: Seat) -> SeatCall:
    return SeatCall(GAME_ID, GAME.calls.move, {}, seat)


async def held(limit: float = 30.0) -> tuple[PolledTransport, Bot, PolledSeat]:
    transport = PolledTransport()
    bot = guest()
    return transport, bot, transport.hold(GAME_ID, 0, bot, limit)


async def test_a_move_is_taken_only_while_the_seat_has_the_move() -> None:
    transport, bot, seat = await held()
    assert not seat.send({"position": 4}, "4")  # no state shown yet
    await show(transport, bot, 0, to_move=False)
    assert not seat.send({"position": 4}, "4")
    await show(transport, bot, 0, to_move=True)
    assert seat.send({"position": 4}, '{"position": 4}')
    assert not seat.send({"position": 5}, "5")  # one move per state
    turn = await transport.ask(bot, GAME, move_call(0), 30.0)
    assert turn.ok and turn.result == {"position": 4} and turn.reply == b'{"position": 4}'


async def test_a_faulty_move_gives_the_move_back_with_the_runners_message() -> None:
    transport, bot, seat = await held()
    await show(transport, bot, 0, to_move=True)
    version = seat.version
    assert seat.send("nonsense", "nonsense")
    await transport.ask(bot, GAME, move_call(0), 30.0)
    assert not seat.to_move
    await transport.tell(bot, GAME, SeatCall(GAME_ID, GAME.calls.error,
                                             {"message": "strike 1 of 3"}, 0), 5.0)
    assert await seat.wait(version, 1.0)
    assert seat.error == "strike 1 of 3" and seat.to_move


async def test_a_judged_refusal_reaches_the_runner_as_its_fault() -> None:
    transport, bot, seat = await held()
    await show(transport, bot, 0, to_move=True)
    assert seat.send(None, "[1]", "invalid move: line already placed. disqualified!",
                     FaultKind.DISQUALIFIED)
    turn = await transport.ask(bot, GAME, move_call(0), 30.0)
    assert turn.fault is not None and turn.fault.kind is FaultKind.DISQUALIFIED
    assert turn.fault.message.startswith("invalid move: line already placed")


async def test_a_client_that_never_moves_runs_out_of_time() -> None:
    transport, bot, _ = await held(limit=0.05)
    await show(transport, bot, 0, to_move=True)
    turn = await transport.ask(bot, GAME, move_call(0), 30.0)
    assert turn.fault is not None and turn.fault.kind is FaultKind.TIMEOUT


def stall_then(seconds: float, deliver: Callable[[], object], turns: int) -> None:
    """Block the loop for ``seconds`` (the platform's own stall), then ``deliver`` a move
    ``turns`` loop turns later, as a socket reader hands on what it read during the stall."""
    time.sleep(seconds)
    loop = asyncio.get_running_loop()

    def step(left: int) -> None:
        if left:
            loop.call_soon(step, left - 1)
        else:
            deliver()

    step(turns)


@pytest.mark.parametrize(("sent", "taken"), [(True, True), (False, False)])
async def test_a_stall_of_the_platform_is_not_the_clients_lateness(sent: bool,
                                                                  taken: bool) -> None:
    """The loop blocks past the turn's deadline: the move that came meanwhile is read and
    taken (it is checked again once the loop has run); without one, the turn times out."""
    transport, bot, seat = await held(limit=0.1)
    await show(transport, bot, 0, to_move=True)
    loop = asyncio.get_running_loop()
    deliver = (lambda: seat.send({"position": 4}, "4")) if sent else (lambda: None)
    loop.call_later(0.02, stall_then, 0.2, deliver, 3)
    turn = await transport.ask(bot, GAME, move_call(0), 30.0)
    assert (turn.result == {"position": 4}) is taken
    assert (turn.fault is not None and turn.fault.kind is FaultKind.TIMEOUT) is not taken


async def test_a_request_waits_for_the_seats_next_move_not_for_the_others() -> None:
    transport, bot, seat = await held()
    await show(transport, bot, 0, to_move=True)
    version = seat.version
    assert seat.send({"position": 0}, "0")
    waiting = asyncio.ensure_future(seat.wait(version, 5.0))
    await show(transport, bot, 0, to_move=False)  # the other seat's turn
    await asyncio.sleep(0)
    assert not waiting.done()
    await show(transport, bot, 0, to_move=True)
    assert await waiting


async def test_the_end_answers_every_wait_and_keeps_the_final_params() -> None:
    transport, bot, seat = await held()
    await show(transport, bot, 0, to_move=False)
    waiting = asyncio.ensure_future(seat.wait(seat.version, 5.0))
    await transport.tell(bot, GAME, SeatCall(GAME_ID, GAME.calls.complete,
                                             {"winner": True}, 0), 5.0)
    assert await waiting
    assert seat.ended and seat.final == {"winner": True} and not seat.to_move


async def test_a_released_seat_is_gone_for_the_runner_and_its_pings() -> None:
    transport, bot, seat = await held()
    assert transport.holds(bot, GAME_ID)
    assert (await transport.ping(bot)).ok
    departure = transport.departure(bot, GAME_ID)
    assert departure is seat.left and not departure.is_set()
    transport.release(bot, GAME_ID)
    assert seat.ended and not transport.holds(bot, GAME_ID)
    gone = transport.departure(bot, GAME_ID)
    assert gone is not None and gone.is_set()
    ping = await transport.ping(bot)
    assert ping.fault is not None and ping.fault.kind is FaultKind.UNREACHABLE
    asked = await transport.ask(bot, GAME, move_call(0), 30.0)
    assert asked.fault is not None and asked.fault.kind is FaultKind.UNREACHABLE


@pytest.mark.parametrize("to_move", [0, 1])
async def test_one_guest_in_both_seats_is_asked_at_the_seat_that_moves(to_move: int) -> None:
    transport = PolledTransport()
    bot = guest()
    seats = [transport.hold(GAME_ID, number, bot, 30.0) for number in (0, 1)]
    for number in (0, 1):
        await show(transport, bot, number, to_move=number == to_move)
    assert [seat.to_move for seat in seats] == [to_move == 0, to_move == 1]
    assert seats[to_move].send({"position": 8}, "8")
    turn = await transport.ask(bot, GAME, move_call(to_move), 30.0)
    assert turn.result == {"position": 8}
    assert not transport.can_seat(bot)

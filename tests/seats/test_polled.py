"""Seats held by polling clients (merknera.seats.polled) through their held sessions: when
a client's move is taken, what the runner gets for it, how its requests wait, and how a seat
ends."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable

import pytest

from merknera.games import REGISTRY, Seat
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.faults import FaultKind
from merknera.seats import Call, Carriers, Moment, Session, Sitting
from merknera.seats.polled import PolledHold, PolledHolder
from merknera.store.bots import Bot, BotStatus

GAME = REGISTRY["TICTACTOE"]
GAME_ID = 7
MOVE = Call(GAME.calls.move, {})


def guest(bot_id: int = 1, name: str = "bob") -> Bot:
    return Bot(bot_id, name, "tictactoe", "TICTACTOE", 1, "(guests)", "", "", "", "",
               BotStatus.ONLINE, "", "now", None, protocol=BotProtocol.GUEST)


def state_with(to_move: Seat) -> object:
    """A tic-tac-toe state with ``to_move`` to move."""
    state = GAME.new(GAME.default_settings, ["bob", "bob"], random.Random(0))
    while (seat := GAME.to_move(state)) != to_move:
        assert seat is not None
        state = GAME.apply(state, seat, GAME.legal_moves(state, seat)[0])
    return state


def show(session: Session, to_move: bool) -> None:
    seat = session.sitting.seat
    session.show(Moment(GAME, state_with(seat if to_move else 1 - seat)))


def carriers(holder: PolledHolder) -> Carriers:
    return Carriers({}, {BotProtocol.GUEST: holder})


def open_session(holder: PolledHolder, bot: Bot, seat: Seat, begun: bool = False) -> Session:
    return carriers(holder).open(Sitting(GAME, GAME_ID, seat, bot, lambda: bot, begun))


async def held(limit: float = 30.0) -> tuple[PolledHolder, Session, PolledHold]:
    holder = PolledHolder()
    bot = guest()
    seat = holder.hold(GAME_ID, 0, bot, limit)
    return holder, open_session(holder, bot, 0), seat


async def test_a_move_is_taken_only_while_the_seat_has_the_move() -> None:
    _, session, seat = await held()
    assert not seat.send({"position": 4}, "4")  # no state shown yet
    show(session, to_move=False)
    assert not seat.send({"position": 4}, "4")
    show(session, to_move=True)
    assert seat.send({"position": 4}, '{"position": 4}')
    assert not seat.send({"position": 5}, "5")  # one move per state
    turn = await session.ask(MOVE, 30.0)
    assert turn.ok and turn.result == {"position": 4} and turn.reply == b'{"position": 4}'


async def test_a_faulty_move_gives_the_move_back_with_the_runners_message() -> None:
    _, session, seat = await held()
    show(session, to_move=True)
    version = seat.version
    assert seat.send("nonsense", "nonsense")
    await session.ask(MOVE, 30.0)
    assert not seat.to_move
    session.notify(Call(GAME.calls.error, {"message": "strike 1 of 3"}))
    assert await seat.wait(version, 1.0)
    assert seat.error == "strike 1 of 3" and seat.to_move


async def test_a_judged_refusal_reaches_the_runner_as_its_fault() -> None:
    _, session, seat = await held()
    show(session, to_move=True)
    assert seat.send(None, "[1]", "invalid move: line already placed. disqualified!",
                     FaultKind.DISQUALIFIED)
    turn = await session.ask(MOVE, 30.0)
    assert turn.fault is not None and turn.fault.kind is FaultKind.DISQUALIFIED
    assert turn.fault.message.startswith("invalid move: line already placed")


async def test_a_client_that_never_moves_runs_out_of_time() -> None:
    _, session, _ = await held(limit=0.05)
    show(session, to_move=True)
    turn = await session.ask(MOVE, 30.0)
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
    _, session, seat = await held(limit=0.1)
    show(session, to_move=True)
    loop = asyncio.get_running_loop()
    deliver = (lambda: seat.send({"position": 4}, "4")) if sent else (lambda: None)
    loop.call_later(0.02, stall_then, 0.2, deliver, 3)
    turn = await session.ask(MOVE, 30.0)
    assert (turn.result == {"position": 4}) is taken
    assert (turn.fault is not None and turn.fault.kind is FaultKind.TIMEOUT) is not taken


async def test_a_request_waits_for_the_seats_next_move_not_for_the_others() -> None:
    _, session, seat = await held()
    show(session, to_move=True)
    version = seat.version
    assert seat.send({"position": 0}, "0")
    waiting = asyncio.ensure_future(seat.wait(version, 5.0))
    show(session, to_move=False)  # the other seat's turn
    await asyncio.sleep(0)
    assert not waiting.done()
    show(session, to_move=True)
    assert await waiting


async def test_the_end_answers_every_wait_and_keeps_the_final_params() -> None:
    _, session, seat = await held()
    show(session, to_move=False)
    waiting = asyncio.ensure_future(seat.wait(seat.version, 5.0))
    session.notify(Call(GAME.calls.complete, {"winner": True}))
    assert await waiting
    assert seat.ended and seat.final == {"winner": True} and not seat.to_move


async def test_a_released_seat_is_gone_for_the_runner_and_its_pings() -> None:
    holder, session, seat = await held()
    bot = session.sitting.bot
    resumed = open_session(holder, bot, 0, begun=True)
    assert resumed.left is not None and not resumed.left.is_set()  # the seat is held
    assert (await carriers(holder).ping(bot)).ok
    departure = session.left
    assert departure is seat.left and not departure.is_set()
    session.close()
    after = open_session(holder, bot, 0, begun=True)
    assert seat.ended and after.left is not None and after.left.is_set()  # no longer held
    ping = await carriers(holder).ping(bot)
    assert ping.fault is not None and ping.fault.kind is FaultKind.UNREACHABLE
    for asked in (await session.ask(MOVE, 30.0), await after.ask(MOVE, 30.0)):
        assert asked.fault is not None and asked.fault.kind is FaultKind.UNREACHABLE


async def test_only_a_seat_without_its_client_at_a_resumed_game_is_lost() -> None:
    holder, _, seat = await held()
    bot = guest()
    seat.left.set()  # the client left before the game's runner started: its fault
    left_early = open_session(holder, bot, 0, begun=True)
    assert not left_early.lost and left_early.left is not None and left_early.left.is_set()
    unheld = open_session(holder, bot, 1, begun=True)  # no client holds seat 1
    assert unheld.lost and unheld.left is not None and unheld.left.is_set()
    assert not open_session(holder, bot, 1, begun=False).lost  # a new game waits for it


@pytest.mark.parametrize("to_move", [0, 1])
async def test_one_guest_in_both_seats_is_asked_at_the_seat_that_moves(to_move: int) -> None:
    holder = PolledHolder()
    bot = guest()
    seats = [holder.hold(GAME_ID, number, bot, 30.0) for number in (0, 1)]
    sessions = [open_session(holder, bot, number) for number in (0, 1)]
    for number in (0, 1):
        show(sessions[number], to_move=number == to_move)
    assert [seat.to_move for seat in seats] == [to_move == 0, to_move == 1]
    assert seats[to_move].send({"position": 8}, "8")
    turn = await sessions[to_move].ask(MOVE, 30.0)
    assert turn.result == {"position": 8}
    assert not carriers(holder).can_open(bot)

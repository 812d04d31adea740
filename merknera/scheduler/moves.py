"""The move loop: one move at a time, from the seat whose turn it is.

The way of one move: ask the game whose turn it is, ask that seat's session, let the game's
wire view parse the reply (InvalidMoveError) and its rules apply it (IllegalMoveError),
store the call in one short write, show every session the new state, make the calls that
follow (the move's announcements, or the Error that tells a faulty bot its strike or
forfeit), continue.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

from merknera.botclient import CallResult
from merknera.games import CHANCE, JSON, Announcement, JSONObject, Seat
from merknera.protocol.faults import FaultKind
from merknera.scheduler.play import Faulted, Play, Played, Verdict
from merknera.seats import Call, Moment
from merknera.store import logs

if TYPE_CHECKING:
    from merknera.scheduler.runner import GameRunner


async def play_one(runner: GameRunner, play: Play) -> bool:
    """Ask for one move (or draw a chance move) and store it; False if the game is gone."""
    arena, game = runner.arena, play.game
    seat = game.to_move(play.state)
    assert seat is not None
    if seat == CHANCE:
        move = game.sample_chance(play.state, play.rng)
        return await settle(runner, play, CHANCE, None,
                            Played(move, game.step(play.state, CHANCE, move)))
    session = runner.sessions[seat]
    if seat not in play.moved and not await arena.presence.ensure_fresh(play.bot_id(seat)):
        # docs/bots/protocol.md: a bot not heard from lately is pinged before its first move; one
        # that cannot be reached at its move faults like one that timed out.
        return await settle(runner, play, seat, None, Faulted(
            FaultKind.UNREACHABLE, f"{session.ping_name} before its first move got no answer"))
    bot_id = session.sitting.bot.id
    await arena.leases.secure(runner.game_id, play.rules.move_timeout)
    call = Call(game.calls.move, game.next_move_params(play.state, seat))
    asking = runner.asking(lambda: session.ask(call, play.rules.move_timeout))
    # A session whose answer is no call the platform makes (a person's thinking, for
    # minutes) holds no place in play meanwhile.
    waiting: AbstractAsyncContextManager[None] = (
        contextlib.nullcontext() if session.needs_place else runner.place.given_up())
    departures = {other: left for other, each in enumerate(runner.sessions)
                  if other != seat and (left := each.left) is not None}
    async with waiting:
        answer = await _first(asking, departures)
    # The place is held again, whatever the call that was given up held meanwhile (a
    # pause for the platform's own resources gives it up).
    await runner.place.take()
    if not isinstance(answer, CallResult):
        # Another seat's client left while this one was to move: it loses at once, as on
        # Battlebot, rather than at its next turn.
        return await settle(runner, play, answer, None, Faulted(
            FaultKind.UNREACHABLE, "its client disconnected while another player was to move"))
    reply = answer
    if reply.answered:
        arena.presence.heard(bot_id)
    if reply.fault is not None:
        if reply.fault.kind is FaultKind.UNREACHABLE:
            arena.presence.went_unreachable(bot_id, reply.fault.message)
        return await settle(runner, play, seat, reply,
                            Faulted(reply.fault.kind, reply.fault.message))
    return await settle(runner, play, seat, reply, play.judge(seat, reply.result))


async def _first(asking: Awaitable[CallResult],
                 departures: dict[Seat, asyncio.Event]) -> CallResult | Seat:
    """The mover's answer, or the seat (of ``departures``) whose client left first; the
    call to the mover is then given up."""
    if not departures:
        return await asking
    answer = asyncio.ensure_future(asking)
    waits = {asyncio.ensure_future(left.wait()): seat for seat, left in departures.items()}
    try:
        done, _ = await asyncio.wait([answer, *waits], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in waits:
            waiting.cancel()
    if answer in done:
        return answer.result()
    answer.cancel()
    await asyncio.gather(answer, return_exceptions=True)
    return min(seat for waiting, seat in waits.items() if waiting in done)


async def settle(runner: GameRunner, play: Play, seat: Seat, reply: CallResult | None,
                 verdict: Verdict) -> bool:
    """Store what a call gave, let :meth:`Play.advance` decide what it does to the game,
    then make the calls that follow: the move's announcements, or the Error that tells a
    faulty bot its strike or forfeit.  False if the game is gone."""
    if isinstance(verdict, Played):
        if not await runner.log.append(play, [(seat, reply, verdict)]):
            return False
        play.advance(seat, verdict)
        show(runner, play, seat, verdict.move, None if reply is None else reply.result)
        await announce(runner, play, verdict.step.announcements)
        return True
    return await faulted(runner, play, [(seat, reply, verdict)])


async def faulted(runner: GameRunner, play: Play,
                  faults: Sequence[tuple[Seat, CallResult | None, Faulted]]) -> bool:
    """Store faults, let :meth:`Play.advance` strike or forfeit each seat, and tell each bot
    what its fault cost; False if the game is gone."""
    if not await runner.log.append(play, faults):
        return False
    game = play.game
    for seat, _, verdict in faults:
        consequence = play.advance(seat, verdict)
        assert consequence is not None
        bot_id = runner.sessions[seat].sitting.bot.id
        text = f"{verdict.message} ({consequence.describe()})"
        await logs.write(runner.arena.db, bot_id, f"Fault {verdict.kind.value} "
                                                  f"(gameId: {runner.game_id}): {text}",
                         runner.game_id)
        params: JSONObject = game.error_params(play.state, seat)
        params.update({"message": text, "errorcode": verdict.kind.error_code})
        runner.sessions[seat].notify(Call(game.calls.error, params))
    return True


def show(runner: GameRunner, play: Play, mover: Seat | None = None, move: object = None,
         sent: JSON = None) -> None:
    """Show every session the game's state now (``mover``: the seat whose ``move`` led to
    it, None for the opening state; ``sent``: what the mover sent for it)."""
    moment = Moment(play.game, play.state, mover, move, sent)
    for session in runner.sessions:
        session.show(moment)


async def announce(runner: GameRunner, play: Play, notes: Sequence[Announcement]) -> None:
    """Deliver calls whose replies are ignored, in order for each seat, seats at once,
    before the game goes on (a bot must hear that its turn starts before it is asked)."""
    if not notes:
        return
    by_seat: dict[Seat, list[Announcement]] = {}
    for note in notes:
        by_seat.setdefault(note.seat, []).append(note)
    # Short: the game waits for these, and a bot slow to take them must not hold it up
    # for long (the replies are ignored anyway).
    limit = runner.arena.config.calls.announce_timeout

    async def deliver(seat: Seat, mine: list[Announcement]) -> None:
        for note in mine:
            await runner.sessions[seat].tell(Call(note.call, note.params), limit)

    await asyncio.gather(*(deliver(seat, mine) for seat, mine in by_seat.items()))

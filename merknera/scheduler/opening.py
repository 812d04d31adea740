"""The opening of a game: NewGame to every seat not yet ready, waiting up to the grace
period for seats that are offline and up to ``ready_timeout`` for seats that prepare; seats
absent or not ready then forfeit, and the others are shown the first state."""

from __future__ import annotations

import asyncio
import enum
import time
from typing import TYPE_CHECKING

from merknera.endpoints import endpoint_addresses
from merknera.games import JSONObject, Outcome, Seat, Termination
from merknera.protocol.faults import FaultKind
from merknera.scheduler import moves
from merknera.scheduler.play import Faulted, Play, absent_outcome
from merknera.seats import Call
from merknera.store import bots, games
from merknera.store.bots import BotStatus

if TYPE_CHECKING:
    from merknera.scheduler.runner import GameRunner


class _Answer(enum.Enum):
    """What a seat's answer to NewGame means."""

    READY = "READY"
    PREPARING = "PREPARING"
    UNREACHED = "UNREACHED"
    FAULTY = "FAULTY"
    """Late, broken, or not a reply on the bot's wire (asked again a few times)."""


_NEW_GAME_TRIES = 3


async def open_game(runner: GameRunner, play: Play) -> None:
    """Open the game with every seat, or end it (``play.forfeit``) if it cannot begin."""
    arena = runner.arena
    changed = _assets_changed(runner, play)
    if changed:
        play.forfeit = Outcome.no_result(Termination.ABORTED, changed)
        return
    gone = [seat for seat in range(play.seats) if arena.presence.bot(play.bot_id(seat)) is None]
    if gone:
        # Scheduled just before a seat was superseded or disabled: nobody is rated.
        stored = await bots.get_many(arena.db, [play.bot_id(seat) for seat in gone])
        retired = [bot.name for bot in stored.values()
                   if bot.status in (BotStatus.SUPERSEDED, BotStatus.DISABLED)]
        if retired:
            play.forfeit = Outcome.no_result(
                Termination.ABORTED, f"{', '.join(retired)} no longer plays (a newer "
                                     "version, or disabled) so the game cannot begin")
            return
    try:
        await _open(runner, play)
    finally:
        arena.readiness.forget(runner.game_id, range(play.seats))


def _assets_changed(runner: GameRunner, play: Play) -> str | None:
    """Why the game cannot be played with today's asset files, if it cannot."""
    recorded = play.record.settings.get("assets")
    if not isinstance(recorded, dict):
        return None
    current = {name: f.sha1 for name, f in
               runner.arena.assets.roles(play.game.mnemonic).items()}
    if recorded == current:
        return None
    names = ", ".join(sorted(n for n in set(recorded) | set(current)
                             if recorded.get(n) != current.get(n)))
    return (f"the game was scheduled with other asset files than the platform has now "
            f"({names})")


async def _open(runner: GameRunner, play: Play) -> None:
    arena = runner.arena
    deadline = time.monotonic() + arena.config.liveness.offline_grace
    absent: list[Seat] = []
    ready: list[Seat] = []
    preparing: list[Seat] = []
    for seat in range(play.seats):
        if play.record.seats[seat].ready:
            continue
        pause = arena.config.liveness.offline_retry_min
        tries = 0
        while True:
            if not await _reachable(runner, play, seat, deadline):
                absent.append(seat)
                break
            answer = await _new_game(runner, play, seat)
            tries += 1
            if answer is _Answer.READY or answer is _Answer.PREPARING or (
                    answer is _Answer.FAULTY and tries >= _NEW_GAME_TRIES):
                if answer is _Answer.READY:
                    ready.append(seat)
                    if play.game.assets:
                        # Kept at once: after a restart this seat needs no NewGame.
                        await games.mark_ready(arena.db, runner.game_id, seat)
                else:
                    preparing.append(seat)
                    # Where a nameless Ready may come from (see ReadyService): looked up
                    # once here, not at each Ready call.
                    arena.readiness.expect(runner.game_id, seat, await endpoint_addresses(
                        runner.bot(seat).endpoint, arena.config.calls.connect_timeout))
                break
            # NewGame went wrong (the bot could not be reached, or its answer was late or
            # broken): try again after a pause (with back-off), within the grace period.
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                absent.append(seat)
                break
            async with runner.place.given_up():
                await asyncio.sleep(min(pause, remaining))
            pause = min(pause * 2, arena.config.liveness.offline_retry_max)
    if absent:
        grace = arena.config.liveness.offline_grace
        play.forfeit = absent_outcome(
            play, absent, Termination.UNREACHABLE,
            f"stayed offline for more than {grace:g} s before the game began")
        return
    if preparing and not await _await_ready(runner, play, preparing):
        return
    await games.mark_running(arena.db, runner.game_id, ready)
    moves.show(runner, play)
    await moves.announce(runner, play, play.game.opening_announcements(play.state))


async def _await_ready(runner: GameRunner, play: Play, preparing: list[Seat]) -> bool:
    """Wait for the seats that prepare to call Ready; False if some did not in time."""
    arena = runner.arena
    async with runner.place.given_up():
        await arena.readiness.wait(runner.game_id, preparing, arena.config.liveness.ready_timeout)
    # Decided after the place is back: a Ready that came meanwhile counts.
    late = [seat for seat in preparing
            if not arena.readiness.is_ready(runner.game_id, seat)]
    if not late:
        return True
    calls = play.game.calls
    faults = []
    for seat in late:
        session = runner.sessions[seat]
        why = (f"did not answer {session.describe(calls.open)} with READY nor call "
               f"{session.describe(calls.ready)} within {arena.config.liveness.ready_timeout:g} s")
        faults.append((seat, None, Faulted(FaultKind.NOT_READY, why)))
    # Stored together: a stop between two seats' rows would end a resumed game with only
    # the first seat out, where this one ends with all of them out.
    await moves.faulted(runner, play, faults)
    return False


async def _new_game(runner: GameRunner, play: Play, seat: Seat) -> _Answer:
    """``<G>.NewGame`` to one seat, with the game's asset descriptors."""
    arena, game = runner.arena, play.game
    session = runner.sessions[seat]
    bot_id = session.sitting.bot.id
    params: JSONObject = {"players": play.seats}
    if game.assets:
        params.update(arena.assets.descriptors(game.mnemonic, arena.config.listeners.base_url))
    params.update(game.new_game_params(play.state, seat))
    call = Call(game.calls.open, params)
    reply = await runner.asking(lambda: session.ask(call, arena.config.calls.notify_timeout))
    if reply.fault is not None and reply.fault.kind is FaultKind.UNREACHABLE:
        opened = session.describe(game.calls.open)
        arena.presence.went_unreachable(bot_id, f"{opened}: {reply.fault.message}")
        return _Answer.UNREACHED
    if reply.answered:
        arena.presence.heard(bot_id)
    if not game.assets:
        # Nothing to prepare: whatever else the bot answers (Merknera's bots do not
        # implement NewGame at all) it counts as ready.
        return _Answer.READY
    if reply.fault is not None and reply.fault.kind is not FaultKind.RPC_ERROR:
        return _Answer.FAULTY  # late, broken or not JSON-RPC: ask again
    status = reply.result.get("status") if isinstance(reply.result, dict) else None
    if reply.ok and isinstance(status, str) and status.upper() == "READY":
        return _Answer.READY
    # PREPARING or PENDING, or an error or an answer that is neither: the seat must call
    # Ready.
    return _Answer.PREPARING


async def _reachable(runner: GameRunner, play: Play, seat: Seat, deadline: float) -> bool:
    """Whether the seat's bot can be asked now, waiting for it until ``deadline``."""
    presence = runner.arena.presence
    bot_id = play.bot_id(seat)
    if seat not in play.moved:
        await presence.ensure_fresh(bot_id)
    if presence.is_online(bot_id):
        return True
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    async with runner.place.given_up():
        return await presence.wait_online(bot_id, remaining)

"""The game runner: one task per running game, from the first NewGame to Complete.

The way of one move: ask the game whose turn it is, call that seat's bot, let the game's
wire view parse the reply (InvalidMoveError) and its rules apply it (IllegalMoveError),
store the call in one short write, continue.  Faults become strikes or forfeits exactly as
PROTOCOL.md section 3 says, so every game ends with an outcome and a reason.

A runner can start from any point: it rebuilds the state by replaying the stored moves from
the game's seed, so a game interrupted by a crash resumes where its log ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from merknera.botclient import CallResult, PlatformResourceError
from merknera.endpoints import endpoint_addresses
from merknera.events import GameFinished
from merknera.games import (
    CHANCE,
    JSON,
    Announcement,
    JSONObject,
    MoveError,
    Outcome,
    Seat,
    SeatResult,
    Termination,
    UnknownGameError,
    get_game,
)
from merknera.protocol.faults import FaultKind
from merknera.scheduler.arena import Arena
from merknera.scheduler.connected import ConnectedSeats
from merknera.scheduler.leases import LeaseLostError
from merknera.scheduler.movelog import MoveLog
from merknera.scheduler.play import (
    Faulted,
    Play,
    Played,
    ReplayError,
    Verdict,
    absent_outcome,
    completion_lines,
    rates,
    replay,
)
from merknera.seats import SeatCall
from merknera.store import bots, games, logs
from merknera.store.bots import Bot, BotStatus
from merknera.store.games import GameRecord, GameStatus

log = logging.getLogger(__name__)


class _Answer(enum.Enum):
    """What a seat's answer to NewGame means."""

    READY = "READY"
    PREPARING = "PREPARING"
    UNREACHED = "UNREACHED"
    FAULTY = "FAULTY"
    """Late, broken, or not a reply on the bot's wire (asked again a few times)."""


_NEW_GAME_TRIES = 3
RESOURCE_PAUSES = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Seconds between the tries of a call the platform could not make for want of its own
descriptors or memory (about 15 s in all; then the runner leaves the game to the claim
loop)."""


class GameRunner:
    """Plays one game to its end."""

    def __init__(self, arena: Arena, game_id: int) -> None:
        self._arena = arena
        self._game_id = game_id
        self._log = MoveLog(arena.db, arena.events, game_id, arena.leases.node)
        self._holding_slot = False
        self._owners: frozenset[int] = frozenset()  # the game counts against their shares
        self._needs_slot = True
        self._connected: ConnectedSeats | None = None  # connected clients' seats, once known

    async def run(self) -> None:
        """Play the game; never raises except when cancelled."""
        try:
            record = await self._arena.leases.take(self._game_id)
            if record is not None:
                await self._run(record)
        except LeaseLostError as exc:
            log.warning("%s; its runner here stops", exc)
        except PlatformResourceError as exc:
            # The platform, not a bot, is short of descriptors or memory: the game stays as
            # stored, for the claim loop to start again from its moves (nobody forfeits).
            log.warning("game %d: %s; it goes on from its stored moves later",
                        self._game_id, exc)
        except Exception as exc:
            # A bug or a store failure.  Ending the game without a result keeps the arena
            # moving; the traceback goes to the platform log for the operator.
            log.exception("game %d: the runner failed", self._game_id)
            with contextlib.suppress(Exception):
                await self._finish_without_play(
                    Termination.ABORTED, f"the platform could not continue: {type(exc).__name__}")
        finally:
            self._release()
            self._arena.leases.release(self._game_id)
            if self._connected is not None:
                self._connected.release()

    async def _run(self, record: GameRecord) -> None:
        arena = self._arena
        if record.status is GameStatus.FINISHED:
            return
        # The presence knows every current bot; the store is asked only for the others.
        known = {seat.bot_id: bot for seat in record.seats
                 if (bot := arena.presence.bot(seat.bot_id)) is not None}
        missing = [seat.bot_id for seat in record.seats if seat.bot_id not in known]
        if missing:  # those current here too: registered at another node just now
            known.update(await bots.get_many(arena.db, missing))
            for bot in (known[bot_id] for bot_id in missing if bot_id in known):
                arena.presence.learn(bot)
        seated: list[Bot] = []
        for seat in record.seats:
            if seat.bot_id not in known:
                raise RuntimeError(f"game {record.id} seats bot {seat.bot_id}, which is unknown")
            seated.append(known[seat.bot_id])
        # A place in play bounds the calls made to bots: connected clients' seats need
        # none, so only called seats' owners count (see also _play_one).
        connected = self._connected = ConnectedSeats(arena, record.id, seated)
        called = [bot for seat, bot in enumerate(seated) if seat not in connected]
        self._owners = frozenset(bot.user_id for bot in called)
        self._needs_slot = bool(called)
        game = self._arena.games.get(record.game) or get_game(record.game)
        rules = self._arena.config.rules_for(record.game)
        try:
            play = replay(record, game, rules, seated)
        except (ReplayError, UnknownGameError, MoveError, ValueError) as exc:
            await self._finish_without_play(Termination.ABORTED,
                                            f"the stored game cannot be replayed: {exc}")
            return
        lost = connected.lost(record)
        if lost:
            # Their sockets closed with the process that ran the game: neither they nor
            # their opponents are to blame, so nobody is rated.
            await self._finish_without_play(
                Termination.ABORTED, f"the connection of {', '.join(lost)} to the game was "
                                     "lost when the platform stopped")
            return
        await self._acquire()
        if play.forfeit is None and not record.moves:
            await self._start(play)
        while play.forfeit is None and play.game.outcome(play.state) is None:
            if not await self._play_one(play):
                return  # the game was finished elsewhere (superseded)
        outcome = play.forfeit or play.game.outcome(play.state)
        assert outcome is not None
        await self._finish(play, outcome)

    # -- the lifecycle ----------------------------------------------------------------------

    async def _start(self, play: Play) -> None:
        """Send NewGame to every seat not yet ready, waiting up to the grace period for
        seats that are offline and up to ``ready_timeout`` for seats that prepare; seats
        absent or not ready then forfeit."""
        arena = self._arena
        changed = self._assets_changed(play)
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
            await self._open(play)
        finally:
            arena.readiness.forget(self._game_id, range(play.seats))

    def _assets_changed(self, play: Play) -> str | None:
        """Why the game cannot be played with today's asset files, if it cannot."""
        recorded = play.record.settings.get("assets")
        if not isinstance(recorded, dict):
            return None
        current = {name: f.sha1 for name, f in
                   self._arena.assets.roles(play.game.mnemonic).items()}
        if recorded == current:
            return None
        names = ", ".join(sorted(n for n in set(recorded) | set(current)
                                 if recorded.get(n) != current.get(n)))
        return (f"the game was scheduled with other asset files than the platform has now "
                f"({names})")

    async def _open(self, play: Play) -> None:
        arena = self._arena
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
                if not await self._reachable(play, seat, deadline):
                    absent.append(seat)
                    break
                answer = await self._new_game(play, seat)
                tries += 1
                if answer is _Answer.READY or answer is _Answer.PREPARING or (
                        answer is _Answer.FAULTY and tries >= _NEW_GAME_TRIES):
                    if answer is _Answer.READY:
                        ready.append(seat)
                        if play.game.assets:
                            # Kept at once: after a restart this seat needs no NewGame.
                            await games.mark_ready(arena.db, self._game_id, seat)
                    else:
                        preparing.append(seat)
                        # Where a nameless Ready may come from (see ReadyService): looked
                        # up once here, not at each Ready call.
                        arena.readiness.expect(self._game_id, seat, await endpoint_addresses(
                            self._bot(play, seat).endpoint, arena.config.calls.connect_timeout))
                    break
                # NewGame went wrong (the bot could not be reached, or its answer was late
                # or broken): try again after a pause (with back-off), within the grace
                # period.
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    absent.append(seat)
                    break
                self._release()
                await asyncio.sleep(min(pause, remaining))
                await self._acquire()
                pause = min(pause * 2, arena.config.liveness.offline_retry_max)
        if absent:
            grace = arena.config.liveness.offline_grace
            play.forfeit = absent_outcome(
                play, absent, Termination.UNREACHABLE,
                f"stayed offline for more than {grace:g} s before the game began")
            return
        if preparing and not await self._await_ready(play, preparing):
            return
        await games.mark_running(arena.db, self._game_id, ready)
        await self._show(play)
        await self._announce(play, play.game.opening_announcements(play.state))

    async def _announce(self, play: Play, notes: Sequence[Announcement]) -> None:
        """Deliver calls whose replies are ignored, in order for each seat, seats at once,
        before the game goes on (a bot must hear that its turn starts before it is asked)."""
        if not notes:
            return
        arena, game = self._arena, play.game
        by_seat: dict[Seat, list[Announcement]] = {}
        for note in notes:
            by_seat.setdefault(note.seat, []).append(note)

        async def deliver(seat: Seat, mine: list[Announcement]) -> None:
            bot = self._bot(play, seat)
            for note in mine:
                # Short: the game waits for these, and a bot slow to take them must not
                # hold it up for long (the replies are ignored anyway).
                await arena.seats.tell(bot, game, SeatCall(self._game_id, note.call,
                                                           note.params, seat),
                                       arena.config.calls.announce_timeout)

        await asyncio.gather(*(deliver(seat, mine) for seat, mine in by_seat.items()))

    async def _await_ready(self, play: Play, preparing: list[Seat]) -> bool:
        """Wait for the seats that prepare to call Ready; False if some did not in time."""
        arena = self._arena
        self._release()
        await arena.readiness.wait(self._game_id, preparing, arena.config.liveness.ready_timeout)
        await self._acquire()
        # Decided after the slot is back: a Ready that came meanwhile counts.
        late = [seat for seat in preparing
                if not arena.readiness.is_ready(self._game_id, seat)]
        if not late:
            return True
        game, calls = play.game, play.game.calls
        faults = []
        for seat in late:
            wire = arena.seats.of(self._bot(play, seat))
            why = (f"did not answer {wire.describe(game, calls.open)} with READY nor call "
                   f"{wire.describe(game, calls.ready)} within "
                   f"{arena.config.liveness.ready_timeout:g} s")
            faults.append((seat, None, Faulted(FaultKind.NOT_READY, why)))
        # Stored together: a stop between two seats' rows would end a resumed game with
        # only the first seat out, where this one ends with all of them out.
        await self._faulted(play, faults)
        return False

    async def _new_game(self, play: Play, seat: Seat) -> _Answer:
        """``<G>.NewGame`` to one seat, with the game's asset descriptors."""
        arena, game = self._arena, play.game
        bot = self._bot(play, seat)
        params: JSONObject = {"players": play.seats}
        if game.assets:
            params.update(arena.assets.descriptors(game.mnemonic, arena.config.listeners.base_url))
        params.update(game.new_game_params(play.state, seat))
        call = SeatCall(self._game_id, game.calls.open, params, seat)
        reply = await self._asking(lambda: arena.seats.ask(bot, game, call,
                                                           arena.config.calls.notify_timeout))
        if reply.fault is not None and reply.fault.kind is FaultKind.UNREACHABLE:
            opened = arena.seats.of(bot).describe(game, game.calls.open)
            arena.presence.went_unreachable(bot.id, f"{opened}: {reply.fault.message}")
            return _Answer.UNREACHED
        if reply.status is not None:
            arena.presence.heard(bot.id)
        if not game.assets:
            # Nothing to prepare: whatever else the bot answers (Merknera's bots do not
            # implement NewGame at all) it counts as ready.
            return _Answer.READY
        if reply.fault is not None and reply.fault.kind is not FaultKind.RPC_ERROR:
            return _Answer.FAULTY  # late, broken or not JSON-RPC: ask again
        status = reply.result.get("status") if isinstance(reply.result, dict) else None
        if reply.ok and isinstance(status, str) and status.upper() == "READY":
            return _Answer.READY
        # PREPARING or PENDING, or an error or an answer that is neither: the seat must
        # call Ready.
        return _Answer.PREPARING

    async def _reachable(self, play: Play, seat: Seat, deadline: float) -> bool:
        """Whether the seat's bot can be asked now, waiting for it until ``deadline``."""
        presence = self._arena.presence
        bot_id = play.bot_id(seat)
        if seat not in play.moved:
            await presence.ensure_fresh(bot_id)
        if presence.is_online(bot_id):
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        self._release()
        online = await presence.wait_online(bot_id, remaining)
        await self._acquire()  # not on cancellation: run() has nothing left to release
        return online

    async def _play_one(self, play: Play) -> bool:
        """Ask for one move (or draw a chance move) and store it; False if the game is gone."""
        arena, game = self._arena, play.game
        seat = game.to_move(play.state)
        assert seat is not None
        if seat == CHANCE:
            move = game.sample_chance(play.state, play.rng)
            return await self._settle(play, CHANCE, None,
                                      Played(move, game.step(play.state, CHANCE, move)))
        if seat not in play.moved and not await arena.presence.ensure_fresh(play.bot_id(seat)):
            # PROTOCOL.md: a bot not heard from lately is pinged before its first move; one
            # that cannot be reached at its move faults like one that timed out.
            ping = arena.seats.of(self._bot(play, seat)).ping_name
            return await self._settle(play, seat, None, Faulted(
                FaultKind.UNREACHABLE, f"{ping} before its first move got no answer"))
        bot = self._bot(play, seat)
        await arena.leases.hold(self._game_id, play.rules.move_timeout)
        call = SeatCall(self._game_id, game.calls.move, game.next_move_params(play.state, seat),
                        seat)
        asking = self._asking(lambda: arena.seats.ask(bot, game, call, play.rules.move_timeout))
        waiting = self._connected is not None and seat in self._connected  # no call is made,
        if waiting:  # so a person's thinking (minutes) holds no place in play meanwhile
            self._release()
        answer = await (self._connected.race(seat, asking) if self._connected else asking)
        if waiting:
            await self._acquire()
        if not isinstance(answer, CallResult):
            # Another seat's client left while this one was to move: it loses at once,
            # as on Battlebot, rather than at its next turn.
            return await self._settle(play, answer, None, Faulted(
                FaultKind.UNREACHABLE, "its client disconnected while another player was to move"))
        reply = answer
        if reply.status is not None:
            arena.presence.heard(bot.id)
        if reply.fault is not None:
            if reply.fault.kind is FaultKind.UNREACHABLE:
                arena.presence.went_unreachable(bot.id, reply.fault.message)
            return await self._settle(play, seat, reply,
                                      Faulted(reply.fault.kind, reply.fault.message))
        return await self._settle(play, seat, reply, play.judge(seat, reply.result))

    async def _settle(self, play: Play, seat: Seat, reply: CallResult | None,
                      verdict: Verdict) -> bool:
        """Store what a call gave, let :meth:`Play.advance` decide what it does to the
        game, then make the calls that follow: the move's announcements, or the Error
        that tells a faulty bot its strike or forfeit.  False if the game is gone."""
        if isinstance(verdict, Played):
            if not await self._log.append(play, [(seat, reply, verdict)]):
                return False
            play.advance(seat, verdict)
            await self._show(play, seat, verdict.move, None if reply is None else reply.result)
            await self._announce(play, verdict.step.announcements)
            return True
        return await self._faulted(play, [(seat, reply, verdict)])

    async def _faulted(self, play: Play,
                       faults: Sequence[tuple[Seat, CallResult | None, Faulted]]) -> bool:
        """Store faults, let :meth:`Play.advance` strike or forfeit each seat, and tell each
        bot what its fault cost; False if the game is gone."""
        if not await self._log.append(play, faults):
            return False
        game = play.game
        for seat, _, verdict in faults:
            consequence = play.advance(seat, verdict)
            assert consequence is not None
            bot = self._bot(play, seat)
            text = f"{verdict.message} ({consequence.describe()})"
            await logs.write(self._arena.db, bot.id, f"Fault {verdict.kind.value} "
                                                     f"(gameId: {self._game_id}): {text}",
                             self._game_id)
            params: JSONObject = game.error_params(play.state, seat)
            params.update({"message": text, "errorcode": verdict.kind.error_code})
            await self._tell(play, seat, SeatCall(self._game_id, game.calls.error, params, seat))
        return True

    # -- the end ------------------------------------------------------------------------------

    async def _finish(self, play: Play, outcome: Outcome) -> None:
        arena, game = self._arena, play.game
        if not await self._log.written():
            return
        seats = [self._bot(play, seat) for seat in range(play.seats)]
        results = [outcome.result_for(seat) for seat in range(play.seats)]
        log_lines = completion_lines(self._game_id, seats, results, outcome.detail)
        rated = rates(play, outcome)
        if not await games.finish(arena.db, self._game_id, outcome, game.state_to_json(
                play.state), log_lines, arena.leases.node, rated):
            return
        if rated:
            arena.rater.poke()  # its result is queued for rating
        at_fault = tuple(
            bot.id for seat, bot in enumerate(seats)
            if play.strikes[seat] > 0 or (outcome.termination.is_forfeit
                                          and results[seat] is SeatResult.LOSS))
        finished = GameFinished(
            self._game_id, game.mnemonic, tuple(f"{b.name} ({b.version})" for b in seats),
            tuple(results), outcome.termination, outcome.detail,
            outcome.scores, tuple(bot.id for bot in seats), at_fault)
        arena.events.publish(finished)
        arena.after_game(finished)
        for seat in range(play.seats):
            params: JSONObject = {"winner": results[seat] is SeatResult.WIN}
            params.update(game.complete_params(play.state, seat, outcome))
            await self._tell(play, seat, SeatCall(self._game_id, game.calls.complete, params,
                                                  seat))

    async def _finish_without_play(self, termination: Termination, detail: str) -> None:
        await games.finish(self._arena.db, self._game_id, Outcome.no_result(termination, detail),
                           None, node=self._arena.leases.node)

    # -- helpers ------------------------------------------------------------------------------

    async def _show(self, play: Play, mover: Seat | None = None, move: object = None,
                    sent: JSON = None) -> None:
        """Show the seats held by connected clients the game's state now."""
        if self._connected:
            await self._connected.show(play, mover, move, sent)

    async def _tell(self, play: Play, seat: Seat, call: SeatCall) -> None:
        """A call whose reply is ignored: in the background (after the calls sent to the
        bot before), or in line to a seat held by a connected client."""
        if self._connected is not None and seat in self._connected:
            await self._connected.tell(play, seat, call)
        else:
            self._arena.notifier.send(self._bot(play, seat), play.game, [call])

    async def _asking(self, call: Callable[[], Awaitable[CallResult]]) -> CallResult:
        """Make a call to a bot, waiting (without a place in play) while the platform is
        short of descriptors or memory; the last try's PlatformResourceError stops the
        runner, and the game waits for the claim loop (see :meth:`run`)."""
        for pause in RESOURCE_PAUSES:
            try:
                return await call()
            except PlatformResourceError as exc:
                log.warning("game %d: %s; trying again in %g s", self._game_id, exc, pause)
                self._release()
                await asyncio.sleep(pause)
                await self._acquire()
        return await call()

    def _bot(self, play: Play, seat: Seat) -> Bot:
        """The seat's bot with its latest endpoint and secret."""
        return self._arena.latest(play.bots[seat])

    async def _acquire(self) -> None:
        if not self._holding_slot and self._needs_slot:
            await self._arena.slots.acquire(self._owners)
            self._holding_slot = True

    def _release(self) -> None:
        if self._holding_slot:
            self._holding_slot = False
            self._arena.slots.release(self._owners)

"""The game runner: one task per running game, from the first NewGame to Complete.

A runner opens a session per seat (:mod:`merknera.seats`) and talks only to its sessions.
It plays the game in three phases, a module each: the opening (:mod:`.opening`: NewGame,
readiness, reachability), the move loop (:mod:`.moves`), and the end (:mod:`.ending`).
Faults become strikes or forfeits exactly as docs/bots/protocol.md section 3 says, so every
game ends with an outcome and a reason.

A runner can start from any point: it rebuilds the state by replaying the stored moves from
the game's seed, so a game interrupted by a crash resumes where its log ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager

from merknera.botclient import CallResult, PlatformResourceError
from merknera.games import MoveError, Seat, Termination, UnknownGameError, get_game
from merknera.scheduler import ending, moves, opening
from merknera.scheduler.arena import Arena
from merknera.scheduler.leases import LeaseLostError
from merknera.scheduler.movelog import MoveLog
from merknera.scheduler.play import ReplayError, replay
from merknera.scheduler.slots import Place
from merknera.seats import Session, Sitting
from merknera.store import bots
from merknera.store.bots import Bot
from merknera.store.games import GameRecord, GameStatus

log = logging.getLogger(__name__)

RESOURCE_PAUSES = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Seconds between the tries of a call the platform could not make for want of its own
descriptors or memory (about 15 s in all; then the runner leaves the game to the claim
loop)."""


class GameRunner:
    """Plays one game to its end; what the phases of its play share."""

    def __init__(self, arena: Arena, game_id: int) -> None:
        self.arena = arena
        self.game_id = game_id
        self.log = MoveLog(arena.db, arena.events, game_id, arena.leases.node)
        self.place = Place(arena.slots)
        """The game's place in play (see :meth:`_run` for whose share it counts in)."""
        self.sessions: list[Session] = []
        """The seats' sessions, in seat order (once the game's bots are known)."""

    async def run(self) -> None:
        """Play the game; never raises except when cancelled."""
        try:
            record = await self.arena.leases.take(self.game_id)
            if record is not None:
                await self._run(record)
        except LeaseLostError as exc:
            log.warning("%s; its runner here stops", exc)
        except PlatformResourceError as exc:
            # The platform, not a bot, is short of descriptors or memory: the game stays as
            # stored, for the claim loop to start again from its moves (nobody forfeits).
            log.warning("game %d: %s; it goes on from its stored moves later",
                        self.game_id, exc)
        except Exception as exc:
            # A bug or a store failure.  Ending the game without a result keeps the arena
            # moving; the traceback goes to the platform log for the operator.
            log.exception("game %d: the runner failed", self.game_id)
            with contextlib.suppress(Exception):
                await ending.finish_without_play(
                    self, Termination.ABORTED,
                    f"the platform could not continue: {type(exc).__name__}")
        finally:
            self.place.give_up()
            self.arena.leases.release(self.game_id)
            for session in self.sessions:
                session.close()

    async def _run(self, record: GameRecord) -> None:
        arena = self.arena
        if record.status is GameStatus.FINISHED:
            return
        seated = await self._seated(record)
        game = arena.games.get(record.game) or get_game(record.game)
        rules = arena.config.rules_for(record.game)
        try:
            play = replay(record, game, rules, seated)
        except (ReplayError, UnknownGameError, MoveError, ValueError) as exc:
            await ending.finish_without_play(self, Termination.ABORTED,
                                             f"the stored game cannot be replayed: {exc}")
            return
        # Opened once the game can be played: a held client is kept for it from then on.
        # A held client's game lives on its connection: one that began (or that a
        # gateway's lobby matched for connections it had) cannot go on over another.
        begun = record.status is not GameStatus.PENDING or record.origin == "MATCH"
        self.sessions = [arena.carriers.open(Sitting(game, record.id, seat, bot,
                                                     functools.partial(arena.latest, bot),
                                                     begun, self._idle))
                         for seat, bot in enumerate(seated)]
        # A place in play bounds the calls made to bots: the game counts in the shares of
        # the owners of the bots it calls (none, if every seat's client holds a
        # connection: then it needs no place at all).
        self.place = Place(arena.slots, {session.sitting.bot.user_id
                                         for session in self.sessions if session.needs_place})
        lost = [session.sitting.bot.name for session in self.sessions if session.lost]
        if lost:
            # Their connections closed with the process that ran the game: neither they nor
            # their opponents are to blame, so nobody is rated.
            await ending.finish_without_play(
                self, Termination.ABORTED, f"the connection of {', '.join(lost)} to the game "
                                           "was lost when the platform stopped")
            return
        await self.place.take()
        if play.forfeit is None and not record.moves:
            await opening.open_game(self, play)
        while play.forfeit is None and play.game.outcome(play.state) is None:
            if not await moves.play_one(self, play):
                return  # the game was finished elsewhere (superseded)
        outcome = play.forfeit or play.game.outcome(play.state)
        assert outcome is not None
        await ending.finish(self, play, outcome)

    def _idle(self) -> AbstractAsyncContextManager[None]:
        """The game's place given up (:attr:`Sitting.idle`)."""
        return self.place.given_up()

    async def _seated(self, record: GameRecord) -> list[Bot]:
        """The game's bots in seat order."""
        arena = self.arena
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
        return seated

    def bot(self, seat: Seat) -> Bot:
        """The seat's bot with its latest registration (endpoint, secret)."""
        return self.sessions[seat].sitting.latest()

    async def asking(self, call: Callable[[], Awaitable[CallResult]]) -> CallResult:
        """Make a call to a bot, waiting (without a place in play) while the platform is
        short of descriptors or memory; the last try's PlatformResourceError stops the
        runner, and the game waits for the claim loop (see :meth:`run`)."""
        for pause in RESOURCE_PAUSES:
            try:
                return await call()
            except PlatformResourceError as exc:
                log.warning("game %d: %s; trying again in %g s", self.game_id, exc, pause)
                async with self.place.given_up():
                    await asyncio.sleep(pause)
        return await call()

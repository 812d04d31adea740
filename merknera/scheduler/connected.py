"""The seats of one game held by connected clients (a gateway's, such as Battlebot's):
their transports see every state (:attr:`~merknera.seats.Transport.witnesses`), are told in
line, keep a client for a game made for it, and let it go when the runner is done.

A connected client's game lives on its connection: once a game began (or a gateway's lobby
matched it for connections it had), it cannot go on over another connection, so a runner
that finds such a connection gone (a restart) ends the game without a result.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence

from merknera.botclient import CallResult
from merknera.games import CHANCE, JSON, Seat
from merknera.scheduler.arena import Arena
from merknera.scheduler.play import Play
from merknera.seats import SeatCall, Witnessed
from merknera.store.bots import Bot
from merknera.store.games import GameRecord, GameStatus


class ConnectedSeats:
    """The connected seats of one game."""

    def __init__(self, arena: Arena, game_id: int, seated: Sequence[Bot]) -> None:
        self._arena = arena
        self._game_id = game_id
        self._bots = {seat: bot for seat, bot in enumerate(seated)
                      if arena.seats.of(bot).witnesses}

    def __contains__(self, seat: Seat) -> bool:
        return seat in self._bots

    def __bool__(self) -> bool:
        return bool(self._bots)

    def lost(self, record: GameRecord) -> list[str]:
        """The names of the bots whose connection the game needs and has lost.  A game
        that has not begun keeps its clients (reserved) for its opening instead."""
        begun = record.status is not GameStatus.PENDING or record.origin == "MATCH"
        lost = []
        for bot in self._bots.values():
            transport = self._arena.seats.of(bot)
            if not begun:
                transport.reserve(bot, self._game_id)
            elif not transport.holds(bot, self._game_id):
                lost.append(bot.name)
        return lost

    async def show(self, play: Play, mover: Seat | None = None, move: object = None,
                   sent: JSON = None) -> None:
        """Show each connected seat the game's state now, and the move that led to it."""
        if not self._bots:
            return
        game = play.game
        wire = None if mover is None else game.move_to_wire(move)
        stamp = int(time.time() * 1000)
        to_move = game.to_move(play.state)
        for seat in sorted(self._bots):
            bot = self._arena.latest(self._bots[seat])
            seen = Witnessed(self._game_id, game.next_move_params(play.state, seat),
                             None if mover == CHANCE else mover, wire, sent, stamp, seat,
                             to_move == seat, play.state)
            await self._arena.seats.of(bot).witness(bot, game, seen)

    async def tell(self, play: Play, seat: Seat, call: SeatCall) -> None:
        """A call whose reply is ignored, to a connected seat: in line, so that it comes
        before the seat is asked again (it only queues a message)."""
        await self._arena.seats.tell(self._arena.latest(self._bots[seat]), play.game, call,
                                     self._arena.config.calls.notify_timeout)

    async def race(self, mover: Seat, asking: Awaitable[CallResult]) -> CallResult | Seat:
        """The mover's answer, or the other connected seat whose client left first (the
        call to the mover is then given up)."""
        watched = {seat: left for seat, bot in self._bots.items() if seat != mover
                   and (left := self._arena.seats.of(bot).departure(bot, self._game_id))}
        if not watched:
            return await asking
        answer = asyncio.ensure_future(asking)
        waits = {asyncio.ensure_future(left.wait()): seat for seat, left in watched.items()}
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

    def release(self) -> None:
        """The runner is done: let every client go that the game still holds."""
        for bot in self._bots.values():
            self._arena.seats.of(bot).release(bot, self._game_id)

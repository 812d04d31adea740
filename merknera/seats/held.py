"""Held sessions: seats whose clients hold a connection to the platform (Battlebot's
WebSocket clients, polled hexagons and Kalaha seats, people in the browser), whatever the
wire.

A held client is not called: its gateway shows it the game's states on its connection and
takes its turns from what it sends (:mod:`merknera.seats.turns`).  One session serves every
such wire (:class:`HeldSession`); a wire gives only its :class:`Hold` (one client's end of
one seat) and the :class:`Holder` that finds a seat's hold among its clients.

A held client's game lives on its connection: once the game began it cannot go on over
another connection, so a session opened for a game that began before its runner (after a
restart) whose client is not held has left already.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Generic, TypeVar

from merknera.botclient import CallResult, Fault
from merknera.games import AnyGame
from merknera.protocol.faults import FaultKind
from merknera.seats.base import Call, Carrier, Moment, Session, Sitting
from merknera.seats.turns import NOTHING_SENT, Turns, gone, next_turn
from merknera.store.bots import Bot


class Hold(ABC):
    """One client's hold on one seat of one game, as its gateway keeps it: what the seat's
    session does on the client's connection, in the client's wire."""

    turns: Turns
    """The client's turns in the game."""

    @property
    @abstractmethod
    def left(self) -> asyncio.Event:
        """Set once the client has left the game (its connection closed, or it gave the
        game up)."""

    @abstractmethod
    def turn_limit(self, time_limit: float) -> float:
        """Seconds the client has for a turn: its wire's own limit, or ``time_limit``, the
        platform's for the call."""

    @abstractmethod
    def show(self, moment: Moment) -> None:
        """Show the client a state of the game (and, with it, whether it is to move)."""

    @abstractmethod
    def faulted(self, error: Call) -> None:
        """The turn last judged (:attr:`Turns.judging`; None if the client sent nothing)
        was faulty: ``error`` is the game's Error call, whose ``message`` says why and
        what it cost."""

    @abstractmethod
    def end(self, complete: Call) -> None:
        """The game is over: ``complete`` is the game's Complete call for the seat."""

    def asked(self, call: Call, opening: bool) -> bool:
        """The client is asked ``call`` (``opening``: the game's open call, once the hold
        was taken for it): True if the client's next turn answers it, False if the call
        asks nothing of the client.  A wire that sends calls sends it here.  A client shown
        every state is sent nothing: its hold opens the game for it, and the states tell
        it when it is to move."""
        return not opening

    def told(self, call: Call) -> None:  # noqa: B027  # most wires send nothing
        """Another call whose reply is ignored (an announcement).  A client shown every
        state learns what it says from the states."""


HoldT = TypeVar("HoldT", bound=Hold)


class Holder(ABC, Generic[HoldT]):
    """Where a held kind keeps its clients (a gateway's hub, the polled seats): what the
    held sessions of its seats ask of it."""

    ping_name: str
    """What a ping is on this wire, for messages."""

    @abstractmethod
    def describe(self, game: AnyGame, name: str) -> str:
        """:meth:`Session.describe` for every session of this kind."""

    @abstractmethod
    def take(self, sitting: Sitting) -> HoldT | None:
        """The hold of the seat's client now, if it has one, taken for the session.  For a
        game that has not begun (:attr:`Sitting.begun`), a free client of the bot is
        reserved for it here, so that nothing else takes it before the game opens."""

    @abstractmethod
    async def claim(self, sitting: Sitting, time_limit: float) -> HoldT | str:
        """The hold of the seat's client for the game's opening, waiting up to
        ``time_limit`` seconds for a client where the wire lets one connect then; else
        why there is none."""

    @abstractmethod
    def let_go(self, hold: HoldT) -> None:
        """The game's runner is done with the hold, however the game ended or stopped."""

    @abstractmethod
    def free(self, bot: Bot) -> bool:
        """Whether a client of the bot is connected and free for a new game that the
        platform makes (the ladder's)."""

    @abstractmethod
    async def ping(self, bot: Bot) -> CallResult:
        """:meth:`Carrier.ping` for a bot of this kind."""


class HeldSession(Session, Generic[HoldT]):
    """A seat held by a client connected to the platform, whatever its wire."""

    needs_place = False

    def __init__(self, holder: Holder[HoldT], sitting: Sitting) -> None:
        super().__init__(sitting)
        self._holder = holder
        self._hold = holder.take(sitting)
        self._away = asyncio.Event()
        """:attr:`left` while there is no hold: set for a game that began without one."""
        self.lost = self._hold is None and sitting.begun
        if self.lost:
            self._away.set()

    @property
    def left(self) -> asyncio.Event:
        return self._away if self._hold is None else self._hold.left

    @property
    def ping_name(self) -> str:
        return self._holder.ping_name

    def describe(self, name: str) -> str:
        return self._holder.describe(self.sitting.game, name)

    async def ask(self, call: Call, time_limit: float) -> CallResult:
        """The game's open call first takes the client's hold for the game (the client
        has ``time_limit`` seconds to be there); a call the client answers is answered by
        its next turn."""
        name = self.sitting.bot.name
        opening = call.name == self.sitting.game.calls.open
        hold = self._hold
        if opening:
            claimed = await self._holder.claim(self.sitting, time_limit)
            if isinstance(claimed, str):
                return CallResult(NOTHING_SENT, fault=Fault(FaultKind.UNREACHABLE, claimed))
            hold = self._hold = claimed
        elif hold is None or hold.turns.finished or hold.left.is_set():
            return gone(name)
        if not hold.asked(call, opening):
            return CallResult(NOTHING_SENT)
        return await next_turn(hold.turns, hold.left, hold.turn_limit(time_limit), name)

    async def tell(self, call: Call, time_limit: float) -> None:
        self.notify(call)

    def notify(self, call: Call) -> None:
        """In line, whatever the call: it only queues a message on the client's
        connection, and it comes before the seat is asked again."""
        hold = self._hold
        if hold is None:
            return
        calls = self.sitting.game.calls
        if call.name == calls.error:
            hold.faulted(call)
        elif call.name == calls.complete:
            hold.end(call)
        else:
            hold.told(call)

    def show(self, moment: Moment) -> None:
        if self._hold is not None:
            self._hold.show(moment)

    def close(self) -> None:
        if self._hold is not None:
            self._holder.let_go(self._hold)


class HeldCarrier(Carrier, Generic[HoldT]):
    """The carrier of a held kind: held sessions over the kind's :class:`Holder`."""

    def __init__(self, holder: Holder[HoldT]) -> None:
        self._holder = holder
        self.ping_name = holder.ping_name

    def open(self, sitting: Sitting) -> Session:
        return HeldSession(self._holder, sitting)

    async def ping(self, bot: Bot) -> CallResult:
        return await self._holder.ping(bot)

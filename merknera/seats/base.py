"""The seat transport interface, and the table that picks a bot's transport."""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field

from merknera.botclient import CallResult
from merknera.games import JSON, AnyGame, JSONObject, Seat
from merknera.protocol.bot_protocols import BotProtocol
from merknera.store.bots import Bot


@dataclass(frozen=True)
class SeatCall:
    """One call to one seat, as the game names it (the wire is the transport's)."""

    game_id: int
    """The platform's id of the game."""
    name: str
    """The game's name for the call: one of its :class:`~merknera.games.Calls`, or an
    :class:`~merknera.games.Announcement`'s ``call``."""
    params: JSONObject
    """The game's values for the call, without the game id."""
    seat: Seat | None = None
    """The seat called (one bot may hold two seats of a game: a hot-seat board's guest)."""


@dataclass(frozen=True)
class Witnessed:
    """A state of a game that a seat's client is shown: the opening state, or the state
    after a move (for transports whose clients see every state, :attr:`Transport.witnesses`).
    """

    game_id: int
    view: JSONObject
    """The seat's view of the state: the game's NextMove params for the seat."""
    mover: Seat | None = None
    """The seat that moved to it (None for the opening state)."""
    move: JSON = None
    """That move as the game writes it (:meth:`~merknera.games.Game.move_to_wire`)."""
    sent: JSON = None
    """What the mover sent for it (its reply's value), when it was asked."""
    at_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    """When the move was played, in ms since the epoch."""
    seat: Seat = 0
    """The seat shown the state."""
    to_move: bool = False
    """Whether the seat has the move in it."""
    state: object = None
    """The game's state itself, for a gateway that renders it in its own wire."""


class Transport(ABC):
    """How the platform calls bots of one protocol."""

    ping_name: str
    """What a ping is on this wire, for messages (``"Status.Ping"``)."""
    ping_names_bot: bool = False
    """Whether the ping's answer carries the name the bot gives itself (then the bot is
    pinged as soon as it registers, for its page)."""
    witnesses: bool = False
    """Whether the transport's clients see every state of their games (:meth:`witness`).
    Such a transport is told in line (an Error before the seat is asked again, the final
    state after the last move's): its calls only queue messages on a connection."""

    def can_seat(self, bot: Bot) -> bool:
        """Whether a new game could open for the bot now (a connected client plays one
        game at a time)."""
        return True

    def reserve(self, bot: Bot, game_id: int) -> None:
        """Keep the bot for a game that was just made (a connected client: its connection,
        before anything else takes it)."""
        return

    def holds(self, bot: Bot, game_id: int) -> bool:
        """Whether a game that began can go on with the bot: a connected client's game
        cannot on another connection (after a restart, its socket is gone)."""
        return True

    def departure(self, bot: Bot, game_id: int) -> asyncio.Event | None:
        """An event set when the bot's client leaves the game (a connected client's
        connection closing); None for a bot that is called, which never leaves."""
        return None

    def release(self, bot: Bot, game_id: int) -> None:
        """The game's runner is done with the bot, however the game ended or stopped (a
        connected client's connection is let go, if the game still holds it)."""
        return

    async def witness(self, bot: Bot, game: AnyGame, seen: Witnessed) -> None:
        """Show the bot's client a state of its game (only if :attr:`witnesses`)."""
        # Not abstract: most transports' bots see only what their calls carry.
        return

    @abstractmethod
    def describe(self, game: AnyGame, name: str) -> str:
        """The call named ``name`` as this wire shows it, for messages to the bot's author
        (``"Scrabble.NewGame"``)."""

    @abstractmethod
    async def ask(self, bot: Bot, game: AnyGame, call: SeatCall,
                  time_limit: float) -> CallResult:
        """Make a call whose answer matters (the game's open and move calls) and check the
        reply's envelope: the result is the JSON value the game reads (a move), or a
        classified fault.  ``time_limit`` is the platform's limit for the call; a protocol
        with its own per-call limit (the Squelchbot arena's 1 s) uses that instead.

        :raises PlatformResourceError: only when the platform itself is short of
            descriptors or memory.
        """

    @abstractmethod
    async def tell(self, bot: Bot, game: AnyGame, call: SeatCall,
                   time_limit: float) -> CallResult:
        """Deliver a call whose reply is ignored (announcements, Error, Complete).  Never
        raises: a call the platform cannot make is dropped (see BotClient.notify)."""

    @abstractmethod
    async def ping(self, bot: Bot) -> CallResult:
        """Whether the bot answers: a result (the name it gives itself, where the wire
        has one) or a fault.

        :raises PlatformResourceError: as :meth:`ask`.
        """


class Seats:
    """Every transport, by the protocol its bots speak."""

    def __init__(self, transports: Mapping[BotProtocol, Transport]) -> None:
        self._transports = dict(transports)

    def of(self, bot: Bot) -> Transport:
        """The transport that reaches ``bot``."""
        return self._transports[bot.protocol]

    async def ask(self, bot: Bot, game: AnyGame, call: SeatCall,
                  time_limit: float) -> CallResult:
        """:meth:`Transport.ask` on the bot's transport."""
        return await self.of(bot).ask(bot, game, call, time_limit)

    async def tell(self, bot: Bot, game: AnyGame, call: SeatCall,
                   time_limit: float) -> CallResult:
        """:meth:`Transport.tell` on the bot's transport."""
        return await self.of(bot).tell(bot, game, call, time_limit)

    async def ping(self, bot: Bot) -> CallResult:
        """:meth:`Transport.ping` on the bot's transport."""
        return await self.of(bot).ping(bot)

    def can_seat(self, bot: Bot) -> bool:
        """:meth:`Transport.can_seat` on the bot's transport."""
        return self.of(bot).can_seat(bot)

"""The seat transport interface, and the table that picks a bot's transport."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass

from merknera.botclient import CallResult
from merknera.games import AnyGame, JSONObject
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


class Transport(ABC):
    """How the platform calls bots of one protocol."""

    ping_name: str
    """What a ping is on this wire, for messages (``"Status.Ping"``)."""
    ping_names_bot: bool = False
    """Whether the ping's answer carries the name the bot gives itself (then the bot is
    pinged as soon as it registers, for its page)."""

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

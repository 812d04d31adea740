"""Every carrier by the protocol its bots speak, and the one answer to whether a new game
can open for a bot."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from merknera.botclient import CallResult
from merknera.logcontext import GAME_ID
from merknera.protocol.bot_protocols import BotProtocol
from merknera.seats.base import CallMade, CallWatcher, Carrier, Session, Sitting
from merknera.seats.called import CalledCarrier
from merknera.seats.held import HeldCarrier, Holder
from merknera.store.bots import Bot


class Carriers:
    """Every carrier, by the protocol its bots speak: those of bots that are called as
    they are, and for every held kind the held carrier over its holder."""

    def __init__(self, called: Mapping[BotProtocol, Carrier],
                 held: Mapping[BotProtocol, Holder[Any]]) -> None:
        self._holders = dict(held)
        self._carriers: dict[BotProtocol, Carrier] = {**called,
                          **{protocol: HeldCarrier(holder) for protocol, holder in held.items()}}
        self._watchers: list[CallWatcher] = []
        for carrier in self._carriers.values():
            if isinstance(carrier, CalledCarrier):
                carrier.watchers = self._watchers  # one list: the carriers see each watcher

    def watch(self, watcher: CallWatcher) -> None:
        """Show ``watcher`` every call made from now on to a bot that is called (not a held
        client's turns): its games' calls, whose reply counts or not, and its pings
        (``merknera try`` follows a bot's calls so)."""
        self._watchers.append(watcher)

    def of(self, bot: Bot) -> Carrier:
        """The carrier that reaches ``bot``."""
        return self._carriers[bot.protocol]

    def open(self, sitting: Sitting) -> Session:
        """:meth:`Carrier.open` on the seated bot's carrier."""
        return self.of(sitting.bot).open(sitting)

    async def ping(self, bot: Bot) -> CallResult:
        """:meth:`Carrier.ping` on the bot's carrier (shown to the watchers)."""
        carrier = self.of(bot)
        result = await carrier.ping(bot)
        if self._watchers and isinstance(carrier, CalledCarrier):
            # A ping before a seat's first move is made in its game's context.
            seen = CallMade(bot, GAME_ID.get(), None, None, carrier.ping_name, result,
                            heeded=True)
            for watcher in self._watchers:
                watcher(seen)
        return result

    def can_open(self, bot: Bot) -> bool:
        """Whether a new game could open for the bot now: a held client's only while its
        holder has it free for one (:meth:`Holder.free`: a Battlebot client plays one game
        per connection, a guest only the games its players start); a called bot's
        always."""
        holder = self._holders.get(bot.protocol)
        return holder is None or holder.free(bot)

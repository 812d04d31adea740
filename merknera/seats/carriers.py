"""Every carrier by the protocol its bots speak, and the one answer to whether a new game
can open for a bot."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from merknera.botclient import CallResult
from merknera.protocol.bot_protocols import BotProtocol
from merknera.seats.base import Carrier, Session, Sitting
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

    def of(self, bot: Bot) -> Carrier:
        """The carrier that reaches ``bot``."""
        return self._carriers[bot.protocol]

    def open(self, sitting: Sitting) -> Session:
        """:meth:`Carrier.open` on the seated bot's carrier."""
        return self.of(sitting.bot).open(sitting)

    async def ping(self, bot: Bot) -> CallResult:
        """:meth:`Carrier.ping` on the bot's carrier."""
        return await self.of(bot).ping(bot)

    def can_open(self, bot: Bot) -> bool:
        """Whether a new game could open for the bot now: a held client's only while its
        holder has it free for one (:meth:`Holder.free`: a Battlebot client plays one game
        per connection, a guest only the games its players start); a called bot's
        always."""
        holder = self._holders.get(bot.protocol)
        return holder is None or holder.free(bot)

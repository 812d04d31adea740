"""The protocols a bot may speak to the platform (``RegistrationService.Register``'s
``protocol`` param), and which games each can carry."""

from __future__ import annotations

import enum


class BotProtocol(enum.Enum):
    """How the platform calls a bot: its wire, chosen at registration."""

    JSONRPC = "jsonrpc"
    """Merknera's JSON-RPC convention (PROTOCOL.md): every game."""
    SQUELCH_REST = "squelch-rest"
    """The Squelchbot REST API (``seeds/000_*``): ``rpcendpoint`` is the bot's base URL."""

    @property
    def games(self) -> frozenset[str] | None:
        """The mnemonics of the games this protocol can carry; ``None`` for every game."""
        return _GAMES[self]

    @property
    def base_url(self) -> bool:
        """Whether ``rpcendpoint`` is a base URL that the protocol's paths go under (so it
        may have no query or fragment), rather than the one URL called."""
        return self is not BotProtocol.JSONRPC

    def carries(self, mnemonic: str) -> bool:
        """Whether a bot speaking this protocol can play ``mnemonic``."""
        games = self.games
        return games is None or mnemonic in games


_GAMES: dict[BotProtocol, frozenset[str] | None] = {
    BotProtocol.JSONRPC: None,
    BotProtocol.SQUELCH_REST: frozenset({"SQUELCH"}),
}

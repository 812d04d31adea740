"""The protocols a bot may speak to the platform (``RegistrationService.Register``'s
``protocol`` param), and which games each can carry."""

from __future__ import annotations

import enum


class BotProtocol(enum.Enum):
    """How the platform calls a bot: its wire, chosen at registration."""

    JSONRPC = "jsonrpc"
    """Merknera's JSON-RPC convention (docs/bots/protocol.md): every game."""
    JSONRPC_SOCKET = "jsonrpc-socket"
    """Merknera's JSON-RPC convention over a WebSocket the bot opens to ``/rpc/ws``
    (docs/bots/protocol.md section 7): the same calls as :attr:`JSONRPC`, for a bot the
    platform cannot reach (behind NAT, on a laptop).  Registered only over that socket."""
    SQUELCH_REST = "squelch-rest"
    """The Squelchbot REST API (``seeds/000_*``): ``rpcendpoint`` is the bot's base URL."""
    BATTLEBOT_SALT = "battlebot-salt"
    """Battlebot's first protocol (``seeds/002_*``, research a.2-a.6): registered with
    ``POST /bots/<game>``, a WebSocket client that logs in with a salted hash."""
    BATTLEBOT_GRAPHQL = "battlebot-graphql"
    """Battlebot's last protocol (research a.10): registered with the GraphQL mutation
    ``registerBot``, a WebSocket client that logs in with its password."""
    GUEST = "guest"
    """A client without an account, of a gateway whose seed had none: a MebiPenny hexagons
    player (seeds/001_*), a Kalaha board's player (seeds/004_*), a person playing in the
    browser.  It plays only the games its gateway makes for it, never the ladder's."""

    @property
    def connects(self) -> bool:
        """Whether the bot connects to the platform (a client of a gateway, with no
        endpoint the platform could call, registered at that gateway) rather than serving
        calls at an endpoint."""
        return self in _CONNECTING

    @property
    def title(self) -> str:
        """The protocol's name for people (a bot's page)."""
        return _TITLES[self]

    @property
    def games(self) -> frozenset[str] | None:
        """The mnemonics of the games this protocol can carry; ``None`` for every game."""
        return _GAMES[self]

    @property
    def base_url(self) -> bool:
        """Whether ``rpcendpoint`` is a base URL that the protocol's paths go under (so it
        may have no query or fragment), rather than the one URL called."""
        return self is BotProtocol.SQUELCH_REST

    def carries(self, mnemonic: str) -> bool:
        """Whether a bot speaking this protocol can play ``mnemonic``."""
        games = self.games
        return games is None or mnemonic in games


_GAMES: dict[BotProtocol, frozenset[str] | None] = {
    BotProtocol.JSONRPC: None,
    BotProtocol.JSONRPC_SOCKET: None,
    BotProtocol.SQUELCH_REST: frozenset({"SQUELCH"}),
    BotProtocol.BATTLEBOT_SALT: frozenset({"NOUGHTSANDCROSSES", "NUMBERWANG"}),
    BotProtocol.BATTLEBOT_GRAPHQL: frozenset({"NOUGHTSANDCROSSES", "NUMBERWANG"}),
    BotProtocol.GUEST: frozenset({"HEXAGONS", "KALAHA", "TICTACTOE"}),
}

_CONNECTING = frozenset({BotProtocol.BATTLEBOT_SALT, BotProtocol.BATTLEBOT_GRAPHQL,
                         BotProtocol.GUEST})

_TITLES = {
    BotProtocol.JSONRPC: "JSON-RPC",
    BotProtocol.JSONRPC_SOCKET: "JSON-RPC over a WebSocket it opens (it connects out)",
    BotProtocol.SQUELCH_REST: "the Squelchbot REST API",
    BotProtocol.BATTLEBOT_SALT: "Battlebot's WebSocket protocol (salted login, 2017)",
    BotProtocol.BATTLEBOT_GRAPHQL: "Battlebot's WebSocket protocol (GraphQL registration, 2017)",
    BotProtocol.GUEST: "a guest without an account (a hexagons player, a Kalaha board, a person)",
}

"""The kinds of fault a bot can commit, and the codes ``<G>.Error`` carries for them."""

from __future__ import annotations

import enum


class FaultKind(enum.Enum):
    """What went wrong with a call to a bot, from the transport up to the rules."""

    TIMEOUT = "TIMEOUT"
    """No complete reply within the time allowed."""
    UNREACHABLE = "UNREACHABLE"
    """No connection could be made (refused, DNS failure, address not allowed, reset)."""
    HTTP_STATUS = "HTTP_STATUS"
    """The bot answered with an HTTP status other than 200."""
    MALFORMED_REPLY = "MALFORMED_REPLY"
    """The body is not a reply to the call on the bot's wire (bad JSON, a JSON-RPC reply with
    the wrong id, too large)."""
    RPC_ERROR = "RPC_ERROR"
    """The bot answered with a JSON-RPC error."""
    INVALID_MOVE = "INVALID_MOVE"
    """The result is not a move of the game."""
    ILLEGAL_MOVE = "ILLEGAL_MOVE"
    """The move is not allowed by the rules."""
    NOT_READY = "NOT_READY"
    """The bot was not ready for the game in time."""
    DISQUALIFIED = "DISQUALIFIED"
    """A malformed or illegal move on a protocol whose server disqualified a player for its
    first one (the MebiPenny hexagons server): the game is forfeited at once."""

    @property
    def error_code(self) -> int:
        """The ``errorcode`` sent in ``<G>.Error`` (documented in README.md)."""
        return ERROR_CODES[self]


ERROR_CODES: dict[FaultKind, int] = {
    FaultKind.TIMEOUT: 1,
    FaultKind.UNREACHABLE: 2,
    FaultKind.HTTP_STATUS: 3,
    FaultKind.MALFORMED_REPLY: 4,
    FaultKind.RPC_ERROR: 5,
    FaultKind.INVALID_MOVE: 6,
    FaultKind.ILLEGAL_MOVE: 7,
    FaultKind.NOT_READY: 8,
    FaultKind.DISQUALIFIED: 9,
}

"""Seat transports: how the runner reaches a seated bot, whatever its wire.

The runner speaks to seats only in the game's names for its calls
(:class:`merknera.games.Calls`, :class:`merknera.games.Announcement`): open the game, ask
for a move within a time limit, tell (a call whose reply is ignored), ping.  Each
transport maps those names onto its wire and classifies what comes back into the same
:class:`~merknera.botclient.CallResult` and fault kinds, so strikes and forfeits do not
depend on the wire.
"""

from __future__ import annotations

from merknera.seats.base import SeatCall, Seats, Transport, Witnessed
from merknera.seats.jsonrpc import JsonRpcTransport
from merknera.seats.squelch_rest import SquelchRestTransport

__all__ = ["JsonRpcTransport", "SeatCall", "Seats", "SquelchRestTransport", "Transport",
           "Witnessed"]

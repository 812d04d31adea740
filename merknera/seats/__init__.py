"""How the runner reaches a seat, whatever its wire.

A carrier (:class:`Carrier`) opens a session (:class:`Session`) per game and seat, and the
runner talks only to sessions, in the game's names for its calls
(:class:`merknera.games.Calls`, :class:`merknera.games.Announcement`): ask, tell, show a
state, notice that the client left, close.  A called bot's session makes a request per call
(:mod:`.called`: JSON-RPC over HTTP or over the socket a bot opened (:mod:`.sockets`), the
Squelchbot REST API); a held session waits on a client that
holds a connection to the platform (:mod:`.held`: Battlebot's sockets, polled hexagons and
Kalaha seats).  Either classifies what comes back into the same
:class:`~merknera.botclient.CallResult` and fault kinds, so strikes and forfeits do not
depend on the wire.
"""

from __future__ import annotations

from merknera.seats.base import Call, CallMade, CallWatcher, Carrier, Moment, Session, Sitting
from merknera.seats.called import CalledCarrier, CalledSession, Notifier
from merknera.seats.carriers import Carriers
from merknera.seats.held import HeldCarrier, HeldSession, Hold, Holder
from merknera.seats.jsonrpc import HttpLine, JsonRpcCarrier, JsonRpcLine
from merknera.seats.sockets import BotSocket, Sockets
from merknera.seats.squelch_rest import SquelchRestCarrier

__all__ = ["BotSocket", "Call", "CallMade", "CallWatcher", "CalledCarrier", "CalledSession",
           "Carrier", "Carriers", "HeldCarrier", "HeldSession", "Hold", "Holder", "HttpLine",
           "JsonRpcCarrier", "JsonRpcLine", "Moment", "Notifier", "Session", "Sitting",
           "Sockets", "SquelchRestCarrier"]

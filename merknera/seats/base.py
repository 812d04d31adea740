"""The session interface the runner speaks to, and the carrier that opens sessions.

A game's runner opens one :class:`Session` per seat (:meth:`Carrier.open`) and from then on
talks only to its sessions, in the game's names for its calls: ask (a call whose answer
matters), tell (a call whose reply is ignored), show a state, notice that the client left,
close.  What a session does with them is its carrier's wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from merknera.botclient import CallResult
from merknera.clock import now_ms
from merknera.games import CHANCE, JSON, AnyGame, JSONObject, Seat
from merknera.store.bots import Bot


@dataclass(frozen=True)
class Call:
    """One call to a seat, as the game names it (the wire is the session's)."""

    name: str
    """The game's name for the call: one of its :class:`~merknera.games.Calls`, or an
    :class:`~merknera.games.Announcement`'s ``call``."""
    params: JSONObject
    """The game's values for the call, without the game id."""


@dataclass(frozen=True)
class CallMade:
    """A call the platform made to a bot it calls, and what came of it: what a watcher of
    the carriers is shown (:meth:`~merknera.seats.Carriers.watch`)."""

    bot: Bot
    """The bot called, as registered when the call was made."""
    game_id: int | None
    """The game the call was made for; None for a ping outside a game's runner (the
    pinger's)."""
    seat: Seat | None
    """The bot's seat in that game; None for a ping."""
    call: str | None
    """The game's name for the call (:class:`~merknera.games.Calls`, an
    :class:`~merknera.games.Announcement`'s); None for a ping."""
    method: str
    """The call as its wire shows it to the bot's author (``"TicTacToe.NextMove"``,
    ``"PUT /match/{matchId}/end"``, ``"Status.Ping"``)."""
    result: CallResult
    """What came back, the envelope checked (a move's rules are the runner's to apply)."""
    heeded: bool
    """Whether the platform reads the reply: a call asked (opening, move) or a ping; not
    a call told or notified (announcements, Error, Complete), whose reply is ignored."""


CallWatcher = Callable[[CallMade], None]
"""Shown every call made through the carriers; it must return at once and not raise (it
runs on the game's path)."""


@dataclass(frozen=True)
class Sitting:
    """A bot in one seat of one game: what a session is opened for."""

    game: AnyGame
    game_id: int
    """The platform's id of the game."""
    seat: Seat
    """The seat (one bot may hold two seats of a game: a hot-seat board's guest)."""
    bot: Bot
    """The bot as the game seated it (its id and name)."""
    latest: Callable[[], Bot]
    """The bot's latest registration: the endpoint and secret to call now."""
    begun: bool = False
    """Whether the game had begun before this runner took it up: a client that holds a
    connection cannot take up such a game on another connection."""
    idle: Callable[[], AbstractAsyncContextManager[None]] = contextlib.nullcontext
    """A block in which the game holds no place in play: for a session that waits for its
    bot to connect again, which makes no call meanwhile (the runner's
    :meth:`~merknera.scheduler.slots.Place.given_up`)."""


class Moment:
    """A state of a game, as its sessions are shown it: the opening state, or the state a
    move led to.

    Every session is shown every state; most ignore it (a called bot sees only what its
    calls carry), so what a state would look like to a seat is worked out only when a
    session asks (:attr:`move`, :attr:`to_move`, :meth:`view`).
    """

    def __init__(self, game: AnyGame, state: object, mover: Seat | None = None,
                 move: object = None, sent: JSON = None) -> None:
        self.game = game
        self.state = state
        """The game's state itself (the rules' object), for a gateway that renders it in
        its own wire."""
        self.opening = mover is None
        """Whether this is the game's first state (no move led to it)."""
        self.mover = None if mover == CHANCE else mover
        """The seat that moved to it (None for the opening state and after a chance
        move)."""
        self._move = move
        self.sent = sent
        """What the mover sent for the move (its reply's value), when it was asked."""
        self.at_ms = now_ms()
        """When the move was played, in ms since the epoch."""

    @functools.cached_property
    def move(self) -> JSON:
        """The move that led to the state as the game writes it
        (:meth:`~merknera.games.Game.move_to_wire`); None for the opening state."""
        return None if self.opening else self.game.move_to_wire(self._move)

    @functools.cached_property
    def to_move(self) -> Seat | None:
        """The seat to move in the state (:data:`~merknera.games.CHANCE`, or None once the
        game is over)."""
        return self.game.to_move(self.state)

    def view(self, seat: Seat) -> JSONObject:
        """The seat's view of the state: the game's NextMove params for it."""
        return self.game.next_move_params(self.state, seat)


class Session(ABC):
    """One seat of one game as its runner reaches it, whatever the wire.

    A session classifies what comes back into the same :class:`~merknera.botclient.CallResult`
    and fault kinds on every wire, so that strikes and forfeits do not depend on it.
    """

    needs_place: bool = True
    """Whether the runner holds a place in play while it waits on the session's answers: a
    called bot's (the places bound the calls the platform makes), not a held client's (a
    person may think for minutes, and no call is made meanwhile)."""

    lost: bool = False
    """Whether the seat's client was gone when the session opened, with the process that
    ran the game before (a held client's game cannot go on over another connection): the
    game cannot go on, and nobody is to blame."""

    def __init__(self, sitting: Sitting) -> None:
        self.sitting = sitting

    @property
    def left(self) -> asyncio.Event | None:
        """Set once the seat's client has left the game (its connection closed, it gave
        the game up); None for a seat whose bot is called, which never leaves."""
        return None

    @property
    @abstractmethod
    def ping_name(self) -> str:
        """What a ping of the seat's bot is on this wire, for messages (``"Status.Ping"``)."""

    @abstractmethod
    def describe(self, name: str) -> str:
        """The call named ``name`` as this wire shows it, for messages to the bot's author
        (``"Scrabble.NewGame"``)."""

    @abstractmethod
    async def ask(self, call: Call, time_limit: float) -> CallResult:
        """Make a call whose answer matters (the game's open and move calls): the JSON value
        the game reads (a move), or a classified fault.  ``time_limit`` is the platform's
        limit for the call; a wire with its own limit (the Squelchbot arena's 1 s, a
        Battlebot turn's) uses that instead.

        :raises PlatformResourceError: only when the platform itself is short of
            descriptors or memory.
        """

    @abstractmethod
    async def tell(self, call: Call, time_limit: float) -> None:
        """Deliver a call whose reply is ignored before the game goes on (an
        announcement: a bot must hear that its turn starts before it is asked).  Never
        raises: a call the platform cannot make is dropped."""

    @abstractmethod
    def notify(self, call: Call) -> None:
        """Deliver a call whose reply is ignored without holding the game up (Error,
        Complete), after the calls notified before it."""

    def show(self, moment: Moment) -> None:  # noqa: B027  # most sessions see no states
        """Show the seat's client a state of its game (a held client sees every state)."""

    def close(self) -> None:  # noqa: B027  # a called bot's session holds nothing
        """The runner is done with the seat, however the game ended or stopped."""


class Carrier(ABC):
    """How the platform reaches the bots of one protocol: it opens a session per game and
    seat, and pings the bots."""

    ping_name: str
    """What a ping is on this wire, for messages (``"Status.Ping"``)."""
    ping_names_bot: bool = False
    """Whether the ping's answer carries the name the bot gives itself (then the bot is
    pinged as soon as it registers, for its page)."""
    knows_liveness: bool = False
    """Whether the carrier knows by itself whether a bot is there (its socket is open):
    then a ping before a move tells nothing, and the move's call waits for the bot."""

    @abstractmethod
    def open(self, sitting: Sitting) -> Session:
        """The session of a bot's seat at a game."""

    @abstractmethod
    async def ping(self, bot: Bot) -> CallResult:
        """Whether the bot answers: a result (the name it gives itself, where the wire
        has one) or a fault.

        :raises PlatformResourceError: as :meth:`Session.ask`.
        """

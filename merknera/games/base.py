"""The shared vocabulary of every game's rules.

A game is a value-level description of play: an immutable state, the seat to move, the
legal moves, ``apply`` and an outcome, plus the *wire view* that turns a state into the
params of a JSON-RPC call for one seat and a bot's reply into a move.  Nothing here does
I/O; randomness comes from a :class:`random.Random` owned by the caller.

Two errors separate the two ways a move can be wrong, as python-chess does:

* :class:`InvalidMoveError`: the reply is not a move at all (wrong shape, wrong type,
  out of range).
* :class:`IllegalMoveError`: the reply is a well-formed move that the rules forbid in
  this state (an occupied square, not your turn).
"""

from __future__ import annotations

import enum
import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeAlias, TypeVar

JSON: TypeAlias = "bool | int | float | str | list[JSON] | dict[str, JSON] | None"
"""A JSON value as :mod:`json` produces and accepts it."""

JSONObject: TypeAlias = dict[str, JSON]

Seat: TypeAlias = int
"""A seat index: 0 for the first seat, 1 for the second, and so on."""

CHANCE: Seat = -1
"""Returned by :meth:`Game.to_move` when the next move is drawn by chance."""

StateT = TypeVar("StateT")
MoveT = TypeVar("MoveT")


class MoveError(ValueError):
    """A bot's move could not be played."""


class InvalidMoveError(MoveError):
    """The reply does not describe a move of this game (malformed)."""


class IllegalMoveError(MoveError):
    """The move is well formed but the rules do not allow it in this state."""


class Termination(enum.Enum):
    """Why a game ended.  One enum for every game and every platform reason."""

    NORMAL = "NORMAL"
    """The rules ended the game (a line was completed, the board is full, ...)."""
    TIMEOUT = "TIMEOUT"
    """A bot did not answer its move in time and forfeited."""
    UNREACHABLE = "UNREACHABLE"
    """A bot could not be reached at its move, or stayed offline past the grace period."""
    STRIKES = "STRIKES"
    """A bot made its third faulty reply (malformed, illegal, or an error) and forfeited; or
    it was disqualified for its first, on a protocol whose server did that (the MebiPenny
    hexagons server)."""
    NOT_READY = "NOT_READY"
    """A bot did not become ready for the game in time and forfeited."""
    SUPERSEDED = "SUPERSEDED"
    """A newer version of a seated bot was registered; the game ended without a result."""
    ABORTED = "ABORTED"
    """The platform could not continue the game; it ended without a result."""

    @property
    def is_forfeit(self) -> bool:
        """Whether a bot lost this game by its own fault."""
        return self in _FORFEITS


_FORFEITS = frozenset(
    {Termination.TIMEOUT, Termination.UNREACHABLE, Termination.STRIKES, Termination.NOT_READY}
)


class SeatResult(enum.Enum):
    """How a game ended for one seat."""

    WIN = "WIN"
    DRAW = "DRAW"
    LOSS = "LOSS"
    NONE = "NONE"
    """The game ended without a result (superseded or aborted)."""


@dataclass(frozen=True)
class Outcome:
    """How a game ended.

    ``ranks`` holds one rank per seat: 0 is best and equal ranks are tied, so a two-seat
    win is ``(0, 1)`` and a draw ``(0, 0)``.  ``ranks is None`` means the game ended
    without a result.
    """

    termination: Termination
    ranks: tuple[int, ...] | None
    detail: str = ""
    """A sentence that says how the game ended, for people."""
    scores: tuple[float, ...] | None = None
    """Game points per seat, for games that keep a score."""
    offender: Seat | None = None
    """The seat whose fault ended the game, for forfeits."""

    @classmethod
    def win(cls, winner: Seat, seats: int, detail: str,
            scores: tuple[float, ...] | None = None) -> Outcome:
        """A normal end with a single winner and everyone else tied behind."""
        ranks = tuple(0 if seat == winner else 1 for seat in range(seats))
        return cls(Termination.NORMAL, ranks, detail, scores)

    @classmethod
    def draw(cls, seats: int, detail: str, scores: tuple[float, ...] | None = None) -> Outcome:
        """A normal end in which every seat ties."""
        return cls(Termination.NORMAL, (0,) * seats, detail, scores)

    @classmethod
    def forfeit(cls, offender: Seat, seats: int, termination: Termination, detail: str,
                standings: tuple[float, ...] | None = None) -> Outcome:
        """The offender is ranked last; the others share first place, or, given the
        ``standings`` (points so far), are ranked by them."""
        if not termination.is_forfeit:
            raise ValueError(f"{termination} is not a forfeit")
        if standings is None:
            ranks = tuple(1 if seat == offender else 0 for seat in range(seats))
        else:
            others = sorted({points for seat, points in enumerate(standings)
                             if seat != offender}, reverse=True)
            ranks = tuple(len(others) if seat == offender else others.index(points)
                          for seat, points in enumerate(standings))
        return cls(termination, ranks, detail, scores=standings, offender=offender)

    @classmethod
    def by_scores(cls, scores: tuple[float, ...], detail: str) -> Outcome:
        """A normal end ranked by score: higher is better, equal scores tie."""
        distinct = sorted(set(scores), reverse=True)
        return cls(Termination.NORMAL, tuple(distinct.index(s) for s in scores), detail, scores)

    @classmethod
    def no_result(cls, termination: Termination, detail: str) -> Outcome:
        """An end that rates nobody (superseded or aborted)."""
        return cls(termination, None, detail)

    @property
    def winners(self) -> tuple[Seat, ...]:
        """The seats ranked first, unless every seat is (then nobody won).

        Several seats can share first place (the others of a three-seat forfeit); each of
        them then has the result DRAW, and only a seat first alone has the result WIN.
        """
        if self.ranks is None:
            return ()
        best = [seat for seat, rank in enumerate(self.ranks) if rank == 0]
        return () if len(best) == len(self.ranks) else tuple(best)

    def result_for(self, seat: Seat) -> SeatResult:
        """Win, draw, loss, or no result for one seat."""
        if self.ranks is None:
            return SeatResult.NONE
        if self.ranks[seat] != 0:
            return SeatResult.LOSS
        firsts = sum(1 for rank in self.ranks if rank == 0)
        return SeatResult.WIN if firsts == 1 else SeatResult.DRAW


@dataclass(frozen=True)
class Calls:
    """The calls a game makes to its seats, by the game's names for them.

    The runner names a call by one of these; each seat's session maps the name onto its
    wire (JSON-RPC: the method ``<prefix>.<name>`` with the game's id in ``game_id``).
    """

    prefix: str
    """The JSON-RPC method prefix, e.g. ``"TicTacToe"``."""
    game_id: str = "gameid"
    """The param that carries the platform's id of the game in every JSON-RPC call."""
    open: str = "NewGame"
    """The call that opens the game for each seat."""
    move: str = "NextMove"
    """The call that asks the seat to move."""
    complete: str = "Complete"
    """The call that tells each seat how the game ended."""
    error: str = "Error"
    """The call that tells a seat what was wrong with its reply."""
    ready: str = "Ready"
    """The call a seat that prepares makes back to the platform once it is ready."""

    def method(self, name: str) -> str:
        """The JSON-RPC method of the call ``name``: ``<prefix>.<name>``."""
        return f"{self.prefix}.{name}"


@dataclass(frozen=True)
class Announcement:
    """A call the runner makes to one seat because of a change of state.

    Games with a richer lifecycle than NewGame/NextMove/Complete (a turn that starts, a
    roll that scores nothing) describe those calls as data; the runner sends them in
    order and ignores the replies.
    """

    seat: Seat
    call: str
    """The game's name for the call, e.g. ``"TurnStart"`` (a session maps it onto its
    wire)."""
    params: JSONObject


@dataclass(frozen=True)
class Step(Generic[StateT]):
    """One move played: the state after it, and the calls it causes, in order."""

    state: StateT
    announcements: tuple[Announcement, ...] = ()


class Game(ABC, Generic[StateT, MoveT]):
    """The rules and wire view of one game.

    Subclasses set the class attributes and implement the abstract methods.  States and
    moves are immutable values; ``apply`` returns a new state.
    """

    mnemonic: str
    """The game's name on the wire, e.g. ``"TICTACTOE"``."""
    name: str
    """The game's name for people, e.g. ``"Tic-Tac-Toe"``."""
    calls: Calls
    """The game's names for its calls (see :class:`Calls`)."""
    min_seats: int = 2
    max_seats: int = 2
    max_moves: int
    """An upper bound on the moves (chance moves included) of any game."""
    assets: tuple[str, ...] = ()
    """The names of the asset files a bot needs (``NewGame`` carries their descriptors)."""
    default_settings: Mapping[str, JSON] = {}

    # -- rules -------------------------------------------------------------------------

    @abstractmethod
    def new(self, settings: Mapping[str, JSON], players: Sequence[str],
            rng: random.Random) -> StateT:
        """The starting state for these players (their names, in seat order)."""

    @abstractmethod
    def to_move(self, state: StateT) -> Seat | None:
        """The seat to move, :data:`CHANCE`, or ``None`` once the game is over."""

    @abstractmethod
    def legal_moves(self, state: StateT, seat: Seat) -> Sequence[MoveT]:
        """Every legal move of ``seat``, in a stable order."""

    @abstractmethod
    def apply(self, state: StateT, seat: Seat, move: MoveT) -> StateT:
        """The state after ``seat`` plays ``move``.

        :raises IllegalMoveError: if the rules do not allow the move, with the reason.
        """

    @abstractmethod
    def outcome(self, state: StateT) -> Outcome | None:
        """How the game ended, or ``None`` while it goes on."""

    def step(self, state: StateT, seat: Seat, move: MoveT) -> Step[StateT]:
        """``apply`` and the :meth:`announcements` it causes, computed once (the runner's
        way of playing a move; games whose announcements fall out of applying the move
        override this rather than work the move out twice).

        :raises IllegalMoveError: as :meth:`apply`.
        """
        # A game whose apply calls step must override step, or the two would recurse.
        after = self.apply(state, seat, move)
        return Step(after, tuple(self.announcements(state, seat, move, after)))

    def sample_chance(self, state: StateT, rng: random.Random) -> MoveT:
        """Draw the chance move at a :data:`CHANCE` node (games with dice or tile bags)."""
        raise NotImplementedError(f"{self.mnemonic} has no chance moves")

    def parse_chance(self, stored: JSON) -> MoveT:
        """Read a chance move from the move log (what :meth:`move_to_wire` made of it).

        Distinct from :meth:`parse_move`, which reads bots' replies: a bot may not send
        a chance move.

        :raises InvalidMoveError: if ``stored`` is not a chance move of this game.
        """
        raise InvalidMoveError(f"{self.mnemonic} has no chance moves")

    def parse_logged(self, seat: Seat, stored: JSON) -> MoveT:
        """Read a move of the move log, played by ``seat``: :meth:`parse_chance` for
        :data:`CHANCE`, else :meth:`parse_move`.

        :raises InvalidMoveError: if ``stored`` is not such a move.
        """
        return self.parse_chance(stored) if seat == CHANCE else self.parse_move(stored)

    def standings(self, state: StateT) -> tuple[float, ...] | None:
        """Each seat's points so far, for games that keep a score (used to rank the others
        when one seat forfeits a game of three or more)."""
        return None

    # -- assets ------------------------------------------------------------------------------

    def with_assets(self, files: Mapping[str, bytes]) -> Game[StateT, MoveT]:
        """This game set up with its asset files' contents, by asset name.

        Games without assets return themselves.  Parsing is pure; the caller reads and
        verifies the files.

        :raises ValueError: if a file is missing or not what the game expects.
        """
        return self

    # -- values <-> JSON -----------------------------------------------------------------

    @abstractmethod
    def state_to_json(self, state: StateT) -> JSON:
        """The state as plain JSON (the platform's record of it, not a seat's view)."""

    @abstractmethod
    def state_from_json(self, data: JSON) -> StateT:
        """The inverse of :meth:`state_to_json`."""

    @abstractmethod
    def move_to_wire(self, move: MoveT) -> JSON:
        """The move as a bot would send it (and as the move log stores it)."""

    @abstractmethod
    def parse_move(self, reply: JSON) -> MoveT:
        """Read a bot's reply (the JSON-RPC ``result``) as a move.

        :raises InvalidMoveError: if the reply is not a move of this game.
        """

    # -- the wire view of the lifecycle ----------------------------------------------------

    def new_game_params(self, state: StateT, seat: Seat) -> JSONObject:
        """The game's setup values in ``<G>.NewGame`` (besides gameid, players and assets)."""
        return {}

    @abstractmethod
    def next_move_params(self, state: StateT, seat: Seat) -> JSONObject:
        """The params of ``<G>.NextMove`` for ``seat`` (besides ``gameid``)."""

    @abstractmethod
    def complete_params(self, state: StateT, seat: Seat,
                        outcome: Outcome | None = None) -> JSONObject:
        """The params of ``<G>.Complete`` for ``seat`` (besides ``gameid`` and ``winner``).

        ``outcome`` is how the game ended, which may not be the rules' own end (a forfeit).
        """

    def opening_announcements(self, state: StateT) -> Sequence[Announcement]:
        """Calls to make once every seat has opened the game, before the first move."""
        return ()

    def announcements(self, before: StateT, seat: Seat, move: MoveT,
                      after: StateT) -> Sequence[Announcement]:
        """Calls to make because ``seat`` (or :data:`CHANCE`) played ``move``.

        The runner delivers them, in order for each seat, before it asks for the next move.
        """
        return ()

    def error_params(self, state: StateT, seat: Seat) -> JSONObject:
        """Params of ``<G>.Error`` besides the game id, message and errorcode (e.g. the ids
        of a game within a match)."""
        return {}

    def public_move(self, wire: JSON) -> JSON:
        """A stored move as anybody may see it while the game runs (hide what the rules
        keep secret, e.g. which tiles a Scrabble exchange returned).  ``wire`` is what
        :meth:`move_to_wire` made, and this must not fail on it."""
        return wire

    def describe_move(self, state: StateT, seat: Seat, move: MoveT) -> str:
        """A short human description of a move, for logs and replays."""
        return repr(self.move_to_wire(move))

    # -- the spectator's view (game pages, replays) ------------------------------------------

    def spectator_view(self, state: StateT, reveal: bool) -> JSON:
        """The state as somebody watching the game may see it.

        ``reveal`` is False while the game runs: then nothing a player could not know may
        show (a Scrabble rack, the bag's order).  Once the game is over everything may.  The
        default is :meth:`state_to_json`, for games without hidden information.
        """
        return self.state_to_json(state)

    def spectator_setup(self) -> JSONObject:
        """Facts a viewer needs to draw any state of this game that the states do not carry
        (a Scrabble board's premium squares, its tiles' points)."""
        return {}


class UnknownGameError(KeyError):
    """No game is registered under that mnemonic."""

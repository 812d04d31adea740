"""A game in play as the runner holds it, rebuilt from the store; the one rule for what a
reply or a fault does to it (:meth:`Play.advance`, for live play and replay alike); and the
ends the runner decides (forfeits and games that could not begin)."""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field

from merknera.config import GameRules
from merknera.games import (
    CHANCE,
    JSON,
    AnyGame,
    IllegalMoveError,
    InvalidMoveError,
    Outcome,
    Seat,
    SeatResult,
    Step,
    Termination,
)
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.faults import FaultKind
from merknera.store.bots import Bot
from merknera.store.games import GameRecord

log = logging.getLogger(__name__)

STRIKE_FAULTS = frozenset({FaultKind.HTTP_STATUS, FaultKind.MALFORMED_REPLY, FaultKind.RPC_ERROR,
                           FaultKind.INVALID_MOVE, FaultKind.ILLEGAL_MOVE})
"""Faults that cost a strike; the bot is asked again until its strikes run out."""

FORFEIT_FAULTS: dict[FaultKind, Termination] = {
    FaultKind.TIMEOUT: Termination.TIMEOUT,
    FaultKind.UNREACHABLE: Termination.UNREACHABLE,
    FaultKind.DISQUALIFIED: Termination.STRIKES,
}
"""Faults that forfeit the game at once (NOT_READY too, with every seat not ready: see
:meth:`Play.advance`)."""


class ReplayError(RuntimeError):
    """A stored move log that does not replay under the current rules."""


@dataclass(frozen=True)
class Played:
    """A move that applies: the move and the step it makes."""

    move: object
    step: Step[object]


@dataclass(frozen=True)
class Faulted:
    """A call that did not give a move the rules accept, and why."""

    kind: FaultKind
    message: str


Verdict = Played | Faulted
"""What one call (or one stored row of the move log) is to the game."""


@dataclass(frozen=True)
class Consequence:
    """What a fault cost its seat."""

    strike: int | None
    """The seat's strikes after this one; None for a fault that forfeits at once."""
    allowed: int
    forfeits: bool

    def describe(self) -> str:
        """For the bot's Error: ``"strike 1 of 3: you will be asked again"``."""
        if self.strike is None:
            return "you forfeit the game"
        then = "you forfeit the game" if self.forfeits else "you will be asked again"
        return f"strike {self.strike} of {self.allowed}: {then}"


@dataclass
class Play:
    """A game in progress: rules, state, and the runner's counters."""

    record: GameRecord
    game: AnyGame
    rules: GameRules
    rng: random.Random
    state: object
    seq: int = 0
    strikes: list[int] = field(default_factory=list)
    moved: set[Seat] = field(default_factory=set)
    """Seats asked for a move at least once (their bots need no ping before the next)."""
    played: set[Seat] = field(default_factory=set)
    """Seats that made a move the rules took, at least one."""
    not_ready: list[Seat] = field(default_factory=list)
    """Seats that did not become ready in time (they forfeit together)."""
    forfeit: Outcome | None = None
    bots: list[Bot] = field(default_factory=list)
    """The seated bots as stored when the runner started (the presence has fresher data)."""

    @property
    def seats(self) -> int:
        return len(self.record.seats)

    def bot_id(self, seat: Seat) -> int:
        return self.record.seats[seat].bot_id

    # -- the move state machine: live play and replay both go through these ----------------

    def judge(self, seat: Seat, result: JSON) -> Verdict:
        """A bot's reply read by the game (InvalidMoveError) and played by its rules
        (IllegalMoveError); the state does not change until :meth:`advance`.

        The reply is the seat's: whatever it makes the game raise is the seat's fault (a
        strike), never the platform's, so no reply can end a game without a result.  What
        the game did not foresee is logged for the operator as well.
        """
        try:
            move = self.game.parse_move(result)
        except InvalidMoveError as exc:
            return Faulted(FaultKind.INVALID_MOVE, str(exc))
        except Exception as exc:
            log.exception("game %d: %s could not read a reply of seat %d", self.record.id,
                          self.game.mnemonic, seat)
            return Faulted(FaultKind.INVALID_MOVE, f"the reply is not a move of the game "
                                                   f"({type(exc).__name__})")
        try:
            return Played(move, self.game.step(self.state, seat, move))
        except IllegalMoveError as exc:
            return Faulted(FaultKind.ILLEGAL_MOVE, str(exc))
        except Exception as exc:
            log.exception("game %d: %s could not play a move of seat %d", self.record.id,
                          self.game.mnemonic, seat)
            return Faulted(FaultKind.ILLEGAL_MOVE, f"the move cannot be played "
                                                   f"({type(exc).__name__})")

    def advance(self, seat: Seat, verdict: Verdict) -> Consequence | None:
        """What one call does to the game: a move is played; a fault strikes the seat or
        forfeits the game for it (docs/bots/protocol.md section 3).  Returns a fault's cost.

        This is the one rule: the runner calls it for each call it makes, and
        :func:`replay` for each row of a stored move log.
        """
        if isinstance(verdict, Played):
            self.state = verdict.step.state
            if seat != CHANCE:
                self.moved.add(seat)
                self.played.add(seat)
            return None
        kind, message = verdict.kind, verdict.message
        self.moved.add(seat)
        if kind is FaultKind.NOT_READY:
            # Every seat that was not ready forfeits together (the game never began).
            if seat not in self.not_ready:
                self.not_ready.append(seat)
            self.forfeit = absent_outcome(self, self.not_ready, Termination.NOT_READY, message)
            return Consequence(None, self.rules.max_strikes, True)
        name = self.bots[seat].name
        if kind in FORFEIT_FAULTS:
            self.forfeit = forfeit(self, seat, FORFEIT_FAULTS[kind], f"{name}: {message}")
            return Consequence(None, self.rules.max_strikes, True)
        if kind not in STRIKE_FAULTS:
            raise ValueError(f"no rule for the fault {kind}")
        self.strikes[seat] += 1
        used, allowed = self.strikes[seat], self.rules.max_strikes
        if used >= allowed:
            self.forfeit = forfeit(
                self, seat, Termination.STRIKES,
                f"{name} made {allowed} faulty replies; the last: {message}")
        return Consequence(used, allowed, used >= allowed)


def replay(record: GameRecord, game: AnyGame, rules: GameRules, seated: list[Bot]) -> Play:
    """Rebuild a game from its seed and its move log, each row through
    :meth:`Play.advance` as when it was played.

    :raises ReplayError: if a chance move was not what the seed draws.
    :raises MoveError: (or ValueError) if a stored move no longer applies.
    """
    rng = random.Random(record.seed)
    state = game.new({**game.default_settings, **record.settings},
                     [bot.name for bot in seated], rng)
    play = Play(record, game, rules, rng, state, strikes=[0] * len(record.seats),
                bots=seated)
    for stored in record.moves:
        play.seq = stored.seq
        verdict: Verdict
        if stored.fault is not None:
            verdict = Faulted(stored.fault, stored.fault_detail or "")
        else:
            move = game.parse_logged(stored.seat, stored.move)
            if stored.seat == CHANCE:
                drawn = game.sample_chance(play.state, rng)
                if drawn != move:
                    raise ReplayError(f"chance move {stored.seq} was {stored.move!r}, but "
                                      f"the seed draws {game.move_to_wire(drawn)!r}")
            verdict = Played(move, Step(game.apply(play.state, stored.seat, move)))
        play.advance(stored.seat, verdict)
    return play


def rates(play: Play, outcome: Outcome) -> bool:
    """Whether the game's result may change ratings: not when a guest lost it by a forfeit
    before it made a single move (disqualified, late, gone), which anybody can do on
    purpose under a second name to hand the other a win."""
    if outcome.ranks is None or not outcome.termination.is_forfeit:
        return outcome.ranks is not None
    return not any(play.bots[seat].protocol is BotProtocol.GUEST and seat not in play.played
                   and outcome.result_for(seat) is SeatResult.LOSS
                   for seat in range(play.seats))


def forfeit(play: Play, seat: Seat, termination: Termination, detail: str) -> Outcome:
    """The seat forfeits the game."""
    # With three or more seats the others are ranked by their points so far.
    standings = play.game.standings(play.state) if play.seats > 2 else None
    return Outcome.forfeit(seat, play.seats, termination, detail, standings)


def absent_outcome(play: Play, absent: list[Seat], termination: Termination,
                   why: str) -> Outcome:
    """The end of a game that could not begin because of these seats."""
    names = ", ".join(play.bots[seat].name for seat in absent)
    detail = f"{names} {why}"
    if len(absent) == play.seats:
        return Outcome.no_result(Termination.ABORTED, detail)
    if len(absent) == 1:
        return Outcome.forfeit(absent[0], play.seats, termination, detail)
    ranks = tuple(1 if seat in absent else 0 for seat in range(play.seats))
    return Outcome(termination, ranks, detail)


_VERDICTS = {SeatResult.WIN: "you won", SeatResult.LOSS: "you lost", SeatResult.DRAW: "a draw",
             SeatResult.NONE: "no result"}


def completion_lines(game_id: int, seats: list[Bot], results: list[SeatResult],
                     detail: str) -> list[tuple[int, str]]:
    """Each seated bot's log line about the end of its game."""
    lines = []
    for seat, bot in enumerate(seats):
        others = ", ".join(f"{b.name} ({b.version})" for s, b in enumerate(seats) if s != seat)
        lines.append((bot.id, f"Game complete (gameId: {game_id}) against {others}: "
                              f"{_VERDICTS[results[seat]]}; {detail}"))
    return lines

"""A game in play as the runner holds it, rebuilt from the store; and the ends the runner
decides (forfeits and games that could not begin)."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

from merknera.config import GameRules
from merknera.games import CHANCE, AnyGame, Outcome, Seat, Termination
from merknera.protocol.faults import FaultKind
from merknera.store.bots import Bot
from merknera.store.games import GameRecord

STRIKE_FAULTS = frozenset({FaultKind.HTTP_STATUS, FaultKind.MALFORMED_REPLY, FaultKind.RPC_ERROR,
                           FaultKind.INVALID_MOVE, FaultKind.ILLEGAL_MOVE})
"""Faults that cost a strike; the bot is asked again until its strikes run out."""

FORFEIT_FAULTS: dict[FaultKind, Termination] = {
    FaultKind.TIMEOUT: Termination.TIMEOUT,
    FaultKind.UNREACHABLE: Termination.UNREACHABLE,
    FaultKind.NOT_READY: Termination.NOT_READY,
}
"""Faults that forfeit the game at once."""



class ReplayError(RuntimeError):
    """A stored move log that does not replay under the current rules."""


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
    forfeit: Outcome | None = None
    bots: list[Bot] = field(default_factory=list)
    """The seated bots as stored when the runner started (the presence has fresher data)."""
    last_write: asyncio.Future[bool] | None = None
    """The move-log write queued last, not yet checked."""

    @property
    def seats(self) -> int:
        return len(self.record.seats)

    def bot_id(self, seat: Seat) -> int:
        return self.record.seats[seat].bot_id



def replay(record: GameRecord, game: AnyGame, rules: GameRules, seated: list[Bot]) -> Play:
    """Rebuild a game from its seed and its move log (faults count as strikes again).

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
        if stored.fault is not None:
            kind = FaultKind(stored.fault)
            if kind in FORFEIT_FAULTS:
                play.forfeit = forfeit(play, stored.seat, FORFEIT_FAULTS[kind],
                                       stored.fault_detail or kind.value)
            elif kind in STRIKE_FAULTS:
                play.strikes[stored.seat] += 1
                if play.strikes[stored.seat] >= rules.max_strikes:
                    play.forfeit = strikes_outcome(play, stored.seat)
            continue
        move = game.parse_move(stored.move)
        if stored.seat == CHANCE:
            drawn = game.sample_chance(play.state, rng)
            if drawn != move:
                raise ReplayError(f"chance move {stored.seq} was {stored.move!r}, "
                                  f"but the seed draws {game.move_to_wire(drawn)!r}")
        else:
            play.moved.add(stored.seat)
        play.state = game.apply(play.state, stored.seat, move)
    return play


def strikes_outcome(play: Play, seat: Seat, last: str = "") -> Outcome:
    """The offender's forfeit after its last allowed faulty reply."""
    name = play.bots[seat].name
    why = f"; the last: {last}" if last else ""
    return forfeit(play, seat, Termination.STRIKES,
                   f"{name} made {play.rules.max_strikes} faulty replies{why}")


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

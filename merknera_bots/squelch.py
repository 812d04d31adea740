"""Reference Squelch bots: ``good`` (expected-value play) and ``random``.

Run one with::

    python -m merknera_bots.squelch --strategy good --platform http://127.0.0.1:8080 \\
        --token TOKEN --port 0 [--seed N]

A platform game is a match of several games (README, docs/bots/protocol.md section 4): the bot hears
``Squelch.MatchStart``, ``GameStart``, ``TurnStart``, ``Squelch`` (a roll that scored nothing),
``GameEnd`` and ``MatchEnd``, and answers ``Squelch.NextMove`` (the spec's *choose*) with
``{"take": "<option id>", "stay": bool}``.

``good`` plays to maximise the points a turn banks, from a table of expected values over every
roll (computed once, in about 0.2 s): it takes the option whose best continuation is worth
most, and stays when rolling on is worth less than the points in hand; points past
:data:`TURN_CAP` in one turn are not chased.  In the final round it rolls on until it is ahead
of the best opponent, choosing the option most likely to get it there, then stays.  ``random``
takes a random option and stays half the time.

The NextMove params do not carry the turn's points so far: the bot adds up what it took from
the earlier rolls of the turn (keyed by each roll's first option id, so asking the same roll
again does not count it twice).  Like the other reference bots it imports nothing from
``merknera``, so the scoring table is repeated here.
"""

from __future__ import annotations

import functools
import itertools
import logging
import random
import sys
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import factorial, prod
from typing import Any

from merknera_bots.kit import Bot, InvalidParamsError
from merknera_bots.launcher import strategy_main

__all__ = ["GAME", "PREFIX", "STRATEGIES", "Option", "Situation", "SquelchPlayer",
           "choose_good", "choose_random", "main", "make_bot", "roll_scores"]

logger = logging.getLogger(__name__)

GAME = "SQUELCH"
PREFIX = "Squelch"
STRATEGIES = ("good", "random")
UNIT = 50
"""Every score is a multiple of 50."""
TURN_CAP = 4000
"""The expected-value table treats a turn worth this much as one to bank."""
_MAX_CHASE = 400
"""The final-round table goes up to 400 * 50 = 20000 points behind."""
_MAX_MATCHES = 1000


# --- scoring: the spec's table, read as the platform reads it -----------------------------


def _points_using_all(dice: str) -> set[int]:
    if dice == "123456":
        return {1500}
    counts = [dice.count(face) for face in "123456"]
    found = set()
    if sum(1 if c == 2 else 2 if c == 4 else 0 for c in counts) == 3 or 6 in counts:
        found.add(750)
    total = 0
    for face, count in enumerate(counts, start=1):
        total += (count // 3) * (1000 if face == 1 else face * 100)
        left = count % 3
        if left and face not in (1, 5):
            return found
        total += left * (100 if face == 1 else 50)
    return found | {total}


@functools.cache
def roll_scores(roll: str) -> tuple[tuple[str, int], ...]:
    """Every (dice, points) option of a sorted roll, as the platform offers them (unordered)."""
    counts = [roll.count(face) for face in "123456"]
    found: list[tuple[str, int]] = []
    for taken in itertools.product(*(range(c + 1) for c in counts)):
        dice = "".join(face * n for face, n in zip("123456", taken, strict=True))
        if dice:
            found.extend((dice, points) for points in _points_using_all(dice))
    return tuple(found)


# --- tables of expected values and chances ------------------------------------------------

_Rolls = tuple[tuple[float, tuple[tuple[int, int], ...]], ...]


@functools.cache
def _rolls(dice: int, die_count: int) -> _Rolls:
    """Each scoring roll of ``dice`` dice: its probability and, for each number of dice left to
    roll after it, the most points (in units of 50) an option leaving that many takes."""
    rolls = []
    for combo in itertools.combinations_with_replacement("123456", dice):
        roll = "".join(combo)
        best: dict[int, int] = {}
        for taken, points in roll_scores(roll):
            after = dice - len(taken) or die_count
            best[after] = max(best.get(after, 0), points // UNIT)
        if best:
            chance = factorial(dice) / prod(factorial(c) for c in Counter(roll).values())
            rolls.append((chance / 6 ** dice, tuple((p, a) for a, p in best.items())))
    return tuple(rolls)


@functools.cache
def _turn_values(die_count: int) -> tuple[tuple[float, ...], ...]:
    """``[u][d]``: the expected points (in units) banked from ``u`` units in hand, about to
    roll ``d`` dice, playing to maximise them (turns worth :data:`TURN_CAP` bank)."""
    cap = TURN_CAP // UNIT
    table = [[0.0] * (die_count + 1) for _ in range(cap + 1)]

    def choice_value(u: int, d: int) -> float:
        return float(u) if u > cap else max(float(u), table[u][d])

    for u in range(cap, -1, -1):
        for d in range(1, die_count + 1):
            table[u][d] = sum(chance * max(choice_value(u + p, a) for p, a in options)
                              for chance, options in _rolls(d, die_count))
    return tuple(tuple(row) for row in table)


@functools.cache
def _chase_chances(die_count: int) -> tuple[tuple[float, ...], ...]:
    """``[k][d]``: the chance of winning at least ``k`` more units before squelching, about to
    roll ``d`` dice (playing for exactly that)."""
    table = [[1.0] * (die_count + 1)]
    for k in range(1, _MAX_CHASE + 1):
        table.append([0.0] + [
            sum(chance * max(1.0 if p >= k else table[k - p][a] for p, a in options)
                for chance, options in _rolls(d, die_count))
            for d in range(1, die_count + 1)])
    return tuple(tuple(row) for row in table)


def turn_value(points: int, dice: int, die_count: int = 6) -> float:
    """The expected points banked by rolling ``dice`` dice with ``points`` in hand."""
    units = points // UNIT
    if units > TURN_CAP // UNIT:
        return float(points)
    return _turn_values(die_count)[units][dice] * UNIT


def chase_chance(needed: int, dice: int, die_count: int = 6) -> float:
    """The chance of winning at least ``needed`` more points rolling ``dice`` dice."""
    if needed <= 0:
        return 1.0
    units = min(-(-needed // UNIT), _MAX_CHASE)
    return _chase_chances(die_count)[units][dice]


# --- the strategies -----------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """An option of the roll: its id, dice and points."""

    id: str
    dice: str
    points: int


@dataclass(frozen=True)
class Situation:
    """What a NextMove decision knows."""

    die_values: str
    options: tuple[Option, ...]
    turn_points: int = 0
    """Taken from the earlier rolls of this turn."""
    banked: int = 0
    best_other: int = 0
    """The highest score of the other seats in this game."""
    final_round: bool = False
    die_count: int = 6


def choose_good(situation: Situation) -> tuple[str, bool]:
    """The option and stay decision that bank the most points on average; in the final round,
    the option most likely to get ahead of ``best_other``, staying once ahead."""
    s = situation
    if not s.options:
        raise ValueError("no options to choose from")

    def after(option: Option) -> tuple[int, int]:
        left = len(s.die_values) - len(option.dice)
        return s.turn_points + option.points, left if left > 0 else s.die_count

    def value(option: Option) -> tuple[float, int]:
        points, dice = after(option)
        if s.final_round:
            needed = s.best_other + 1 - s.banked - points
            worth = chase_chance(needed, dice, s.die_count)
        else:
            worth = max(float(points), turn_value(points, dice, s.die_count))
        return worth, option.points

    best = max(s.options, key=value)
    points, dice = after(best)
    if s.final_round:
        return best.id, s.banked + points > s.best_other
    return best.id, points >= turn_value(points, dice, s.die_count)


def choose_random(situation: Situation, rng: random.Random) -> tuple[str, bool]:
    """A uniformly random option, staying half the time."""
    if not situation.options:
        raise ValueError("no options to choose from")
    return rng.choice(situation.options).id, rng.random() < 0.5


# --- the bot ------------------------------------------------------------------------------


@dataclass
class _Match:
    """What the bot has heard of one match."""

    die_count: int = 6
    max_points: int = 5000
    me: int | None = None
    turn: tuple[Any, Any] | None = None
    """The (gameid, turnid) of the bot's turn the fields below describe."""
    banked: int = 0
    others: dict[int, int] = field(default_factory=dict)
    final_round: bool = False
    taken: dict[str, int] = field(default_factory=dict)
    """Points taken (and rolled on) in this turn, by the first option id of each roll."""


class SquelchPlayer:
    """One Squelch bot: the matches it is playing and its strategy."""

    def __init__(self, strategy: str, *, seed: int | None = None) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}")
        self.strategy = strategy
        self._rng = random.Random(seed)
        self._matches: OrderedDict[str, _Match] = OrderedDict()

    @property
    def matches(self) -> int:
        """How many matches the bot is following (each is forgotten at its MatchEnd)."""
        return len(self._matches)

    def make_bot(self) -> Bot:
        """The :class:`~merknera_bots.kit.Bot` serving this player's methods."""
        bot = Bot(PREFIX, self.next_move)
        for name, handler in (("MatchStart", self.match_start), ("GameStart", self.game_start),
                              ("TurnStart", self.turn_start), ("GameEnd", self.game_end),
                              ("Squelch", self.squelch), ("MatchEnd", self.match_end)):
            bot.method(f"{PREFIX}.{name}", handler)
        return bot

    def _match(self, matchid: Any) -> _Match:
        key = repr(matchid)
        match = self._matches.get(key)
        if match is None:
            match = self._matches[key] = _Match()
            while len(self._matches) > _MAX_MATCHES:
                self._matches.popitem(last=False)
        self._matches.move_to_end(key)
        return match

    async def match_start(self, *, matchid: Any = None, diecount: Any = 6, maxpoints: Any = 5000,
                          yourbotindex: Any = None, **extra: Any) -> dict[str, str]:
        match = self._match(matchid)
        match.die_count = _int(diecount, "dieCount", 1, 6)
        match.max_points = _int(maxpoints, "maxPoints", 1)
        match.me = None if yourbotindex is None else _int(yourbotindex, "yourBotIndex", 0)
        return {"status": "READY"}

    async def game_start(self, *, matchid: Any = None, gameid: Any = None, **extra: Any) -> None:
        match = self._match(matchid)
        match.turn, match.banked, match.others, match.final_round = None, 0, {}, False
        match.taken = {}

    async def turn_start(self, *, matchid: Any = None, gameid: Any = None, turnid: Any = None,
                         startpoints: Any = 0, otherplayerturns: Any = (),
                         isfinalround: Any = False, **extra: Any) -> None:
        match = self._match(matchid)
        if match.turn != (gameid, turnid):  # a repeated call keeps what this turn took
            match.turn, match.taken = (gameid, turnid), {}
        match.banked = _int(startpoints, "startPoints", 0)
        match.final_round = isfinalround is True
        if not isinstance(otherplayerturns, list | tuple):
            raise InvalidParamsError("otherPlayerTurns must be a list of BotTurns")
        for turn in otherplayerturns:
            fields = _fields(turn, "a BotTurn")
            index = _int(fields.get("botindex"), "botIndex", 0)
            match.others[index] = _int(fields.get("endpoints"), "endPoints", 0)

    async def next_move(self, *, dievalues: Any, options: Any, matchid: Any = None,
                        gameid: Any = None, turnid: Any = None, **extra: Any) -> dict[str, Any]:
        if not isinstance(dievalues, str) or not dievalues:
            raise InvalidParamsError("dieValues must be the roll as a string of digits")
        if not isinstance(options, list) or not options:
            raise InvalidParamsError("options must be a non-empty list")
        offered = tuple(_option(item) for item in options)
        match = self._match(matchid)
        if match.turn != (gameid, turnid):  # no TurnStart heard for this turn
            match.turn, match.taken = (gameid, turnid), {}
        key = offered[0].id
        situation = Situation(
            dievalues, offered,
            turn_points=sum(points for first, points in match.taken.items() if first != key),
            banked=match.banked, best_other=max(match.others.values(), default=0),
            final_round=match.final_round, die_count=match.die_count)
        if self.strategy == "good":
            take, stay = choose_good(situation)
        else:
            take, stay = choose_random(situation, self._rng)
        chosen = next(option for option in offered if option.id == take)
        if stay:
            match.taken.pop(key, None)
        else:
            match.taken[key] = chosen.points
        return {"take": take, "stay": stay}

    async def squelch(self, *, matchid: Any = None, dievalues: Any = None, **extra: Any) -> None:
        logger.info("match %s: squelched with %s", matchid, dievalues)
        self._match(matchid).taken = {}

    async def game_end(self, *, matchid: Any = None, gameid: Any = None,
                       winnerbotindex: Any = None, **extra: Any) -> None:
        me = self._match(matchid).me
        verdict = "won" if me is not None and winnerbotindex == me else "lost"
        logger.info("match %s: game %s %s (winner: bot %s)", matchid, gameid, verdict,
                    winnerbotindex)

    async def match_end(self, *, matchid: Any = None, winsbybotindex: Any = None,
                        **extra: Any) -> None:
        logger.info("match %s over: wins by bot %s", matchid, winsbybotindex)
        self._matches.pop(repr(matchid), None)


def _fields(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidParamsError(f"{what} must be an object")
    return {str(key).lower(): item for key, item in value.items()}


def _option(value: Any) -> Option:
    fields = _fields(value, "an option")
    option_id, dice = fields.get("id"), fields.get("dievalues")
    if not isinstance(option_id, str) or not isinstance(dice, str):
        raise InvalidParamsError('an option must have a string "id" and "dieValues"')
    return Option(option_id, dice, _int(fields.get("points"), "points", 0))


def _int(value: Any, name: str, low: int, high: int | None = None) -> int:
    if (isinstance(value, bool) or not isinstance(value, int) or value < low
            or (high is not None and value > high)):
        bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise InvalidParamsError(f"{name} must be an integer {bounds}, not {value!r}")
    return value


def make_bot(strategy: str, *, seed: int | None = None) -> tuple[Bot, SquelchPlayer]:
    """A :class:`~merknera_bots.kit.Bot` playing ``strategy`` (``"good"`` or ``"random"``), and the
    :class:`SquelchPlayer` behind it."""
    player = SquelchPlayer(strategy, seed=seed)
    if strategy == "good":
        _turn_values(6)  # the table takes a moment: not during the first move
    return player.make_bot(), player


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``--strategy good|random [--seed N]`` plus the kit's common options
    (see :func:`merknera_bots.launcher.make_parser`)."""
    return strategy_main(
        argv, title="A reference Squelch bot for the Merknera platform.",
        game=GAME, name_prefix="squelch", default="good", delay=False,
        make_bot=lambda strategy, **options: make_bot(strategy, **options)[0],
        strategies={
            "good": "Banks the most points on average (an expected-value table over every "
                    "roll); in the final round rolls on until ahead.",
            "random": "Takes a random option and stays half the time.",
        })


if __name__ == "__main__":
    sys.exit(main())

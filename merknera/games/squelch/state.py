"""The state of a Squelch match, its settings, and their JSON.

One platform game is one match: ``gameCount`` games between the same seats.  The JSON form
(:func:`state_to_json`) is::

    {"players": ["alice", "bob"],
     "settings": {"dieCount": 6, "maxPoints": 5000, "gameCount": 5, "maxTurns": 200},
     "game": 1,                  the game being played, 1-based (the last one once over)
     "starter": 0,               the seat that started this game: (game - 1) % seats
     "scores": [0, 350],         banked points in this game, by seat
     "leader": 1,                who wins if the game ends now (ties: first to the score)
     "wins": [0, 0],             games won so far in the match, by seat
     "lastTurns": [null, BotTurn],   each seat's most recent turn in this game
     "finalRound": null | {"trigger": 1, "turns": [BotTurn, ...]},
     "turn": null | Turn}        null once the match is over

    BotTurn = {"botIndex": 1, "turnid": 2, "startPoints": 0, "endPoints": 350,
               "rolls": [{"roll": "113456", "take": "1", "points": 100}, ...]}
    Turn = {"seat": 0, "turnid": 3,      turn ids count from 1 in each game
            "points": 150,               won so far in this turn, not yet banked
            "dice": 4,                   dice the next roll uses
            "rolls": [{"roll", "take", "points"}, ...],   the rolls chosen from so far
            "roll": null | "1256",       the roll waiting for the seat's choice
            "options": [{"id": "7", "dieValues": "1", "points": 100}, ...],   its options
            "nextOption": 9}             options offered in this turn so far (the next id)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from merknera.games.base import JSON, JSONObject
from merknera.games.squelch.scoring import MAX_DICE, is_roll, scorings

MAX_SEATS = 6
"""The most seats at a match."""
MAX_GAME_COUNT = 100
"""The most games a match may have (the ``gameCount`` setting)."""
MAX_TURN_LIMIT = 1000
"""The largest ``maxTurns`` setting."""


@dataclass(frozen=True)
class Settings:
    """The match's rules: the spec's three numbers plus our ``maxTurns``."""

    die_count: int = 6
    """Dice in a fresh roll (the start of a turn, hot dice)."""
    max_points: int = 5000
    """Banking this many points starts the final round."""
    game_count: int = 5
    """Games in the match."""
    max_turns: int = 200
    """A game still running after this many turns (all seats together) ends there."""

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Settings:
        """Read and check the settings (keys as in :meth:`to_json`).

        :raises ValueError: for an unknown key or a value out of range.
        """
        unknown = sorted(set(data) - set(_SETTING_LIMITS))
        if unknown:
            raise ValueError(f"unknown Squelch settings: {', '.join(unknown)} (known: "
                             f"{', '.join(_SETTING_LIMITS)})")
        values: list[int] = []
        for key, (low, high) in _SETTING_LIMITS.items():
            value = data.get(key, getattr(DEFAULT_SETTINGS, _FIELDS[key]))
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"the Squelch setting {key} must be an integer from {low} "
                                 f"to {high}, not {value!r}")
            values.append(value)
        return cls(*values)

    def to_json(self) -> JSONObject:
        """The settings as the platform stores them (camelCase, as the spec names them)."""
        return {key: getattr(self, field) for key, field in _FIELDS.items()}


DEFAULT_SETTINGS = Settings()
_FIELDS = {"dieCount": "die_count", "maxPoints": "max_points", "gameCount": "game_count",
           "maxTurns": "max_turns"}
_SETTING_LIMITS = {"dieCount": (1, MAX_DICE), "maxPoints": (1, 10**9),
                   "gameCount": (1, MAX_GAME_COUNT), "maxTurns": (1, MAX_TURN_LIMIT)}


@dataclass(frozen=True)
class RollRecord:
    """A roll of a finished or running turn and what was taken from it (``""`` and 0 for a
    roll that squelched)."""

    roll: str
    take: str
    points: int

    def to_json(self) -> JSONObject:
        return {"roll": self.roll, "take": self.take, "points": self.points}


@dataclass(frozen=True)
class BotTurn:
    """A finished turn, as the spec's BotTurn (plus the turn id, kept in the state only)."""

    bot_index: int
    turn_id: int
    start_points: int
    end_points: int
    rolls: tuple[RollRecord, ...]

    def to_wire(self) -> JSONObject:
        """The spec's BotTurn: ``botIndex``, ``startPoints``, ``endPoints``, ``rolls``."""
        return {"botIndex": self.bot_index, "startPoints": self.start_points,
                "endPoints": self.end_points, "rolls": [roll.to_json() for roll in self.rolls]}

    def to_json(self) -> JSONObject:
        return {"botIndex": self.bot_index, "turnid": self.turn_id,
                "startPoints": self.start_points, "endPoints": self.end_points,
                "rolls": [roll.to_json() for roll in self.rolls]}


@dataclass(frozen=True)
class Option:
    """An option offered to the seat: its id (unique in the turn), dice and points."""

    id: str
    dice: str
    points: int

    def to_wire(self) -> JSONObject:
        return {"id": self.id, "dieValues": self.dice, "points": self.points}


@dataclass(frozen=True)
class Turn:
    """The turn in progress."""

    seat: int
    turn_id: int
    dice: int
    """Dice the next roll uses."""
    points: int = 0
    """Points won so far in this turn (lost on a squelch, banked on a stay)."""
    rolls: tuple[RollRecord, ...] = ()
    """The rolls chosen from so far."""
    roll: str | None = None
    """The roll waiting for the seat's choice; ``None`` while the dice are to be rolled."""
    options: tuple[Option, ...] = ()
    """The options of :attr:`roll`."""
    next_option: int = 0
    """How many options this turn has offered: the id of the next one."""


@dataclass(frozen=True)
class FinalRound:
    """The final round: ``trigger`` banked ``maxPoints``; every other seat plays once more."""

    trigger: int
    turns: tuple[BotTurn, ...]
    """The trigger's turn, then each final turn played so far."""


@dataclass(frozen=True)
class SquelchState:
    """A position of a match: everything needed to go on and to replay it."""

    players: tuple[str, ...]
    settings: Settings
    game: int
    """The game being played, 1-based (the last one once the match is over)."""
    starter: int
    """The seat that started this game (the first seat to play rotates game by game)."""
    scores: tuple[int, ...]
    """Banked points in this game, by seat."""
    leader: int
    """The seat that wins if the game ends now: the highest score, and of equal scores the
    one reached first (the starter while nobody has banked)."""
    wins: tuple[int, ...]
    """Games won in this match, by seat."""
    last_turns: tuple[BotTurn | None, ...]
    """Each seat's most recent turn in this game (``None`` before its first)."""
    final_round: FinalRound | None
    turn: Turn | None
    """The turn in progress; ``None`` once the match is over."""

    @property
    def seats(self) -> int:
        return len(self.players)


def state_to_json(state: SquelchState) -> JSONObject:
    """The state as JSON (see the module docstring)."""
    final = state.final_round
    return {
        "players": list(state.players),
        "settings": state.settings.to_json(),
        "game": state.game,
        "starter": state.starter,
        "scores": list(state.scores),
        "leader": state.leader,
        "wins": list(state.wins),
        "lastTurns": [None if turn is None else turn.to_json() for turn in state.last_turns],
        "finalRound": None if final is None else {
            "trigger": final.trigger, "turns": [turn.to_json() for turn in final.turns]},
        "turn": None if state.turn is None else _turn_to_json(state.turn),
    }


def _turn_to_json(turn: Turn) -> JSONObject:
    return {"seat": turn.seat, "turnid": turn.turn_id, "points": turn.points,
            "dice": turn.dice, "rolls": [roll.to_json() for roll in turn.rolls],
            "roll": turn.roll, "options": [option.to_wire() for option in turn.options],
            "nextOption": turn.next_option}


def state_from_json(data: JSON) -> SquelchState:
    """The inverse of :func:`state_to_json`, checked for consistency.

    :raises ValueError: if ``data`` is not a Squelch state.
    """
    top = _object(data, "state", _STATE_KEYS)
    players = tuple(_string(name, "players[]") for name in _list(top["players"], "players"))
    seats = len(players)
    if not 2 <= seats <= MAX_SEATS:
        raise ValueError(f"not a Squelch state: {seats} players (2-{MAX_SEATS})")
    settings_data = _object(top["settings"], "settings", frozenset(_FIELDS))
    settings = Settings.from_json(settings_data)
    game = _int(top["game"], "game", 1, settings.game_count)
    starter = _int(top["starter"], "starter", 0, seats - 1)
    if starter != (game - 1) % seats:
        raise ValueError(f"not a Squelch state: game {game} starts with seat {starter}")
    scores = _ints(top["scores"], "scores", seats)
    wins = _ints(top["wins"], "wins", seats)
    over = top["turn"] is None
    if over and game != settings.game_count:
        raise ValueError(f"not a Squelch state: the match ended after game {game} of "
                         f"{settings.game_count}")
    if sum(wins) != game - (not over):
        when = "after the match" if over else f"while game {game} is played"
        raise ValueError(f"not a Squelch state: {sum(wins)} games won, not {game - (not over)}, "
                         f"{when}")
    leader = _int(top["leader"], "leader", 0, seats - 1)
    if scores[leader] != max(scores):
        raise ValueError(f"not a Squelch state: the leader {leader} has not the top score")
    last_turns = tuple(None if turn is None else _bot_turn(turn, seats)
                       for turn in _list(top["lastTurns"], "lastTurns", seats))
    final_round = None
    if top["finalRound"] is not None:
        final = _object(top["finalRound"], "finalRound", frozenset({"trigger", "turns"}))
        trigger = _int(final["trigger"], "finalRound.trigger", 0, seats - 1)
        turns = tuple(_bot_turn(turn, seats) for turn in _list(final["turns"], "finalRound.turns"))
        if not turns or turns[0].bot_index != trigger or len(turns) > seats:
            raise ValueError("not a Squelch state: the final round's turns do not begin "
                             "with its trigger's")
        final_round = FinalRound(trigger, turns)
    turn = None if top["turn"] is None else _turn(top["turn"], seats, settings)
    if turn is not None and turn.seat != (starter + turn.turn_id - 1) % seats:
        raise ValueError(f"not a Squelch state: turn {turn.turn_id} of game {game} is not "
                         f"seat {turn.seat}'s")
    return SquelchState(players, settings, game, starter, scores, leader, wins, last_turns,
                        final_round, turn)


_STATE_KEYS = frozenset({"players", "settings", "game", "starter", "scores", "leader", "wins",
                         "lastTurns", "finalRound", "turn"})
_TURN_KEYS = frozenset({"seat", "turnid", "points", "dice", "rolls", "roll", "options",
                        "nextOption"})
_BOT_TURN_KEYS = frozenset({"botIndex", "turnid", "startPoints", "endPoints", "rolls"})
_ROLL_KEYS = frozenset({"roll", "take", "points"})


def _turn(data: JSON, seats: int, settings: Settings) -> Turn:
    top = _object(data, "turn", _TURN_KEYS)
    seat = _int(top["seat"], "turn.seat", 0, seats - 1)
    turn_id = _int(top["turnid"], "turn.turnid", 1, settings.max_turns)
    points = _int(top["points"], "turn.points", 0)
    dice = _int(top["dice"], "turn.dice", 1, settings.die_count)
    rolls = _rolls(top["rolls"], "turn.rolls")
    next_option = _int(top["nextOption"], "turn.nextOption", 0)
    roll = top["roll"]
    options: tuple[Option, ...] = ()
    if roll is not None:
        if not is_roll(roll, dice):
            raise ValueError(f"not a Squelch state: turn.roll {roll!r} is not {dice} dice")
        assert isinstance(roll, str)
        first = next_option - len(scorings(roll))
        options = tuple(Option(str(first + i), s.dice, s.points)
                        for i, s in enumerate(scorings(roll)))
        given = _list(top["options"], "turn.options")
        if not options or first < 0 or given != [option.to_wire() for option in options]:
            raise ValueError(f"not a Squelch state: turn.options are not the options of {roll}")
    elif top["options"] != []:
        raise ValueError("not a Squelch state: options without a roll")
    if points != sum(record.points for record in rolls):
        raise ValueError("not a Squelch state: turn.points is not the sum of its rolls")
    return Turn(seat, turn_id, dice, points, rolls, roll, options, next_option)


def _bot_turn(data: JSON, seats: int) -> BotTurn:
    top = _object(data, "BotTurn", _BOT_TURN_KEYS)
    start = _int(top["startPoints"], "startPoints", 0)
    return BotTurn(_int(top["botIndex"], "botIndex", 0, seats - 1),
                   _int(top["turnid"], "turnid", 1), start,
                   _int(top["endPoints"], "endPoints", start), _rolls(top["rolls"], "rolls"))


def _rolls(data: JSON, where: str) -> tuple[RollRecord, ...]:
    records = []
    for item in _list(data, where):
        top = _object(item, where, _ROLL_KEYS)
        roll, take = _string(top["roll"], f"{where}.roll"), _string(top["take"], f"{where}.take")
        points = _int(top["points"], f"{where}.points", 0)
        if not is_roll(roll) or (take and not is_roll(take)):
            raise ValueError(f"not a Squelch state: {where} holds {roll!r} -> {take!r}")
        records.append(RollRecord(roll, take, points))
    return tuple(records)


def _object(data: JSON, where: str, keys: frozenset[str]) -> dict[str, JSON]:
    if not isinstance(data, dict) or set(data) != keys:
        raise ValueError(f"not a Squelch state: {where} must be an object with the keys "
                         f"{', '.join(sorted(keys))}")
    return data


def _list(data: JSON, where: str, length: int | None = None) -> list[JSON]:
    if not isinstance(data, list) or (length is not None and len(data) != length):
        size = "" if length is None else f" of {length} items"
        raise ValueError(f"not a Squelch state: {where} must be a list{size}")
    return data


def _string(data: JSON, where: str) -> str:
    if not isinstance(data, str):
        raise ValueError(f"not a Squelch state: {where} must be a string, not {data!r}")
    return data


def _ints(data: JSON, where: str, length: int) -> tuple[int, ...]:
    return tuple(_int(item, where, 0) for item in _list(data, where, length))


def _int(data: JSON, where: str, low: int, high: int | None = None) -> int:
    if (isinstance(data, bool) or not isinstance(data, int) or data < low
            or (high is not None and data > high)):
        bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise ValueError(f"not a Squelch state: {where} must be an integer {bounds}, "
                         f"not {data!r}")
    return data

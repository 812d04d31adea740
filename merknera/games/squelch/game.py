"""Squelch as the platform plays it: the rules of a turn, a game and a match, and the wire view.

A platform game is a *match* of ``gameCount`` games between 2-6 seats (docs/bots/protocol.md section
4, ``seeds/000_*``, ``research/seed-systems.md`` b.2-b.6).  The dice are chance moves: at the
start of a turn and after every ``stay: false`` the game is at a :data:`CHANCE` node, the
runner draws a roll with :meth:`Squelch.sample_chance` and applies it.  A roll that scores
nothing squelches (the turn's points are lost); otherwise the seat chooses an option and
stays (banks the turn) or rolls the remaining dice, all ``dieCount`` of them again when it
has used every die (hot dice).

The move log stores a roll as ``{"roll": "112356"}``; :func:`parse_chance` reads it back.
:func:`parse_move` reads only bots' replies, so a bot that sends a roll has sent no move
(InvalidMoveError), not a move the rules forbid.

Where the spec and the Go arena leave it open, this implementation decides:

* **Ties.**  A game is won by the highest banked score; of equal scores, by the seat that
  reached it first (the Go arena's rule), and while nobody has banked, by the game's first
  seat.  A match ranks seats by games won; equal wins tie.
* **maxTurns** (our setting, default 200).  A bot may keep rolling until it squelches, so a
  game could go on for ever: a game still running after ``maxTurns`` turns (all seats
  together, the final round included) ends there, won as above.
* **Rolls per turn.**  For the same reason a turn ends after its :data:`MAX_ROLLS_PER_TURN`-th
  choice as if the bot had stayed.  A turn that long needs 100 scoring rolls in a row, which
  does not happen in play; it exists so that :attr:`Squelch.max_moves` is a bound.
* **Option order.**  Points descending, then fewer dice first (the spec), then the dice
  ascending, so the order is fixed; ids are ``"0"``, ``"1"``, ... counting across the turn.
* **GameEnd.finalPlayerTurns** holds the final round's turns, the trigger's first; a game
  ended by ``maxTurns`` without a final round sends each seat's most recent turn, oldest first.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from merknera.games.base import (
    CHANCE,
    JSON,
    Announcement,
    Calls,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    JSONObject,
    Outcome,
    Seat,
    Step,
)
from merknera.games.squelch.scoring import is_roll, scorings
from merknera.games.squelch.state import (
    DEFAULT_SETTINGS,
    MAX_GAME_COUNT,
    MAX_SEATS,
    MAX_TURN_LIMIT,
    BotTurn,
    FinalRound,
    Option,
    RollRecord,
    Settings,
    SquelchState,
    Turn,
    state_from_json,
    state_to_json,
)
from merknera.games.wire import lowered, shorten

_T = TypeVar("_T")

MAX_ROLLS_PER_TURN = 100
"""A turn ends after this many choices as if the last one stayed (see the module docstring)."""


@dataclass(frozen=True)
class Choice:
    """A seat's move: the id of the option taken, and whether to bank the turn."""

    take: str
    stay: bool


class SquelchCall(enum.StrEnum):
    """Squelch's calls to a seat, by the game's names for them (docs/bots/protocol.md section 4).
    Each is one call of the Squelchbot API (``seeds/000_*``), whose path and body
    :mod:`.rest` says."""

    MATCH_START = "MatchStart"
    GAME_START = "GameStart"
    TURN_START = "TurnStart"
    CHOOSE = "NextMove"
    SQUELCH = "Squelch"
    GAME_END = "GameEnd"
    MATCH_END = "MatchEnd"


SquelchMove = Choice | str
"""A seat's :class:`Choice`, or a roll drawn by chance: the dice as a sorted digit string."""


def move_bound(game_count: int, max_turns: int) -> int:
    """The most moves a match can last: ``gameCount * maxTurns`` turns, each of at most
    :data:`MAX_ROLLS_PER_TURN` rolls each followed by a choice (a squelch ends a turn on
    its roll).  2e7 for the largest settings allowed."""
    return game_count * max_turns * 2 * MAX_ROLLS_PER_TURN


def parse_move(reply: JSON) -> Choice:
    """Read a bot's reply ``{"take": "<option id>", "stay": true|false}`` as a :class:`Choice`
    (keys in any case, see :mod:`merknera.games.wire`).

    A roll is never a bot's move: the platform draws the dice (:func:`parse_chance` reads the
    rolls of the move log).

    :raises InvalidMoveError: for anything else, with what was wrong.
    """
    if not isinstance(reply, dict):
        raise InvalidMoveError('expected an object {"take": "<option id>", "stay": true or '
                               f'false}}, got {shorten(reply)}')
    fields = lowered(reply)
    if "take" not in fields:
        if "roll" in fields:
            # The shape of a stored roll: the bot has mistaken what it is asked for, so say
            # so rather than only that "take" is missing.
            raise InvalidMoveError(
                'the reply has no "take" (the id of an option) but a "roll": a bot chooses '
                f'one of the options and the platform rolls the dice, got {shorten(reply)}')
        raise InvalidMoveError(f'the reply has no "take" (the id of an option): {shorten(reply)}')
    take = fields["take"]
    if not isinstance(take, str):
        raise InvalidMoveError(
            f'"take" must be a string, the id of an option such as "0", got {shorten(take)}')
    if "stay" not in fields:
        raise InvalidMoveError('the reply has no "stay" (true to bank the turn, false to roll '
                               f'again): {shorten(reply)}')
    stay = fields["stay"]
    if not isinstance(stay, bool):
        raise InvalidMoveError(f'"stay" must be true or false, got {shorten(stay)}')
    return Choice(take, stay)


def parse_chance(stored: JSON) -> str:
    """Read a roll of the move log, ``{"roll": "112356"}`` (what :meth:`Squelch.move_to_wire`
    makes of it, so exactly that key), as its dice.

    :raises InvalidMoveError: for anything else, a bot's choice included.
    """
    roll = stored.get("roll") if isinstance(stored, dict) and len(stored) == 1 else None
    if not isinstance(roll, str) or not is_roll(roll):
        raise InvalidMoveError('a stored roll is {"roll": "<1-6 sorted dice>"}, not '
                               f"{shorten(stored)}")
    return roll


class Squelch(Game[SquelchState, SquelchMove]):
    """Squelch (a Farkle variant) played as matches of several games by 2-6 seats."""

    mnemonic = "SQUELCH"
    name = "Squelch"
    calls = Calls("Squelch", game_id="matchid", open=SquelchCall.MATCH_START,
                  move=SquelchCall.CHOOSE, complete=SquelchCall.MATCH_END)
    min_seats = 2
    max_seats = MAX_SEATS
    max_moves = move_bound(MAX_GAME_COUNT, MAX_TURN_LIMIT)
    """For the largest settings allowed (see :func:`move_bound`)."""
    default_settings: Mapping[str, JSON] = DEFAULT_SETTINGS.to_json()

    # -- rules -------------------------------------------------------------------------

    def new(self, settings: Mapping[str, JSON], players: Sequence[str],
            rng: random.Random) -> SquelchState:
        """Game 1 of the match, seat 0 about to roll.  ``rng`` is not used: the dice are
        chance moves."""
        rules = Settings.from_json(settings)
        seats = len(players)
        if not self.min_seats <= seats <= self.max_seats:
            raise ValueError(f"Squelch is for {self.min_seats}-{self.max_seats} players, "
                             f"not {seats}")
        return _new_game(tuple(players), rules, 1, (0,) * seats)

    def to_move(self, state: SquelchState) -> Seat | None:
        turn = state.turn
        if turn is None:
            return None
        return CHANCE if turn.roll is None else turn.seat

    def legal_moves(self, state: SquelchState, seat: Seat) -> Sequence[SquelchMove]:
        """Each option taken with ``stay: true``, then with ``stay: false``, in option order
        (empty unless ``seat`` has a choice to make; rolls are drawn, not listed)."""
        turn = state.turn
        if turn is None or turn.roll is None or seat != turn.seat:
            return ()
        return tuple(Choice(option.id, stay)
                     for option in turn.options for stay in (True, False))

    def apply(self, state: SquelchState, seat: Seat, move: SquelchMove) -> SquelchState:
        return self.step(state, seat, move).state

    def step(self, state: SquelchState, seat: Seat, move: SquelchMove) -> Step[SquelchState]:
        """The state after ``move`` and its announcements, from one :meth:`_advance` (the
        announcements fall out of working the move out)."""
        after, notes = self._advance(state, seat, move)
        return Step(after, tuple(notes))

    def sample_chance(self, state: SquelchState, rng: random.Random) -> str:
        """The next roll: the turn's dice, each ``rng.randint(1, 6)``, sorted."""
        turn = state.turn
        if turn is None or turn.roll is not None:
            raise ValueError("no dice are to be rolled now")
        return "".join(sorted(str(rng.randint(1, 6)) for _ in range(turn.dice)))

    def outcome(self, state: SquelchState) -> Outcome | None:
        if state.turn is not None:
            return None
        return Outcome.by_scores(tuple(float(w) for w in state.wins), self._tally(state))

    def standings(self, state: SquelchState) -> tuple[float, ...] | None:
        """Games won so far."""
        return tuple(float(w) for w in state.wins)

    def _tally(self, state: SquelchState) -> str:
        """``"alice won 3 of 5 games, bob 2"``, most wins first."""
        order = sorted(range(state.seats), key=lambda seat: (-state.wins[seat], seat))
        first, *rest = order
        count = state.settings.game_count
        games = "game" if count == 1 else "games"
        head = f"{state.players[first]} won {state.wins[first]} of {count} {games}"
        return ", ".join([head, *(f"{state.players[s]} {state.wins[s]}" for s in rest)])

    # -- one move, and the calls it causes -------------------------------------------------

    def _advance(self, state: SquelchState, seat: Seat,
                 move: SquelchMove) -> tuple[SquelchState, list[Announcement]]:
        """The state after ``move`` and the announcements it causes, in order."""
        turn = state.turn
        if turn is None:
            raise IllegalMoveError(f"the match is over ({self._tally(state)}); no more moves")
        if seat == CHANCE:
            return self._roll(state, turn, move)
        name = state.players[seat] if 0 <= seat < state.seats else "nobody"
        if seat != turn.seat:
            raise IllegalMoveError(f"it is seat {turn.seat}'s turn ({state.players[turn.seat]}), "
                                   f"not seat {seat}'s ({name})")
        if turn.roll is None:
            raise IllegalMoveError(f"the dice are to be rolled; there is no roll for seat {seat} "
                                   f"({name}) to choose from")
        if not isinstance(move, Choice):
            raise IllegalMoveError(f'seat {seat} ({name}) cannot roll the dice: reply '
                                   f'{{"take": "<option id>", "stay": true or false}}')
        option = next((o for o in turn.options if o.id == move.take), None)
        if option is None:
            ids = ", ".join(o.id for o in turn.options)
            raise IllegalMoveError(f"there is no option {shorten(move.take)} for the roll "
                                   f"{turn.roll}; the options are {ids}")
        rolls = (*turn.rolls, RollRecord(turn.roll, option.dice, option.points))
        turn = replace(turn, points=turn.points + option.points, rolls=rolls, roll=None,
                       options=())
        if move.stay or len(rolls) >= MAX_ROLLS_PER_TURN:
            return self._end_turn(state, turn, banked=True, notes=[])
        left = turn.dice - len(option.dice)
        turn = replace(turn, dice=left or state.settings.die_count)
        return replace(state, turn=turn), []

    def _roll(self, state: SquelchState, turn: Turn,
              roll: SquelchMove) -> tuple[SquelchState, list[Announcement]]:
        if turn.roll is not None:
            raise IllegalMoveError(f"seat {turn.seat} has to choose from {turn.roll}; no dice "
                                   "are to be rolled")
        if not isinstance(roll, str) or not is_roll(roll, turn.dice):
            raise IllegalMoveError(f"a roll here is {turn.dice} sorted dice 1-6, not "
                                   f"{shorten(roll)}")
        found = scorings(roll)
        if not found:
            squelch = Announcement(turn.seat, SquelchCall.SQUELCH, {
                "gameid": state.game, "turnid": turn.turn_id, "dieValues": roll})
            turn = replace(turn, rolls=(*turn.rolls, RollRecord(roll, "", 0)))
            return self._end_turn(state, turn, banked=False, notes=[squelch])
        first = turn.next_option
        options = tuple(Option(str(first + i), s.dice, s.points) for i, s in enumerate(found))
        turn = replace(turn, roll=roll, options=options, next_option=first + len(options))
        return replace(state, turn=turn), []

    def _end_turn(self, state: SquelchState, turn: Turn, *, banked: bool,
                  notes: list[Announcement]) -> tuple[SquelchState, list[Announcement]]:
        """Bank (or lose) the turn, then start the next turn, or end the game (and start the
        next one, or end the match)."""
        seat, settings = turn.seat, state.settings
        start = state.scores[seat]
        end = start + turn.points if banked else start
        done = BotTurn(seat, turn.turn_id, start, end, turn.rolls)
        scores = _put(state.scores, seat, end)
        # Scores only grow, so "replace the leader only if strictly greater" keeps the seat
        # that reached the top score first.
        leader = seat if end > scores[state.leader] else state.leader
        last_turns = _put(state.last_turns, seat, done)
        final = state.final_round
        if final is not None:
            final = FinalRound(final.trigger, (*final.turns, done))
        elif banked and end >= settings.max_points:
            final = FinalRound(seat, (done,))
        state = replace(state, scores=scores, leader=leader, last_turns=last_turns,
                        final_round=final)
        over = ((final is not None and len(final.turns) == state.seats)
                or turn.turn_id >= settings.max_turns)
        if not over:
            following = Turn((seat + 1) % state.seats, turn.turn_id + 1, settings.die_count)
            state = replace(state, turn=following)
            return state, [*notes, _turn_start(state)]
        finals = final.turns if final is not None else tuple(sorted(
            (t for t in last_turns if t is not None), key=lambda t: t.turn_id))
        wins = _put(state.wins, leader, state.wins[leader] + 1)
        notes = [*notes, *(Announcement(s, SquelchCall.GAME_END, {
            "gameid": state.game, "finalPlayerTurns": [t.to_wire() for t in finals],
            "winnerBotIndex": leader}) for s in range(state.seats))]
        if state.game == settings.game_count:
            return replace(state, wins=wins, turn=None), notes
        state = _new_game(state.players, settings, state.game + 1, wins)
        return state, [*notes, *_game_opening(state)]

    # -- values <-> JSON -----------------------------------------------------------------

    def state_to_json(self, state: SquelchState) -> JSON:
        return state_to_json(state)

    def state_from_json(self, data: JSON) -> SquelchState:
        return state_from_json(data)

    def move_to_wire(self, move: SquelchMove) -> JSON:
        """``{"take": id, "stay": bool}``; a roll as ``{"roll": "112356"}``."""
        if isinstance(move, str):
            return {"roll": move}
        return {"take": move.take, "stay": move.stay}

    def parse_move(self, reply: JSON) -> SquelchMove:
        return parse_move(reply)

    def parse_chance(self, stored: JSON) -> SquelchMove:
        return parse_chance(stored)

    # -- the wire view -------------------------------------------------------------------

    def new_game_params(self, state: SquelchState, seat: Seat) -> JSONObject:
        """``Squelch.MatchStart``: the spec's match start."""
        settings = state.settings
        return {"dieCount": settings.die_count, "maxPoints": settings.max_points,
                "gameCount": settings.game_count, "yourBotIndex": seat,
                "botNames": list(state.players)}

    def opening_announcements(self, state: SquelchState) -> Sequence[Announcement]:
        """GameStart of the first game to every seat, then TurnStart to its first seat."""
        return _game_opening(state) if state.turn is not None else ()

    def announcements(self, before: SquelchState, seat: Seat, move: SquelchMove,
                      after: SquelchState) -> Sequence[Announcement]:
        """Squelch after a roll that scores nothing; TurnStart when a turn begins; GameEnd
        to every seat when a game ends, then GameStart and TurnStart of the next one.

        ``after`` is not read: the calls are worked out again from ``before`` (the runner
        calls :meth:`step` instead, which does it once)."""
        return self.step(before, seat, move).announcements

    def next_move_params(self, state: SquelchState, seat: Seat) -> JSONObject:
        """The spec's choose: the roll and its options, with the game and turn ids."""
        turn = state.turn
        if turn is None or turn.roll is None:
            raise ValueError("no seat has a choice to make")
        return {"gameid": state.game, "turnid": turn.turn_id, "dieValues": turn.roll,
                "options": [option.to_wire() for option in turn.options]}

    def complete_params(self, state: SquelchState, seat: Seat,
                        outcome: Outcome | None = None) -> JSONObject:
        """``Squelch.MatchEnd``: games won by each seat."""
        return {"winsByBotIndex": list(state.wins)}

    def error_params(self, state: SquelchState, seat: Seat) -> JSONObject:
        params: JSONObject = {"gameid": state.game}
        if state.turn is not None:
            params["turnid"] = state.turn.turn_id
        return params

    def describe_move(self, state: SquelchState, seat: Seat, move: SquelchMove) -> str:
        """``"rolls 112356: 4 options"``, ``"rolls 2346: squelch, 350 points lost"``,
        ``"takes 111 for 1000 and stays: banks 1350"`` or ``"takes 5 for 50, rolls 5 dice"``."""
        turn = state.turn
        if isinstance(move, str):
            if not is_roll(move):
                return f"rolls {move!r} (not dice)"
            count = len(scorings(move))
            if count:
                return f"rolls {move}: {count} option{'s' if count != 1 else ''}"
            lost = turn.points if turn is not None else 0
            return f"rolls {move}: squelch, {lost} points lost"
        option = None if turn is None else next(
            (o for o in turn.options if o.id == move.take), None)
        if turn is None or option is None:
            return f"takes {shorten(move.take)} (no such option)"
        total = turn.points + option.points
        taken = f"takes {option.dice} for {option.points}"
        if move.stay or len(turn.rolls) + 1 >= MAX_ROLLS_PER_TURN:
            return f"{taken} and stays: banks {total}"
        left = turn.dice - len(option.dice)
        dice = f"hot dice, rolls {state.settings.die_count}" if not left else f"rolls {left}"
        return f"{taken}, {dice} dice (turn {total})"


def render(state: SquelchState) -> str:
    """One line: the game, the scores, and who does what next."""
    names = state.players
    scores = ", ".join(f"{n} {p}" for n, p in zip(names, state.scores, strict=True))
    wins = "-".join(map(str, state.wins))
    head = f"game {state.game} of {state.settings.game_count}; scores: {scores}; wins: {wins}"
    turn = state.turn
    if turn is None:
        return f"{head}; the match is over"
    final = "; final round" if state.final_round is not None else ""
    doing = (f"{names[turn.seat]} rolls {turn.dice} dice" if turn.roll is None
             else f"{names[turn.seat]} chooses from {turn.roll}")
    return f"{head}{final}; turn {turn.turn_id}: {doing} (turn points {turn.points})"


def _new_game(players: tuple[str, ...], settings: Settings, game: int,
              wins: tuple[int, ...]) -> SquelchState:
    seats = len(players)
    starter = (game - 1) % seats
    return SquelchState(players, settings, game, starter, (0,) * seats, starter, wins,
                        (None,) * seats, None, Turn(starter, 1, settings.die_count))


def _game_opening(state: SquelchState) -> list[Announcement]:
    starts = [Announcement(seat, SquelchCall.GAME_START, {"gameid": state.game})
              for seat in range(state.seats)]
    return [*starts, _turn_start(state)]


def _turn_start(state: SquelchState) -> Announcement:
    turn = state.turn
    assert turn is not None
    others: list[JSON] = [t.to_wire() for s, t in enumerate(state.last_turns)
              if s != turn.seat and t is not None]
    return Announcement(turn.seat, SquelchCall.TURN_START, {
        "gameid": state.game, "turnid": turn.turn_id, "startPoints": state.scores[turn.seat],
        "otherPlayerTurns": others, "isFinalRound": state.final_round is not None})


def _put(values: tuple[_T, ...], index: int, value: _T) -> tuple[_T, ...]:
    return (*values[:index], value, *values[index + 1:])

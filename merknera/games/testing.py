"""The house rules every hosted game must keep, as a check a game's author runs in their
own tests (as PettingZoo ships ``api_test``): :func:`check_game`.

The platform runs the same check over every game it hosts (``tests/games/
test_conformance.py``).  Pure, like the games: no I/O, no test framework needed; a broken
rule raises :class:`ConformanceError` saying which rule, at which step of which playout.

    from merknera.games.testing import check_game

    def test_my_game_keeps_the_house_rules() -> None:
        check_game(ConnectFour())
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from merknera.games.base import (
    CHANCE,
    JSON,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Outcome,
    Seat,
)

SEEDS = (1, 2, 3)
"""The seeds of the playouts at each table size."""

AnyGame = Game[Any, Any]


class ConformanceError(AssertionError):
    """A house rule the game breaks, and where."""


@dataclass
class Playout:
    """What one seeded random game went through."""

    states: list[JSON]
    """The state's JSON before the first move and after each."""
    log: list[tuple[Seat, JSON]]
    """The move log: each mover and its move's wire form, as the platform stores them."""
    outcome: Outcome
    chances: int
    """How many of the moves were drawn by chance."""


def check_game(game: AnyGame, seeds: Sequence[int] = SEEDS) -> None:
    """Check ``game`` against the house rules (a game with assets: after
    :meth:`~merknera.games.base.Game.with_assets`).

    The static facts (mnemonic, seats, move bound, call prefix, default settings as JSON);
    then, for each seed at the smallest and the largest table, a random playout in which:
    legal moves exist until the end and a legal move never raises; the same move made by a
    seat that is not to move raises :class:`IllegalMoveError`; a bot's move read as a
    chance move (and the other way) raises :class:`InvalidMoveError`; ``step`` gives the
    state ``apply`` does and the calls ``announcements`` does; every state and move is plain
    JSON and round-trips, and the calls and the spectator views (at every power-of-two
    step) are plain JSON; the game ends within its move bound with
    an outcome ranking every seat; the same seed plays the same game; and the move log,
    read back with ``parse_logged``, replays to the same states.

    :raises ConformanceError: for the first rule broken.
    """
    check_static_facts(game)
    draws = type(game).sample_chance is not Game.sample_chance
    _require(draws == (type(game).parse_chance is not Game.parse_chance),
             "a game with chance moves overrides both sample_chance and parse_chance")
    for seats in sorted({game.min_seats, game.max_seats}):
        for seed in seeds:
            first = playout(game, seats, seed)
            again = playout(game, seats, seed)
            where = f"{seats} seats, seed {seed}"
            _require(again.states == first.states and again.outcome == first.outcome,
                     f"{where}: the same seed played a different game")
            _require(first.chances > 0 or not draws,
                     f"{where}: a game with chance moves drew none")
            replay(game, seats, seed, first)


def check_static_facts(game: AnyGame) -> None:
    """The facts a game states about itself.

    :raises ConformanceError: for the first one that does not hold.
    """
    mnemonic = game.mnemonic
    _require(bool(mnemonic) and mnemonic.isupper() and mnemonic.isascii()
             and mnemonic.isalnum(), f"the mnemonic {mnemonic!r} is not upper-case letters "
                                     "and digits")
    _require(2 <= game.min_seats <= game.max_seats,
             f"seats {game.min_seats}..{game.max_seats}: at least 2, min <= max")
    _require(game.max_moves > 0, f"max_moves is {game.max_moves}")
    prefix = game.calls.prefix
    _require(bool(prefix) and prefix[0].isupper() and "." not in prefix,
             f"the call prefix {prefix!r} is not a capitalised name without a dot")
    _require(_as_json(dict(game.default_settings), "the default settings")
             == dict(game.default_settings), "the default settings are not plain JSON")


def playout(game: AnyGame, seats: int, seed: int) -> Playout:
    """One random game at ``seats`` seats, checking the rules at each step.

    :raises ConformanceError: for the first rule broken.
    """
    rng = random.Random(seed)  # the game's own RNG, as the runner owns it
    chooser = random.Random(seed * 7919)
    players = [f"player-{seat}" for seat in range(seats)]
    state = game.new(game.default_settings, players, rng)
    states: list[JSON] = [_as_json(game.state_to_json(state), "the first state")]
    log: list[tuple[Seat, JSON]] = []
    steps, chances = 0, 0
    while (seat := game.to_move(state)) is not None:
        steps += 1
        at = f"{seats} seats, seed {seed}, step {steps}"
        _require(game.outcome(state) is None, f"{at}: an outcome before the end")
        _require(steps <= game.max_moves, f"{at}: past max_moves {game.max_moves}")
        if seat == CHANCE:
            chances += 1
            move = game.sample_chance(state, rng)
            wire = _as_json(game.move_to_wire(move), f"{at}: the chance move")
            _require(game.parse_chance(wire) == move, f"{at}: {move!r} does not round-trip")
            _raises(InvalidMoveError, f"{at}: a bot sent a chance move", game.parse_move,
                    wire)
            _raises(IllegalMoveError, f"{at}: a seat played a chance move", game.apply,
                    state, steps % seats, move)
        else:
            legal = list(game.legal_moves(state, seat))
            _require(bool(legal), f"{at}: no legal move for seat {seat}")
            move = chooser.choice(legal)
            wire = _as_json(game.move_to_wire(move), f"{at}: the move")
            _require(game.parse_move(wire) == move, f"{at}: the wire form of {move!r} does "
                                                    "not round-trip")
            _raises(InvalidMoveError, f"{at}: a bot's move read as a chance move",
                    game.parse_chance, wire)
            params = _as_json(game.next_move_params(state, seat), f"{at}: NextMove's params")
            _require(isinstance(params, dict), f"{at}: NextMove's params are not an object")
            others = [other for other in range(seats) if other != seat]
            _raises(IllegalMoveError, f"{at}: a seat not to move played", game.apply,
                    state, others[steps % len(others)], move)
            _require(isinstance(game.describe_move(state, seat, move), str),
                     f"{at}: describe_move gave no text")
        stepped = game.step(state, seat, move)
        after = game.apply(state, seat, move)
        _require(stepped.state == after, f"{at}: step and apply differ")
        _require(stepped.announcements == tuple(game.announcements(state, seat, move, after)),
                 f"{at}: step's calls are not announcements'")
        state = after
        log.append((seat, wire))
        snapshot = _as_json(game.state_to_json(state), f"{at}: the state")
        _require(game.state_from_json(snapshot) == state,
                 f"{at}: the state does not round-trip through JSON")
        if steps & (steps - 1) == 0:  # every power of two, to bound the cost
            for reveal in (False, True):
                _as_json(game.spectator_view(state, reveal), f"{at}: the spectator view")
        states.append(snapshot)
    end = f"{seats} seats, seed {seed}, the end"
    _require(game.state_from_json(game.state_to_json(state)) == state,
             f"{end}: the state does not round-trip through JSON")
    outcome = game.outcome(state)
    _require(outcome is not None, f"{end}: no outcome")
    assert outcome is not None
    _require(outcome.ranks is not None and len(outcome.ranks) == seats,
             f"{end}: the outcome does not rank every seat")
    for seat in range(seats):
        _as_json(game.complete_params(state, seat), f"{end}: Complete's params")
        _as_json(game.new_game_params(state, seat), f"{end}: NewGame's params")
    if log:
        mover, wire = log[-1]
        last = game.parse_chance(wire) if mover == CHANCE else game.parse_move(wire)
        _raises(IllegalMoveError, f"{end}: a move after the end", game.apply, state, 0, last)
    return Playout(states, log, outcome, chances)


def replay(game: AnyGame, seats: int, seed: int, played: Playout) -> None:
    """Replay ``played``'s move log as the platform does after a restart and for viewers:
    the same seed, each stored move read back with ``parse_logged``.

    :raises ConformanceError: where the replay parts from the game played.
    """
    players = [f"player-{seat}" for seat in range(seats)]
    state = game.new(game.default_settings, players, random.Random(seed))
    for number, (seat, wire) in enumerate(played.log, start=1):
        state = game.apply(state, seat, game.parse_logged(seat, wire))
        _require(_as_json(game.state_to_json(state), "the state") == played.states[number],
                 f"{seats} seats, seed {seed}: the replay parts from the game at move "
                 f"{number}")
    _require(game.outcome(state) == played.outcome,
             f"{seats} seats, seed {seed}: the replay ends with another outcome")


def _as_json(value: object, what: str) -> Any:
    """The value through JSON and back: it must be plain JSON (no NaN, no odd types)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ConformanceError(f"{what} is not plain JSON: {exc}") from None


def _require(holds: bool, rule: str) -> None:
    if not holds:
        raise ConformanceError(rule)


def _raises(expected: type[Exception], rule: str, action: Callable[..., object],
            *args: Any) -> None:
    try:
        action(*args)
    except expected:
        return
    except Exception as exc:  # another error: the rule's wording says which was due
        raise ConformanceError(f"{rule}: raised {type(exc).__name__}, not "
                               f"{expected.__name__}: {exc}") from exc
    raise ConformanceError(f"{rule}: nothing was raised (expected {expected.__name__})")

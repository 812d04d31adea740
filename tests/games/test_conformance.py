"""One conformance test run over every registered game (the house rules of a game).

For seeded random playouts at the smallest and the largest table: legal moves exist until
the end, a legal move never raises, the same move made by a seat that is not to move raises
IllegalMoveError, ``step`` gives the state ``apply`` does and the calls ``announcements``
does, the wire view of moves and states round-trips and is plain JSON (a bot's move through
``parse_move``, a chance move through ``parse_chance``, and neither reads the other's), two
runs with the same seed are identical, and every game ends within its move bound with an
outcome.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from merknera.assets import AssetStore, default_directory
from merknera.games import (
    CHANCE,
    REGISTRY,
    AnyGame,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Outcome,
)

SEEDS = (1, 2, 3)


@cache
def configured(mnemonic: str) -> AnyGame:
    """The registered game, with its asset files when it has any."""
    game = REGISTRY[mnemonic]
    if game.assets:
        game = game.with_assets(AssetStore.load(default_directory()).contents(mnemonic))
    return game


def tables() -> Iterator[tuple[str, int]]:
    for mnemonic, game in sorted(REGISTRY.items()):
        for seats in sorted({game.min_seats, game.max_seats}):
            yield mnemonic, seats


def as_json(value: object) -> Any:
    """The value through JSON and back: it must be plain JSON (no NaN, no odd types)."""
    return json.loads(json.dumps(value, allow_nan=False))


@dataclass
class Playout:
    """What one seeded random game went through."""

    states: list[Any]
    moves: list[Any]
    outcome: Outcome
    chances: int
    """How many of the moves were drawn by chance."""


def playout(game: AnyGame, seats: int, seed: int) -> Playout:
    rng = random.Random(seed)  # the game's own RNG, as the runner owns it
    chooser = random.Random(seed * 7919)
    players = [f"player-{seat}" for seat in range(seats)]
    state = game.new(game.default_settings, players, rng)
    states, moves = [game.state_to_json(state)], []
    steps, chances, mover = 0, 0, None
    while (seat := game.to_move(state)) is not None:
        mover = seat
        assert game.outcome(state) is None, "an outcome before the end"
        steps += 1
        assert steps <= game.max_moves, f"{game.mnemonic} exceeded max_moves {game.max_moves}"
        if seat == CHANCE:
            chances += 1
            move = game.sample_chance(state, rng)
            wire = as_json(game.move_to_wire(move))
            assert game.parse_chance(wire) == move, f"the stored {move!r} does not round-trip"
            with pytest.raises(InvalidMoveError):  # a bot may not send a chance move
                game.parse_move(wire)
            with pytest.raises(IllegalMoveError):  # nor may a seat play one
                game.apply(state, steps % seats, move)
        else:
            legal = list(game.legal_moves(state, seat))
            assert legal, f"no legal move for seat {seat} at step {steps}"
            move = chooser.choice(legal)
            wire = as_json(game.move_to_wire(move))
            assert game.parse_move(wire) == move, f"the wire form of {move!r} does not round-trip"
            with pytest.raises(InvalidMoveError):  # a bot's move is no chance move
                game.parse_chance(wire)
            params = as_json(game.next_move_params(state, seat))
            assert isinstance(params, dict)
            others = [other for other in range(seats) if other != seat]
            with pytest.raises(IllegalMoveError):
                game.apply(state, others[steps % len(others)], move)
        stepped = game.step(state, seat, move)
        after = game.apply(state, seat, move)
        assert stepped.state == after, f"step and apply differ at step {steps}"
        assert stepped.announcements == tuple(game.announcements(state, seat, move, after))
        state = after
        moves.append(wire)
        snapshot = game.state_to_json(state)
        assert as_json(snapshot) == snapshot
        if steps & (steps - 1) == 0:  # every power of two, to bound the cost
            assert game.state_from_json(snapshot) == state
        states.append(snapshot)
    assert game.state_from_json(game.state_to_json(state)) == state
    outcome = game.outcome(state)
    assert outcome is not None, "the game ended without an outcome"
    assert outcome.ranks is not None and len(outcome.ranks) == seats
    for seat in range(seats):
        as_json(game.complete_params(state, seat))
        as_json(game.new_game_params(state, seat))
    if moves and game.to_move(state) is None:
        last = game.parse_chance(moves[-1]) if mover == CHANCE else game.parse_move(moves[-1])
        with pytest.raises(IllegalMoveError):
            game.apply(state, 0, last)
    return Playout(states, moves, outcome, chances)


@pytest.mark.parametrize(("mnemonic", "seats"), list(tables()))
def test_random_playouts_follow_the_house_rules(mnemonic: str, seats: int) -> None:
    game = configured(mnemonic)
    # A game with chance moves overrides both; then the playouts must draw some, so that
    # the chance-move checks are not vacuous.
    draws = type(game).sample_chance is not Game.sample_chance
    assert draws == (type(game).parse_chance is not Game.parse_chance)
    for seed in SEEDS:
        first = playout(game, seats, seed)
        again = playout(game, seats, seed)
        assert again.states == first.states, "the same seed played differently"
        assert again.outcome == first.outcome
        assert (first.chances > 0) == draws


@pytest.mark.parametrize("mnemonic", sorted(REGISTRY))
def test_static_facts(mnemonic: str) -> None:
    game = configured(mnemonic)
    assert game.mnemonic == mnemonic and mnemonic.isupper()
    assert 2 <= game.min_seats <= game.max_seats
    assert game.max_moves > 0
    prefix = game.calls.prefix
    assert prefix and prefix[0].isupper() and "." not in prefix
    assert as_json(dict(game.default_settings)) == dict(game.default_settings)

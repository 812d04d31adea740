"""The Squelch reference strategies (merknera_bots/squelch.py): good plays for points, random
for fun.

The strategies are checked on sample rolls, against the platform's own scoring, and in whole
matches played by the platform's rules (merknera.games.squelch) with seeded dice.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable

import pytest

from merknera.games.base import CHANCE
from merknera.games.squelch import Choice, Squelch, SquelchState, scorings
from merknera_bots.squelch import (
    Option,
    Situation,
    chase_chance,
    choose_good,
    choose_random,
    roll_scores,
    turn_value,
)

GAME = Squelch()


def options(roll: str) -> tuple[Option, ...]:
    """The options the platform offers for ``roll`` at the start of a turn."""
    return tuple(Option(str(i), s.dice, s.points) for i, s in enumerate(scorings(roll)))


def good(roll: str, **context: int | bool) -> tuple[str, bool]:
    """choose_good's answer as (the dice taken, stay)."""
    situation = Situation(roll, options(roll), **context)  # type: ignore[arg-type]
    take, stay = choose_good(situation)
    return next(o.dice for o in situation.options if o.id == take), stay


def test_the_bots_scoring_is_the_platforms() -> None:
    for count in range(1, 7):
        for dice in itertools.combinations_with_replacement("123456", count):
            roll = "".join(dice)
            assert Counter(roll_scores(roll)) == Counter(
                (s.dice, s.points) for s in scorings(roll)), roll


@pytest.mark.parametrize(("roll", "context", "take", "stay"), [
    # All six dice score: take them all and roll six fresh dice.
    ("111222", {}, "111222", False),
    ("123456", {}, "123456", False),
    ("123456", {"turn_points": 2000}, "123456", False),
    ("123456", {"turn_points": 3000}, "123456", True),  # 4500: past TURN_CAP, bank
    # Keep dice to roll: one 1 rather than 1 and 5, or a pair of 1s.
    ("122356", {}, "1", False),
    ("112346", {}, "1", False),
    ("223455", {}, "5", False),
    # Bank when the dice left are few and the turn is worth enough.
    ("1346", {"turn_points": 500}, "1", True),
    ("12", {"turn_points": 350}, "1", True),
    ("12", {"turn_points": 150}, "1", False),
    ("11134", {"turn_points": 300}, "111", True),
    ("11134", {"turn_points": 0}, "111", True),
    ("1112", {"turn_points": 0}, "111", True),  # 1000 on one die: 2 in 3 to lose it
    ("155", {"turn_points": 300}, "155", False),  # hot dice: always worth a roll
    # A big triple is taken over singles.
    ("666", {}, "666", False),
    ("23366", {}, None, None),
])
def test_good_on_sample_rolls(roll: str, context: dict[str, int | bool], take: str | None,
                              stay: bool | None) -> None:
    if take is None:
        assert not options(roll)
        with pytest.raises(ValueError, match="no options"):
            good(roll, **context)
        return
    assert good(roll, **context) == (take, stay)


@pytest.mark.parametrize(("roll", "context", "take", "stay"), [
    # Behind the best opponent: roll on, however much is in hand.
    ("12346", {"banked": 3000, "best_other": 5200, "turn_points": 1500}, "1", False),
    # Ahead once this option is banked: stay, with the most points on offer.
    ("12346", {"banked": 3000, "best_other": 4550, "turn_points": 1500}, "1", True),
    ("11155", {"banked": 4000, "best_other": 5000, "turn_points": 0}, "11155", True),
    # Exactly level is not ahead (a tie goes to whoever got there first).
    ("12346", {"banked": 4900, "best_other": 5000, "turn_points": 0}, "1", False),
    # Far behind: the option that keeps the best chance of catching up (hot dice).
    ("111556", {"banked": 0, "best_other": 5000}, "11155", False),
])
def test_good_in_the_final_round_rolls_until_ahead(roll: str, context: dict[str, int],
                                                  take: str, stay: bool) -> None:
    assert good(roll, final_round=True, **context) == (take, stay)


def test_the_value_tables() -> None:
    # A fresh turn banks about 500 points on average (Farkle with these rules).
    assert 480 < turn_value(0, 6) < 550
    # Rolling is worth more than the points in hand with six dice, not with 1000 and two.
    assert turn_value(1000, 6) > 1000
    assert turn_value(1000, 2) < 1000
    assert turn_value(10_000, 6) == 10_000  # past the cap: bank
    assert chase_chance(0, 1) == 1.0
    assert chase_chance(50, 1) == pytest.approx(1 / 3)  # a 1 or a 5
    assert chase_chance(300, 6) > chase_chance(1000, 6) > chase_chance(3000, 6) > 0
    assert chase_chance(10**6, 6) == chase_chance(20_000, 6)


def test_random_takes_every_option_and_both_stays_repeatably() -> None:
    situation = Situation("123456", options("123456"))
    rng = random.Random(3)
    seen = Counter(choose_random(situation, rng) for _ in range(800))
    assert set(seen) == {(str(i), stay) for i in range(4) for stay in (True, False)}
    assert all(60 < n < 140 for n in seen.values()), seen
    first = [choose_random(situation, random.Random(9)) for _ in range(3)]
    assert first == [choose_random(situation, random.Random(9)) for _ in range(3)]


Policy = Callable[[SquelchState, int, random.Random], Choice]


def _situation(state: SquelchState, seat: int) -> Situation:
    turn = state.turn
    assert turn is not None and turn.roll is not None
    return Situation(turn.roll, tuple(Option(o.id, o.dice, o.points) for o in turn.options),
                     turn.points, state.scores[seat],
                     max(p for s, p in enumerate(state.scores) if s != seat),
                     state.final_round is not None, state.settings.die_count)


def _good(state: SquelchState, seat: int, rng: random.Random) -> Choice:
    return Choice(*choose_good(_situation(state, seat)))


def _random(state: SquelchState, seat: int, rng: random.Random) -> Choice:
    return Choice(*choose_random(_situation(state, seat), rng))


def _localbot(state: SquelchState, seat: int, rng: random.Random) -> Choice:
    """The Go arena's baseline: the first option, staying over 300 or once ahead at the end."""
    turn = state.turn
    assert turn is not None
    total = turn.points + turn.options[0].points
    if state.final_round is not None:
        best = max(p for s, p in enumerate(state.scores) if s != seat)
        return Choice(turn.options[0].id, state.scores[seat] + total > best)
    return Choice(turn.options[0].id, total > 300)


def wins(policies: list[Policy], games: int, seed: int) -> tuple[int, ...]:
    rng, chooser = random.Random(seed), random.Random(seed + 1)
    names = [f"p{seat}" for seat in range(len(policies))]
    state = GAME.new({**GAME.default_settings, "gameCount": games}, names, rng)
    while (seat := GAME.to_move(state)) is not None:
        move = (GAME.sample_chance(state, rng) if seat == CHANCE
                else policies[seat](state, seat, chooser))
        state = GAME.apply(state, seat, move)
    return state.wins


def test_good_beats_random() -> None:
    first = wins([_good, _random], 10, seed=1)
    second = wins([_random, _good], 10, seed=2)
    assert first[0] >= 9 and second[1] >= 9


def test_good_beats_the_go_arenas_baseline() -> None:
    total = Counter[str]()
    for seed in range(4):
        a, b = wins([_good, _localbot], 15, seed)
        c, d = wins([_localbot, _good], 15, seed + 100)
        total.update({"good": a + d, "baseline": b + c})
    # About 3 games in 4 (it was 301-99 over 400 games); 120 games here.
    assert total["good"] >= 75, total


def test_good_at_a_table_of_six() -> None:
    result = wins([_good, _random, _localbot, _random, _localbot, _random], 12, seed=5)
    assert result[0] == max(result) and sum(result) == 12

"""Squelch scoring (merknera/games/squelch/scoring.py): the options of a roll, their order and ids.

The worked examples are those of research/seed-systems.md b.3, checked there against the Go
arena's algorithm; each row lists the options exactly as a bot is offered them.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from merknera.games.base import CHANCE
from merknera.games.squelch import (
    Choice,
    Squelch,
    is_roll,
    points_using_all,
    scorings,
    squelches,
)

GAME = Squelch()

Options = list[tuple[int, str]]
"""(points, dice) in the order offered."""

EXAMPLES: list[tuple[str, Options]] = [
    # -- research b.3's worked examples --------------------------------------------------
    ("111222", [(1200, "111222"), (1000, "111"), (400, "11222"), (300, "1222"), (200, "11"),
                (200, "222"), (100, "1")]),
    ("123456", [(1500, "123456"), (150, "15"), (100, "1"), (50, "5")]),
    ("223366", [(750, "223366")]),
    ("22346", []),
    ("111155", [(1200, "111155"), (1150, "11115"), (1100, "1111"), (1100, "11155"),
                (1050, "1115"), (1000, "111"), (750, "111155"), (300, "1155"), (250, "115"),
                (200, "11"), (200, "155"), (150, "15"), (100, "1"), (100, "55"), (50, "5")]),
    ("222255", [(750, "222255"), (300, "22255"), (250, "2225"), (200, "222"), (100, "55"),
                (50, "5")]),
    ("1111", [(1100, "1111"), (1000, "111"), (200, "11"), (100, "1")]),
    ("11111", [(1200, "11111"), (1100, "1111"), (1000, "111"), (200, "11"), (100, "1")]),
    ("55555", [(600, "55555"), (550, "5555"), (500, "555"), (100, "55"), (50, "5")]),
    ("555555", [(1000, "555555"), (750, "555555"), (600, "55555"), (550, "5555"), (500, "555"),
                (100, "55"), (50, "5")]),
    # -- three pairs ------------------------------------------------------------------------
    ("112233", [(750, "112233"), (200, "11"), (100, "1")]),
    ("115566", [(750, "115566"), (300, "1155"), (250, "115"), (200, "11"), (200, "155"),
                (150, "15"), (100, "1"), (100, "55"), (50, "5")]),
    ("224466", [(750, "224466")]),
    ("444466", [(750, "444466"), (400, "444")]),
    # -- six distinct dice and near misses -------------------------------------------------
    ("122456", [(150, "15"), (100, "1"), (50, "5")]),
    ("234566", [(50, "5")]),
    # -- triples -----------------------------------------------------------------------------
    ("333444", [(700, "333444"), (400, "444"), (300, "333")]),
    ("222346", [(200, "222")]),
    ("666", [(600, "666")]),
    ("111", [(1000, "111"), (200, "11"), (100, "1")]),
    ("666666", [(1200, "666666"), (750, "666666"), (600, "666")]),
    ("111111", [(2000, "111111"), (1200, "11111"), (1100, "1111"), (1000, "111"),
                (750, "111111"), (200, "11"), (100, "1")]),
    ("2222", [(200, "222")]),  # the fourth 2 spoils only the reading with all four
    # -- single dice and squelches --------------------------------------------------------
    ("1", [(100, "1")]),
    ("5", [(50, "5")]),
    ("15", [(150, "15"), (100, "1"), (50, "5")]),
    ("2", []),
    ("223466", []),
]


@pytest.mark.parametrize(("roll", "expected"), EXAMPLES, ids=[row[0] for row in EXAMPLES])
def test_options_of_a_roll(roll: str, expected: Options) -> None:
    assert [(s.points, s.dice) for s in scorings(roll)] == expected
    assert squelches(roll) == (not expected)


@pytest.mark.parametrize(("roll", "expected"), [row for row in EXAMPLES if len(row[0]) == 6],
                         ids=[row[0] for row in EXAMPLES if len(row[0]) == 6])
def test_the_first_roll_of_a_turn_offers_them_with_ids_from_0(roll: str,
                                                              expected: Options) -> None:
    state = GAME.new(GAME.default_settings, ["alice", "bob"], random.Random(0))
    state = GAME.apply(state, CHANCE, roll)
    if not expected:
        assert GAME.to_move(state) == CHANCE  # squelched: bob rolls
        assert state.turn is not None and state.turn.seat == 1
        return
    params = GAME.next_move_params(state, 0)
    assert params["dieValues"] == roll
    assert params["options"] == [{"id": str(i), "dieValues": dice, "points": points}
                                 for i, (points, dice) in enumerate(expected)]


def test_ids_count_on_across_the_rolls_of_a_turn() -> None:
    state = GAME.new(GAME.default_settings, ["alice", "bob"], random.Random(0))
    state = GAME.apply(state, CHANCE, "111222")  # 7 options: ids 0-6
    state = GAME.apply(state, 0, Choice("6", False))  # take "1", roll 5 dice
    state = GAME.apply(state, CHANCE, "12345")
    options = GAME.next_move_params(state, 0)["options"]
    assert options == [
        {"id": "7", "dieValues": "15", "points": 150},
        {"id": "8", "dieValues": "1", "points": 100},
        {"id": "9", "dieValues": "5", "points": 50},
    ]
    # An id of an earlier roll of the turn is no longer on offer.
    assert [m for m in GAME.legal_moves(state, 0) if isinstance(m, Choice)] == [
        Choice("7", True), Choice("7", False), Choice("8", True), Choice("8", False),
        Choice("9", True), Choice("9", False)]


@pytest.mark.parametrize(("dice", "points"), [
    ("1", (100,)), ("5", (50,)), ("15", (150,)), ("111", (1000,)), ("1111", (1100,)),
    ("11111", (1200,)), ("55555", (600,)), ("555555", (1000, 750)), ("111155", (1200, 750)),
    ("222255", (750,)), ("123456", (1500,)), ("2", ()), ("22", ()), ("2222", ()),
    ("12", ()), ("1234", ()), ("444", (400,)), ("4445", (450,)), ("44456", ()),
])
def test_points_using_all_the_dice(dice: str, points: tuple[int, ...]) -> None:
    assert points_using_all(dice) == points


def test_every_roll_of_up_to_six_dice() -> None:
    """All 923 sorted rolls: options are sub-multisets that use all their dice, sorted as
    the spec says, and never repeated."""
    rolls = 0
    for count in range(1, 7):
        for dice in itertools.combinations_with_replacement("123456", count):
            roll = "".join(dice)
            rolls += 1
            found = scorings(roll)
            keys = [(-s.points, len(s.dice), s.dice) for s in found]
            assert keys == sorted(keys), roll
            assert len(set(found)) == len(found), roll
            for option in found:
                assert not Counter(option.dice) - Counter(roll), (roll, option)
                assert is_roll(option.dice)
                assert option.points in points_using_all(option.dice)
                assert option.points % 50 == 0 and option.points >= 50
    assert rolls == 923


@pytest.mark.parametrize(("dice", "squelching"), [
    # The well-known Farkle odds: of 6**n ordered rolls of n dice, this many score nothing.
    (1, 4), (2, 16), (3, 60), (4, 204), (5, 600), (6, 1080),
])
def test_squelch_odds_are_farkles(dice: int, squelching: int) -> None:
    count = sum(1 for roll in itertools.product("123456", repeat=dice)
                if squelches("".join(sorted(roll))))
    assert count == squelching


@pytest.mark.parametrize("bad", ["", "0", "7", "21", "1234567", "12a", " 1"])
def test_scorings_refuses_what_is_not_a_roll(bad: str) -> None:
    assert not is_roll(bad)
    with pytest.raises(ValueError, match="not a roll"):
        scorings(bad)

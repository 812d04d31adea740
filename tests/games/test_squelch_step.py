"""Squelch's step (one move worked out once) and the split between bots' replies and the
move log's rolls (merknera/games/squelch/game.py).

A bot chooses options; the platform rolls the dice.  So a reply shaped like a stored roll is
no move at all (InvalidMoveError, error code 6), not a move the rules forbid
(IllegalMoveError, code 7), and only ``parse_chance`` reads the rolls of the move log.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from merknera.games.base import CHANCE, JSON, IllegalMoveError, InvalidMoveError, Step
from merknera.games.squelch import Choice, Squelch, SquelchMove, SquelchState
from tests.games.test_squelch_rules import ROLL, SQUELCH, STAY, bank, move_for, play, start

GAME = Squelch()

# -- step -------------------------------------------------------------------------------------

ENDS = {"maxPoints": 1000}
"""Settings under which one banked triple of ones (1000 points) starts the final round."""

# (name, state before, the step to play, the calls it causes)
STEPS: list[tuple[str, SquelchState, str | tuple[str, bool], list[str]]] = [
    ("a roll that scores", start(), "111234", []),
    ("a roll that squelches", start(), "223466", ["Squelch", "TurnStart"]),
    ("a choice to roll on", play(start(), "111234"), ("111", ROLL), []),
    ("a bank", play(start(), "111234"), ("111", STAY), ["TurnStart"]),
    ("the bank that ends a game", play(start(2, gameCount=2, **ENDS), *bank("111"), "111234"),
     ("111", STAY), ["GameEnd", "GameEnd", "GameStart", "GameStart", "TurnStart"]),
    ("the squelch that ends the match", play(start(2, gameCount=1, **ENDS), *bank("111")),
     SQUELCH[0], ["Squelch", "GameEnd", "GameEnd"]),
]


def counting(game: Squelch, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make ``game._advance`` count its calls; returns the one-element counter."""
    count = [0]
    advance: Callable[..., Any] = game._advance

    def counted(*args: Any) -> Any:
        count[0] += 1
        return advance(*args)

    monkeypatch.setattr(game, "_advance", counted)
    return count


@pytest.mark.parametrize(("before", "step", "calls"), [row[1:] for row in STEPS],
                         ids=[row[0] for row in STEPS])
def test_step_works_each_move_out_once(before: SquelchState, step: str | tuple[str, bool],
                                       calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    game = Squelch()
    count = counting(game, monkeypatch)
    seat, move = move_for(before, step)

    played = game.step(before, seat, move)
    assert count[0] == 1
    assert [n.call for n in played.announcements] == calls

    # apply and announcements remain, for the interface; each works the move out once more.
    assert game.apply(before, seat, move) == played.state
    assert count[0] == 2
    assert tuple(game.announcements(before, seat, move, played.state)) == played.announcements
    assert count[0] == 3


@pytest.mark.parametrize(("seats", "seed"), [(2, 5), (3, 6), (6, 7)])
def test_step_is_apply_and_announcements_over_a_seeded_match(seats: int, seed: int) -> None:
    """Random choices and seeded dice, as the runner draws them (the golden file's seed 5
    among them); every kind of call shows up, so no branch of ``_advance`` is skipped."""
    rng, chooser = random.Random(seed), random.Random(seed * 10)
    state = GAME.new({**GAME.default_settings, "gameCount": 2, "maxPoints": 2000},
                     [f"p{seat}" for seat in range(seats)], rng)
    kinds: set[str] = set()
    while (seat := GAME.to_move(state)) is not None:
        move: SquelchMove = (GAME.sample_chance(state, rng) if seat == CHANCE
                             else chooser.choice(list(GAME.legal_moves(state, seat))))
        played = GAME.step(state, seat, move)
        after = GAME.apply(state, seat, move)
        assert played == Step(after, tuple(GAME.announcements(state, seat, move, after)))
        kinds.update(n.call for n in played.announcements)
        state = after
    assert kinds == {"Squelch", "TurnStart", "GameEnd", "GameStart"}


def test_step_refuses_what_apply_refuses() -> None:
    state = play(start(), "111222")
    cases: list[tuple[int, SquelchMove]] = [
        (1, Choice("0", True)), (0, Choice("9", True)), (0, "111222"), (CHANCE, "123456")]
    for seat, move in cases:
        with pytest.raises(IllegalMoveError) as stepping:
            GAME.step(state, seat, move)
        with pytest.raises(IllegalMoveError) as applying:
            GAME.apply(state, seat, move)
        assert str(stepping.value) == str(applying.value)


# -- a bot's reply is never a roll ------------------------------------------------------------

ROLL_SHAPED: list[tuple[str, JSON]] = [
    ("a stored roll", {"roll": "112356"}),
    ("in another case", {"Roll": "112356"}),
    ("upper case", {"ROLL": "5"}),
    ("not dice", {"roll": "7"}),
    ("unsorted", {"roll": "21"}),
    ("not a string", {"roll": 112356}),
    ("null", {"roll": None}),
    ("with stay", {"roll": "11", "stay": True}),
]


@pytest.mark.parametrize("reply", [row[1] for row in ROLL_SHAPED],
                         ids=[row[0] for row in ROLL_SHAPED])
def test_a_roll_shaped_reply_is_an_invalid_move(reply: JSON) -> None:
    with pytest.raises(InvalidMoveError) as caught:
        GAME.parse_move(reply)
    assert not isinstance(caught.value, IllegalMoveError)
    assert str(caught.value).startswith(
        'the reply has no "take" (the id of an option) but a "roll": a bot chooses one of the '
        "options and the platform rolls the dice, got ")


def test_a_seat_passing_a_roll_to_apply_is_illegal() -> None:
    """No reply can get there any more; as pure API misuse it stays an illegal move."""
    with pytest.raises(IllegalMoveError, match=r"seat 0 \(alice\) cannot roll the dice"):
        GAME.apply(play(start(), "111222"), 0, "111222")


# -- the move log's rolls ---------------------------------------------------------------------


@pytest.mark.parametrize("roll", ["1", "55", "123", "2346", "11111", "112356", "666666"])
def test_parse_chance_reads_back_a_stored_roll(roll: str) -> None:
    stored = json.loads(json.dumps(GAME.move_to_wire(roll)))
    assert stored == {"roll": roll}
    assert GAME.parse_chance(stored) == roll


def test_parse_chance_reads_back_every_roll_of_a_seeded_match() -> None:
    rng, chooser = random.Random(3), random.Random(30)
    state = GAME.new({**GAME.default_settings, "gameCount": 1}, ["a", "b"], rng)
    rolls = 0
    while (seat := GAME.to_move(state)) is not None:
        if seat == CHANCE:
            roll = GAME.sample_chance(state, rng)
            assert GAME.parse_chance(GAME.move_to_wire(roll)) == roll
            rolls += 1
            state = GAME.apply(state, seat, roll)
        else:
            state = GAME.apply(state, seat, chooser.choice(list(GAME.legal_moves(state, seat))))
    assert rolls > 10


NOT_ROLLS: list[tuple[str, JSON]] = [
    ("a choice", {"take": "0", "stay": True}),
    ("a choice's wire form", GAME.move_to_wire(Choice("3", False))),
    ("a roll and a choice", {"roll": "112356", "take": "0", "stay": True}),
    ("unsorted dice", {"roll": "21"}),
    ("a 7", {"roll": "7"}),
    ("no dice", {"roll": ""}),
    ("seven dice", {"roll": "1234566"}),
    ("a number", {"roll": 112356}),
    ("another case", {"Roll": "112356"}),
    ("a bare string", "112356"),
    ("null", None),
    ("a list", ["112356"]),
]


@pytest.mark.parametrize("stored", [row[1] for row in NOT_ROLLS],
                         ids=[row[0] for row in NOT_ROLLS])
def test_parse_chance_refuses_anything_but_a_stored_roll(stored: JSON) -> None:
    with pytest.raises(InvalidMoveError) as caught:
        GAME.parse_chance(stored)
    assert str(caught.value).startswith('a stored roll is {"roll": "<1-6 sorted dice>"}, not ')


DESCRIBED: list[tuple[str, SquelchState, str, JSON, str]] = [
    ("a roll", start(), "chance", {"roll": "111234"}, "rolls 111234: 3 options"),
    ("a squelch", play(start(), "111234", ("111", ROLL)), "chance", {"roll": "223"},
     "rolls 223: squelch, 1000 points lost"),
    ("a bank", play(start(), "111234"), "choice", {"take": "0", "stay": True},
     "takes 111 for 1000 and stays: banks 1000"),
]


@pytest.mark.parametrize(("state", "kind", "stored", "text"), [row[1:] for row in DESCRIBED],
                         ids=[row[0] for row in DESCRIBED])
def test_describe_move_reads_both_kinds_of_stored_move(state: SquelchState, kind: str,
                                                        stored: JSON, text: str) -> None:
    """What the replay page does with the move log: read each move the right way, then
    describe it."""
    if kind == "chance":
        move: SquelchMove = GAME.parse_chance(stored)
        seat = CHANCE
    else:
        move = GAME.parse_move(stored)
        seat = 0
    assert GAME.to_move(state) == seat
    assert GAME.describe_move(state, seat, move) == text

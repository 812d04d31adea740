"""Squelch rules (merknera/games/squelch/game.py): turns, games and matches, by scripted dice.

The dice are chance moves, so a test plays them: a script is a list of steps, each a roll
(``"111222"``, drawn by chance) or a choice ``("111", STAY)`` / ``("1", ROLL)`` that takes the
first option with those dice for the seat to move.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from merknera.games.base import CHANCE, JSON, Announcement, IllegalMoveError, Termination
from merknera.games.squelch import (
    MAX_ROLLS_PER_TURN,
    BotTurn,
    Choice,
    RollRecord,
    Squelch,
    SquelchMove,
    SquelchState,
    move_bound,
)
from merknera.games.testing import playout
from tests.support.golden import golden_played

GAME = Squelch()
NAMES = ("alice", "bob", "carol", "dave", "erin", "frank")
STAY, ROLL = True, False
Step = str | tuple[str, bool]


def start(seats: int = 2, **settings: JSON) -> SquelchState:
    return GAME.new({**GAME.default_settings, **settings}, NAMES[:seats], random.Random(0))


def move_for(state: SquelchState, step: Step) -> tuple[int, SquelchMove]:
    """The seat to move and the move that ``step`` means."""
    seat = GAME.to_move(state)
    assert seat is not None, f"the match is over; {step!r} cannot be played"
    if isinstance(step, str):
        assert seat == CHANCE, f"seat {seat} has a choice to make, not a roll {step}"
        return seat, step
    dice, stay = step
    assert seat != CHANCE and state.turn is not None, f"the dice are to be rolled, not {step}"
    option = next(o for o in state.turn.options if o.dice == dice)
    return seat, Choice(option.id, stay)


def play(state: SquelchState, *steps: Step) -> SquelchState:
    for step in steps:
        seat, move = move_for(state, step)
        state = GAME.apply(state, seat, move)
    return state


def calls(state: SquelchState, *steps: Step) -> list[tuple[int, str, dict[str, JSON]]]:
    """The announcements of the last step (after playing the others)."""
    state = play(state, *steps[:-1])
    seat, move = move_for(state, steps[-1])
    after = GAME.apply(state, seat, move)
    return [(n.seat, n.call, n.params) for n in GAME.announcements(state, seat, move, after)]


def bank(dice: str = "111") -> tuple[Step, ...]:
    """A turn that rolls ``111234``-like dice and banks the triple: 1000 points with "111"."""
    roll = {"111": "111234", "222": "222346", "1": "122346"}[dice]
    return roll, (dice, STAY)


SQUELCH: tuple[Step, ...] = ("223466",)
"""A turn that squelches on its first roll."""


# -- a turn ---------------------------------------------------------------------------------


def test_a_bank_adds_the_turn_points_and_passes_the_turn() -> None:
    state = play(start(), "111222", ("111222", STAY))
    assert state.scores == (1200, 0)
    assert state.turn is not None
    assert (state.turn.seat, state.turn.turn_id, state.turn.dice) == (1, 2, 6)
    assert GAME.to_move(state) == CHANCE
    assert state.last_turns[0] == BotTurn(0, 1, 0, 1200, (RollRecord("111222", "111222", 1200),))


def test_rolling_on_uses_the_dice_left_and_adds_up_the_turn() -> None:
    state = play(start(), "112346", ("1", ROLL))
    assert state.turn is not None and (state.turn.dice, state.turn.points) == (5, 100)
    state = play(state, "12345", ("15", ROLL))
    assert state.turn is not None and (state.turn.dice, state.turn.points) == (3, 250)
    with pytest.raises(IllegalMoveError, match="a roll here is 3 sorted dice"):
        GAME.apply(state, CHANCE, "1234")
    state = play(state, "555", ("555", STAY))
    assert state.scores == (750, 0)
    assert state.last_turns[0] == BotTurn(0, 1, 0, 750, (
        RollRecord("112346", "1", 100), RollRecord("12345", "15", 150),
        RollRecord("555", "555", 500)))


@pytest.mark.parametrize(("steps", "dice_after"), [
    (("123456", ("123456", ROLL)), 6),
    (("112346", ("1", ROLL), "12345", ("15", ROLL), "555", ("555", ROLL)), 6),
    (("115555", ("115555", ROLL)), 6),
    (("115556", ("11555", ROLL)), 1),
])
def test_hot_dice_rolls_every_die_again(steps: tuple[Step, ...], dice_after: int) -> None:
    state = play(start(), *steps)
    assert state.turn is not None and state.turn.seat == 0
    assert state.turn.dice == dice_after
    assert len(GAME.sample_chance(state, random.Random(1))) == dice_after


def test_a_squelch_loses_the_turn_points_and_says_so() -> None:
    state = play(start(), *bank("111"), "111234", ("111", ROLL))  # bob: 1000 at stake
    assert state.turn is not None and state.turn.points == 1000
    notes = calls(state, "234")
    assert notes == [
        (1, "Squelch", {"gameid": 1, "turnid": 2, "dieValues": "234"}),
        (0, "TurnStart", {"gameid": 1, "turnid": 3, "startPoints": 1000, "isFinalRound": False,
                          "otherPlayerTurns": [{
                              "botIndex": 1, "startPoints": 0, "endPoints": 0, "rolls": [
                                  {"roll": "111234", "take": "111", "points": 1000},
                                  {"roll": "234", "take": "", "points": 0}]}]}),
    ]
    state = play(state, "234")
    assert state.scores == (1000, 0)


def test_a_turn_ends_after_its_last_allowed_roll_as_if_it_stayed() -> None:
    steps: list[Step] = []
    for _ in range(MAX_ROLLS_PER_TURN - 1):
        steps += ["123456", ("123456", ROLL)]
    state = play(start(maxPoints=10**9), *steps)
    assert state.turn is not None and state.turn.seat == 0
    assert len(state.turn.rolls) == MAX_ROLLS_PER_TURN - 1
    assert GAME.describe_move(state, CHANCE, "123456") == "rolls 123456: 4 options"
    state = play(state, "123456")
    assert state.turn is not None
    assert GAME.describe_move(state, 0, Choice(state.turn.options[0].id, False)) == (
        f"takes 123456 for 1500 and stays: banks {1500 * MAX_ROLLS_PER_TURN}")
    state = play(state, ("123456", ROLL))
    assert state.scores == (1500 * MAX_ROLLS_PER_TURN, 0)
    assert state.turn is not None and state.turn.seat == 1


# -- the end of a game ------------------------------------------------------------------------


def test_the_final_round_gives_every_other_seat_one_more_turn() -> None:
    state = start(4, maxPoints=1000, gameCount=2)
    state = play(state, *bank("222"), *bank("111"))  # alice 200; bob 1000 starts the final round
    assert state.final_round is not None and state.final_round.trigger == 1
    assert state.turn is not None and state.turn.seat == 2
    notes = calls(state, *bank("222"))  # carol's final turn; dave's is next
    assert notes[-1][:2] == (3, "TurnStart") and notes[-1][2]["isFinalRound"] is True
    state = play(state, *bank("222"), "111222", ("111222", STAY))  # dave: 1200 beats bob
    state = play(state, "111234", ("111", STAY))  # then alice, last: 200 + 1000
    # alice's last turn ended the round: game 2 starts with bob (seat 1).
    assert (state.game, state.starter, state.wins) == (2, 1, (0, 0, 0, 1))
    assert state.turn is not None and state.turn.seat == 1 and state.final_round is None


def test_game_end_shows_the_final_round_to_every_seat_and_starts_the_next_game() -> None:
    state = start(3, maxPoints=1000, gameCount=2)
    state = play(state, *SQUELCH, *bank("111"), *bank("222"))  # bob triggers, carol 200
    notes = calls(state, "111234", ("1", STAY))  # alice's final turn: 100
    finals = [
        {"botIndex": 1, "startPoints": 0, "endPoints": 1000,
         "rolls": [{"roll": "111234", "take": "111", "points": 1000}]},
        {"botIndex": 2, "startPoints": 0, "endPoints": 200,
         "rolls": [{"roll": "222346", "take": "222", "points": 200}]},
        {"botIndex": 0, "startPoints": 0, "endPoints": 100,
         "rolls": [{"roll": "111234", "take": "1", "points": 100}]},
    ]
    assert notes == [
        *[(seat, "GameEnd", {"gameid": 1, "finalPlayerTurns": finals, "winnerBotIndex": 1})
          for seat in range(3)],
        *[(seat, "GameStart", {"gameid": 2}) for seat in range(3)],
        (1, "TurnStart", {"gameid": 2, "turnid": 1, "startPoints": 0, "otherPlayerTurns": [],
                          "isFinalRound": False}),
    ]


def test_a_second_seat_past_max_points_does_not_restart_the_final_round() -> None:
    state = play(start(3, maxPoints=1000, gameCount=1), *bank("111"), *bank("111"))
    assert state.final_round is not None and state.final_round.trigger == 0
    assert len(state.final_round.turns) == 2
    state = play(state, *SQUELCH)  # carol's last turn ends the game: a tie at 1000
    assert state.turn is None and state.wins == (1, 0, 0)


@pytest.mark.parametrize(("seats", "settings", "steps", "winner"), [
    # equal scores: the seat that reached the score first wins
    (2, {}, (*bank("111"), *bank("111")), 0),
    (3, {}, (*bank("222"), *bank("111"), *bank("111"), *bank("1")), 1),
    (3, {"maxTurns": 6}, (*bank("1"), *bank("222"), *SQUELCH, *bank("1"), *SQUELCH, *SQUELCH),
     1),
    # otherwise the highest score
    (2, {}, (*bank("111"), "111222", ("111222", STAY)), 1),
    (3, {}, (*bank("222"), *bank("111"), "111222", ("11222", STAY), *bank("1")), 1),
    (3, {"maxTurns": 5}, (*bank("1"), *bank("222"), *SQUELCH, *bank("1"), "122346",
                          ("1", STAY)), 1),
])
def test_the_winner_is_the_highest_score_first_reached(seats: int, settings: dict[str, JSON],
                                                     steps: tuple[Step, ...],
                                                     winner: int) -> None:
    state = play(start(seats, maxPoints=1000, gameCount=1, **settings), *steps)
    assert state.turn is None, "the game should be over"
    assert state.wins[winner] == 1 and sum(state.wins) == 1


def test_max_turns_ends_a_game_without_a_final_round() -> None:
    state = start(2, maxTurns=3, gameCount=2)
    state = play(state, *bank("222"), *bank("1"))
    notes = calls(state, *SQUELCH)  # turn 3 of 3
    assert notes[:3] == [
        (0, "Squelch", {"gameid": 1, "turnid": 3, "dieValues": "223466"}),
        (0, "GameEnd", {"gameid": 1, "winnerBotIndex": 0, "finalPlayerTurns": [
            {"botIndex": 1, "startPoints": 0, "endPoints": 100,
             "rolls": [{"roll": "122346", "take": "1", "points": 100}]},
            {"botIndex": 0, "startPoints": 200, "endPoints": 200,
             "rolls": [{"roll": "223466", "take": "", "points": 0}]}]}),
        (1, "GameEnd", notes[1][2]),
    ]
    state = play(state, *SQUELCH)
    assert (state.game, state.wins) == (2, (1, 0))


def test_max_turns_with_nobody_scoring_goes_to_the_first_seat_of_the_game() -> None:
    state = play(start(3, maxTurns=4, gameCount=2), *SQUELCH * 4)
    assert state.wins == (1, 0, 0) and state.game == 2
    state = play(state, *SQUELCH * 4)
    assert state.wins == (1, 1, 0) and state.turn is None


# -- a match ------------------------------------------------------------------------------------


def quick_game(seats: int, winner_offset: int) -> list[Step]:
    """A game with maxPoints 1000 won by the seat ``winner_offset`` places after its starter."""
    steps: list[Step] = [*SQUELCH] * winner_offset + [*bank("111")]
    return steps + [*SQUELCH] * (seats - 1)


@pytest.mark.parametrize("seats", [2, 3, 6])
def test_the_first_seat_rotates_and_wins_are_tallied(seats: int) -> None:
    state = start(seats, maxPoints=1000, gameCount=seats + 1)
    expected = [0] * seats
    for game in range(1, seats + 2):
        assert state.game == game and state.starter == (game - 1) % seats
        assert state.turn is not None and state.turn.seat == state.starter
        assert state.scores == (0,) * seats and state.last_turns == (None,) * seats
        offset = game % seats
        expected[(state.starter + offset) % seats] += 1
        state = play(state, *quick_game(seats, offset))
        assert state.wins == tuple(expected)
    assert GAME.to_move(state) is None
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.scores == tuple(map(float, expected))
    assert GAME.complete_params(state, 0) == {"winsByBotIndex": expected}


@pytest.mark.parametrize(("wins", "ranks", "detail"), [
    ((3, 2), (0, 1), "alice won 3 of 5 games, bob 2"),
    ((1, 4), (1, 0), "bob won 4 of 5 games, alice 1"),
    ((2, 2, 1, 0), (0, 0, 1, 2), "alice won 2 of 5 games, bob 2, carol 1, dave 0"),
])
def test_the_match_ranks_by_games_won(wins: tuple[int, ...], ranks: tuple[int, ...],
                                      detail: str) -> None:
    seats = len(wins)
    state = start(seats, maxPoints=1000, gameCount=5)
    for game in range(5):
        winner = next(seat for seat in range(seats)
                      if sum(wins[:seat + 1]) > game)
        state = play(state, *quick_game(seats, (winner - state.starter) % seats))
    assert GAME.standings(state) == tuple(map(float, wins))
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert (outcome.ranks, outcome.detail) == (ranks, detail)


def test_one_game_match_detail_is_singular() -> None:
    state = play(start(2, maxPoints=1000, gameCount=1), *quick_game(2, 1))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.detail == "bob won 1 of 1 game, alice 0"
    assert outcome.winners == (1,)


def test_six_seats_each_play_once_in_the_final_round() -> None:
    state = start(6, maxPoints=1000, gameCount=1)
    state = play(state, *SQUELCH, *SQUELCH, *bank("111"))  # carol triggers on turn 3
    seen = []
    while state.turn is not None:
        seen.append(state.turn.seat)
        state = play(state, *SQUELCH)
    assert seen == [3, 4, 5, 0, 1]
    assert state.wins == (0, 0, 1, 0, 0, 0)


def test_the_match_is_over_after_the_last_game() -> None:
    state = play(start(2, maxPoints=1000, gameCount=1), *quick_game(2, 0))
    assert GAME.to_move(state) is None and GAME.legal_moves(state, 0) == ()
    with pytest.raises(IllegalMoveError, match="the match is over"):
        GAME.apply(state, CHANCE, "111111")
    with pytest.raises(IllegalMoveError, match="the match is over"):
        GAME.apply(state, 0, Choice("0", True))
    with pytest.raises(ValueError, match="no dice"):
        GAME.sample_chance(state, random.Random(0))


# -- chance and bounds --------------------------------------------------------------------------


def test_chance_rolls_the_turns_dice_sorted_and_repeatably() -> None:
    state = play(start(), "112346", ("1", ROLL))
    rolls = [GAME.sample_chance(state, random.Random(seed)) for seed in range(50)]
    assert rolls == [GAME.sample_chance(state, random.Random(seed)) for seed in range(50)]
    assert all(isinstance(r, str) and len(r) == 5 and list(r) == sorted(r) for r in rolls)
    assert len(set(rolls)) > 30
    faces = "".join(r for r in rolls if isinstance(r, str))
    assert set(faces) == set("123456")


def test_max_moves_bounds_every_setting_allowed() -> None:
    assert move_bound(5, 200) == 5 * 200 * 2 * MAX_ROLLS_PER_TURN
    assert GAME.max_moves == move_bound(100, 1000)
    for key, too_big in (("gameCount", 101), ("maxTurns", 1001)):
        with pytest.raises(ValueError, match=key):
            start(**{key: too_big})


def legal_script(state: SquelchState, choices: Sequence[Choice]) -> list[Announcement]:
    notes: list[Announcement] = []
    for choice in choices:
        notes += GAME.announcements(state, 0, choice, GAME.apply(state, 0, choice))
    return notes


def test_legal_moves_are_every_option_with_both_stays() -> None:
    state = play(start(), "123456")
    assert GAME.legal_moves(state, 0) == (
        Choice("0", True), Choice("0", False), Choice("1", True), Choice("1", False),
        Choice("2", True), Choice("2", False), Choice("3", True), Choice("3", False))
    assert GAME.legal_moves(state, 1) == ()
    assert GAME.legal_moves(state, CHANCE) == ()
    assert GAME.legal_moves(start(), 0) == ()  # the dice are to be rolled first
    # Rolling on makes no call; staying starts bob's turn.
    assert legal_script(state, [Choice("0", False)]) == []
    assert [n.call for n in legal_script(state, [Choice("0", True)])] == ["TurnStart"]


@pytest.mark.parametrize(("seats", "seed"), [(2, 1), (6, 2)])
def test_random_matches_follow_the_house_rules(seats: int, seed: int) -> None:
    """The shared conformance playout (tests/games/test_conformance.py), until Squelch is in
    the registry that test runs over."""
    first = playout(GAME, seats, seed)
    assert playout(GAME, seats, seed).states == first.states
    assert first.outcome.ranks is not None and len(first.outcome.ranks) == seats
    assert len(first.log) > 100


def test_the_golden_match_shows_every_call_and_a_final_round() -> None:
    """The golden match (tests/golden/squelch/) is worth keeping: it ends by the rules, and
    its moves cause every kind of call and a final round."""
    played = golden_played(GAME.mnemonic)
    outcome = GAME.outcome(played.final)
    assert outcome is not None and outcome.termination is Termination.NORMAL
    calls = [note for ply in played.plies for note in ply.announcements]
    assert {GAME.calls.method(note.call) for note in calls} == {
        "Squelch.GameStart", "Squelch.TurnStart", "Squelch.Squelch", "Squelch.GameEnd"}
    assert any(note.params.get("isFinalRound") is True for note in calls)

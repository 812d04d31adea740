"""Squelch's wire view: the calls of a match, good and bad replies, settings, the state's JSON."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from merknera.games import CHANCE, JSON, IllegalMoveError, InvalidMoveError
from merknera.games.squelch import Choice, Squelch, SquelchState
from tests.games.test_squelch_rules import ROLL, SQUELCH, STAY, bank, play, start

GAME = Squelch()


def test_static_facts() -> None:
    assert (GAME.mnemonic, GAME.name, GAME.calls.prefix) == ("SQUELCH", "Squelch", "Squelch")
    assert (GAME.min_seats, GAME.max_seats) == (2, 6)
    assert (GAME.calls.game_id, GAME.calls.open, GAME.calls.complete) == (
        "matchid", "MatchStart", "MatchEnd")
    assert dict(GAME.default_settings) == {"dieCount": 6, "maxPoints": 5000, "gameCount": 5,
                                           "maxTurns": 200}


def test_match_start_and_opening_calls() -> None:
    state = start(3)
    assert GAME.new_game_params(state, 2) == {
        "dieCount": 6, "maxPoints": 5000, "gameCount": 5, "yourBotIndex": 2,
        "botNames": ["alice", "bob", "carol"]}
    assert [(n.seat, n.call, n.params) for n in GAME.opening_announcements(state)] == [
        (0, "GameStart", {"gameid": 1}),
        (1, "GameStart", {"gameid": 1}),
        (2, "GameStart", {"gameid": 1}),
        (0, "TurnStart", {"gameid": 1, "turnid": 1, "startPoints": 0, "otherPlayerTurns": [],
                          "isFinalRound": False}),
    ]


def test_next_move_and_error_params() -> None:
    state = play(start(), *bank("111"), "112356")
    assert GAME.to_move(state) == 1
    assert GAME.next_move_params(state, 1) == {
        "gameid": 1, "turnid": 2, "dieValues": "112356", "options": [
            {"id": "0", "dieValues": "115", "points": 250},
            {"id": "1", "dieValues": "11", "points": 200},
            {"id": "2", "dieValues": "15", "points": 150},
            {"id": "3", "dieValues": "1", "points": 100},
            {"id": "4", "dieValues": "5", "points": 50}]}
    assert GAME.error_params(state, 1) == {"gameid": 1, "turnid": 2}
    with pytest.raises(ValueError, match="no seat has a choice"):
        GAME.next_move_params(play(state, ("1", STAY)), 0)


def test_turn_start_shows_each_other_seats_latest_turn_by_bot_index() -> None:
    state = play(start(3), *bank("222"), *bank("111"), *SQUELCH, "111234", ("1", ROLL), "11234",
                 ("11", STAY))
    turn_start = GAME.announcements(state, CHANCE, "223466", play(state, *SQUELCH))[-1]
    assert turn_start.seat == 2 and turn_start.call == "TurnStart"
    assert turn_start.params == {
        "gameid": 1, "turnid": 6, "startPoints": 0, "isFinalRound": False,
        "otherPlayerTurns": [
            {"botIndex": 0, "startPoints": 200, "endPoints": 500, "rolls": [
                {"roll": "111234", "take": "1", "points": 100},
                {"roll": "11234", "take": "11", "points": 200}]},
            {"botIndex": 1, "startPoints": 1000, "endPoints": 1000, "rolls": [
                {"roll": "223466", "take": "", "points": 0}]}]}


def test_no_calls_after_a_roll_that_scores_or_a_choice_to_roll_on() -> None:
    state = start()
    assert GAME.announcements(state, CHANCE, "111234", play(state, "111234")) == ()
    state = play(state, "111234")
    choice = Choice("0", False)
    assert GAME.announcements(state, 0, choice, GAME.apply(state, 0, choice)) == ()


MALFORMED: list[tuple[Any, str]] = [
    (None, 'expected an object {"take": "<option id>", "stay": true or false}, got None'),
    ("0", "expected an object"),
    ([{"take": "0", "stay": True}], "expected an object"),
    ({}, 'the reply has no "take" (the id of an option): {}'),
    ({"stay": True}, 'the reply has no "take"'),
    ({"take": 0, "stay": True}, '"take" must be a string, the id of an option such as "0", got 0'),
    ({"take": None, "stay": True}, '"take" must be a string'),
    ({"take": ["0"], "stay": True}, '"take" must be a string'),
    ({"take": "0"}, 'the reply has no "stay" (true to bank the turn, false to roll again)'),
    ({"take": "0", "stay": "true"}, "\"stay\" must be true or false, got 'true'"),
    ({"take": "0", "stay": 1}, '"stay" must be true or false, got 1'),
    ({"take": "0", "stay": None}, '"stay" must be true or false, got None'),
    ({"Take": "1", "take": "2", "stay": True},
     'the reply has the key "take" twice (in different cases)'),
    ({"take": "1", "stay": True, "Note": "a", "NOTE": "b"},
     'the reply has the key "note" twice (in different cases)'),
    # The move log's shape of a roll (see tests/games/test_squelch_step.py for more).
    ({"roll": "112356"}, 'the reply has no "take" (the id of an option) but a "roll": a bot '
                         "chooses one of the options and the platform rolls the dice, got "
                         "{'roll': '112356'}"),
    ({"roll": "11", "stay": True}, 'the reply has no "take"'),
]


@pytest.mark.parametrize(("reply", "message"), MALFORMED)
def test_malformed_replies(reply: Any, message: str) -> None:
    with pytest.raises(InvalidMoveError) as caught:
        GAME.parse_move(reply)
    assert message in str(caught.value)


@pytest.mark.parametrize(("reply", "move"), [
    ({"take": "3", "stay": True}, Choice("3", True)),
    ({"Take": "12", "STAY": False, "comment": "extra keys are ignored"}, Choice("12", False)),
    ({"take": "", "stay": False}, Choice("", False)),
    # "take" makes it a choice; a "roll" beside it is one more key ignored.
    ({"take": "0", "stay": True, "roll": "112356"}, Choice("0", True)),
])
def test_well_formed_replies_round_trip(reply: JSON, move: Choice) -> None:
    assert GAME.parse_move(reply) == move
    assert GAME.parse_move(GAME.move_to_wire(move)) == move


def test_illegal_moves_say_why() -> None:
    state = play(start(), "111222")
    cases: list[tuple[int, Choice | str, str]] = [
        (0, Choice("7", True), "there is no option '7' for the roll 111222; the options are "
                               "0, 1, 2, 3, 4, 5, 6"),
        (0, Choice("", False), "there is no option '' for the roll 111222"),
        (0, Choice("x" * 200, False), "there is no option 'xxxx"),
        (1, Choice("0", True), "it is seat 0's turn (alice), not seat 1's (bob)"),
        (5, Choice("0", True), "it is seat 0's turn (alice), not seat 5's (nobody)"),
        (0, "111222", "seat 0 (alice) cannot roll the dice"),
        (CHANCE, "123456", "seat 0 has to choose from 111222; no dice are to be rolled"),
    ]
    for seat, move, message in cases:
        with pytest.raises(IllegalMoveError) as caught:
            GAME.apply(state, seat, move)
        assert message in str(caught.value)
        assert len(str(caught.value)) < 200
    rolling = play(state, ("1", ROLL))
    more_cases: list[tuple[int, Any, str]] = [
        (0, Choice("0", True), "the dice are to be rolled; there is no roll for seat 0 (alice)"),
        (CHANCE, "123456", "a roll here is 5 sorted dice 1-6, not '123456'"),
        (CHANCE, "54321", "a roll here is 5 sorted dice 1-6, not '54321'"),
        (CHANCE, Choice("0", True), "a roll here is 5 sorted dice"),
    ]
    for seat, move, message in more_cases:
        with pytest.raises(IllegalMoveError) as caught:
            GAME.apply(rolling, seat, move)
        assert message in str(caught.value)


@pytest.mark.parametrize(("settings", "message"), [
    ({"dieCount": 0}, "dieCount must be an integer from 1 to 6, not 0"),
    ({"dieCount": 7}, "dieCount must be an integer from 1 to 6, not 7"),
    ({"maxPoints": 0}, "maxPoints must be an integer from 1"),
    ({"maxPoints": "5000"}, "maxPoints must be an integer"),
    ({"gameCount": True}, "gameCount must be an integer from 1 to 100, not True"),
    ({"maxTurns": 2.5}, "maxTurns must be an integer from 1 to 1000, not 2.5"),
    ({"maxturns": 10}, "unknown Squelch settings: maxturns"),
])
def test_settings_are_checked(settings: dict[str, JSON], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        GAME.new({**GAME.default_settings, **settings}, ["a", "b"], random.Random(0))
    assert message in str(caught.value)


@pytest.mark.parametrize("seats", [1, 7])
def test_two_to_six_seats(seats: int) -> None:
    with pytest.raises(ValueError, match="2-6 players"):
        GAME.new(GAME.default_settings, [f"p{i}" for i in range(seats)], random.Random(0))


def test_fewer_dice() -> None:
    state = play(start(2, dieCount=3, maxPoints=1000), "111", ("1", ROLL))
    assert state.turn is not None and state.turn.dice == 2
    state = play(state, "15", ("15", ROLL))
    assert state.turn is not None and state.turn.dice == 3  # hot dice: all three again
    assert len(GAME.sample_chance(state, random.Random(3))) == 3


def _states() -> list[SquelchState]:
    """States at every kind of point of a match."""
    steps = [*bank("111"), "111234", ("111", ROLL), "234", "112356", ("1", ROLL)]
    states = [start(3, maxPoints=1000, gameCount=2)]
    for step in steps:
        states.append(play(states[-1], step))
    states.append(play(states[-1], "12356", ("15", STAY)))  # final round, carol to play
    states.append(play(states[-1], *SQUELCH, *SQUELCH))  # game 2
    states.append(play(states[-1], *bank("111"), *SQUELCH, *SQUELCH))  # the match is over
    return states


@pytest.mark.parametrize("index", range(len(_states())))
def test_state_json_round_trips_exactly(index: int) -> None:
    state = _states()[index]
    data = json.loads(json.dumps(GAME.state_to_json(state)))
    assert GAME.state_from_json(data) == state
    assert GAME.state_to_json(GAME.state_from_json(data)) == data


def test_state_json_shape() -> None:
    state = _states()[-4]
    assert GAME.state_to_json(state) == {
        "players": ["alice", "bob", "carol"],
        "settings": {"dieCount": 6, "maxPoints": 1000, "gameCount": 2, "maxTurns": 200},
        "game": 1, "starter": 0, "scores": [1000, 0, 0], "leader": 0, "wins": [0, 0, 0],
        "lastTurns": [
            {"botIndex": 0, "turnid": 1, "startPoints": 0, "endPoints": 1000,
             "rolls": [{"roll": "111234", "take": "111", "points": 1000}]},
            {"botIndex": 1, "turnid": 2, "startPoints": 0, "endPoints": 0,
             "rolls": [{"roll": "111234", "take": "111", "points": 1000},
                       {"roll": "234", "take": "", "points": 0}]},
            None],
        "finalRound": {"trigger": 0, "turns": [
            {"botIndex": 0, "turnid": 1, "startPoints": 0, "endPoints": 1000,
             "rolls": [{"roll": "111234", "take": "111", "points": 1000}]},
            {"botIndex": 1, "turnid": 2, "startPoints": 0, "endPoints": 0,
             "rolls": [{"roll": "111234", "take": "111", "points": 1000},
                       {"roll": "234", "take": "", "points": 0}]}]},
        "turn": {"seat": 2, "turnid": 3, "points": 100, "dice": 5,
                 "rolls": [{"roll": "112356", "take": "1", "points": 100}], "roll": None,
                 "options": [], "nextOption": 5},
    }


def _broken(change: str) -> Any:
    data: Any = copy.deepcopy(GAME.state_to_json(_states()[-4]))
    exec(change, {"data": data})  # noqa: S102 - a table of one-line edits, written here
    return data


@pytest.mark.parametrize(("change", "message"), [
    ("data['players'] = ['solo']", "1 players"),
    ("data['game'] = 3", "game must be an integer from 1 to 2"),
    ("data['starter'] = 1", "game 1 starts with seat 1"),
    ("data['scores'] = [1000, 0]", "scores must be a list of 3 items"),
    ("data['scores'][1] = -5", "scores must be an integer of at least 0"),
    ("data['leader'] = 1", "the leader 1 has not the top score"),
    ("data['wins'] = [1, 0, 0]", "1 games won, not 0, while game 1 is played"),
    ("data['turn']['seat'] = 1", "turn 3 of game 1 is not seat 1's"),
    ("data['turn']['points'] = 50", "turn.points is not the sum of its rolls"),
    ("data['turn']['dice'] = 7", "turn.dice must be an integer from 1 to 6"),
    ("data['turn']['roll'] = '11111'", "turn.options are not the options of 11111"),
    ("data['turn']['roll'] = '1111'", "turn.roll '1111' is not 5 dice"),
    ("data['turn']['options'] = [{'id': '0', 'dieValues': '1', 'points': 100}]",
     "options without a roll"),
    ("data['finalRound']['trigger'] = 1", "do not begin with its trigger's"),
    ("data['turn'] = None", "the match ended after game 1 of 2"),
    ("data['lastTurns'][0]['rolls'][0]['take'] = 'x'", "holds '111234' -> 'x'"),
    ("data['extra'] = 1", "state must be an object with the keys"),
    ("data['settings']['gameCount'] = 0", "gameCount must be an integer from 1 to 100"),
])
def test_state_from_json_refuses_inconsistent_states(change: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        GAME.state_from_json(_broken(change))
    assert message in str(caught.value)


def test_same_seed_same_moves_same_states() -> None:
    def run(seed: int) -> list[JSON]:
        rng, chooser = random.Random(seed), random.Random(seed + 1)
        state = start(3, gameCount=2, maxPoints=2000)
        seen = [GAME.state_to_json(state)]
        while (seat := GAME.to_move(state)) is not None:
            if seat == CHANCE:
                move: Choice | str = GAME.sample_chance(state, rng)
            else:
                move = chooser.choice(list(GAME.legal_moves(state, seat)))
            state = GAME.apply(state, seat, move)
            seen.append(GAME.state_to_json(state))
        return seen

    first = run(4)
    assert first == run(4)
    assert first != run(5)
    assert len(first) > 20


@pytest.mark.parametrize(("steps", "seat", "move", "text"), [
    ((), CHANCE, "112356", "rolls 112356: 5 options"),
    (("111234", ("111", ROLL)), CHANCE, "234", "rolls 234: squelch, 1000 points lost"),
    (("111234",), 0, Choice("0", True), "takes 111 for 1000 and stays: banks 1000"),
    (("111234",), 0, Choice("0", False), "takes 111 for 1000, rolls 3 dice (turn 1000)"),
    (("123456",), 0, Choice("0", False), "takes 123456 for 1500, hot dice, rolls 6 dice "
                                         "(turn 1500)"),
    (("111234",), 0, Choice("9", True), "takes '9' (no such option)"),
])
def test_describe_move(steps: tuple[str | tuple[str, bool], ...], seat: int,
                       move: Choice | str, text: str) -> None:
    assert GAME.describe_move(play(start(), *steps), seat, move) == text

"""The Battlebot games' reference bots: strategies on the platform's own views, and NextMove
over real HTTP.

Strategies are judged by the rules in merknera/games/battlebot.py: a bot reads the NextMove
view the platform would send, and its turn goes through ``parse_move`` and ``apply``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from pytest_aiohttp import AiohttpClient

from merknera.games.base import Outcome
from merknera.games.battlebot import (
    NoughtsAndCrosses,
    NoughtsState,
    Numberwang,
    NumberwangState,
    NumberwangTurn,
)
from merknera_bots import noughtsandcrosses, numberwang

NOUGHTS = NoughtsAndCrosses()
WANG = Numberwang()
PLAYERS = ("me", "you")


def _view(game: Any, state: Any, seat: int) -> Any:
    """The ``state`` param the bot in ``seat`` receives (through JSON, as on the wire)."""
    return json.loads(json.dumps(game.next_move_params(state, seat)))["state"]


# -- noughts and crosses -----------------------------------------------------------------------

def _perfect_endings(perfect_seat: int) -> Counter[str]:
    """Perfect play in ``perfect_seat`` against every line of play of the other seat."""
    endings: Counter[str] = Counter()

    def explore(state: NoughtsState) -> None:
        seat = NOUGHTS.to_move(state)
        if seat is None:
            outcome = NOUGHTS.outcome(state)
            assert outcome is not None
            endings[outcome.result_for(perfect_seat).value] += 1
        elif seat == perfect_seat:
            turn = noughtsandcrosses.choose_perfect_turn(_view(NOUGHTS, state, seat))
            explore(NOUGHTS.apply(state, seat, NOUGHTS.parse_move(turn)))
        else:
            for move in NOUGHTS.legal_moves(state, seat):
                explore(NOUGHTS.apply(state, seat, move))

    explore(NOUGHTS.new({}, PLAYERS, random.Random(0)))
    return endings


@pytest.mark.parametrize("seat", [0, 1])
def test_perfect_never_loses_to_any_line_of_play(seat: int) -> None:
    endings = _perfect_endings(seat)
    assert endings["LOSS"] == 0
    assert endings["WIN"] > 0  # the tree was explored and bad play was punished
    assert sum(endings.values()) > 50


def test_perfect_against_perfect_is_a_draw() -> None:
    state = NOUGHTS.new({}, PLAYERS, random.Random(0))
    while (seat := NOUGHTS.to_move(state)) is not None:
        turn = noughtsandcrosses.choose_perfect_turn(_view(NOUGHTS, state, seat))
        state = NOUGHTS.apply(state, seat, NOUGHTS.parse_move(turn))
    assert NOUGHTS.outcome(state) == Outcome.draw(2, "the board is full with no line")


@pytest.mark.parametrize(("board", "turn"), [
    # X wins at once on [0, 2] rather than blocking.
    ([["X", "X", ""], ["O", "O", ""], ["", "", ""]], {"mark": "X", "space": [0, 2]}),
    # O wins at once on [1, 2].
    ([["X", "X", ""], ["O", "O", ""], ["X", "", ""]], {"mark": "O", "space": [1, 2]}),
    # O blocks the row.
    ([["X", "X", ""], ["", "O", ""], ["", "", ""]], {"mark": "O", "space": [0, 2]}),
    # The only answer to a corner is the centre.
    ([["X", "", ""], ["", "", ""], ["", "", ""]], {"mark": "O", "space": [1, 1]}),
])
def test_perfect_on_sample_boards(board: list[list[str]], turn: dict[str, Any]) -> None:
    state = {"players": list(PLAYERS), "nextPlayer": "me", "complete": False, "board": board,
             "marks": {"X": "me", "O": "you"}}
    assert noughtsandcrosses.choose_perfect_turn(state) == turn


def test_random_plays_every_empty_space_with_the_right_mark() -> None:
    board = [["X", "", "O"], ["", "X", ""], ["", "O", ""]]
    state = {"players": list(PLAYERS), "nextPlayer": "me", "complete": False, "board": board}
    rng = random.Random(7)
    seen = Counter(json.dumps(noughtsandcrosses.choose_random_turn(state, rng))
                   for _ in range(1000))
    assert set(seen) == {json.dumps({"mark": "X", "space": space})
                         for space in ([0, 1], [1, 0], [1, 2], [2, 0], [2, 2])}
    assert all(120 < n < 280 for n in seen.values()), seen
    first = [noughtsandcrosses.choose_random_turn(state, random.Random(3)) for _ in range(3)]
    assert first == [noughtsandcrosses.choose_random_turn(state, random.Random(3))] * 3


@pytest.mark.parametrize("state", [
    None,
    [["", "", ""]] * 3,
    {"board": [["", "", ""]] * 2},
    {"board": [["", ""], ["", "", ""], ["", "", ""]]},
    {"board": [["x", "", ""], ["", "", ""], ["", "", ""]]},
    {"board": [["O", "", ""], ["", "", ""], ["", "", ""]]},  # O before X
    {"board": [["X", "O", "X"], ["X", "O", "O"], ["O", "X", "X"]]},  # full
    {"complete": True, "board": [["", "", ""]] * 3},
])
def test_noughts_strategies_refuse_bad_states(state: Any) -> None:
    with pytest.raises(ValueError):
        noughtsandcrosses.choose_perfect_turn(state)
    with pytest.raises(ValueError):
        noughtsandcrosses.choose_random_turn(state, random.Random(0))


# -- Numberwang ----------------------------------------------------------------------------------

def _numberwang(before: list[int | float]) -> NumberwangState:
    state = WANG.new(WANG.default_settings, PLAYERS, random.Random(0))
    for ply, n in enumerate(before):
        state = WANG.apply(state, ply % 2, NumberwangTurn(n))
    return state


@pytest.mark.parametrize("before", [
    [], [9.99], [-9.99], [0.1, 0.2], [9.999999999999998], [-5.5], [1e-300], [0.7, 0.1],
    [0.30000000000000004], [5, 4.9], [-5, -4.9], [3, -12.5 + 3], [9, 0.5, -19],
])
def test_good_wins_on_its_turn(before: list[int | float]) -> None:
    state = _numberwang(before)
    seat = WANG.to_move(state)
    assert seat is not None, "the sample state must be a game in progress"
    turn = numberwang.choose_good(_view(WANG, state, seat))
    assert isinstance(turn["n"], int)
    after = WANG.apply(state, seat, WANG.parse_move(turn))
    outcome = WANG.outcome(after)
    assert outcome is not None and outcome.winners == (seat,)
    # The least such integer: one less falls short in exact arithmetic (the platform may
    # still round a sum like -10 + 1e-300 to -10, which is why a margin does no harm).
    smaller = turn["n"] - 1 if seat == 0 else turn["n"] + 1
    assert -10 < state.n + smaller < 10


def test_good_against_random_always_wins() -> None:
    rng = random.Random(5)
    for good_seat in (0, 1):
        for _ in range(50):
            state = _numberwang([])
            while (seat := WANG.to_move(state)) is not None:
                view = _view(WANG, state, seat)
                turn = (numberwang.choose_good(view) if seat == good_seat
                        else numberwang.choose_random(view, rng))
                state = WANG.apply(state, seat, WANG.parse_move(turn))
            outcome = WANG.outcome(state)
            assert outcome is not None
            # Random moves first at most once, from 0 by at most 5: it cannot end the game.
            assert outcome.winners == (good_seat,)
            assert state.turns <= 2


def test_random_sends_small_legal_numbers() -> None:
    view = _view(WANG, _numberwang([]), 0)
    rng = random.Random(9)
    sent = [numberwang.choose_random(view, rng)["n"] for _ in range(2000)]
    assert all(-5 <= n <= 5 for n in sent)
    assert any(isinstance(n, float) for n in sent) and any(isinstance(n, int) for n in sent)
    assert len(set(sent)) > 80  # 101 values in all
    for n in set(sent):
        WANG.parse_move({"n": n})
    again = random.Random(9)
    assert sent[:20] == [numberwang.choose_random(view, again)["n"] for _ in range(20)]


@pytest.mark.parametrize("state", [
    None,
    {"players": ["a", "b"], "nextPlayer": "c", "board": {"n": 0}},
    {"players": ["a"], "nextPlayer": "a", "board": {"n": 0}},
    {"players": ["a", "b"], "nextPlayer": "a", "board": {"n": "0"}},
    {"players": ["a", "b"], "nextPlayer": "a", "board": {"n": True}},
    {"players": ["a", "b"], "nextPlayer": "a", "board": {}},
    {"players": ["a", "b"], "nextPlayer": "a", "complete": True, "board": {"n": 10}},
])
def test_numberwang_strategies_refuse_bad_states(state: Any) -> None:
    with pytest.raises(ValueError):
        numberwang.choose_good(state)
    with pytest.raises(ValueError):
        numberwang.choose_random(state, random.Random(0))


def test_unknown_strategies() -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        noughtsandcrosses.make_bot("good")
    with pytest.raises(ValueError, match="unknown strategy"):
        numberwang.make_bot("perfect")


# -- over HTTP -----------------------------------------------------------------------------------

async def _call(client: Any, method: str, params: Any, *, jsonrpc: bool = True) -> Any:
    message: dict[str, Any] = {"method": method, "params": params, "id": 1}
    if jsonrpc:
        message["jsonrpc"] = "2.0"
    response = await client.post("/rpc", json=message)
    assert response.status == 200
    return json.loads(await response.text())


async def test_noughts_bot_answers_next_move(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(noughtsandcrosses.make_bot("perfect").make_app())
    state = NOUGHTS.new({}, PLAYERS, random.Random(0))
    state = NOUGHTS.apply(state, 0, NOUGHTS.parse_move({"mark": "X", "space": [0, 0]}))
    params = {"gameid": 4, **NOUGHTS.next_move_params(state, 1)}
    reply = await _call(client, "NoughtsAndCrosses.NextMove", params)
    assert reply == {"jsonrpc": "2.0", "result": {"mark": "O", "space": [1, 1]}, "id": 1}
    NOUGHTS.apply(state, 1, NOUGHTS.parse_move(reply["result"]))
    # Merknera's dialect, and the lifecycle calls the kit answers by itself.
    legacy = await _call(client, "NoughtsAndCrosses.NextMove", params, jsonrpc=False)
    assert legacy == {"result": {"mark": "O", "space": [1, 1]}, "error": None, "id": 1}
    ready = await _call(client, "NoughtsAndCrosses.NewGame", {"gameid": 4, "players": 2})
    assert ready["result"] == {"status": "READY"}
    done = await _call(client, "NoughtsAndCrosses.Complete",
                       {"gameid": 4, "winner": False, **NOUGHTS.complete_params(state, 1)})
    assert done["result"] is None


async def test_numberwang_bot_answers_next_move(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(numberwang.make_bot("good").make_app())
    state = _numberwang([-2.5])
    params = {"gameid": 9, **WANG.next_move_params(state, 1)}
    reply = await _call(client, "Numberwang.NextMove", params)
    assert reply["result"] == {"n": -8}
    outcome = WANG.outcome(WANG.apply(state, 1, WANG.parse_move(reply["result"])))
    assert outcome is not None and outcome.winners == (1,)


async def test_random_numberwang_bot_repeats_its_answer(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(numberwang.make_bot("random", seed=2).make_app())
    params = {"gameid": 9, **WANG.next_move_params(_numberwang([]), 0)}
    first = await _call(client, "Numberwang.NextMove", params)
    assert -5 <= first["result"]["n"] <= 5
    assert await _call(client, "Numberwang.NextMove", params) == first  # idempotent retry


@pytest.mark.parametrize(("bot", "method"), [
    (lambda: noughtsandcrosses.make_bot("random", seed=1), "NoughtsAndCrosses.NextMove"),
    (lambda: numberwang.make_bot("good"), "Numberwang.NextMove"),
])
async def test_bad_state_is_invalid_params(aiohttp_client: AiohttpClient, bot: Any,
                                           method: str) -> None:
    client = await aiohttp_client(bot().make_app())
    reply = await _call(client, method, {"gameid": 1, "state": {"board": "nonsense"}})
    assert reply["error"]["code"] == -32602
    missing = await _call(client, method, {"gameid": 1})
    assert missing["error"]["code"] == -32602

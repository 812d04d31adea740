"""The Kalaha reference bots: their own rules agree with the platform's, ``good`` plays well
and fast, ``random`` is legal, and the kit serves them over real HTTP."""

from __future__ import annotations

import asyncio
import json
import random
import signal
from collections import Counter
from typing import Any

import aiohttp
import pytest
from pytest_aiohttp import AiohttpClient

from merknera.games.kalaha import Board, Kalaha, Sow
from merknera_bots.kalaha import (
    DEPTH,
    OVER,
    Position,
    choose_good,
    choose_random,
    make_bot,
    moves,
    over,
    read_position,
    sow,
)
from tests.support.bot_process import PATIENCE, bot_process, ready_line

GAME = Kalaha()
START: Position = (6,) * 6 + (0,) + (6,) * 6 + (0,)


def position(board: Board) -> Position:
    return (*board.rows[0], board.stores[0], *board.rows[1], board.stores[1])


def mirrored(pos: Position) -> Position:
    """The same position with the players' sides swapped."""
    return pos[7:] + pos[:7]


def random_positions(games: int, seed: int) -> list[tuple[Board, int]]:
    """Every position (and the seat to move) of ``games`` uniformly random games."""
    rng = random.Random(seed)
    seen: list[tuple[Board, int]] = []
    for _ in range(games):
        board = GAME.new({}, ["a", "b"], rng)
        while (seat := GAME.to_move(board)) is not None:
            seen.append((board, seat))
            board = GAME.apply(board, seat, rng.choice(list(GAME.legal_moves(board, seat))))
    return seen


def play(seed: int, good_seat: int) -> Board:
    """A game of ``good`` (at ``good_seat``) against ``random`` seeded with ``seed``."""
    rng = random.Random(seed)
    board = GAME.new({}, ["a", "b"], rng)
    while (seat := GAME.to_move(board)) is not None:
        pos = position(board)
        pit = choose_good(pos, seat) if seat == good_seat else choose_random(pos, seat, rng)
        board = GAME.apply(board, seat, Sow(pit))
    return board


LAPS = [  # positions with 13 stones or more in a pit, for either player
    Board(((13, 0, 0, 0, 0, 1), (1,) * 6)),
    Board(((0, 0, 14, 0, 0, 0), (0, 0, 0, 0, 0, 1))),
    Board(((0, 0, 0, 0, 0, 19), (1,) * 6)),
    Board(((27, 1, 0, 0, 0, 2), (0, 30, 0, 0, 0, 13)), (0, 0), 1),
    Board(((1,) * 6, (0, 0, 0, 26, 0, 1)), (3, 4), 1),
]


def test_the_bots_rules_are_the_platforms() -> None:
    """Every legal sowing of 30 random games (and a few long laps) gives the same position
    and the same next player under the bot's small copy of the rules as under
    merknera.games.kalaha."""
    checked = 0
    laps = [(board, board.next_seat) for board in LAPS]
    for board, seat in random_positions(30, seed=11) + laps:
        pos = position(board)
        assert not over(pos)
        assert moves(pos, seat) == [move.pit for move in GAME.legal_moves(board, seat)]
        for pit in moves(pos, seat):
            after = GAME.apply(board, seat, Sow(pit))
            child, mover = sow(pos, seat, pit)
            assert child == position(after), (pos, seat, pit)
            assert over(child) == after.over
            assert mover == (OVER if after.over else after.next_seat)
            checked += 1
    assert checked > 2000


@pytest.mark.parametrize(
    ("pos", "player", "pit", "why"),
    [
        # Pit 2's single stone lands in empty pit 3 and takes TWO's 20 in pit 2.
        ((4, 0, 1, 0, 5, 0, 0, 2, 2, 20, 2, 2, 2, 0), 0, 2, "capture"),
        # The same for TWO, on the mirrored board.
        ((2, 2, 20, 2, 2, 2, 0, 4, 0, 1, 0, 5, 0, 0), 1, 2, "capture"),
        # Pit 5's single stone goes to the store and ONE moves again (pit 0 would feed TWO).
        ((8, 0, 0, 0, 0, 1, 30, 1, 1, 1, 1, 1, 1, 28), 0, 5, "extra turn"),
        # Pit 3 ends in the store; then pit 5's stones make an extra turn again.
        ((1, 9, 9, 3, 9, 1, 0, 3, 3, 3, 3, 3, 3, 0), 0, 5, "extra turn"),
    ],
)
def test_good_takes_the_obvious_gain(pos: Position, player: int, pit: int, why: str) -> None:
    assert choose_good(pos, player) == pit, why
    child, mover = sow(pos, player, pit)
    if why == "extra turn":
        assert mover == player
    else:
        store = 7 * player + 6
        assert child[store] - pos[store] > 10


def test_good_sees_the_same_game_from_either_side() -> None:
    """Swapping the sides of a position does not change the pit good plays."""
    for board, seat in random_positions(4, seed=5)[::4]:
        pos = position(board)
        assert choose_good(pos, seat) == choose_good(mirrored(pos), 1 - seat)


def test_good_beats_random() -> None:
    """Twenty seeded games, good as ONE in ten and as TWO in ten: it wins at least 18."""
    wins = 0
    for seed in range(20):
        good_seat = seed % 2
        outcome = GAME.outcome(play(seed, good_seat))
        assert outcome is not None
        wins += outcome.winners == (good_seat,)
    assert wins >= 18, f"good won only {wins} of 20"


def whole_tree(pos: Position, player: int, depth: int) -> int:
    """The sowings of every line of ``depth`` sowings from ``pos``: what a search without
    pruning makes."""
    total = 0
    for pit in moves(pos, player):
        child, after = sow(pos, player, pit)
        total += 1 + (whole_tree(child, after, depth - 1) if after != OVER and depth > 1 else 0)
    return total


def test_good_does_bounded_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A move's work counted in sowings, not timed (bench/kalaha_bot.py prints the times):
    at most 20,000 on every position of two seeded games, and at the position of the most,
    under a tenth of the whole tree of :data:`DEPTH` sowings: alpha-beta prunes."""
    sowings = 0

    def counted(pos: Position, player: int, pit: int) -> tuple[Position, int]:
        nonlocal sowings
        sowings += 1
        return sow(pos, player, pit)

    # The search looks sow up in its module at every call, so this sees each one.
    monkeypatch.setattr("merknera_bots.kalaha.sow", counted)
    work: list[tuple[int, Position, int]] = []
    for board, seat in random_positions(2, seed=3):
        sowings = 0
        choose_good(position(board), seat)
        work.append((sowings, position(board), seat))
    most, pos, seat = max(work)
    # 12,394 as the search stands, of 190,636 (bench/kalaha_bot.py: about 1 us a sowing).
    assert most <= 20_000, f"{most} sowings for a move from {pos} at depth {DEPTH}"
    assert most * 10 < whole_tree(pos, seat, DEPTH), most


def test_random_plays_every_non_empty_pit_and_only_those() -> None:
    pos: Position = (0, 3, 0, 1, 0, 2, 5, 1, 1, 1, 1, 1, 1, 5)
    rng = random.Random(4)
    seen = Counter(choose_random(pos, 0, rng) for _ in range(1500))
    assert set(seen) == {1, 3, 5}
    assert all(400 < n < 600 for n in seen.values()), seen
    # Seeded, it repeats itself.
    a, b = random.Random(9), random.Random(9)
    assert [choose_random(START, 1, a) for _ in range(20)] == [
        choose_random(START, 1, b) for _ in range(20)]


def test_no_move_on_a_finished_board() -> None:
    finished: Position = (0,) * 6 + (36,) + (0,) * 6 + (36,)
    with pytest.raises(ValueError, match="game is over"):
        choose_good(finished, 0)
    with pytest.raises(ValueError, match="game is over"):
        choose_random(finished, 1, random.Random(0))


@pytest.mark.parametrize(
    ("row_one", "row_two", "message"),
    [
        ([6] * 6, {"pits": [6] * 6, "kalahaStones": 0}, "rowOne must be an object"),
        ({"pits": [6] * 5, "kalahaStones": 0}, {"pits": [6] * 6, "kalahaStones": 0},
         "rowOne.pits must be a list of 6"),
        ({"pits": [6] * 6, "kalahaStones": 0}, {"pits": [{"stones": -1}] * 6,
                                                "kalahaStones": 0}, "rowTwo.pits must hold"),
        ({"pits": [6] * 6, "kalahaStones": True}, {"pits": [6] * 6, "kalahaStones": 0},
         "rowOne.kalahaStones"),
        ({"pits": [6] * 6}, {"pits": [6] * 6, "kalahaStones": 0}, "rowOne.kalahaStones"),
    ],
)
def test_read_position_refuses_bad_rows(row_one: Any, row_two: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_position(row_one, row_two)


def test_read_position_takes_the_wire_rows() -> None:
    view = GAME.next_move_params(GAME.apply(Board(), 0, Sow(1)), 1)
    assert read_position(view["rowOne"], view["rowTwo"]) == (
        6, 0, 7, 7, 7, 7, 1, 7, 6, 6, 6, 6, 6, 0)
    # Bare numbers and other key cases are read too.
    assert read_position({"PITS": [1] * 6, "KalahaStones": 2},
                         {"pits": [{"stones": 3}] * 6, "kalahaStones": 4}) == (
        1, 1, 1, 1, 1, 1, 2, 3, 3, 3, 3, 3, 3, 4)


# -- over HTTP ----------------------------------------------------------------------------


def _call(params: dict[str, Any], id_: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "Kalaha.NextMove", "params": params, "id": id_}


async def test_the_kit_serves_next_move(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("good").make_app())
    board = Board(((4, 0, 1, 0, 5, 0), (2, 2, 20, 2, 2, 2)))
    params = {"gameid": 7, **GAME.next_move_params(board, 0)}
    response = await client.post("/rpc", json=_call(params, "m1"))
    assert response.status == 200
    reply = await response.json()
    assert reply == {"jsonrpc": "2.0", "result": {"pitIndex": 2}, "id": "m1"}
    # The platform reads the reply as a legal move.
    GAME.apply(board, 0, GAME.parse_move(reply["result"]))


async def test_random_over_http_is_legal_and_idempotent(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("random", seed=3).make_app())
    board = GAME.apply(Board(), 0, Sow(1))
    params = {"gameid": 8, **GAME.next_move_params(board, 1)}
    answers = []
    for _ in range(2):  # the same call twice: the platform's retry gets the same answer
        response = await client.post("/rpc", json=_call(params, 5))
        answers.append((await response.json())["result"])
    assert answers[0] == answers[1]
    GAME.apply(board, 1, GAME.parse_move(answers[0]))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"player": "THREE"}, 'player must be "ONE" or "TWO"'),
        ({"nextPlayer": "TWO"}, "it is not ONE's turn"),
        ({"rowOne": {"pits": [6] * 6}}, "rowOne.kalahaStones"),
        ({"rowOne": {"pits": [0] * 6, "kalahaStones": 36},
          "rowTwo": {"pits": [0] * 6, "kalahaStones": 36}}, "the game is over"),
    ],
)
async def test_bad_params_get_invalid_params(aiohttp_client: AiohttpClient,
                                             change: dict[str, Any], message: str) -> None:
    client = await aiohttp_client(make_bot("good").make_app())
    params = {"gameid": 1, **GAME.next_move_params(Board(), 0), **change}
    response = await client.post("/rpc", json=_call(params))
    error = (await response.json())["error"]
    assert error["code"] == -32602
    assert message in error["data"]


def test_unknown_strategy() -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        make_bot("perfect")


async def test_the_command_line_serves_and_stops() -> None:
    async with bot_process("merknera_bots.kalaha", "--no-register", "--port", "0",
                           "--strategy", "good") as process:
        word, port, name = await ready_line(process)
        assert (word, name) == ("READY", "kalaha-good")
        params = {"gameid": 1, **GAME.next_move_params(Board(), 0)}
        async with aiohttp.ClientSession() as session, session.post(
            f"http://127.0.0.1:{port}/rpc", data=json.dumps(_call(params)),
            headers={"Content-Type": "application/json"},
        ) as response:
            reply = await response.json()
        assert reply["result"]["pitIndex"] in range(6)
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), PATIENCE) == 0

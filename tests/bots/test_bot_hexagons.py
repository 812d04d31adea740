"""The Hexagons reference bots: good claims and avoids giving hexagons away, random is legal,
both answer NextMove over HTTP, and good beats random.

Positions are built with the platform's rules and handed to the bots as the Game object the
platform sends, so the bots' own geometry is checked against the rules'.
"""

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

from merknera.games.base import SeatResult
from merknera.games.hexagons import (
    Hexagons,
    HexagonsState,
    Line,
    Point,
    lattice,
    line_between,
    render,
)
from merknera_bots.hexagons import (
    Position,
    choose_good,
    choose_random,
    geometry,
    line_to_wire,
    make_bot,
    read_position,
)
from tests.support.bot_process import PATIENCE, bot_process, ready_line

GAME = Hexagons()


def new(rows: int = 5, cols: int = 4, players: tuple[str, str] = ("amy", "bob")
        ) -> HexagonsState:
    return GAME.new({"rows": rows, "cols": cols}, players, random.Random(0))


def play(state: HexagonsState, *lines: Line) -> HexagonsState:
    for line in lines:
        seat = GAME.to_move(state)
        assert seat is not None
        state = GAME.apply(state, seat, line)
    return state


def view(state: HexagonsState) -> dict[str, Any]:
    """The NextMove params the platform sends the seat to move, through JSON."""
    seat = GAME.to_move(state)
    assert seat is not None
    return dict(json.loads(json.dumps({"gameid": 1, **GAME.next_move_params(state, seat)})))


def position(state: HexagonsState) -> Position:
    params = view(state)
    return read_position(params["rows"], params["cols"], params["lines"], params["hexagons"])


def ring(r: int, c: int, rows: int = 5, cols: int = 4) -> tuple[Line, ...]:
    return lattice(rows, cols).rings[Point(r, c)]


def claims(state: HexagonsState, line: tuple[tuple[int, int], tuple[int, int]]) -> int:
    return len(state.completed_by(line_between(*line)))


def test_the_bots_geometry_is_the_rules_geometry() -> None:
    for rows, cols in ((3, 3), (5, 4), (9, 9), (11, 6)):
        mine, rules = geometry(rows, cols), lattice(rows, cols)
        assert mine.lines == rules.lines
        assert mine.rings == rules.rings
        assert {p: list(ns) for p, ns in mine.neighbours.items()} == {
            p: list(ns) for p, ns in rules.neighbours.items()}


def test_good_claims_when_it_can() -> None:
    state = play(new(), *ring(1, 1)[:5])
    for seed in range(20):
        assert choose_good(position(state), random.Random(seed)) == ring(1, 1)[5]


def test_good_prefers_the_line_that_claims_two() -> None:
    shared = line_between((2, 0), (2, 1))
    others = [line for line in (*ring(1, 1), *ring(3, 1)) if line != shared]
    one_short = [line for line in ring(3, 2) if line != line_between((3, 3), (4, 2))]
    state = play(new(), *others, *one_short[:2])
    assert state.hexagons == ()
    state = play(state, *one_short[2:])
    assert state.hexagons == ()
    assert claims(state, ((3, 3), (4, 2))) == 1 and claims(state, ((2, 0), (2, 1))) == 2
    for seed in range(20):
        assert choose_good(position(state), random.Random(seed)) == shared


def test_good_leaves_no_hexagon_one_line_short() -> None:
    state = play(new(7, 5), *ring(3, 2, 7, 5)[:4])
    risky = set(ring(3, 2, 7, 5)[4:])
    picks = Counter(choose_good(position(state), random.Random(seed)) for seed in range(200))
    assert not risky & set(picks)
    assert len(picks) > 20, "good picks among all the safe lines"
    # Random has no such care: it draws a risky line now and then.
    randoms = {choose_random(position(state), random.Random(seed)) for seed in range(400)}
    assert risky <= randoms


def _opponent_best(state: HexagonsState) -> int:
    """The most hexagons the seat to move can claim in a row, by exhaustive search."""
    seat = GAME.to_move(state)
    if seat is None:
        return 0
    best = 0
    for line in GAME.legal_moves(state, seat):
        gained = len(state.completed_by(line))
        if gained:
            best = max(best, gained + _opponent_best(GAME.apply(state, seat, line)))
    return best


def _cornered_positions(count: int) -> list[HexagonsState]:
    """The first position of each of ``count`` seeded games of good against good on 7x5
    where no line claims and every line gives some hexagons away."""
    found: list[HexagonsState] = []
    for seed in range(count):
        rng = random.Random(seed)
        state = new(7, 5)
        while (seat := GAME.to_move(state)) is not None:
            legal = GAME.legal_moves(state, seat)
            if not any(state.completed_by(line) for line in legal) and all(
                    _opponent_best(GAME.apply(state, seat, line)) > 0 for line in legal):
                found.append(state)
                break
            state = GAME.apply(state, seat, line_between(*choose_good(position(state), rng)))
    return found


def test_good_gives_the_least_away_when_it_must_give() -> None:
    positions = _cornered_positions(8)
    assert len(positions) == 8
    spreads = 0
    for state in positions:
        seat = GAME.to_move(state)
        assert seat is not None
        losses = {line: _opponent_best(GAME.apply(state, seat, line))
                  for line in GAME.legal_moves(state, seat)}
        spreads += min(losses.values()) < max(losses.values())
        line = line_between(*choose_good(position(state), random.Random(1)))
        assert losses[line] == min(losses.values()), render(state)
    assert spreads == len(positions), "each position must tell a good line from a bad one"


def test_random_draws_every_legal_line_and_only_those() -> None:
    state = play(new(), *ring(1, 1))  # (1,1) is claimed: its spokes are illegal
    legal = set(GAME.legal_moves(state, 1))
    seen = Counter(choose_random(position(state), random.Random(seed)) for seed in range(3000))
    assert set(seen) == legal
    assert all(40 < n < 200 for n in seen.values()), seen  # about 3000 / 23 each


@pytest.mark.parametrize("seed", range(5))
def test_both_strategies_play_legal_games(seed: int) -> None:
    rng = random.Random(seed)
    state = new(9, 7)
    while (seat := GAME.to_move(state)) is not None:
        choose = choose_good if seat == 0 else choose_random
        line = choose(position(state), rng)
        reply = json.loads(json.dumps(line_to_wire(line)))
        state = GAME.apply(state, seat, GAME.parse_move(reply))
    assert GAME.outcome(state) is not None


def test_good_beats_random() -> None:
    results: Counter[SeatResult] = Counter()
    for seed in range(40):
        rng, good = random.Random(seed), seed % 2
        state = new(7, 7)
        while (seat := GAME.to_move(state)) is not None:
            choose = choose_good if seat == good else choose_random
            state = GAME.apply(state, seat, line_between(*choose(position(state), rng)))
        outcome = GAME.outcome(state)
        assert outcome is not None
        results[outcome.result_for(good)] += 1
    # Random against random wins about half; good wins nearly every game from either seat.
    assert results[SeatResult.WIN] >= 36, results


@pytest.mark.parametrize(("params", "message"), [
    ({"rows": 4, "cols": 4, "lines": [], "hexagons": []}, "rows must be odd"),
    ({"rows": 5, "cols": "4", "lines": [], "hexagons": []}, "cols must be an integer"),
    ({"rows": 5, "cols": 4, "lines": {}, "hexagons": []}, "must be lists"),
    ({"rows": 5, "cols": 4, "lines": [{"endpoints": [{"row": 0, "col": 0}]}], "hexagons": []},
     "two endpoints"),
    ({"rows": 5, "cols": 4, "lines": [{"endpoints": [{"row": 0, "col": 0},
                                                     {"row": 0, "col": 2}]}], "hexagons": []},
     "no such line"),
    ({"rows": 5, "cols": 4, "lines": [], "hexagons": [{"center": {"row": 0, "col": 0}}]},
     "no hexagon centre"),
    ({"rows": 5, "cols": 4, "lines": [], "hexagons": [{"center": {"row": True, "col": 1}}]},
     "integer row and col"),
])
def test_malformed_game_objects_are_refused(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_position(params["rows"], params["cols"], params["lines"], params["hexagons"])


def test_no_line_to_draw_is_an_error() -> None:
    state = play(new(3, 3), *ring(1, 1, 3, 3))  # only spokes of the claimed centre are left
    params: Any = GAME.complete_params(state, 0)
    done = read_position(3, 3, params["lines"], params["hexagons"])
    for choose in (choose_good, choose_random):
        with pytest.raises(ValueError, match="no line can be drawn"):
            choose(done, random.Random(0))


# -- over HTTP -----------------------------------------------------------------------------


async def _call(client: Any, params: dict[str, Any], id_: int = 1) -> dict[str, Any]:
    response = await client.post("/rpc", json={
        "jsonrpc": "2.0", "id": id_, "method": "Hexagons.NextMove", "params": params})
    assert response.status == 200
    reply: dict[str, Any] = await response.json()
    return reply


@pytest.mark.parametrize("strategy", ["good", "random"])
async def test_next_move_over_http(aiohttp_client: AiohttpClient, strategy: str) -> None:
    client = await aiohttp_client(make_bot(strategy, seed=3).make_app())
    state = play(new(), *ring(1, 1)[:5])
    reply = await _call(client, view(state))
    assert "error" not in reply, reply
    move = GAME.parse_move(reply["result"])
    assert move in GAME.legal_moves(state, 1)
    if strategy == "good":
        assert move == ring(1, 1)[5]
    # The same call again gets the same answer (the kit's idempotency cache).
    assert await _call(client, view(state)) == reply


async def test_bad_params_over_http_are_invalid_params(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_bot("good").make_app())
    reply = await _call(client, {**view(new()), "rows": 6})
    assert reply["error"]["code"] == -32602
    assert "rows must be odd" in reply["error"]["data"]


def test_unknown_strategy() -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        make_bot("clever")


async def test_the_command_line_serves_moves() -> None:
    async with bot_process("merknera_bots.hexagons", "--no-register", "--port", "0",
                           "--strategy", "good", "--seed", "5") as process:
        word, port, name = await ready_line(process)
        assert (word, name) == ("READY", "hexagons-good")
        state = play(new(), *ring(1, 1)[:5])
        async with aiohttp.ClientSession() as session, session.post(
                f"http://127.0.0.1:{port}/rpc", json={
                    "jsonrpc": "2.0", "id": 1, "method": "Hexagons.NextMove",
                    "params": view(state)}) as response:
            reply = await response.json()
        assert GAME.parse_move(reply["result"]) == ring(1, 1)[5]
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), PATIENCE) == 0

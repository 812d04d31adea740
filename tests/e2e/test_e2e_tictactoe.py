"""The platform and six reference tic-tac-toe bots as real processes: a full round robin.

Three ``perfect`` and three ``random`` bots register; each registration schedules two games
(one per seating) against every bot already registered, so 6 bots play 30 games. Every game
must finish normally with a move log that replays to its stored result, perfect bots must
never lose (and always draw among themselves), and the leaderboard must agree with the games.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from typing import Any

from tests.e2e.harness import E2E

PERFECT = ("perfect-1", "perfect-2", "perfect-3")
RANDOM = ("random-1", "random-2", "random-3")
GAMES = len(PERFECT + RANDOM) * (len(PERFECT + RANDOM) - 1)  # 2 per pair: 30


async def test_round_robin_of_reference_bots(e2e: E2E) -> None:
    token = await e2e.add_user("e2e")
    platform = await e2e.start_platform()
    specs = [("perfect", name, 0.0) for name in PERFECT] + [("random", name, 0.0)
                                                             for name in RANDOM]
    bots = await e2e.start_bots(token, specs)
    strategy = {bot.name: bot.strategy for bot in bots}

    summaries = await e2e.wait_all_finished(GAMES)
    games: list[dict[str, Any]] = list(
        await asyncio.gather(*(e2e.game(summary["id"]) for summary in summaries)))

    # Merknera's scheduling: every ordered pair of distinct bots is one game (a seating).
    seatings = Counter(tuple(seat["name"] for seat in sorted(g["seats"], key=lambda s: s["seat"]))
                       for g in games)
    everyone = PERFECT + RANDOM
    assert seatings == Counter(itertools.permutations(everyone, 2))

    tally = {name: Counter[str]() for name in everyone}
    for game in games:
        e2e.check_tictactoe_game(game)
        names = [seat["name"] for seat in sorted(game["seats"], key=lambda s: s["seat"])]
        assert game["reason"] == "NORMAL", (game["id"], names, game["reason"], game["detail"])
        assert [m for m in game["moves"] if m["fault"] is not None] == [], game["id"]
        if all(strategy[name] == "perfect" for name in names):
            assert game["outcome"] == "DRAW", (game["id"], names, game["final_state"])
        for seat in game["seats"]:
            if strategy[seat["name"]] == "perfect":
                assert seat["result"] != "LOSS", (game["id"], names, game["final_state"])
            tally[seat["name"]][seat["result"]] += 1

    # The leaderboard: the same W/D/L as the games, 10 games each, perfect bots on top.
    board = (await e2e.get("/api/leaderboard?game=TICTACTOE"))["bots"]
    rows = {row["name"]: row for row in board}
    assert sorted(rows) == sorted(everyone)
    for name, row in rows.items():
        won, drawn, lost = tally[name]["WIN"], tally[name]["DRAW"], tally[name]["LOSS"]
        assert (row["won"], row["drawn"], row["lost"]) == (won, drawn, lost), (name, row)
        assert won + drawn + lost == row["played"] == 2 * (len(everyone) - 1), (name, row)
        assert row["score"] == round(100 * (won + drawn / 2) / row["played"], 2), (name, row)
    assert sorted(row["rank"] for row in board) == list(range(1, len(everyone) + 1))
    by_rank = sorted(board, key=lambda row: row["rank"])
    # The leaderboard ranks by the rating's conservative estimate.
    conservative = [row["rating"]["conservative"] for row in by_rank]
    assert conservative == sorted(conservative, reverse=True)
    assert {row["name"] for row in by_rank[:len(PERFECT)]} == set(PERFECT), [
        (row["rank"], row["name"], row["score"]) for row in by_rank]
    # Wins and losses balance across the whole arena.
    assert sum(t["WIN"] for t in tally.values()) == sum(t["LOSS"] for t in tally.values())

    # Each bot was sent TicTacToe.Complete once for each of its games, with the final board
    # and the right winner flag (the calls go out in the background, so wait for them).
    expected_completes = {bot.name: {
        game["id"]: {"gameid": game["id"], "winner": seat["result"] == "WIN",
                     "mark": "XO"[seat["seat"]], "gamestate": game["final_state"]}
        for game in games for seat in game["seats"] if seat["name"] == bot.name}
        for bot in bots}

    async def all_completes() -> tuple[bool | None, str]:
        missing = {bot.name: len(expected_completes[bot.name])
                   - len(e2e.completes_received(bot)) for bot in bots}
        done = all(count <= 0 for count in missing.values())  # extra ones fail below
        return (True if done else None), f"missing Completes: {missing}"

    await e2e.wait_until("a Complete for every seat of every game", all_completes)
    for bot in bots:
        received = e2e.completes_received(bot)
        assert sorted(c["gameid"] for c in received) == sorted(expected_completes[bot.name])
        for complete in received:
            assert complete == expected_completes[bot.name][complete["gameid"]], bot.name

    # The store holds exactly what the API showed.
    stored = e2e.read_db("SELECT COUNT(*) AS n, SUM(latency_ms IS NULL OR request IS NULL "
                         "OR reply IS NULL) AS incomplete FROM moves")[0]
    assert stored["n"] == sum(len(game["moves"]) for game in games)
    assert stored["incomplete"] == 0

    # Everyone stops cleanly on SIGTERM, and the platform logged no traceback.
    assert await e2e.processes.stop(platform.child) == 0
    for bot in bots:
        assert await e2e.processes.stop(bot.child) == 0, bot.child.stderr_tail()
    log = e2e.platform_log()
    assert "Traceback" not in log, log[-4000:]

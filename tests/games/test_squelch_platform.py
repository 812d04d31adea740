"""Squelch on the real platform: registration, the runner's calls of a match, faults, results.

The registered game is swapped for its duration for one with short matches (two games to
1000 points).  One seat is the reference ``good`` bot served
by merknera_bots.kit, the other a scripted bot that records every call, takes the first option and
stays, except that its first reply takes an option that does not exist.
"""

from __future__ import annotations

from typing import Any

import pytest
from pytest_aiohttp import AiohttpServer

from merknera.games import JSON, REGISTRY
from merknera.games.squelch import Squelch
from merknera_bots.squelch import make_bot
from tests.support import Arena, ScriptedBot

SETTINGS = {"dieCount": 6, "maxPoints": 1000, "gameCount": 2, "maxTurns": 200}


@pytest.fixture
def squelch(monkeypatch: pytest.MonkeyPatch) -> Squelch:
    game = Squelch()
    game.default_settings = SETTINGS
    monkeypatch.setitem(REGISTRY, game.mnemonic, game)
    return game


def scripted() -> ScriptedBot:
    replies = 0

    async def first_option(params: dict[str, Any], _id: Any) -> JSON:
        nonlocal replies
        replies += 1
        if replies == 1:
            return {"take": "99", "stay": True}
        return {"take": params["options"][0]["id"], "stay": True}

    return ScriptedBot(next_move=first_option)


async def test_two_matches_between_the_good_bot_and_a_scripted_one(
        squelch: Squelch, arena: Arena, aiohttp_server: AiohttpServer) -> None:
    good, _ = make_bot("good")
    server = await aiohttp_server(good.make_app())
    reply = await arena.register("good", str(server.make_url("/rpc")), game="SQUELCH")
    assert "result" in reply, reply
    bot = scripted()
    server = await aiohttp_server(bot.app())
    reply = await arena.register("first", str(server.make_url("/rpc")), game="SQUELCH")
    assert "result" in reply, reply
    await arena.settle(60.0)

    for match_id in (1, 2):
        game = await arena.game(match_id)
        assert (game["status"], game["reason"]) == ("FINISHED", "NORMAL"), game
        final = game["final_state"]
        assert final["turn"] is None and sum(final["wins"]) == 2
        assert any(m["move"] is not None and "roll" in m["move"] for m in game["moves"])

    calls = [(method.removeprefix("Squelch."), params) for method, params in bot.calls
             if method.startswith("Squelch.")]
    by_match: dict[int, list[tuple[str, dict[str, Any]]]] = {1: [], 2: []}
    for method, params in calls:
        by_match[params["matchid"]].append((method, params))
    for match_id, mine in by_match.items():
        method, start = mine[0]
        seat = start["yourBotIndex"]
        assert method == "MatchStart"
        assert start == {"matchid": match_id, "players": 2, "dieCount": 6, "maxPoints": 1000,
                         "gameCount": 2, "yourBotIndex": seat, "botNames": start["botNames"]}
        assert sorted(start["botNames"]) == ["first", "good"]
        assert start["botNames"][seat] == "first"
        methods = [method for method, _ in mine]
        assert methods[1] == "GameStart" and methods[-1] == "MatchEnd"
        assert methods.count("GameStart") == 2 and methods.count("GameEnd") == 2
        # Every NextMove comes in a turn this seat was told of, after its TurnStart.
        turn = None
        for method, params in mine:
            if method == "TurnStart":
                turn = (params["gameid"], params["turnid"])
            elif method in ("NextMove", "Squelch"):
                assert turn == (params["gameid"], params["turnid"]), (method, params)
            elif method == "GameEnd":
                assert params["winnerBotIndex"] in (0, 1)
                assert any(t["botIndex"] == seat for t in params["finalPlayerTurns"])
        end = mine[-1][1]
        wins = end["winsByBotIndex"]
        assert sum(wins) == 2
        assert end["winner"] is (wins[seat] > wins[1 - seat])

    errors = [params for method, params in calls if method == "Error"]
    assert len(errors) == 1
    error = errors[0]
    assert set(error) == {"matchid", "gameid", "turnid", "message", "errorcode"}
    assert "there is no option '99' for the roll" in error["message"]
    assert "strike 1 of 3" in error["message"]

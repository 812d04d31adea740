"""The Squelch reference bot served over real HTTP: the calls of a match, NextMove answers,
idempotency, bad params, and ``python -m merknera_bots.squelch`` as a process."""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

import aiohttp
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from merknera_bots.squelch import make_bot
from tests.support.bot_process import PATIENCE, bot_process, ready_line

Client = TestClient[Any, Any]


async def call(client: Client, method: str, params: Any, id_: Any = 1) -> Any:
    message = {"jsonrpc": "2.0", "method": f"Squelch.{method}", "params": params, "id": id_}
    response = await client.post("/rpc", json=message)
    assert response.status == 200
    reply = await response.json()
    assert reply["id"] == id_
    return reply


def choose(roll: str, options: list[tuple[str, str, int]], turn: int = 1,
           match: str = "m1") -> dict[str, Any]:
    return {"matchid": match, "gameid": 1, "turnid": turn, "dieValues": roll,
            "options": [{"id": i, "dieValues": dice, "points": points}
                        for i, dice, points in options]}


async def start_match(client: Client, match: str = "m1", **turn: Any) -> None:
    reply = await call(client, "MatchStart", {
        "matchid": match, "dieCount": 6, "maxPoints": 5000, "gameCount": 3, "yourBotIndex": 1,
        "botNames": ["alice", "good"]})
    assert reply["result"] == {"status": "READY"}
    assert (await call(client, "GameStart", {"matchid": match, "gameid": 1}))["result"] is None
    params = {"matchid": match, "gameid": 1, "turnid": 2, "startPoints": 0,
              "otherPlayerTurns": [], "isFinalRound": False, **turn}
    assert (await call(client, "TurnStart", params))["result"] is None


async def test_a_turn_over_http_adds_up_the_points_taken(aiohttp_client: AiohttpClient) -> None:
    bot, _ = make_bot("good")
    client = await aiohttp_client(bot.make_app())
    await start_match(client)
    # One 1 rather than two: five dice to roll on.
    reply = await call(client, "NextMove", choose("112346", [("0", "11", 200), ("1", "1", 100)],
                                                  turn=2))
    assert reply["result"] == {"take": "1", "stay": False}
    # 200 more, two dice left: worth banking only because 100 is already in hand.
    second = choose("22234", [("2", "222", 200)], turn=2)
    reply = await call(client, "NextMove", second, id_=2)
    assert reply["result"] == {"take": "2", "stay": True}
    # The same roll in a new turn, with nothing in hand: roll on.
    reply = await call(client, "NextMove", choose("22234", [("0", "222", 200)], turn=4), id_=3)
    assert reply["result"] == {"take": "0", "stay": False}
    # The same request again (a retry): the same answer.
    assert (await call(client, "NextMove", second, id_=2))["result"] == {"take": "2", "stay": True}


async def test_the_final_round_rolls_on_until_ahead(aiohttp_client: AiohttpClient) -> None:
    bot, _ = make_bot("good")
    client = await aiohttp_client(bot.make_app())
    leader = {"botIndex": 0, "startPoints": 4500, "endPoints": 5100,
              "rolls": [{"roll": "111234", "take": "111", "points": 1000}]}
    await start_match(client, startPoints=4000, otherPlayerTurns=[leader], isFinalRound=True)
    reply = await call(client, "NextMove", choose("11134", [
        ("0", "111", 1000), ("1", "11", 200), ("2", "1", 100)], turn=2))
    assert reply["result"] == {"take": "0", "stay": False}  # 5000 is not ahead of 5100
    reply = await call(client, "NextMove", choose("25", [("3", "5", 50)], turn=2), id_=2)
    assert reply["result"] == {"take": "3", "stay": False}  # 5050, still behind: hot dice
    reply = await call(client, "NextMove", choose("122346", [("4", "1", 100)], turn=2), id_=3)
    assert reply["result"] == {"take": "4", "stay": True}  # 5150: ahead, bank


async def test_announcements_are_answered_and_extra_params_ignored(
        aiohttp_client: AiohttpClient) -> None:
    bot, player = make_bot("random", seed=4)
    client = await aiohttp_client(bot.make_app())
    await start_match(client, futureParam={"x": 1})
    for method, params in [
        ("Squelch", {"matchid": "m1", "gameid": 1, "turnid": 2, "dieValues": "2346"}),
        ("GameEnd", {"matchid": "m1", "gameid": 1, "winnerBotIndex": 1,
                     "finalPlayerTurns": []}),
        ("MatchEnd", {"matchid": "m1", "winsByBotIndex": [1, 2], "winner": True}),
        ("Error", {"matchid": "m1", "gameid": 1, "turnid": 2, "message": "x",
                   "errorcode": "illegal move"}),
    ]:
        reply = await call(client, method, params)
        assert reply["result"] is None, (method, reply)
    # Keys in any case, at the top (the kit) and inside options (the bot).
    params = {"MatchId": "m2", "GameId": 1, "TurnId": 1, "DIEVALUES": "15",
              "Options": [{"ID": "0", "DieValues": "15", "Points": 150},
                          {"id": "1", "dieValues": "1", "points": 100}]}
    reply = await call(client, "NextMove", params, id_="r")
    assert reply["result"]["take"] in ("0", "1")
    # A random answer is repeated for a repeated request.
    for _ in range(3):
        assert (await call(client, "NextMove", params, id_="r"))["result"] == reply["result"]
    assert player.matches == 1  # m1 was forgotten at MatchEnd


async def test_bad_params_are_refused(aiohttp_client: AiohttpClient) -> None:
    bot, _ = make_bot("good")
    client = await aiohttp_client(bot.make_app())
    for params, data in [
        ({"matchid": "m", "gameid": 1, "turnid": 1, "dieValues": "15", "options": []},
         "options must be a non-empty list"),
        ({"matchid": "m", "gameid": 1, "turnid": 1, "dieValues": "15",
          "options": [{"id": 0, "dieValues": "15", "points": 150}]},
         'an option must have a string "id"'),
        ({"matchid": "m", "gameid": 1, "turnid": 1, "dieValues": 15,
          "options": [{"id": "0", "dieValues": "15", "points": 150}]},
         "dieValues must be the roll"),
    ]:
        reply = await call(client, "NextMove", params)
        assert reply["error"]["code"] == -32602
        assert data in reply["error"]["data"]
    reply = await call(client, "NextMove", {"matchid": "m", "options": []})
    assert reply["error"]["code"] == -32602  # dieValues is missing
    reply = await call(client, "MatchStart", {"matchid": "m", "dieCount": 9})
    assert reply["error"]["code"] == -32602


async def test_the_command_line_serves_and_stops() -> None:
    async with bot_process("merknera_bots.squelch", "--strategy", "good", "--no-register",
                           "--port", "0") as process:
        word, port, name = await ready_line(process)
        assert (word, name) == ("READY", "squelch-good")
        body = {"jsonrpc": "2.0", "method": "Squelch.NextMove", "id": 7,
                "params": choose("111222", [("0", "111222", 1200), ("1", "111", 1000)])}
        async with aiohttp.ClientSession() as session, session.post(
                f"http://127.0.0.1:{port}/rpc", json=body) as response:
            reply = json.loads(await response.text())
        assert reply["result"] == {"take": "0", "stay": False}
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), PATIENCE) == 0

"""The Squelchbot REST API reference bot over real HTTP: a match's calls, repeated calls,
malformed bodies, signatures, its memory cap, and ``python -m merknera_bots.squelch_rest``."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pytest_aiohttp import AiohttpClient, AiohttpServer

from merknera_bots.kit import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from merknera_bots.launcher import register
from merknera_bots.squelch_rest import MAX_BODY, SquelchRestBot
from tests.support.bot_process import PATIENCE, bot_process, ready_line

Client = TestClient[Any, Any]
SECRET = "ef" * 32
GAME = "/match/m1/game/1"


def options(*offered: tuple[str, str, int]) -> list[dict[str, Any]]:
    return [{"id": i, "dieValues": dice, "points": points} for i, dice, points in offered]


async def put(client: Client, path: str, body: Any = None, *,
              headers: dict[str, str] | None = None) -> aiohttp.ClientResponse:
    data = b"" if body is None else json.dumps(body).encode()
    return await client.put(path, data=data, headers={"Content-Type": "application/json",
                                                      **(headers or {})})


async def ok(client: Client, path: str, body: Any = None) -> None:
    response = await put(client, path, body)
    assert response.status == 200, await response.text()
    assert await response.read() == b""


async def choose(client: Client, path: str, roll: str, *offered: tuple[str, str, int]) -> Any:
    response = await put(client, f"{path}/choose", {"dieValues": roll,
                                                    "options": options(*offered)})
    assert response.status == 200, await response.text()
    assert response.content_type == "application/json"
    return await response.json()


async def start(client: Client, match: str = "m1", *, die_count: int = 6) -> None:
    await ok(client, f"/match/{match}/start", {
        "dieCount": die_count, "maxPoints": 5000, "gameCount": 2, "yourBotIndex": 1,
        "botNames": ["alice", "rest"]})


def turn_start(points: int = 0, others: list[Any] | None = None,
               final: bool = False) -> dict[str, Any]:
    return {"startPoints": points, "otherPlayerTurns": others or [], "isFinalRound": final}


LEADER = {"botIndex": 0, "startPoints": 4500, "endPoints": 5100,
          "rolls": [{"roll": "111234", "take": "111", "points": 1000}]}


async def test_bot_info_names_the_bot_in_at_most_20_characters(
        aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(SquelchRestBot("good", name="squelch-rest-good").make_app())
    response = await client.get("/bot/info")
    assert response.status == 200
    assert await response.json() == {"name": "squelch-rest-good"}
    long = SquelchRestBot("random", name="a name of twenty-six chars")
    client = await aiohttp_client(long.make_app())
    assert await (await client.get("/bot/info")).json() == {"name": "a name of twenty-six"}


async def test_a_match_over_http_adds_up_each_turn(aiohttp_client: AiohttpClient) -> None:
    bot = SquelchRestBot("good", name="rest")
    client = await aiohttp_client(bot.make_app())
    await start(client)
    await ok(client, f"{GAME}/start")  # no body, as the spec has it
    await ok(client, f"{GAME}/turn/2/start", turn_start(others=[
        {"botIndex": 0, "startPoints": 0, "endPoints": 300, "rolls": []}]))
    # One 1 rather than two: five dice to roll on.
    reply = await choose(client, f"{GAME}/turn/2", "112346", ("0", "11", 200), ("1", "1", 100))
    assert reply == {"take": "1", "stay": False}
    # 200 more with two dice left: worth banking only because 100 is already in hand.
    assert await choose(client, f"{GAME}/turn/2", "22234", ("2", "222", 200)) == {
        "take": "2", "stay": True}
    # The same roll in the next turn, with nothing in hand: roll on.
    await ok(client, f"{GAME}/turn/4/start", turn_start(300))
    assert await choose(client, f"{GAME}/turn/4", "22234", ("0", "222", 200)) == {
        "take": "0", "stay": False}
    await ok(client, f"{GAME}/turn/4/squelch", {"dieValues": "2346"})
    await ok(client, f"{GAME}/end", {"winnerBotIndex": 0, "finalPlayerTurns": [LEADER]})
    assert bot.matches == 1
    await ok(client, "/match/m1/end", {"winsByBotIndex": [1, 0]})
    assert bot.matches == 0
    await ok(client, "/match/m1/end", {"winsByBotIndex": [1, 0]})  # repeated: still fine


async def test_games_of_a_match_keep_their_own_scores(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(SquelchRestBot("good", name="rest").make_app())
    await start(client)
    final, usual = "/match/m1/game/1/turn/9", "/match/m1/game/2/turn/3"
    await ok(client, f"{final}/start", turn_start(4000, [LEADER], final=True))
    await ok(client, f"{usual}/start", turn_start(0, [{"botIndex": 0, "endPoints": 0}]))
    assert await choose(client, usual, "112346", ("0", "11", 200), ("1", "1", 100)) == {
        "take": "1", "stay": False}
    # The final round: 1000 is not enough to pass 5100, so roll on...
    assert await choose(client, final, "11134", ("0", "111", 1000), ("1", "11", 200)) == {
        "take": "0", "stay": False}
    assert await choose(client, final, "25", ("2", "5", 50)) == {"take": "2", "stay": False}
    # ... while the other game banks 300, as it would alone.
    assert await choose(client, usual, "22234", ("2", "222", 200)) == {"take": "2", "stay": True}
    assert await choose(client, final, "122346", ("3", "1", 100)) == {"take": "3", "stay": True}


async def test_a_repeated_choose_gets_the_same_answer(aiohttp_client: AiohttpClient) -> None:
    bot = SquelchRestBot("random", name="rest", seed=7)
    client = await aiohttp_client(bot.make_app())
    await start(client)
    offered = [("a", "1", 100), ("b", "5", 50), ("c", "15", 150), ("d", "11", 200),
               ("e", "115", 250), ("f", "111", 1000)]
    path = f"{GAME}/turn/1"
    first = await choose(client, path, "111556", *offered)
    assert set(first) == {"take", "stay"}
    assert first["take"] in "abcdef" and isinstance(first["stay"], bool)
    # Without the cache, six answers in a row from 12 equally likely ones would differ.
    for _ in range(5):
        assert await choose(client, path, "111556", *offered) == first
    # Another roll of the turn in between does not change the first roll's answer.
    await choose(client, path, "12346", ("g", "1", 100))
    assert await choose(client, path, "111556", *offered) == first


@pytest.mark.parametrize(("path", "body", "reason"), [
    ("/match/m/start", None, "a JSON object body is required"),
    ("/match/m/start", b"{not json", "the body is not JSON"),
    ("/match/m/start", [1, 2], "the body must be a JSON object"),
    ("/match/m/start", {"dieCount": 9, "maxPoints": 5000, "yourBotIndex": 0},
     "dieCount must be an integer from 1 to 6, not 9"),
    ("/match/m/start", {"dieCount": 6, "maxPoints": 5000}, "yourBotIndex is missing"),
    (f"{GAME}/turn/1/start", {"startPoints": 0, "otherPlayerTurns": [],
                              "isFinalRound": "no"}, "isFinalRound must be true or false"),
    (f"{GAME}/turn/1/start", {"startPoints": 0, "otherPlayerTurns": [{"botIndex": 0}],
                              "isFinalRound": False}, "endPoints is missing"),
    (f"{GAME}/turn/1/choose", {"dieValues": "15", "options": []},
     "options must be a non-empty list"),
    (f"{GAME}/turn/1/choose", {"dieValues": "15",
                               "options": [{"id": 0, "dieValues": "1", "points": 100}]},
     "an option id must be a string of 1 to 50 characters"),
    (f"{GAME}/turn/1/choose", {"dieValues": "157", "options": options(("0", "1", 100))},
     "dieValues must be 1 to 6 dice as digits 1-6, not '157'"),
    (f"{GAME}/turn/1/choose", {"dieValues": "15", "options": options(("0", "11", 200))},
     "option '0' takes dice 11 not in the roll 15"),
    (f"{GAME}/turn/1/choose", {"dieValues": "15", "options": options(("0", "1", 100),
                                                                     ("0", "5", 50))},
     "the option ids must be unique"),
    (f"{GAME}/end", {"winnerBotIndex": "alice"}, "winnerBotIndex must be an integer"),
    ("/match/m/end", {"winsByBotIndex": "1-0"}, "winsByBotIndex must be a list of integers"),
])
async def test_malformed_bodies_get_400_saying_why(
        aiohttp_client: AiohttpClient, path: str, body: Any, reason: str) -> None:
    client = await aiohttp_client(SquelchRestBot("good", name="rest").make_app())
    if isinstance(body, bytes):
        response = await client.put(path, data=body)
    else:
        response = await put(client, path, body)
    assert response.status == 400
    assert reason in await response.text()


async def test_large_bodies_and_unknown_calls_are_refused(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(SquelchRestBot("good", name="rest").make_app())
    response = await client.put(f"{GAME}/turn/1/choose", data=b" " * (MAX_BODY + 1))
    assert response.status == 413
    assert (await client.put("/match/m1/game/1/turn/1/reroll", data=b"{}")).status == 404
    assert (await client.get("/match/m1/start")).status == 405
    # A die count of 2 makes a roll of three dice malformed in that match only.
    await start(client, "two", die_count=2)
    response = await put(client, "/match/two/game/1/turn/1/choose",
                         {"dieValues": "115", "options": options(("0", "11", 200))})
    assert response.status == 400
    assert "dieValues must be 1 to 2 dice" in await response.text()


def signed(body: bytes, secret: str = SECRET) -> dict[str, str]:
    timestamp = str(int(time.time()))
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: sign(secret, timestamp, body)}


async def test_signatures_are_checked_once_the_secret_is_known(
        aiohttp_client: AiohttpClient) -> None:
    bot = SquelchRestBot("good", name="rest")
    client = await aiohttp_client(bot.make_app())
    assert (await client.get("/bot/info")).status == 200  # no secret yet: any call is taken
    bot.secret = SECRET
    assert (await client.get("/bot/info")).status == 401
    assert (await client.get("/bot/info", headers=signed(b"", "12" * 32))).status == 401
    headers = signed(b"")  # a GET signs the empty body
    assert (await client.get("/bot/info", headers=headers)).status == 200
    # The same call again (the spec makes every call idempotent, and the platform asks
    # again in the same second after a strike) gets the same answer.
    again = await client.get("/bot/info", headers=headers)
    assert again.status == 200 and (await again.json()) == {"name": "rest"}
    # The same empty body at the same second to another URL is another call.
    assert (await client.put(f"{GAME}/start", headers=headers)).status == 200
    body = json.dumps({"dieValues": "15", "options": options(("0", "15", 150))}).encode()
    response = await client.put(f"{GAME}/turn/1/choose", data=body, headers=signed(body))
    assert response.status == 200
    assert (await response.json())["take"] == "0"
    tampered = body.replace(b"150", b"999")
    response = await client.put(f"{GAME}/turn/1/choose", data=tampered, headers=signed(body))
    assert response.status == 401


async def test_matches_remembered_are_capped(aiohttp_client: AiohttpClient) -> None:
    bot = SquelchRestBot("good", name="rest", max_matches=3)
    client = await aiohttp_client(bot.make_app())
    await start(client, "oldest", die_count=2)
    for match in ("m1", "m2", "m3", "m4"):
        await start(client, match)
    assert bot.matches == 3
    # "oldest" is forgotten: its die count of 2 no longer refuses a roll of six dice.
    reply = await choose(client, "/match/oldest/game/1/turn/1", "111223", ("0", "111", 1000))
    assert reply["take"] == "0"
    assert bot.matches == 3
    await ok(client, "/match/m4/end", {"winsByBotIndex": [0, 2]})
    assert bot.matches == 2


async def registrar(aiohttp_server: AiohttpServer) -> tuple[TestServer, list[dict[str, Any]]]:
    """A platform's /rpc that takes every registration; and the params of those it took."""
    seen: list[dict[str, Any]] = []

    async def rpc(request: web.Request) -> web.Response:
        call = await request.json()
        seen.append(call["params"])
        return web.json_response({"jsonrpc": "2.0", "id": call["id"],
                                  "result": {"message": "Hello", "secret": SECRET}})

    app = web.Application()
    app.router.add_post("/rpc", rpc)
    return await aiohttp_server(app), seen


async def test_register_sends_the_protocol_only_when_given(
        aiohttp_server: AiohttpServer) -> None:
    platform, seen = await registrar(aiohttp_server)
    for protocol in (None, "squelch-rest"):
        await register(str(platform.make_url("/")), token="t", botname="b", botversion="1",
                       game="SQUELCH", rpcendpoint="http://127.0.0.1:1", protocol=protocol)
    assert "protocol" not in seen[0]
    assert seen[1]["protocol"] == "squelch-rest"


async def test_the_command_line_registers_its_base_url_and_serves(
        aiohttp_server: AiohttpServer) -> None:
    platform, seen = await registrar(aiohttp_server)
    async with bot_process("merknera_bots.squelch_rest", "--strategy", "random", "--seed", "1",
                           "--platform", str(platform.make_url("/")), "--token", "t0k3n",
                           "--port", "0") as process:
        word, port, name = await ready_line(process)
        assert (word, name) == ("READY", "squelch-rest-random")
        [params] = seen
        assert params["protocol"] == "squelch-rest"
        assert params["rpcendpoint"] == f"http://127.0.0.1:{port}"
        assert (params["game"], params["botname"]) == ("SQUELCH", "squelch-rest-random")
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{port}/bot/info"
            async with session.get(url) as response:
                assert response.status == 401  # the secret came with the Register reply
            async with session.get(url, headers=signed(b"")) as response:
                assert await response.json() == {"name": "squelch-rest-random"}
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), PATIENCE) == 0


async def test_help_lists_the_strategies() -> None:
    async with bot_process("merknera_bots.squelch_rest", "--help") as process:
        assert await asyncio.wait_for(process.wait(), PATIENCE) == 0
        assert process.stdout is not None
        assert "--strategy {good,random}" in (await process.stdout.read()).decode()

"""Scrabble on the platform: asset descriptors, PREPARING and Scrabble.Ready, the wire view,
NOT_READY forfeits, and tables of two to four seats (bots that only pass, for speed)."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from pytest_aiohttp import AiohttpClient, AiohttpServer

from merknera.app import Platform, build_app
from merknera.config import Config
from merknera.games import JSON
from merknera.protocol import jsonrpc
from merknera.store import users
from tests.support import Arena, ScriptedBot


async def passing(params: dict[str, Any], _id: Any) -> JSON:
    return {"type": "PASS"}


async def scrabble_bot(arena: Arena, aiohttp_server: AiohttpServer, name: str,
                       new_game: JSON) -> ScriptedBot:
    bot = ScriptedBot(next_move=passing, new_game=new_game)
    server = await aiohttp_server(bot.app())
    reply = await arena.register(name, str(server.make_url("/rpc")), game="SCRABBLE")
    assert "result" in reply, reply
    return bot


def hashes(arena: Arena) -> dict[str, str]:
    return {name: entry.sha1 for name, entry in
            arena.platform.assets.roles("SCRABBLE").items()}


async def test_ready_bots_pass_six_times_and_the_game_ends(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    one = await scrabble_bot(arena, aiohttp_server, "one", {"status": "READY"})
    two = await scrabble_bot(arena, aiohttp_server, "two", {"status": "READY"})
    await arena.settle()
    game = await arena.game(1)
    assert (game["status"], game["reason"]) == ("FINISHED", "NORMAL")
    assert [m["move"] for m in game["moves"]] == [{"type": "PASS"}] * 6
    # After six scoreless turns each player loses the value of the tiles left on the rack.
    final = game["final_state"]
    assert final["ending"] == "SCORELESS"
    assert [seat["score"] for seat in game["seats"]] == final["scores"]
    assert all(score < 0 for score in final["scores"])
    new_game = one.methods("NewGame")[0]
    base = arena.platform.config.listeners.base_url
    for name, sha1 in hashes(arena).items():
        assert new_game[name]["sha1"] == sha1
        assert new_game[name]["url"].startswith(f"{base}/assets/{sha1}/")
    assert new_game["players"] == 2
    first = next(c for c in two.methods("NextMove") if c["gameid"] == 1)  # "one" is seat 0
    assert len(first["tiles"]) == 7 and first["tilesremaining"] == 86
    assert first["gamestate"] == [[""] * 15 for _ in range(15)]
    assert first["blanks"] == [] and first["you"] == 1
    assert [p["name"] for p in first["players"]] == ["one", "two"]
    completes = {c["gameid"]: c for c in one.methods("Complete")}
    one_won = {s["name"]: s["result"] for s in game["seats"]}["one"] == "WIN"
    assert completes[1]["winner"] is one_won
    assert len(completes[1]["scores"]) == 2 and len(completes[1]["gamestate"]) == 15


async def test_a_preparing_bot_plays_once_it_calls_ready(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await scrabble_bot(arena, aiohttp_server, "quick", {"status": "READY"})
    slow = await scrabble_bot(arena, aiohttp_server, "slow", {"status": "PREPARING"})
    await slow.wait_for("NewGame", 2)
    assert slow.methods("NextMove") == []
    wrong = await arena.rpc("Scrabble.Ready", {"gameid": 1, **hashes(arena),
                                                "dictionary": "0" * 40, "botname": "slow",
                                                "token": arena.token})
    assert "dictionary file you hold" in str(wrong["error"])
    assert "dictionary-english.txt" in str(wrong["error"])
    for game_id in (1, 2):
        reply = await arena.rpc("Scrabble.Ready", {"gameid": game_id, **hashes(arena),
                                                    "botname": "slow", "token": arena.token})
        assert reply["result"] == {"status": "OK"}, reply
    await arena.settle()
    for game_id in (1, 2):
        assert (await arena.game(game_id))["reason"] == "NORMAL"
    assert len(slow.methods("NextMove")) == 6


async def test_a_seat_that_never_gets_ready_forfeits(
        config: Config, aiohttp_client: AiohttpClient, aiohttp_server: AiohttpServer) -> None:
    config = config.replace(ready_timeout=0.5)
    platform = Platform(config)
    client = await aiohttp_client(build_app(config, platform))
    _, token = await users.create_user(platform.db, "alice")
    arena = Arena(platform, client, token)
    await scrabble_bot(arena, aiohttp_server, "quick", {"status": "READY"})
    never = await scrabble_bot(arena, aiohttp_server, "never", {"status": "PENDING"})
    await arena.settle()
    for game_id in (1, 2):
        game = await arena.game(game_id)
        assert (game["outcome"], game["reason"]) == ("WIN", "NOT_READY")
        assert {s["name"]: s["result"] for s in game["seats"]} == {"quick": "WIN",
                                                                    "never": "LOSS"}
        assert [m["fault"] for m in game["moves"]] == ["NOT_READY"]
    errors = never.methods("Error")
    assert {e["errorcode"] for e in errors} == {8}
    assert "Scrabble.Ready within 0.5 s" in errors[0]["message"]


async def test_ready_calls_that_cannot_be_accepted(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    one_bot = await scrabble_bot(arena, aiohttp_server, "one", {"status": "PREPARING"})
    two_bot = await scrabble_bot(arena, aiohttp_server, "two", {"status": "PREPARING"})
    await one_bot.wait_for("NewGame", 2)
    await two_bot.wait_for("NewGame", 2)
    both = await arena.rpc("Scrabble.Ready", {"gameid": 1, **hashes(arena)})
    assert "2 seats of game 1 at your address are preparing" in str(both["error"])
    nameless_token = await arena.rpc("Scrabble.Ready", {"gameid": 1, **hashes(arena),
                                                         "botname": "one"})
    assert 'The param "token" is required with "botname"' in str(nameless_token["error"])
    stranger = await arena.rpc("Scrabble.Ready", {"gameid": 1, **hashes(arena),
                                                   "botname": "nobody", "token": arena.token})
    assert 'No bot named "nobody" plays in game 1' in str(stranger["error"])
    _, bob = await users.create_user(arena.platform.db, "bob")
    impostor = await arena.rpc("Scrabble.Ready", {"gameid": 1, **hashes(arena),
                                                   "botname": "one", "token": bob})
    assert 'does not own the bot "one"' in str(impostor["error"])
    unknown = await arena.rpc("Scrabble.Ready", {"gameid": 999, **hashes(arena)})
    assert "Game 999 is not known" in str(unknown["error"])
    huge = await arena.rpc("Scrabble.Ready", {"gameid": 2**70, **hashes(arena)})
    assert 'The param "gameid" must be the integer id' in str(huge["error"])
    missing = await arena.rpc("Scrabble.Ready", {"gameid": 1, "botname": "one"})
    assert 'The param "gameboard" must be the SHA1' in str(missing["error"])
    legacy = await arena.rpc("Scrabble.Ready", {"gameid": "1"}, dialect2=False)
    assert legacy["error"] == 'The param "gameid" must be the integer id of the game'
    one = await arena.rpc("Scrabble.Ready", {"gameid": 1, **hashes(arena), "botname": "one",
                                              "token": arena.token})
    assert one["result"] == {"status": "OK"}
    # Now only "two" is preparing in game 1: a Ready without botname is taken as its.
    two = await arena.rpc("Scrabble.Ready", {"gameid": 1, **hashes(arena)})
    assert two["result"] == {"status": "OK"}


@pytest.mark.parametrize("count", [3, 4])
async def test_tables_of_three_and_four_seats(arena: Arena, aiohttp_server: AiohttpServer,
                                              count: int) -> None:
    for number in range(count):
        await scrabble_bot(arena, aiohttp_server, f"bot{number}", {"status": "READY"})
    await arena.settle()
    sizes = [row[0] for row in await arena.platform.db.fetchall(
        "SELECT COUNT(*) FROM seats GROUP BY game_id ORDER BY game_id")]
    assert sizes.count(2) == count * (count - 1)  # every pair, both seatings
    # the third bot brings a table of three; the fourth one of three and one of four
    assert sorted(size for size in sizes if size > 2) == ([3] if count == 3 else [3, 3, 4])
    finished = await arena.platform.db.fetchall("SELECT status, reason FROM games")
    assert {tuple(row) for row in finished} == {("FINISHED", "NORMAL")}


async def test_a_nameless_ready_is_the_one_seat_preparing(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    """Merknera's wiki Ready had no botname: with one seat READY and one PREPARING, it is
    taken as the preparing seat's."""
    await scrabble_bot(arena, aiohttp_server, "cached", {"status": "READY"})
    fetching = await scrabble_bot(arena, aiohttp_server, "fetching", {"status": "PREPARING"})
    await fetching.wait_for("NewGame", 2)
    for game_id in (1, 2):
        reply = await arena.rpc("Scrabble.Ready", {"gameid": game_id, **hashes(arena)})
        assert reply["result"] == {"status": "OK"}, reply
    await arena.settle()
    for game_id in (1, 2):
        assert (await arena.game(game_id))["reason"] == "NORMAL"
    again = await arena.rpc("Scrabble.Ready", {"gameid": 1, **hashes(arena)})
    assert "has finished" in str(again["error"])


async def test_a_nameless_ready_from_another_address_is_refused(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    """Anybody may know the public asset hashes: a Ready without botname and token is
    taken only from the address the preparing seat's endpoint resolves to, else a
    stranger could start the game while the bot is still downloading."""
    await scrabble_bot(arena, aiohttp_server, "cached", {"status": "READY"})
    fetching = await scrabble_bot(arena, aiohttp_server, "fetching", {"status": "PREPARING"})
    await fetching.wait_for("NewGame", 2)
    # The bots' endpoints are on 127.0.0.1; the stranger calls from 127.0.0.2.
    connector = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
    call = {"jsonrpc": "2.0", "method": "Scrabble.Ready", "id": 1,
            "params": {"gameid": 1, **hashes(arena)}}
    async with aiohttp.ClientSession(connector=connector) as stranger, \
            stranger.post(arena.client.make_url("/rpc"), json=call) as response:
        refused = await response.json()
    assert refused["error"]["code"] == jsonrpc.NOT_ALLOWED
    assert "has its endpoint at the address this call came from" in refused["error"]["message"]
    assert not arena.platform.scheduler.arena.readiness.is_ready(1, 1)
    assert fetching.methods("NextMove") == []
    # From the bot's own address, the same call is taken.
    taken = await arena.rpc("Scrabble.Ready", {"gameid": 1, **hashes(arena)})
    assert taken["result"] == {"status": "OK"}, taken


async def test_a_token_without_a_botname_is_refused(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    fetching = await scrabble_bot(arena, aiohttp_server, "fetching", {"status": "PREPARING"})
    await scrabble_bot(arena, aiohttp_server, "other", {"status": "READY"})
    await fetching.wait_for("NewGame", 1)
    reply = await arena.rpc("Scrabble.Ready", {"gameid": 1, **hashes(arena),
                                                "token": arena.token})
    assert 'The param "botname" is required with "token"' in str(reply["error"])

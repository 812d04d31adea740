"""Battlebot's games through the real platform: registration, the runner, strikes, Complete."""

from __future__ import annotations

from typing import Any

from pytest_aiohttp import AiohttpServer

from merknera.games import JSON
from merknera_bots import noughtsandcrosses, numberwang
from tests.support import Arena, ScriptedBot, serve_bot


def results(game: dict[str, Any]) -> dict[str, str]:
    return {seat["name"]: seat["result"] for seat in game["seats"]}


async def perfect(params: dict[str, Any], _id: Any) -> JSON:
    return noughtsandcrosses.choose_perfect_turn(params["state"])


async def top_left_first(params: dict[str, Any], _id: Any) -> JSON:
    """Fills the first empty space, row by row: easy to beat."""
    cells = [cell for row in params["state"]["board"] for cell in row]
    position = cells.index("")
    mark = "X" if cells.count("X") == cells.count("O") else "O"
    return {"mark": mark, "space": [position // 3, position % 3]}


async def test_noughts_and_crosses_is_played_and_completed(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    good, weak = ScriptedBot(perfect), ScriptedBot(top_left_first)
    for name, bot in (("perfect", good), ("weak", weak)):
        reply = await arena.register(name, await serve_bot(aiohttp_server, bot),
                                     game="NOUGHTSANDCROSSES")
        assert "error" not in reply, reply
    assert reply["result"]["message"].endswith(  # type: ignore[index]
        "good luck with Noughts and Crosses!")
    await arena.settle()
    for game_id in (1, 2):
        game = await arena.game(game_id)
        assert (game["status"], game["reason"]) == ("FINISHED", "NORMAL"), game
        assert results(game)["perfect"] == "WIN"
        final = game["final_state"]
        assert final["complete"] is True and final["victor"] == "perfect"
        assert final["reason"] == "complete"
        names = [seat["name"] for seat in game["seats"]]
        assert final["marks"] == {"X": names[0], "O": names[1]}
        first = game["moves"][0]["request"]
        assert first["method"] == "NoughtsAndCrosses.NextMove"
        assert first["params"]["state"]["board"] == [["", "", ""]] * 3
    completes = good.methods("Complete")
    assert len(completes) == 2 and all(c["winner"] is True for c in completes)
    assert all(c["state"]["victor"] == "perfect" for c in completes)
    assert all(c["winner"] is False for c in weak.methods("Complete"))


async def test_three_invalid_turns_forfeit(arena: Arena,
                                           aiohttp_server: AiohttpServer) -> None:
    """Battlebot's three-invalid-turns rule: an illegal turn, then two malformed ones."""
    asked: dict[int, int] = {}

    async def faulty(params: dict[str, Any], _id: Any) -> JSON:
        strike = asked[params["gameid"]] = asked.get(params["gameid"], 0) + 1
        replies: list[JSON] = [{"mark": "O", "space": [0, 0]},   # X's wrong mark, or O on X's space
                               {"mark": "X", "space": [1.5, 0]},  # malformed, as on Battlebot
                               {"mark": "X", "space": "centre"}]
        return replies[strike - 1]

    good, bad = ScriptedBot(perfect), ScriptedBot(faulty)
    await arena.register("good", await serve_bot(aiohttp_server, good), game="NOUGHTSANDCROSSES")
    await arena.register("bad", await serve_bot(aiohttp_server, bad), game="NOUGHTSANDCROSSES")
    await arena.settle()
    first, second = await arena.game(1), await arena.game(2)
    assert [seat["name"] for seat in first["seats"]] == ["good", "bad"]
    assert [seat["name"] for seat in second["seats"]] == ["bad", "good"]
    for game in (first, second):
        assert game["reason"] == "STRIKES"
        assert results(game) == {"good": "WIN", "bad": "LOSS"}
        assert game["final_state"]["complete"] is False  # the rules did not end it
    by_game: dict[int, list[str]] = {}
    for error in bad.methods("Error"):
        by_game.setdefault(error["gameid"], []).append(error["message"].split(" (strike")[0])
    malformed = ['"space" must be [row, col] of integers 0-2, got [1.5, 0]',
                 "\"space\" must be [row, col] of integers 0-2, got 'centre'"]
    # Perfect X opens at [0, 0].
    assert by_game == {1: ["the space [0, 0] is already taken by X", *malformed],
                       2: ["your mark is X, not O", *malformed]}
    for complete in bad.methods("Complete"):
        assert complete["winner"] is False
        assert complete["state"]["complete"] is True
        # Battlebot's own words for a third invalid turn, and the winner by name.
        assert (complete["state"]["victor"], complete["state"]["reason"]) == (
            "good", "Didn't write unit tests")


async def test_numberwang_good_beats_random(arena: Arena,
                                            aiohttp_server: AiohttpServer) -> None:
    async def good(params: dict[str, Any], _id: Any) -> JSON:
        return numberwang.choose_good(params["state"])

    async def small(params: dict[str, Any], _id: Any) -> JSON:
        return {"n": 0.1}

    winner, loser = ScriptedBot(good), ScriptedBot(small)
    await arena.register("good", await serve_bot(aiohttp_server, winner), game="NUMBERWANG")
    await arena.register("small", await serve_bot(aiohttp_server, loser), game="NUMBERWANG")
    await arena.settle()
    for game_id in (1, 2):
        game = await arena.game(game_id)
        assert (game["status"], game["reason"]) == ("FINISHED", "NORMAL"), game
        assert results(game) == {"good": "WIN", "small": "LOSS"}
        assert game["final_state"]["victor"] == "good"
        assert game["final_state"]["maxTurns"] == 100
        assert len(game["moves"]) <= 2
    completes = loser.methods("Complete")
    # Seat 0 wins at once with 10; seat 1 answers 0.1 with -11.
    assert sorted(c["state"]["board"]["n"] for c in completes) == [-10.9, 10]

"""Candidate versions, challenges and duels on a real platform with real HTTP bots: games
paired and unrated, a duel's sequential test deciding, stopping and promoting."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from pytest_aiohttp import AiohttpServer

from merknera.games import JSON
from merknera.store import users
from merknera_bots.tictactoe import choose_perfect, choose_random
from tests.support import Arena, ScriptedBot, serve_bot, until


async def perfect(params: dict[str, Any], _id: Any) -> JSON:
    return {"position": choose_perfect(params["gamestate"], params["mark"])}


def random_player(seed: int) -> Any:
    chooser = random.Random(seed)

    async def move(params: dict[str, Any], _id: Any) -> JSON:
        return {"position": choose_random(params["gamestate"], params["mark"], chooser)}

    return move


async def register(arena: Arena, aiohttp_server: AiohttpServer, name: str, version: str,
                   next_move: Any = perfect, *, candidate: bool = False,
                   token: str | None = None) -> dict[str, Any]:
    url = await serve_bot(aiohttp_server, ScriptedBot(next_move=next_move))
    params: dict[str, Any] = {
        "token": token or arena.token, "botname": name, "botversion": version,
        "game": "TICTACTOE", "rpcendpoint": url}
    if candidate:
        params["candidate"] = True
    reply = await arena.rpc("RegistrationService.Register", params)
    assert "result" in reply, reply
    return reply


async def post(arena: Arena, path: str, body: object, token: str | None = None) -> Any:
    response = await arena.client.post(path, json=body, headers={
        "Authorization": f"Bearer {token or arena.token}"})
    return response.status, await response.json()


async def test_a_candidate_supersedes_nothing_and_plays_no_round_robin(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await register(arena, aiohttp_server, "Pete", "1")
    await register(arena, aiohttp_server, "Other", "1")
    await arena.settle()
    before = await arena.platform.db.fetchval("SELECT COUNT(*) FROM games")
    reply = await register(arena, aiohttp_server, "Pete", "2", candidate=True)
    assert "candidate for Tic-Tac-Toe" in reply["result"]["message"]
    assert "version 1 stays current" in reply["result"]["message"]
    rows = await arena.platform.db.fetchall(
        "SELECT version, status, candidate FROM bots WHERE name = 'Pete' ORDER BY id")
    assert [tuple(row) for row in rows] == [("1", "ONLINE", 0), ("2", "ONLINE", 1)]
    assert await arena.platform.db.fetchval("SELECT COUNT(*) FROM games") == before
    presence = arena.platform.scheduler.arena.presence
    candidate = await arena.platform.db.fetchval(
        "SELECT id FROM bots WHERE name = 'Pete' AND version = '2'")
    assert presence.is_online(candidate)
    assert candidate not in presence.online_bots("TICTACTOE")
    # Registered again without "candidate", it becomes the current version.
    again = await register(arena, aiohttp_server, "Pete", "2")
    assert "is now the current version" in again["result"]["message"]
    rows = await arena.platform.db.fetchall(
        "SELECT version, status, candidate FROM bots WHERE name = 'Pete' ORDER BY id")
    assert [tuple(row) for row in rows] == [("1", "SUPERSEDED", 0), ("2", "ONLINE", 0)]
    await arena.settle()
    assert await arena.platform.db.fetchval("SELECT COUNT(*) FROM games") == before + 2


async def test_a_challenge_plays_paired_unrated_games(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await register(arena, aiohttp_server, "Pete", "1")
    await register(arena, aiohttp_server, "Randy", "1", random_player(3))
    await arena.settle()
    rated_before = await arena.platform.db.fetchval("SELECT COUNT(*) FROM rating_history")
    status, made = await post(arena, "/api/challenges",
                              {"bot": "Pete", "opponent": "Randy", "games": 5})
    assert status == 201, made
    await until(lambda: arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM games WHERE challenge_id = ? AND status = 'FINISHED'",
        (made["id"],)), within=30)

    async def done() -> bool:
        response = await arena.client.get(f"/api/challenges/{made['id']}")
        found = await response.json()
        return bool(found["status"] == "finished")

    await until(done, within=30)
    found = await (await arena.client.get(f"/api/challenges/{made['id']}")).json()
    assert (found["bot"], found["opponent"], found["asked"]) == ("Pete", "Randy", 5)
    assert len(found["games"]) == 5 and found["losses"] == 0
    assert found["wins"] + found["draws"] == 5
    rows = await arena.platform.db.fetchall(
        "SELECT games.id, games.seed, games.pair, games.origin, games.rated, seats.bot_id "
        "FROM games JOIN seats ON seats.game_id = games.id AND seats.seat = 0 "
        "WHERE challenge_id = ? ORDER BY games.id", (made["id"],))
    assert {(row["origin"], row["rated"]) for row in rows} == {("CHALLENGE", 0)}
    by_pair: dict[int, list[Any]] = {}
    for row in rows:
        by_pair.setdefault(row["pair"], []).append(row)
    assert sorted(len(games) for games in by_pair.values()) == [1, 2, 2]
    for games in by_pair.values():
        if len(games) == 2:  # one seed, seats swapped
            assert games[0]["seed"] == games[1]["seed"]
            assert games[0]["bot_id"] != games[1]["bot_id"]
    await arena.platform.scheduler.arena.rater.wait_idle()
    assert await arena.platform.db.fetchval("SELECT COUNT(*) FROM rating_history") == rated_before
    page = await (await arena.client.get(f"/bots/{rows[0]['bot_id']}")).text()
    assert "unrated" in page and "challenge" in page


async def test_challenges_refused(arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await register(arena, aiohttp_server, "Pete", "1")
    await register(arena, aiohttp_server, "Randy", "1", random_player(1))
    response = await arena.client.post("/api/challenges", json={"bot": "Pete"})
    assert response.status == 401
    cases: list[tuple[object, int, str]] = [
        ({"bot": "Nobody", "opponent": "Randy"}, 404, 'you have no bot "Nobody"'),
        ({"bot": "Pete", "opponent": "Nobody"}, 404, 'no bot "Nobody" is in play'),
        ({"bot": "Pete", "opponent": "Pete"}, 400, "cannot challenge its own name"),
        ({"bot": "Pete", "opponent": "Randy", "games": 0}, 400, '"games" must be'),
        ({"bot": "Pete", "opponent": "Randy", "games": 101}, 400, '"games" must be'),
        ({"bot": "Pete", "opponent": "Randy", "games": True}, 400, '"games" must be'),
        ({"bot": "Pete", "opponent": "Randy", "version": "9"}, 404, 'has no version "9"'),
        ([1, 2], 400, "must be a JSON object"),
    ]
    for body, status, message in cases:
        got, answer = await post(arena, "/api/challenges", body)
        assert (got, message in answer["error"]) == (status, True), (body, answer)
    got, answer = await post(arena, "/api/challenges", {"bot": "Pete", "opponent": "Randy"},
                             token="not-a-token")
    assert got == 403


async def test_duels_decide_h1_for_a_stronger_and_h0_for_an_equal_version(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    # Elo 0 against 50: a clear gap decides within tens of pairs (against 5, the default,
    # it takes hundreds: docs/bots/challenges-and-duels.md).
    terms = {"elo0": 0, "elo1": 50, "max_pairs": 200}
    await register(arena, aiohttp_server, "Pete", "1", random_player(7))
    await register(arena, aiohttp_server, "Pete", "2", perfect, candidate=True)
    await register(arena, aiohttp_server, "Polly", "1", perfect)
    await register(arena, aiohttp_server, "Polly", "2", perfect, candidate=True)
    status, strong = await post(arena, "/api/duels", {"bot": "Pete", "candidate": "2", **terms})
    assert status == 201, strong
    status, equal = await post(arena, "/api/duels", {"bot": "Polly", "candidate": "2", **terms})
    assert status == 201, equal

    async def ended(duel_id: int) -> bool:
        found = await (await arena.client.get(f"/api/duels/{duel_id}")).json()
        return bool(found["status"] != "running")

    await until(lambda: ended(strong["id"]), within=120)
    found = await (await arena.client.get(f"/api/duels/{strong['id']}")).json()
    assert (found["status"], found["result"]) == ("finished", "H1"), found["pentanomial"]
    assert found["llr"] >= found["bounds"][1] and found["pairs"] < 200
    assert found["elo"] > 0 and found["elo_ci95"][0] < found["elo"] < found["elo_ci95"][1]
    assert sum(found["pentanomial"]) == found["pairs"] == len(found["llr_history"])
    assert found["losses"] == 0 and found["wins"] > 0
    page = await (await arena.client.get(f"/duels/{strong['id']}")).text()
    assert "<svg" in page and "H1" in page and "polyline" in page
    await until(lambda: ended(equal["id"]), within=120)
    found = await (await arena.client.get(f"/api/duels/{equal['id']}")).json()
    assert (found["status"], found["result"]) == ("finished", "H0"), found["pentanomial"]
    assert found["pentanomial"] == [0, 0, found["pairs"], 0, 0]
    assert found["llr"] <= found["bounds"][0]
    await arena.settle()
    assert await arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM games WHERE origin = 'DUEL' AND rated = 1") == 0


async def test_a_duel_is_stopped_and_its_candidate_promoted(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await register(arena, aiohttp_server, "Pete", "1", random_player(1))
    await register(arena, aiohttp_server, "Pete", "2", perfect, candidate=True)
    status, duel = await post(arena, "/api/duels", {"bot": "Pete", "candidate": "2",
                                                    "elo0": 0, "elo1": 1, "alpha": 0.001,
                                                    "beta": 0.001})
    assert status == 201
    await until(lambda: arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM games WHERE duel_id = ? AND status = 'FINISHED'",
        (duel["id"],)), within=30)
    response = await arena.client.delete(f"/api/duels/{duel['id']}",
                                         headers={"Authorization": f"Bearer {arena.token}"})
    assert response.status == 200
    stopped = await response.json()
    assert (stopped["status"], stopped["result"]) == ("stopped", None)
    status, again = await post(arena, f"/api/duels/{duel['id']}/promote", None)
    assert status == 200, again
    assert (again["version"], again["candidate"]) == ("2", False)
    rows = await arena.platform.db.fetchall(
        "SELECT version, status, candidate FROM bots WHERE name = 'Pete' ORDER BY id")
    assert [tuple(row) for row in rows] == [("1", "SUPERSEDED", 0), ("2", "ONLINE", 0)]


async def test_a_candidate_is_no_way_around_an_admins_ban(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await register(arena, aiohttp_server, "Pete", "1")
    await register(arena, aiohttp_server, "Pete", "2", candidate=True)
    status, duel = await post(arena, "/api/duels", {"bot": "Pete", "candidate": "2",
                                                    "max_pairs": 1})
    assert status == 201
    current = await arena.platform.db.fetchval(
        "SELECT id FROM bots WHERE name = 'Pete' AND version = '1'")
    assert await arena.platform.disable_bot(current, "cheats")
    url = await serve_bot(aiohttp_server, ScriptedBot(next_move=perfect))
    reply = await arena.rpc("RegistrationService.Register", {
        "token": arena.token, "botname": "Pete", "botversion": "2", "game": "TICTACTOE",
        "rpcendpoint": url})
    assert "no other version of it may be made current" in str(reply["error"])
    status, refused = await post(arena, f"/api/duels/{duel['id']}/promote", None)
    assert status == 409 and "disabled by an admin" in refused["error"], refused
    rows = await arena.platform.db.fetchall(
        "SELECT version, status, disabled_by, candidate FROM bots WHERE name = 'Pete' "
        "ORDER BY id")
    assert [tuple(row) for row in rows] == [("1", "DISABLED", "ADMIN", 0),
                                            ("2", "ONLINE", None, 1)]


async def test_a_candidate_is_on_no_leaderboard_and_no_persons_table(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await register(arena, aiohttp_server, "Pete", "1")
    await register(arena, aiohttp_server, "Pete", "2", candidate=True)
    candidate = await arena.platform.db.fetchval(
        "SELECT id FROM bots WHERE name = 'Pete' AND version = '2'")
    board = await (await arena.client.get("/api/leaderboard?game=TICTACTOE")).json()
    assert [(bot["name"], bot["version"]) for bot in board["bots"]] == [("Pete", "1")]
    response = await arena.client.post("/api/play", json={"game": "TICTACTOE",
                                                          "opponent": candidate})
    assert response.status == 409, await response.text()


async def test_duels_refused(arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await register(arena, aiohttp_server, "Pete", "1")
    await register(arena, aiohttp_server, "Pete", "2", candidate=True)
    url = await serve_bot(aiohttp_server, ScriptedBot())
    reply = await arena.rpc("RegistrationService.Register", {
        "token": arena.token, "botname": "Pete", "botversion": "3", "game": "NOUGHTSANDCROSSES",
        "rpcendpoint": url, "candidate": True})
    assert "result" in reply, reply
    cases: list[tuple[object, int, str]] = [
        ({"bot": "Pete", "candidate": "1"}, 400, "is not a candidate"),
        ({"bot": "Pete", "candidate": "2", "baseline": "2"}, 400, "are one version"),
        ({"bot": "Pete", "candidate": "3"}, 400, "a duel is of one game"),
        ({"bot": "Pete", "candidate": "2", "elo0": 5, "elo1": 5}, 400, '"elo0" must be below'),
        ({"bot": "Pete", "candidate": "2", "alpha": 0.5}, 400, '"alpha" and "beta"'),
        ({"bot": "Pete", "candidate": "2", "max_pairs": 0}, 400, '"max_pairs" must be'),
        ({"bot": "Pete", "candidate": "9"}, 404, 'has no version "9"'),
    ]
    for body, status, message in cases:
        got, answer = await post(arena, "/api/duels", body)
        assert (got, message in answer["error"]) == (status, True), (body, answer)
    status, duel = await post(arena, "/api/duels", {"bot": "Pete", "candidate": "2",
                                                    "max_pairs": 1000})
    assert status == 201
    # Two running duels per owner at most.
    for version in ("4", "5"):
        await register(arena, aiohttp_server, "Pete", version, candidate=True)
    assert (await post(arena, "/api/duels", {"bot": "Pete", "candidate": "4"}))[0] == 201
    got, answer = await post(arena, "/api/duels", {"bot": "Pete", "candidate": "5"})
    assert got == 429 and "2 duels running" in answer["error"]
    _, other = await users.create_user(arena.platform.db, "mallory")
    for method, path in (("DELETE", f"/api/duels/{duel['id']}"),
                         ("POST", f"/api/duels/{duel['id']}/promote")):
        response = await arena.client.request(method, path, headers={
            "Authorization": f"Bearer {other}"})
        assert response.status == 403, (method, await response.text())
    got, answer = await post(arena, "/api/challenges", {"bot": "Pete", "opponent": "Pete"},
                             token=other)
    assert got == 404 and 'you have no bot "Pete"' in answer["error"]


async def test_a_stopped_duel_makes_no_more_games_and_keeps_its_figures(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    release = asyncio.Event()

    async def waiting(params: dict[str, Any], _id: Any) -> JSON:
        await release.wait()
        return await perfect(params, _id)

    await register(arena, aiohttp_server, "Pete", "1", waiting)
    await register(arena, aiohttp_server, "Pete", "2", perfect, candidate=True)
    await arena.settle()
    status, duel = await post(arena, "/api/duels", {"bot": "Pete", "candidate": "2"})
    assert status == 201
    count = "SELECT COUNT(*) FROM games WHERE duel_id = ?"
    await until(lambda: arena.platform.db.fetchval(count, (duel["id"],)), within=30)
    response = await arena.client.delete(f"/api/duels/{duel['id']}",
                                         headers={"Authorization": f"Bearer {arena.token}"})
    stopped = await response.json()
    assert (stopped["status"], stopped["pairs"], stopped["pentanomial"]) == (
        "stopped", 0, [0, 0, 0, 0, 0])
    made = await arena.platform.db.fetchval(count, (duel["id"],))
    assert await arena.platform.trials.pass_once() == []
    release.set()
    await arena.settle()
    assert await arena.platform.db.fetchval(count, (duel["id"],)) == made
    # The games in play at the stop finished, and the duel still shows what it ended on.
    found = await (await arena.client.get(f"/api/duels/{duel['id']}")).json()
    assert (found["pairs"], found["pentanomial"]) == (0, [0, 0, 0, 0, 0])
    assert {game["status"] for game in found["games"]} == {"finished"}


async def test_a_challenge_plays_one_pair_at_a_time(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    release = asyncio.Event()

    async def waiting(params: dict[str, Any], _id: Any) -> JSON:
        await release.wait()
        return await perfect(params, _id)

    await register(arena, aiohttp_server, "Pete", "1")
    await register(arena, aiohttp_server, "Slow", "1", waiting)
    busy = ("SELECT COUNT(*) FROM games WHERE challenge_id IS NOT NULL "
            "AND status != 'FINISHED'")
    status, made = await post(arena, "/api/challenges",
                              {"bot": "Pete", "opponent": "Slow", "games": 20})
    assert status == 201
    await until(lambda: arena.platform.db.fetchval(busy), within=30)
    for _ in range(5):
        await arena.platform.trials.pass_once()
    assert await arena.platform.db.fetchval(busy) == 2
    release.set()

    async def all_played() -> bool:
        return bool(await arena.platform.db.fetchval(
            "SELECT COUNT(*) FROM games WHERE challenge_id = ? AND status = 'FINISHED'",
            (made["id"],)) == 20)

    await until(all_played, within=60)

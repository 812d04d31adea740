"""Ratings on the running platform: real games between real bot servers are rated in the order
they finished, superseded games are not, a rebuild gives the same floats, and the results API
ranks by rating with intervals and tie bands."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from pytest_aiohttp import AiohttpServer

from merknera.events import Event, MovePlayed
from merknera.games import JSON
from merknera.ratings import DEFAULT, Rating, bands, rank_key, update
from merknera.store import bots as bot_store
from merknera.store import ratings as rating_store
from merknera.store.db import Connection
from tests.support import Arena, ScriptedBot, first_empty, play_first_empty, serve_bot


async def last_empty(params: dict[str, Any], _id: Any) -> JSON:
    board = params["gamestate"]
    return {"position": max(cell for cell in range(9) if board[cell] == "")}


async def centre_first(params: dict[str, Any], _id: Any) -> JSON:
    return {"position": 4 if params["gamestate"][4] == "" else first_empty(params)}


async def always_centre(params: dict[str, Any], _id: Any) -> JSON:
    return {"position": 4}  # illegal once the centre is taken: three strikes, a forfeit


async def sluggish(params: dict[str, Any], _id: Any) -> JSON:
    await asyncio.sleep(0.2)
    return {"position": first_empty(params)}


async def moves_played(events: asyncio.Queue[Event], count: int) -> None:
    async with asyncio.timeout(20):
        while count > 0:
            if isinstance(await events.get(), MovePlayed):
                count -= 1


async def snapshot(arena: Arena) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    db = arena.platform.db
    ratings = await db.fetchall("SELECT * FROM ratings ORDER BY bot_id")
    history = await db.fetchall("SELECT * FROM rating_history ORDER BY game_id, bot_id")
    return [tuple(r) for r in ratings], [tuple(r) for r in history]


async def play_a_season(arena: Arena, aiohttp_server: AiohttpServer) -> None:
    """Four bots' round robin (12 games, forfeits among them), then a slow bot whose games
    are superseded by its next version, whose own 8 games are played out."""
    for name, behaviour in (("first", play_first_empty), ("last", last_empty),
                            ("centre", centre_first), ("faulty", always_centre)):
        bot = ScriptedBot(next_move=behaviour)
        await arena.register(name, await serve_bot(aiohttp_server, bot))
    await arena.settle()
    url = await serve_bot(aiohttp_server, ScriptedBot(next_move=sluggish))
    async with arena.platform.events.listen() as events:
        await arena.register("sluggish", url, version="1")
        await moves_played(events, 2)
    await arena.register("sluggish", await serve_bot(aiohttp_server, ScriptedBot()), version="2")
    await arena.settle()


async def test_real_games_are_rated_in_finish_order_and_a_rebuild_gives_the_same_floats(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await play_a_season(arena, aiohttp_server)
    response = await arena.client.get("/api/games?game=TICTACTOE&limit=500")
    found = (await response.json())["games"]
    assert len(found) == 12 + 8 + 8
    assert all(game["status"] == "FINISHED" for game in found)
    superseded = [g for g in found if g["reason"] == "SUPERSEDED"]
    rated = [g for g in found if g["outcome"] != "NO_RESULT"]
    assert len(superseded) == 8 and len(rated) == 20
    assert all(any(s["name"] == "sluggish" and s["version"] == "1" for s in g["seats"])
               for g in superseded)
    assert {g["reason"] for g in rated} >= {"NORMAL", "STRIKES"}  # forfeits are rated too

    # Recompute from the results the API shows, in the order of finish.
    expected: dict[int, Rating] = {}
    counts: dict[int, int] = {}
    for game in sorted(rated, key=lambda g: (g["finished_at"], g["id"])):
        seats = sorted(game["seats"], key=lambda s: s["seat"])
        news = update([expected.get(s["bot_id"], DEFAULT) for s in seats],
                      [s["rank"] for s in seats])
        for seat, new in zip(seats, news, strict=True):
            expected[seat["bot_id"]] = new
            counts[seat["bot_id"]] = counts.get(seat["bot_id"], 0) + 1
    stored = await rating_store.for_game(arena.platform.db, "TICTACTOE")
    assert {bot: r.rating for bot, r in stored.items()} == expected  # exact floats
    assert {bot: r.rated_games for bot, r in stored.items()} == counts
    db = arena.platform.db
    history_games = {row[0] for row in await db.fetchall(
        "SELECT DISTINCT game_id FROM rating_history")}
    assert history_games == {g["id"] for g in rated}
    assert await db.fetchval("SELECT COUNT(*) FROM rating_history") == 2 * len(rated)
    # the superseded version keeps the ratings of no game: it finished none
    old = await db.fetchval("SELECT id FROM bots WHERE name = 'sluggish' AND version = '1'")
    assert old not in stored
    # the forfeiting bot lost every game by forfeit: it is rated lowest
    faulty = await db.fetchval("SELECT id FROM bots WHERE name = 'faulty'")
    assert min(stored.values(), key=lambda r: r.rating.mu).bot_id == faulty

    live = await snapshot(arena)
    summary = await rating_store.rebuild(db)
    assert (summary.games, summary.bots, summary.changed) == (20, 5, 0)
    assert await snapshot(arena) == live


async def test_the_leaderboard_ranks_by_rating_with_intervals_and_bands(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    await play_a_season(arena, aiohttp_server)
    db = arena.platform.db
    user_id = await db.fetchval("SELECT id FROM users WHERE name = 'alice'")

    def newcomer(conn: Connection) -> int:
        return bot_store.insert(conn, name="newcomer", version="1", game="TICTACTOE",
                                user_id=user_id, meta=bot_store.BotMetadata("http://x/rpc"),
                                secret="s").id
    newcomer_id = await db.transaction(newcomer)

    response = await arena.client.get("/api/leaderboard?game=TICTACTOE")
    assert response.status == 200
    body = await response.json()
    assert body["game"] == "TICTACTOE"
    board = body["bots"]
    names = [row["name"] for row in board]
    assert sorted(names) == ["centre", "faulty", "first", "last", "newcomer", "sluggish"]
    stored = await rating_store.for_game(db, "TICTACTOE")
    ratings = []
    for row in board:
        rating = row["rating"]
        assert set(rating) == {"mu", "sigma", "conservative", "low", "high", "rated_games"}
        mine = stored[row["id"]].rating if row["id"] in stored else DEFAULT
        ratings.append(mine)
        assert (rating["mu"], rating["sigma"]) == (mine.mu, mine.sigma)
        assert rating["conservative"] == mine.mu - 3 * mine.sigma
        assert (rating["low"], rating["high"]) == (mine.mu - 1.96 * mine.sigma,
                                                   mine.mu + 1.96 * mine.sigma)
        # the W/D/L record is still there, and agrees with the rated games
        assert row["won"] + row["drawn"] + row["lost"] == row["played"]
        assert rating["rated_games"] == row["played"]
        assert row["score"] == (round(100 * (row["won"] + row["drawn"] / 2) / row["played"], 2)
                                if row["played"] else 0.0)
    new_row = next(row for row in board if row["name"] == "newcomer")
    assert new_row["id"] == newcomer_id and new_row["played"] == 0
    assert new_row["rating"]["rated_games"] == 0
    assert (new_row["rating"]["mu"], new_row["rating"]["sigma"]) == (25.0, 25.0 / 3.0)
    sluggish_row = next(row for row in board if row["name"] == "sluggish")
    assert sluggish_row["version"] == "2"  # the superseded version is not on the board

    assert [row["rank"] for row in board] == list(range(1, len(board) + 1))
    assert ratings == sorted(ratings, key=rank_key)
    assert [row["rating"]["conservative"] for row in board] == sorted(
        (row["rating"]["conservative"] for row in board), reverse=True)
    assert board[-1]["name"] == "faulty"
    assert [row["band"] for row in board] == bands(ratings)
    assert board[0]["band"] == 1
    for row, below in itertools.pairwise(board):
        assert row["tied_with_next"] == (row["band"] == below["band"])
        if row["tied_with_next"]:
            leader = next(r for r in board if r["band"] == row["band"])
            assert below["rating"]["low"] <= leader["rating"]["high"]
            assert leader["rating"]["low"] <= below["rating"]["high"]
    assert board[-1]["tied_with_next"] is False

    # the bot page: its rating and its rating after each rated game, in finish order
    top = board[0]
    response = await arena.client.get(f"/api/bots/{top['id']}")
    detail = await response.json()
    assert detail["rating"] == top["rating"]
    history = detail["rating_history"]
    assert len(history) == top["rating"]["rated_games"] == top["played"]
    assert (history[-1]["mu"], history[-1]["sigma"]) == (top["rating"]["mu"],
                                                         top["rating"]["sigma"])
    assert [(p["finished_at"], p["game_id"]) for p in history] == sorted(
        (p["finished_at"], p["game_id"]) for p in history)
    assert all(p["conservative"] == p["mu"] - 3 * p["sigma"] for p in history)
    newcomer_detail = await (await arena.client.get(f"/api/bots/{newcomer_id}")).json()
    assert newcomer_detail["rating_history"] == []
    assert newcomer_detail["rating"] == new_row["rating"]
    # /api/bots shows the same rating
    listed = (await (await arena.client.get("/api/bots?game=TICTACTOE")).json())["bots"]
    assert {b["id"]: b["rating"] for b in listed} == {r["id"]: r["rating"] for r in board}

    # A bot far above the rest (its rating set by hand) is a band of its own.
    champion_id = await db.transaction(lambda conn: bot_store.insert(
        conn, name="champion", version="1", game="TICTACTOE", user_id=user_id,
        meta=bot_store.BotMetadata("http://x/rpc"), secret="s").id)
    await db.write_one("INSERT INTO ratings VALUES (?, 'TICTACTOE', 60.0, 1.0, 50, ?)",
                       (champion_id, "2030-01-01T00:00:00.000Z"))
    board = (await (await arena.client.get("/api/leaderboard?game=TICTACTOE")).json())["bots"]
    assert board[0]["name"] == "champion"
    assert [row["rank"] for row in board] == list(range(1, 8))
    assert (board[0]["band"], board[0]["tied_with_next"]) == (1, False)
    assert board[0]["rating"] == {"mu": 60.0, "sigma": 1.0, "conservative": 57.0,
                                  "low": 58.04, "high": 61.96, "rated_games": 50}
    assert [row["band"] for row in board[1:]] == [band + 1 for band in bands(ratings)]

"""Guests cannot move ratings they have no claim to (the security issue's farming and
sabotage through guest names), end to end at the hexagons listener: MebiPenny clients as
real processes, each from a loopback address of its own (every address of 127.0.0.0/8 is
a client of its own to the platform), and the SQLite file the platform writes.

* a name is bound to a secret the first time it plays: another address cannot play, and
  lose, under it;
* a game between two names of one address rates nobody;
* a game a guest loses by a disqualification at its first move rates nobody;
* a game of two addresses whose loser made a move is rated, as before.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from tests.e2e.harness import E2E
from tests.support.hexagons import create_game, finish_all, start_client, start_listener


async def _join_from(address: str, url: str, handle: str, name: str) -> tuple[int, str]:
    connector = aiohttp.TCPConnector(local_addr=(address, 0))
    async with aiohttp.ClientSession(connector=connector) as session, session.post(
            f"{url}/{handle}/players", data=json.dumps({"name": name})) as response:
        return response.status, await response.text()


async def test_guests_cannot_farm_or_sabotage_ratings(e2e: E2E) -> None:
    url = await start_listener(e2e)
    games = {case: await create_game(e2e, url) for case in ("same", "first", "rated")}
    clients = [
        # Two names of one address: the sock is disqualified at its second move.
        await start_client(e2e, url, "FarmKing#the crown", game=games["same"]),
        await start_client(e2e, url, "FarmSock#the sock 1", game=games["same"],
                           behaviour="malformed", after=2),
        # From another address, a sock disqualified at its first move (sending []).
        await start_client(e2e, url, "FarmKing#the crown", game=games["first"],
                           source="127.0.0.3"),
        await start_client(e2e, url, "FarmSock2#the sock 2", game=games["first"],
                           behaviour="malformed", after=1, source="127.0.0.2"),
        # Two players of two addresses; the loser made a move before its disqualification.
        await start_client(e2e, url, "Honest#honest secret", game=games["rated"],
                           source="127.0.0.4"),
        await start_client(e2e, url, "Loser#loser secret", game=games["rated"],
                           behaviour="malformed", after=2, source="127.0.0.5"),
    ]
    runs = await finish_all(clients)
    assert all(run.code == 0 for run in runs.values()), {n: r.events[-2:] for n, r in
                                                         runs.items()}

    async def finished() -> tuple[dict[str, Any] | None, str]:
        rows = e2e.read_db("SELECT handle, reason, rated FROM games WHERE status = "
                           "'FINISHED'")
        found = {row["handle"]: (row["reason"], row["rated"]) for row in rows}
        return (found if len(rows) == 3 else None), f"{found}"

    assert await e2e.wait_until("the three games' ends", finished) == {
        games["same"]: ("STRIKES", 0), games["first"]: ("STRIKES", 0),
        games["rated"]: ("STRIKES", 1)}
    for case in ("same", "first"):
        page = await e2e.session.get(f"{e2e.url}/games/{await _game_id(e2e, games[case])}")
        text = await page.text()
        assert "not rated (" in text, case

    async def rated() -> tuple[list[str] | None, str]:
        names = sorted(row["name"] for row in e2e.read_db(
            "SELECT bots.name FROM ratings JOIN bots ON bots.id = ratings.bot_id"))
        return (names if names else None), "no rating yet"

    # Only the game of two addresses whose loser played rated anybody.
    assert await e2e.wait_until("the rated game's ratings", rated) == ["Honest", "Loser"]
    board = (await e2e.get("/api/leaderboard?game=HEXAGONS"))["bots"]
    assert sorted(bot["name"] for bot in board) == ["Honest", "Loser"]

    # Another address cannot play under FarmKing to lose on purpose: not without its
    # secret, nor with a guess; the names stay bound to the secrets they first played with.
    handle = await create_game(e2e, url)
    for name, why in [("FarmKing", 'the name "FarmKing" is kept by the player who first '
                                   'played under it: give its secret, as "FarmKing#<secret>"'),
                      ("FarmKing#a good guess",
                       'the secret given for "FarmKing" is not its secret'),
                      ("x" * 101, "The bot name is 101 characters long; at most 100 are "
                                  "allowed")]:
        status, text = await _join_from("127.0.0.9", url, handle, name)
        assert (status, text.startswith(f"invalid player data: {why}")) == (403, True), text


async def _game_id(e2e: E2E, handle: str) -> int:
    [row] = e2e.read_db("SELECT id FROM games WHERE handle = ?", (handle,))
    return int(row["id"])


async def test_a_secret_made_for_a_name_is_told_even_when_its_game_never_begins(
        e2e: E2E) -> None:
    # The name is bound at the join; were the secret told only with a game that begins,
    # a first game nobody else joined would leave the name bound to a secret nobody knows.
    url = await start_listener(e2e, hexagons_join_wait="0.3")
    first = await create_game(e2e, url)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(
            local_addr=("127.0.0.11", 0))) as session:
        async with session.post(f"{url}/{first}/players",
                                data=json.dumps({"name": "Bobby"})) as answer:
            assert answer.status == 410, await answer.text()
            secret = answer.headers["X-Guest-Secret"]
        again = await create_game(e2e, url)
        async with session.post(f"{url}/{again}/players",
                                data=json.dumps({"name": f"Bobby#{secret}"})) as answer:
            # Its own name, with its secret: alone again, the game is abandoned; no new
            # secret is made.
            text = await answer.text()
            assert (answer.status, text.startswith("game abandoned")) == (410, True), text
            assert "X-Guest-Secret" not in answer.headers

"""The hexagons listener builds a game's Game object once per change of the game, for all
its clients: however many observers watch it (and players and viewers ask for it), a
change costs one Game object, not one per observer.

The listener is served over a started platform and a real SQLite store, with a Hexagons
game that counts the Game objects built (through the rules' public ``game_object``, which
the listener's rooms build every Game object with); players and observers are real
clients on loopback.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from merknera.games import JSONObject
from merknera.games.hexagons import Hexagons, HexagonsState, Point, lattice, line_between
from merknera.gateways.hexagons.listener import HexagonsListener
from merknera.gateways.hexagons.rooms import Rooms
from tests.support import Arena, until

PATIENCE = 30.0
"""Seconds to wait for what must happen well within that (a guard against a hang)."""
OBSERVERS = 8
"""As many streams as one address may hold (``max_streams_per_client``)."""

Client = TestClient[Any, Any]


class CountingHexagons(Hexagons):
    """Hexagons that counts the Game objects built."""

    built = 0

    def game_object(self, state: HexagonsState, *, completed: bool) -> JSONObject:
        self.built += 1
        return super().game_object(state, completed=completed)


async def observe(client: Client, handle: str) -> tuple[str, list[Any]]:
    """An observer's token and every document of its stream, read to its end."""
    async with client.post(f"/{handle}/observers", data=b"") as answer:
        assert answer.status == 200, await answer.text()
        return answer.headers["X-Observer-Token"], [
            json.loads(line) async for line in answer.content]


def legal_line(game: dict[str, Any]) -> list[dict[str, int]]:
    """The first line that may be drawn on the Game object's board."""
    def point(coordinate: dict[str, int]) -> Point:
        return Point(coordinate["row"], coordinate["col"])

    drawn = {line_between(*map(point, line["endpoints"])) for line in game["lines"]}
    claimed = {point(hexagon["center"]) for hexagon in game["hexagons"]}
    for line in lattice(game["rows"], game["cols"]).lines:
        if line not in drawn and line[0] not in claimed and line[1] not in claimed:
            return [{"row": end.row, "col": end.col} for end in line]
    raise AssertionError("no legal line left, but the server gave the move")


async def play(client: Client, handle: str, name: str) -> None:
    """Join, then move (a legal line of ``GET /<id>``'s Game) while given the turn."""
    async with client.post(f"/{handle}/players", json={"name": name}) as answer:
        assert answer.status == 200, await answer.text()
        token = answer.headers.get("X-Turn-Token")
    while token:
        async with client.get(f"/{handle}") as answer:
            game = await answer.json()
        async with client.post(f"/{handle}/moves", json=legal_line(game),
                               headers={"X-Turn-Token": token}) as answer:
            assert answer.status == 200, await answer.text()
            token = answer.headers.get("X-Turn-Token")


def merged(documents: list[Any]) -> dict[str, Any]:
    """An observer's Game: the first document with every delta after it merged in."""
    game = dict(documents[0])
    for change in documents[1:]:
        game["lines"] = game["lines"] + change["lines"]
        game["hexagons"] = game["hexagons"] + change["hexagons"]
        players = {player["name"]: player for player in game["players"]}
        players.update((player["name"], player) for player in change["players"])
        game["players"] = list(players.values())
        game["state"] = change["state"]
    return game


def drawn(game: dict[str, Any]) -> list[Any]:
    return [line["endpoints"] for line in game["lines"]]


async def test_a_games_object_is_built_once_per_change_whatever_the_observers(
        arena: Arena, aiohttp_client: AiohttpClient) -> None:
    platform = arena.platform
    game = CountingHexagons()
    rooms = Rooms(platform.scheduler.arena, platform.tables, game)
    client = await aiohttp_client(HexagonsListener(rooms, platform.guard).app())
    try:
        async with client.post("/", json={"rows": 5, "cols": 4}) as answer:
            assert answer.status == 201, await answer.text()
            handle = answer.headers["Location"].lstrip("/")
        async with asyncio.timeout(PATIENCE):
            watching = [asyncio.ensure_future(observe(client, handle))
                        for _ in range(OBSERVERS)]
            await until(lambda: len(rooms.get(handle).observers) == OBSERVERS,
                        within=PATIENCE)
            await asyncio.gather(play(client, handle, "Ann"), play(client, handle, "Bob"))
            streams = await asyncio.gather(*watching)
        room = rooms.get(handle)
        assert room.table is not None
        changes = room.table.any_seat().version
        async with client.get(f"/{handle}") as answer:
            final = await answer.json()
        assert final["state"] == "completed"
        for token, documents in streams:
            # The wire is the original's: the Game, then deltas that make it up.
            assert documents[0]["lines"] == [] and "rows" in documents[0]
            assert all("rows" not in change for change in documents[1:])
            game_seen = merged(documents)
            assert drawn(game_seen) == drawn(final)
            assert sorted(game_seen["players"], key=str) == sorted(final["players"], key=str)
            assert game_seen["state"] == "completed"
            async with client.get(f"/{handle}", headers={"X-Observer-Token": token}) as answer:
                assert await answer.json() == {"lines": [], "hexagons": [], "players": [],
                                               "state": "completed"}
        # Each observer was sent a line after most changes; without sharing, each line
        # had cost a Game object of its own (8 observers: some 8 times the changes).
        assert sum(len(documents) for _, documents in streams) > 3 * changes
        # One Game object per version of the room: 3 before the start (0, 1 and 2
        # players), one for each of the seat's changes and its first state, one when the
        # game is over, one per disqualification; and one for each player's join.
        assert game.built <= 3 + (changes + 1) + 1 + len(room.disqualified) + 2, (
            game.built, changes)
    finally:
        await rooms.stop()

"""The hexagons server's games (merknera.gateways.hexagons.rooms) on a started platform and
a real SQLite store: ids never repeat a stored game's, and a game made for a bot takes one
client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from merknera.games import REGISTRY
from merknera.games.hexagons import Hexagons
from merknera.gateways.guests import guest
from merknera.gateways.hexagons import wire
from merknera.gateways.hexagons.rooms import GAME, Rooms
from merknera.names import Claim
from merknera.refused import RefusedError
from merknera.store import games
from tests.support import Arena


def hexagons_rooms(arena: Arena) -> Rooms:
    game = REGISTRY[GAME]
    assert isinstance(game, Hexagons)
    return Rooms(arena.platform.scheduler.arena, arena.platform.tables, game)


async def test_a_new_game_never_takes_a_stored_games_id(
        arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    platform = arena.platform
    one = await guest(platform.scheduler.arena, Claim("One", "first secret"), GAME)
    two = await guest(platform.scheduler.arena, Claim("Two", "second secret"), GAME)
    await platform.db.transaction(lambda conn: games.create(
        conn, GAME, 1, [one.bot.id, two.bot.id], {"rows": 5, "cols": 4}, origin="MATCH",
        handle="0badcafe"))
    ids: Iterator[str] = iter(["0badcafe", "0badcafe", "5ca1ab1e"])
    monkeypatch.setattr(wire, "new_game_id", lambda: next(ids))
    room = await hexagons_rooms(arena).create("127.0.0.1", 5, 4, 0.0)
    assert room.handle == "5ca1ab1e"


async def test_a_match_game_made_for_a_bot_takes_one_client(arena: Arena) -> None:
    # A /match game made for a lone client and a bot: two clients joining at once used to
    # both get in (three players, no start), and the second waited out the join wait.
    rooms = hexagons_rooms(arena)
    bot = (await guest(arena.platform.scheduler.arena, Claim("Hexer", "hexer secret"), GAME)).bot
    room = await rooms.create("127.0.0.1", 5, 4, 0.0, reserved=bot)
    joins = [asyncio.ensure_future(rooms.join(room, Claim(name), "127.0.0.1"))
             for name in ("Ada", "Bea")]
    done = await asyncio.wait_for(asyncio.gather(*joins, return_exceptions=True), 30)
    refused = [answer for answer in done if isinstance(answer, RefusedError)]
    assert [(r.status, r.message) for r in refused] == [(410, "game already started")]
    assert room.table is not None
    names = sorted(b.name for b in room.table.bots)
    assert names in (["Ada", "Hexer"], ["Bea", "Hexer"]), names
    await rooms.stop()
    await arena.platform.scheduler.cancel([room.table.game_id])

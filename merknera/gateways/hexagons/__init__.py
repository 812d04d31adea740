"""The MebiPenny 2011 hexagons server's API (``seeds/001_*``; research part (c)), for its
clients to play the platform's Hexagons games: its wire (:mod:`.wire`), its games and
``/match`` queue (:mod:`.rooms`), and its routes (:mod:`.listener`)."""

from __future__ import annotations

from aiohttp import web

from merknera.games.hexagons import Hexagons
from merknera.gateways.hexagons.listener import HexagonsListener
from merknera.gateways.hexagons.rooms import GAME, Rooms
from merknera.gateways.tables import Tables
from merknera.guard import Guard


class HexagonsGateway:
    """The MebiPenny hexagons clients on the platform."""

    def __init__(self) -> None:
        self._rooms: Rooms | None = None
        self._listener: HexagonsListener | None = None

    def start(self, tables: Tables, guard: Guard) -> None:
        """Start taking games (the platform's scheduler runs)."""
        arena = tables.arena
        game = arena.games.get(GAME)
        assert isinstance(game, Hexagons)
        self._rooms = Rooms(arena, tables, game)
        self._listener = HexagonsListener(self._rooms, guard)

    async def stop(self) -> None:
        """Send the clients waiting for players away."""
        if self._rooms is not None:
            await self._rooms.stop()

    def app(self) -> web.Application:
        """The listener's application (after :meth:`start`)."""
        assert self._listener is not None, "the platform is not started"
        return self._listener.app()

"""Battlebot's WebSocket clients (``seeds/002_*``; research part (a)), both protocols.

:class:`BattlebotGateway` puts the parts together: the :class:`~.clients.Hub` of connected
clients, the holder whose held sessions play their games (:mod:`.holds`), the lobby that
matches them (:mod:`.lobby`), and the listener that registers them and reads their
sockets (:mod:`.listener`).
"""

from __future__ import annotations

from aiohttp import web

from merknera.config import Config
from merknera.gateways.battlebot.clients import Hub
from merknera.gateways.battlebot.holds import BattlebotHolder
from merknera.gateways.battlebot.listener import BattlebotListener
from merknera.gateways.battlebot.lobby import Lobby
from merknera.guard import Guard
from merknera.scheduler.core import Scheduler
from merknera.scheduler.discipline import Discipline


class BattlebotGateway:
    """Battlebot's clients on the platform."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.hub = Hub()
        self.holder = BattlebotHolder(self.hub, config)
        """The clients of both Battlebot protocols, as their games' held sessions find
        them."""
        self._lobby: Lobby | None = None
        self._listener: BattlebotListener | None = None

    def start(self, scheduler: Scheduler, discipline: Discipline, guard: Guard) -> None:
        """Start matching clients (the platform's scheduler runs)."""
        self._lobby = Lobby(scheduler, self.hub)
        self._listener = BattlebotListener(scheduler.arena, self.hub, guard, discipline)

    async def stop(self) -> None:
        """Stop matching, and close every client's socket."""
        if self._lobby is not None:
            await self._lobby.stop()
        for client in self.hub.clients():
            client.connection.close(1001)

    def app(self) -> web.Application:
        """The listener's application (after :meth:`start`)."""
        assert self._listener is not None, "the platform is not started"
        return self._listener.app()

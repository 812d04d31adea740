"""The Kalaha board API (``Anna87/kalaha``; research part (d)), for its clients and for
people to play the platform's Kalaha bots: its wire (:mod:`.api`) and its routes
(:mod:`.listener`)."""

from __future__ import annotations

from aiohttp import web

from merknera.gateways.kalaha.listener import KalahaListener
from merknera.gateways.tables import Tables
from merknera.guard import Guard


class KalahaGateway:
    """The Kalaha board API on the platform."""

    def __init__(self) -> None:
        self._listener: KalahaListener | None = None

    def start(self, tables: Tables, guard: Guard) -> None:
        """Start taking boards (the platform's scheduler runs)."""
        self._listener = KalahaListener(tables, guard)

    def app(self) -> web.Application:
        """The listener's application (after :meth:`start`)."""
        assert self._listener is not None, "the platform is not started"
        return self._listener.app()

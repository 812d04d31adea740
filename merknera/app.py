"""Builds the platform from a Config: store, bot client, presence, scheduler, HTTP routes."""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from aiohttp import web

from merknera import names
from merknera.assets import AssetStore, load_games
from merknera.botclient import BotClient, wanted_connections
from merknera.config import Config
from merknera.events import EventBus
from merknera.games import AnyGame
from merknera.gateways.battlebot import BattlebotGateway
from merknera.gateways.hexagons import HexagonsGateway
from merknera.gateways.kalaha import KalahaGateway
from merknera.gateways.tables import Tables
from merknera.guard import GUARD_KEY, Guard, crosssite, limits
from merknera.hosts import host_port
from merknera.metrics import Metrics
from merknera.protocol.bot_protocols import BotProtocol
from merknera.rpc import RpcService, refusal
from merknera.rpc_socket import RpcSocketService
from merknera.scheduler.arena import Arena
from merknera.scheduler.coordinator import Coordinator, Duty
from merknera.scheduler.core import Scheduler
from merknera.scheduler.discipline import Discipline
from merknera.scheduler.ladder import Ladder
from merknera.scheduler.leases import OFFERS, Leases, live_nodes, node_name
from merknera.scheduler.presence import Presence
from merknera.scheduler.readiness import Readiness, ReadyService
from merknera.scheduler.registration import Registrar
from merknera.scheduler.slots import Slots
from merknera.scheduler.tournaments import Director
from merknera.scheduler.trials import Trials
from merknera.seats import Carriers, HttpLine, JsonRpcCarrier, Notifier, Sockets, SquelchRestCarrier
from merknera.seats.polled import PolledHolder
from merknera.store import Database, ratings
from merknera.store.db import redacted
from merknera.web import (
    admin,
    api,
    health,
    live,
    metrics,
    nodes,
    openapi,
    pages,
    play,
    site,
    trials,
)
from merknera.web.replays import Replays
from merknera.work import Work

if TYPE_CHECKING:  # PostgreSQL's, whose driver is an extra: imported where it is used
    from merknera.relay import EventRelay

log = logging.getLogger(__name__)


class Platform:
    """Every long-lived part of a running platform, started and stopped in order."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.events = EventBus()
        self.guard = Guard(config)
        """The per-client limits of every listener."""
        self.metrics = Metrics(self.guard.connections, self.guard.refusals)
        """What the platform measures (``GET /metrics``)."""
        self.events.watch(self.metrics.observe)
        self.work = Work(per_client=self.config.limits.max_heavy_per_client,
                         refusals=self.guard.refusals)
        """Where answers that cost more than a few milliseconds of CPU are made, off the
        event loop and bounded (replays, game logs, stored gateway games)."""
        self.replays = Replays(self.work)
        """The games' replays, shared by every request and live stream."""
        self.budget: limits.DescriptorBudget
        """How the open-files limit is shared out (set by :meth:`start`)."""
        self.assets: AssetStore
        """The verified game asset files (set by :meth:`start`)."""
        self.games: dict[str, AnyGame] = {}
        """Every hosted game set up with its assets (set by :meth:`start`)."""
        self.ladder: Ladder
        self.discipline: Discipline
        self.tournaments: Director
        self.trials: Trials
        """Owners' challenges and duels."""
        self.leases: Leases
        """This node's game leases and heartbeat (set by :meth:`start`)."""
        self.coordinator: Coordinator | None = None
        """Runs the ladder, tournaments and pinger while this node coordinates (set by
        :meth:`start`)."""
        self.relay: EventRelay | None = None
        """Events to and from the other nodes (PostgreSQL: LISTEN/NOTIFY)."""
        self.battlebot = BattlebotGateway(config)
        """Battlebot's WebSocket clients (served when ``battlebot_port`` is set)."""
        self.guests = PolledHolder()
        """The seats of guests and people: clients that poll (hexagons players, Kalaha
        boards, people in the browser)."""
        self.hexagons = HexagonsGateway()
        """The MebiPenny hexagons clients (served when ``hexagons_port`` is set)."""
        self.kalaha = KalahaGateway()
        """The Kalaha board API (served when ``kalaha_port`` is set)."""
        self._tables: Tables | None = None
        self._db: Database | None = None
        self._client: BotClient | None = None
        self._scheduler: Scheduler | None = None
        self._rpc: RpcService | None = None
        self._rpc_socket: RpcSocketService | None = None
        self.sockets = Sockets(config.liveness.offline_grace, config.calls.ping_timeout)
        """The sockets of bots that connect out (``/rpc/ws``)."""
        self._registrar: Registrar | None = None

    @property
    def db(self) -> Database:
        """The open database."""
        assert self._db is not None, "the platform is not started"
        return self._db

    @property
    def scheduler(self) -> Scheduler:
        """The running scheduler."""
        assert self._scheduler is not None, "the platform is not started"
        return self._scheduler

    @property
    def rpc_socket(self) -> RpcSocketService:
        """The ``/rpc/ws`` service."""
        assert self._rpc_socket is not None, "the platform is not started"
        return self._rpc_socket

    @property
    def registrar(self) -> Registrar:
        """Registers bots (what ``RegistrationService.Register`` calls)."""
        assert self._registrar is not None, "the platform is not started"
        return self._registrar

    @property
    def rpc(self) -> RpcService:
        """The ``/rpc`` service."""
        assert self._rpc is not None, "the platform is not started"
        return self._rpc

    async def start(self) -> None:
        """Check the assets, open the store, start pinging bots, resume unfinished games.

        :raises AssetError: naming every asset file that does not match the manifest.
        """
        self.assets = AssetStore.load(self.config.store.assets_path)
        self.games = load_games(self.assets)
        self.budget = limits.plan(limits.raise_open_files_limit(),
                                  outbound=wanted_connections(self.config),
                                  inbound=self.config.limits.max_connections)
        self.guard.connections.total = self.budget.inbound
        if self.budget.inbound < self.config.limits.max_connections:
            log.warning("the open-files limit (%d) allows %d client connections at once, "
                        "not max_connections = %d", self.budget.limit, self.budget.inbound,
                        self.config.limits.max_connections)
        self._db = await Database.open(self.config.store.db)
        self._db.on_batch = self.metrics.batch_written
        names.prepare()
        # A database from before ratings existed gets its ratings computed once.
        rebuilt = await ratings.rebuild_if_needed(self._db)
        if rebuilt is not None:
            log.info("ratings rebuilt from the stored results: %s", rebuilt)
        self._client = BotClient(self.config, self.budget.outbound)
        await self._client.start()
        notifier = Notifier(self.config.calls.notify_timeout, self.config.calls.notify_timeout)
        carriers = Carriers(
            {BotProtocol.JSONRPC: JsonRpcCarrier(HttpLine(self._client), notifier),
             BotProtocol.JSONRPC_SOCKET: JsonRpcCarrier(self.sockets, notifier),
             BotProtocol.SQUELCH_REST: SquelchRestCarrier(self._client, self.config, notifier)},
            {BotProtocol.BATTLEBOT_SALT: self.battlebot.holder,
             BotProtocol.BATTLEBOT_GRAPHQL: self.battlebot.holder,
             BotProtocol.GUEST: self.guests})
        presence = Presence(self.config, self._db, carriers, self.events)
        readiness = Readiness()
        # Its own address, not public_url (which all nodes behind one name share).
        host = self.config.listeners.host
        if host in ("", "0.0.0.0", "::"):  # noqa: S104  # a wildcard: the machine's name
            host = socket.gethostname()
        listeners = self.config.listeners
        address = f"{listeners.scheme}://{host_port(host, listeners.port)}"
        lease = self.config.scheduling.lease_seconds
        self.leases = Leases(self._db, node_name(address), address, lease)
        self.metrics.read_from(self._db, self.leases, list(self.games))
        alone = not self._db.dialect.shared  # one node to a SQLite file
        if alone:
            await self.leases.only_node()
        else:
            alone = not await live_nodes(self._db, lease)
            from merknera.relay import EventRelay

            # Live pages here follow the games that other nodes run.
            self.relay = EventRelay(self.config.store.db, self.leases.node, self.events)
            self.relay.on(OFFERS, self.leases.notified)  # games other nodes offer
            await self.relay.start()
        scheduling = self.config.scheduling
        arena = Arena(self.config, self._db, carriers, presence, self.events, notifier,
                      Slots(scheduling.concurrency, scheduling.owner_share), self.games,
                      self.assets, readiness, self.leases)
        self._scheduler = Scheduler(arena)
        self._registrar = Registrar(self._scheduler, self.guard.auth, self.guard.refusals)
        self._rpc = RpcService(self._registrar, self.guard)
        self._rpc_socket = RpcSocketService(
            self._rpc, self.sockets, presence,
            self.leases if self._db.dialect.shared else None, self.guard)
        ready = ReadyService(self._db, self.assets, readiness, self.guard.auth)
        for game in self.games.values():
            if game.assets:
                self._rpc.add_method(game.calls.method(game.calls.ready),
                                     functools.partial(ready.ready, game))
        self.ladder = Ladder(self._scheduler)
        self.discipline = Discipline(self._scheduler)
        self.tournaments = Director(self._scheduler)
        self.trials = Trials(self._scheduler, self._registrar)
        self.battlebot.start(self._scheduler, self.discipline, self.guard)
        self._tables = Tables(self._scheduler, self.guests, self.work, self.guard.auth,
                              self.guard.refusals)
        self.hexagons.start(self._tables, self.guard)
        self.kalaha.start(self._tables, self.guard)
        await presence.start(alone=alone)
        await self._scheduler.start()
        self.coordinator = Coordinator(self._db, self.leases, presence, [
            Duty("the pinger", presence.start_pinging, presence.stop_pinging),
            Duty("tournaments", self.tournaments.start, self.tournaments.stop),
            Duty("the ladder", self.ladder.start, self.ladder.stop),
            Duty("challenges and duels", self.trials.start, self.trials.stop)])
        self.coordinator.start()

    @property
    def tables(self) -> Tables:
        """The games started for guests and people (the hexagons and Kalaha gateways',
        and the browser's)."""
        assert self._tables is not None, "the platform is not started"
        return self._tables

    def listeners(self) -> dict[str, web.Application]:
        """The gateways' applications (after :meth:`start`), by the key of their port in
        the config (those whose port is set)."""
        apps: dict[str, web.Application] = {}
        if self.config.battlebot.port:
            apps["battlebot_port"] = self.battlebot.app()
        if self.config.hexagons.port:
            apps["hexagons_port"] = self.hexagons.app()
        if self.config.kalaha.port:
            apps["kalaha_port"] = self.kalaha.app()
        return apps

    async def _stop_gateways(self) -> None:
        await self.battlebot.stop()
        await self.hexagons.stop()
        if self._tables is not None:
            await self._tables.stop()

    def _close_sockets(self) -> None:
        """The sockets of bots that connect out close once the games have stopped (a call
        under way would be sent again; none is now), and no more are taken."""
        if self._rpc_socket is not None:
            self._rpc_socket.close_all()

    async def stop_games(self) -> None:
        """Stop making games and cancel every runner (their games resume at the next
        start): before the gateways' listeners close, so that no connected client's game
        is lost to a socket the platform itself closed."""
        if self._scheduler is not None:
            if self.coordinator is not None:
                await self.coordinator.stop()
            await self._stop_gateways()
            await self._scheduler.stop()
            self._close_sockets()

    async def stop(self) -> None:
        """Stop the games (they resume at the next start), the pinger, the client, the store."""
        scheduler, client, db = self._scheduler, self._client, self._db
        self._scheduler = self._client = self._db = None
        if scheduler is not None:
            if self.coordinator is not None:
                await self.coordinator.stop()
            await self._stop_gateways()
        try:
            if scheduler is not None:
                try:
                    await scheduler.stop()
                finally:
                    self._close_sockets()
                    await scheduler.arena.presence.stop()
        finally:
            try:
                if client is not None:
                    await client.close()
                if self.relay is not None:  # after the games: their last events go out
                    await self.relay.stop()
                    self.relay = None
            finally:
                self.work.close()
                if db is not None:
                    await db.close()

    # -- what the admin API may do (merknera.web.admin.AdminOps) --------------------------------

    @property
    def admin_token(self) -> str:
        """The configured admin token ("" = none)."""
        return self.config.accounts.admin_token

    async def disable_bot(self, bot_id: int, reason: str) -> bool:
        """Take a bot out of play."""
        return await self.discipline.disable(bot_id, "ADMIN", reason)

    async def enable_bot(self, bot_id: int) -> bool:
        """Put a disabled bot back in play."""
        return await self.discipline.enable(bot_id) is not None

    async def suspend_user(self, name: str, reason: str) -> list[int] | None:
        """Suspend a user and disable their bots."""
        return await self.discipline.suspend(name, reason)

    async def unsuspend_user(self, name: str) -> list[int] | None:
        """Lift a user's suspension and enable the bots it disabled."""
        return await self.discipline.unsuspend(name)

    def ladder_state(self) -> str:
        """OFF, PAUSED or RUNNING."""
        return self.ladder.state

    def set_ladder_paused(self, paused: bool) -> str:
        """Pause or resume the ladder; returns its state."""
        self.ladder.paused = paused
        return self.ladder.state

    async def create_tournament(self, game: str, fmt: str, rounds: int,
                                bot_ids: list[int] | None) -> int:
        """Create a tournament; it begins within a second."""
        return await self.tournaments.create(game, fmt, rounds, bot_ids)


PLATFORM_KEY = web.AppKey("platform", Platform)


def build_app(config: Config, platform: Platform | None = None) -> web.Application:
    """The aiohttp application serving ``/rpc``, the results API and the web pages.

    The platform starts with the application and stops with it (``cleanup_ctx``).
    """
    platform = platform or Platform(config)
    app = web.Application(client_max_size=1024 * 1024, middlewares=[
        platform.guard.forwarded,
        platform.guard.middleware,
        crosssite.middleware(_cross_site_rule, _cross_site_refusal)])
    app[PLATFORM_KEY] = platform
    app[GUARD_KEY] = platform.guard
    app[api.DB_KEY] = lambda: platform.db
    app[api.GAMES_KEY] = lambda: platform.games
    app[nodes.LEASES_KEY] = lambda: platform.leases
    app[api.REPLAYS_KEY] = platform.replays
    app[api.WORK_KEY] = platform.work
    app[api.PUBLIC_URL_KEY] = config.listeners.public_url.rstrip("/")
    app[admin.OPS_KEY] = lambda: platform
    app[live.EVENTS_KEY] = platform.events
    app[play.TABLES_KEY] = lambda: platform.tables
    app[trials.TRIALS_KEY] = lambda: platform.trials
    app[metrics.METRICS_KEY] = platform.metrics
    app[metrics.NETWORKS_KEY] = config.metrics.ip_networks
    streams = app[live.STREAMS_KEY] = live.Streams()
    app.on_shutdown.append(streams.close_all)
    site.setup(app)

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        await platform.start()
        log.info("Merknera is serving at %s (database %s, event loop %s)",
                 config.listeners.base_url, redacted(config.store.db),
                 type(asyncio.get_running_loop()).__module__)
        yield
        await platform.stop()

    async def rpc_handler(request: web.Request) -> web.StreamResponse:
        return await platform.rpc.handle(request)

    async def rpc_socket_handler(request: web.Request) -> web.StreamResponse:
        return await platform.rpc_socket.handle(request)

    async def asset_handler(request: web.Request) -> web.StreamResponse:
        return await platform.assets.handle(request)

    app.cleanup_ctx.append(lifecycle)
    app.router.add_post("/rpc", rpc_handler)
    app.router.add_get("/rpc/ws", rpc_socket_handler)
    app.router.add_get("/assets/{sha1}/{name}", asset_handler)
    app.router.add_routes(api.routes)
    app.router.add_routes(live.routes)
    app.router.add_routes(openapi.routes)
    app.router.add_routes(admin.routes)
    app.router.add_routes(nodes.routes)
    app.router.add_routes(pages.routes)
    app.router.add_routes(play.routes)
    app.router.add_routes(trials.routes)
    app.router.add_routes(health.routes)
    app.router.add_routes(metrics.routes)
    return app


def _cross_site_rule(request: web.Request) -> crosssite.Body:
    """What the main site's state-changing routes take: JSON (Merknera's bots post ``/rpc``
    as ``application/json``, the play page its moves), or for the admin calls, whose body
    is optional, no body either."""
    if request.path.startswith(("/api/admin/", "/api/duels/")):
        return crosssite.Body.JSON_OR_NONE
    return crosssite.Body.JSON


def _cross_site_refusal(request: web.Request,
                        refused: crosssite.CrossSiteRefusal) -> web.Response:
    """A refusal of :mod:`merknera.guard.crosssite`: a JSON-RPC error on ``/rpc``, the
    API's ``{"error"}`` elsewhere."""
    if request.path == "/rpc":
        return refusal(refused.status, refused.message)
    return crosssite.json_refusal(request, refused)

"""``GET /api/nodes``: the live nodes of the arena and what each runs (the same from
every node: it is read from the store, where each node keeps its heartbeat)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from aiohttp import web

from merknera.scheduler.leases import Leases, live_nodes
from merknera.store import nodes as node_store

LEASES_KEY: web.AppKey[Callable[[], Leases]] = web.AppKey("leases")
"""This node's leases (known once the platform has started)."""

routes = web.RouteTableDef()

GAMES_SHOWN = 100
"""Game ids listed per node, at most (its count is whole)."""


@routes.get("/api/nodes")
async def nodes(request: web.Request) -> web.Response:
    """Every live node: its id and address, whether it coordinates (ladder, tournaments,
    pinging), and the games it plays."""
    leases = request.app[LEASES_KEY]()
    found = await live_nodes(leases.db, leases.seconds)
    playing = await node_store.playing(leases.db, time.time())
    return web.json_response({
        "this": leases.node,
        "lease_seconds": leases.seconds,
        "nodes": [{"id": node.id, "address": node.address, "pid": node.pid,
                   "started_at": node.started_at,
                   "seen_at": datetime.fromtimestamp(node.seen_at, UTC).isoformat(
                       timespec="milliseconds").replace("+00:00", "Z"),
                   "coordinator": node.coordinator,
                   "playing": len(playing.get(node.id, [])),
                   "games": playing.get(node.id, [])[:GAMES_SHOWN]} for node in found]})

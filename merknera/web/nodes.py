"""``GET /api/nodes``: the live nodes of the arena (the same from every node: it is read
from the store, where each node keeps its heartbeat).

Anybody may learn how many nodes serve; what each one is (its host name and address, its
pid, when it started, the games it plays) is for the admin only, since it maps the
arena's machines for whoever would attack them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from merknera.scheduler.leases import Leases, live_nodes
from merknera.store import nodes as node_store
from merknera.web.admin import admin_ops
from merknera.web.params import bearer_token

LEASES_KEY: web.AppKey[Callable[[], Leases]] = web.AppKey("leases")
"""This node's leases (known once the platform has started)."""

routes = web.RouteTableDef()

GAMES_SHOWN = 100
"""Game ids listed per node, at most (its count is whole)."""


@routes.get("/api/nodes")
async def nodes(request: web.Request) -> web.Response:
    """How many nodes are live (``{"count"}``); with the admin token, each live node too:
    its id and address, whether it coordinates (ladder, tournaments, pinging), and the
    games it plays.  A token that is not the admin's is refused (403), not ignored."""
    shows_details = bool(bearer_token(request))
    if shows_details:
        await admin_ops(request)
    leases = request.app[LEASES_KEY]()
    found = await live_nodes(leases.db, leases.seconds)
    answer: dict[str, Any] = {"count": len(found)}
    if not shows_details:
        return web.json_response(answer)
    playing = await node_store.playing(leases.db, time.time())
    answer.update({
        "this": leases.node,
        "lease_seconds": leases.seconds,
        "nodes": [{"id": node.id, "address": node.address, "pid": node.pid,
                   "started_at": node.started_at,
                   "seen_at": datetime.fromtimestamp(node.seen_at, UTC).isoformat(
                       timespec="milliseconds").replace("+00:00", "Z"),
                   "coordinator": node.coordinator,
                   "playing": len(playing.get(node.id, [])),
                   "games": playing.get(node.id, [])[:GAMES_SHOWN]} for node in found]})
    return web.json_response(answer)

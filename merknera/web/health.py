"""``GET /healthz`` and ``GET /readyz``: whether the process answers, and whether this
node can play its part (for a load balancer, an orchestrator or a container's
``HEALTHCHECK``).

The node is ready when its store answers, the store's schema is the one this version
migrates to, and its heartbeat was stored within a lease (past that, the other nodes may
take its games).  Otherwise ``/readyz`` answers 503 with the reasons.
"""

from __future__ import annotations

import asyncio
import functools

from aiohttp import web

from merknera.store.db import StoreError, StoreUnavailableError, migrations
from merknera.web.nodes import LEASES_KEY

STORE_SECONDS = 2.0
"""How long the store has to answer ``/readyz``'s read before the node is not ready."""

routes = web.RouteTableDef()

_NOT_CACHED = {"Cache-Control": "no-store"}


@routes.get("/healthz")
async def healthz(_request: web.Request) -> web.Response:
    """200 while the process answers."""
    return web.json_response({"status": "ok"}, headers=_NOT_CACHED)


@routes.get("/readyz")
async def readyz(request: web.Request) -> web.Response:
    """200 when the node is ready, else 503 with ``{"status": "unready", "reasons"}``."""
    leases = request.app[LEASES_KEY]()
    reasons = []
    try:
        async with asyncio.timeout(STORE_SECONDS):
            version = await leases.db.schema_version()
    except TimeoutError:
        reasons.append(f"the store did not answer within {STORE_SECONDS:g} s")
    except StoreUnavailableError:  # the store logs the outage's cause (it may name a host)
        reasons.append("the store did not answer: it cannot be reached now")
    except StoreError as exc:
        reasons.append(f"the store did not answer: it failed ({type(exc).__name__})")
    else:
        if version != latest_schema():
            reasons.append(f"the store's schema is at version {version}, not at this "
                           f"version's {latest_schema()} (run merknera db migrate)")
    age = leases.heartbeat_age()
    if age is None or age > leases.seconds:
        since = "yet" if age is None else f"for {age:.0f} s"
        reasons.append(f"this node's heartbeat has not been stored {since} (a lease is "
                       f"{leases.seconds:g} s)")
    if reasons:
        return web.json_response({"status": "unready", "reasons": reasons}, status=503,
                                 headers=_NOT_CACHED)
    return web.json_response({"status": "ready"}, headers=_NOT_CACHED)


@functools.cache
def latest_schema() -> int:
    """The number of the last migration this version ships (the same on both stores)."""
    return migrations()[-1][0]

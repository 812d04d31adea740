"""``GET /metrics``: the platform's metrics (:mod:`merknera.metrics`) in Prometheus' text
format, for the admin token (``Authorization: Bearer``) or for clients in
``metrics_networks`` (loopback by default: a Prometheus server on the same machine; behind
a trusted proxy, the client the proxy names); anybody else is refused (403)."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from merknera.config import IPNetwork
from merknera.endpoints import address_allowed
from merknera.guard import GUARD_KEY
from merknera.metrics import Metrics
from merknera.web.admin import admin_ops
from merknera.web.params import bearer_token
from merknera.web.query import error_text

METRICS_KEY = web.AppKey("metrics", Metrics)
"""The platform's metrics."""
NETWORKS_KEY: web.AppKey[tuple[IPNetwork, ...]] = web.AppKey("metrics-networks")
"""The networks whose clients may read the metrics without a token."""

routes = web.RouteTableDef()


@routes.get("/metrics")
async def metrics(request: web.Request) -> web.Response:
    """Every metric, to a client in ``metrics_networks`` or with the admin token; 403 to
    others (401, 403 or 429 for a token as the admin API answers it)."""
    networks: tuple[IPNetwork, ...] = request.app[NETWORKS_KEY]
    if not address_allowed(request.app[GUARD_KEY].caller(request).address or "", networks):
        if not bearer_token(request):
            raise web.HTTPForbidden(
                text=error_text("the metrics are for the admin token (Authorization: Bearer) "
                                "and for the networks in metrics_networks"),
                content_type="application/json")
        await admin_ops(request)
    found = request.app[METRICS_KEY]
    await found.read_store()
    return web.Response(body=found.exposition(),
                        headers={"Content-Type": CONTENT_TYPE_LATEST, "Cache-Control": "no-store"})

"""The web site around the pages: templates, static files, error pages, security headers.

Pages are rendered on the server by aiohttp-jinja2 with autoescaping on (bot names and
descriptions are anybody's text); the little JavaScript there is lives in ``static/`` and is
served from this origin only: the Content-Security-Policy forbids inline scripts and every
other origin, so even markup that slipped through could not run.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import web
from markupsafe import Markup

from merknera.clock import readable
from merknera.games import REGISTRY, SeatResult, Termination
from merknera.names import ANONYMOUS
from merknera.protocol.bot_protocols import BotProtocol
from merknera.refused import retry_after_header
from merknera.store.db import StoreUnavailableError
from merknera.web.query import error_text

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")
"""No inline script or style, nothing from another origin."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_ANSWERED = web.RequestKey("answered", bool)
"""Set once a response to the request has begun (its head sent): an event stream that
fails later cannot be answered with an error page any more."""


def setup(app: web.Application) -> None:
    """Templates, ``/static/``, and the middlewares of error pages and security headers."""
    env = aiohttp_jinja2.setup(
        app, loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    static = app.router.add_static("/static", STATIC, name="static", append_version=True)

    def asset(name: str) -> str:
        # ?v=<hash of the file>: a changed file gets a new URL, so it may be cached for long.
        return str(static.url_for(filename=name))

    env.globals.update(asset=asset, all_games=REGISTRY, game_name=game_name,
                       protocol_name=protocol_name, unrated_because=unrated_because)
    env.filters.update(when=when, ms=ms, points=points)
    app.middlewares.append(error_pages)
    app.on_response_prepare.append(_headers)
    app.on_response_prepare.append(_answered)


def game_name(mnemonic: str) -> str:
    """A game's name for people (the mnemonic itself for a game no longer hosted)."""
    game = REGISTRY.get(mnemonic)
    return mnemonic if game is None else game.name


def unrated_because(game: dict[str, Any]) -> str:
    """Why a game of guests (:func:`merknera.store.results.game_summary`'s) rates nobody:
    a seat played anonymously, a guest forfeited before its first move, or its players
    played from one network (see :mod:`merknera.gateways.tables` and
    :func:`merknera.scheduler.play.rates`)."""
    guests = [seat for seat in game["seats"] if seat["protocol"] == BotProtocol.GUEST.value]
    if any(seat["name"] == ANONYMOUS for seat in guests):
        return "a player gave no name"
    forfeit = game["reason"] in {t.value for t in Termination if t.is_forfeit}
    if forfeit and any(seat["result"] == SeatResult.LOSS.value for seat in guests):
        return "a player forfeited it before its first move, or its players shared a network"
    return "its players played from one network"


def protocol_name(value: str) -> str:
    """A bot's protocol (as stored) for people."""
    try:
        return BotProtocol(value).title
    except ValueError:
        return value


def when(stamp: str | None) -> Markup:
    """A stored timestamp (``2026-11-23T10:15:02.123Z``) as the pages show every time: in
    UTC with the zone written, ``<time datetime="2026-11-23T10:15:02.123Z">2026-11-23
    10:15:02 UTC</time>`` (empty for None).

    Every time on the pages is UTC, the server's and the store's zone: the same text for
    every reader and in every live update, with no script needed to read it."""
    if not stamp:
        return Markup("")
    return Markup('<time datetime="{}">{}</time>').format(stamp, readable(stamp))


def ms(value: float | None) -> str:
    """A latency in milliseconds, to a sensible precision."""
    if value is None:
        return ""
    return f"{value:.0f} ms" if value >= 100 else f"{value:.1f} ms"


def points(value: float | None) -> str:
    """A score or rating: whole numbers without decimals, others to two places."""
    if value is None:
        return ""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


def is_page(request: web.Request) -> bool:
    """Whether the path is one of the HTML pages' (not the API, the assets, /rpc, or the
    health checks' and the metrics' routes)."""
    return not (request.path.startswith(("/api/", "/assets/", "/rpc", "/static/"))
                or request.path in _FOR_MACHINES)


_FOR_MACHINES = frozenset({"/healthz", "/readyz", "/metrics"})


@web.middleware
async def error_pages(request: web.Request, handler: Handler) -> web.StreamResponse:
    """An HTML page for a page's 4xx and 5xx; a JSON body for the API's unknown routes;
    503 with ``Retry-After`` (a page, or the API's JSON error) while the store cannot be
    reached."""
    try:
        return await handler(request)
    except StoreUnavailableError as exc:
        if request.get(_ANSWERED):
            raise  # a stream under way: it ends (an EventSource reconnects by itself)
        retry = {"Retry-After": retry_after_header(exc.retry_after)}
        if is_page(request):
            page = _error_page(request, 503, "Service Unavailable", exc.for_clients)
            page.headers.update(retry)
            return page
        return web.Response(status=503, text=error_text(exc.for_clients),
                            content_type="application/json", headers=retry)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        if is_page(request):
            return _error_page(request, exc.status, exc.reason, _message(exc))
        if request.path.startswith("/api/") and exc.content_type != "application/json":
            # aiohttp's own 404 and 405 are plain text; the API answers JSON throughout.
            kept = {k: v for k, v in exc.headers.items() if k in ("Allow", "WWW-Authenticate")}
            return web.json_response({"error": _message(exc) or exc.reason},
                                     status=exc.status, headers=kept)
        raise
    except Exception:
        if not is_page(request):
            raise
        log.exception("page %s failed", request.path)
        return _error_page(request, 500, "Internal Server Error",
                           "Something went wrong on our side; it has been logged.")


def _message(exc: web.HTTPException) -> str:
    text = exc.text or ""
    if exc.status == 404 and (not text or text.startswith("404")):
        return "There is nothing at this address."
    return text


def _error_page(request: web.Request, status: int, reason: str,
                message: str) -> web.Response:
    context: dict[str, Any] = {"status": status, "reason": reason, "message": message}
    return aiohttp_jinja2.render_template("error.html", request, context, status=status)


async def _answered(request: web.Request, _response: web.StreamResponse) -> None:
    request[_ANSWERED] = True


async def _headers(request: web.Request, response: web.StreamResponse) -> None:
    headers = response.headers
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "same-origin")
    if request.path.startswith("/static/") and "v" in request.query:
        headers["Cache-Control"] = "public, max-age=31536000, immutable"
    if response.content_type == "text/html":
        headers.setdefault("Content-Security-Policy", CSP)
        headers.setdefault("X-Frame-Options", "DENY")

"""The HTML pages: home, leaderboards, bots, games with their replays, tournaments, and
the protocol for bot authors.

Handlers read the store and hand plain values to templates (``templates/``); every value
is escaped there.  An unknown id is a 404 page, a bad query value a 400 page
(:mod:`merknera.web.site` turns both into pages).
"""

from __future__ import annotations

import functools
import importlib.resources
import io
import zipfile
from pathlib import Path
from typing import Any

import aiohttp_jinja2
from aiohttp import web

from merknera.games import REGISTRY
from merknera.store import stats
from merknera.store import tournaments as tournament_store
from merknera.store.results import (
    GameFilter,
    bot_counts,
    game_summary,
    get_bot,
    leaderboard,
    list_games,
)
from merknera.web import views
from merknera.web.api import DB_KEY, PUBLIC_URL_KEY
from merknera.web.live import home_live_context
from merknera.web.params import whole_number

routes = web.RouteTableDef()

BOTS_DIR = Path(str(importlib.resources.files("merknera_bots")))
"""The reference bots' sources (the ``merknera_bots`` package installed with the platform),
offered for download on the protocol page."""


def _id(request: web.Request, what: str) -> int:
    raw = request.match_info["id"]
    found = whole_number(raw)
    if found is None:
        raise web.HTTPNotFound(text=f'There is no {what} "{raw[:40]}".')
    return found


def _query_int(request: web.Request, name: str, low: int, high: int) -> int | None:
    raw = request.query.get(name, "")
    if raw == "":
        return None
    found = whole_number(raw)
    if found is None or not low <= found <= high:
        raise web.HTTPBadRequest(
            text=f'"{name}" must be a whole number from {low} to {high}, not "{raw[:40]}".')
    return found


@routes.get("/", name="home")
@aiohttp_jinja2.template("home.html")
async def home(request: web.Request) -> dict[str, Any]:
    """The games hosted, bots online, games running now, the latest results."""
    db = request.app[DB_KEY]()
    counts = await bot_counts(db)
    hosted = [{"game": game, "bots": counts.get(mnemonic, (0, 0))[0],
               "online": counts.get(mnemonic, (0, 0))[1]} for mnemonic, game in REGISTRY.items()]
    recent_tournaments = await db.read(functools.partial(tournament_store.listing, limit=5))
    return {"hosted": hosted, "tournaments": recent_tournaments,
            **await home_live_context(db, counts)}


@routes.get("/leaderboard/{game}", name="leaderboard")
@aiohttp_jinja2.template("leaderboard.html")
async def leaderboard_page(request: web.Request) -> dict[str, Any]:
    """One game's current bots ranked by rating, each with its 95% interval as a bar."""
    mnemonic = request.match_info["game"]
    game = REGISTRY.get(mnemonic.upper())
    if game is None:
        raise web.HTTPNotFound(text=f'No game called "{mnemonic[:40]}" is hosted here.')
    if mnemonic != game.mnemonic:
        raise web.HTTPFound(f"/leaderboard/{game.mnemonic}")
    rows = await leaderboard(request.app[DB_KEY](), game.mnemonic)
    bars = views.interval_bars([row["rating"] for row in rows])
    return {"game": game, "rows": list(zip(rows, bars, strict=True))}


@routes.get("/bots/{id}", name="bot")
@aiohttp_jinja2.template("bot.html")
async def bot_page(request: web.Request) -> dict[str, Any]:
    """A bot version: record, rating and its history, results by opponent, latency and
    faults, versions, latest games, and (for its owner) its log."""
    bot_id = _id(request, "bot")
    before = _query_int(request, "before", 1, 2**62)
    db = request.app[DB_KEY]()
    bot = await get_bot(db, bot_id)
    if bot is None:
        raise web.HTTPNotFound(text=f"There is no bot {bot_id}.")
    games = await list_games(db, GameFilter(bot=bot_id, limit=25, before=before))
    website = bot["website"]
    return {"bot": bot, "games": games, "figures": await stats.bot_figures(db, bot_id),
            "opponents": await stats.by_opponent(db, bot_id),
            "chart": views.rating_chart(bot["rating_history"]),
            "website": website if website.startswith(("https://", "http://")) else None,
            "older": games[-1]["id"] if len(games) == 25 else None}


@routes.get("/games/{id}", name="game")
@aiohttp_jinja2.template("game.html")
async def game_page(request: web.Request) -> dict[str, Any]:
    """A game: players, outcome and reason, and its replay (live while it runs)."""
    game_id = _id(request, "game")
    step = _query_int(request, "step", 0, 100_000)
    game = await game_summary(request.app[DB_KEY](), game_id)
    if game is None:
        raise web.HTTPNotFound(text=f"There is no game {game_id}.")
    return {"game": game, "step": step}


@routes.get("/tournaments/{id}", name="tournament")
@aiohttp_jinja2.template("tournament.html")
async def tournament_page(request: web.Request) -> dict[str, Any]:
    """A tournament: its table, and its games round by round."""
    tournament_id = _id(request, "tournament")
    found = await views.tournament_detail(request.app[DB_KEY](), tournament_id)
    if found is None:
        raise web.HTTPNotFound(text=f"There is no tournament {tournament_id}.")
    names = {entrant["id"]: entrant for entrant in found["entrants"]}
    rounds: dict[int, list[dict[str, Any]]] = {}
    for game in found["games"]:
        rounds.setdefault(game["round"], []).append(game)
    byes = {bye["round"]: bye["bot"] for bye in found["byes"]}
    return {"t": found, "names": names, "rounds": sorted(rounds.items()), "byes": byes}


@routes.get("/protocol", name="protocol")
@aiohttp_jinja2.template("protocol.html")
async def protocol_page(request: web.Request) -> dict[str, Any]:
    """The protocol for bot authors, how to register, and the reference bots."""
    # The public URL when one is configured (behind a proxy the request's scheme and host
    # are the proxy's), else the address the reader used.
    base = request.app[PUBLIC_URL_KEY] or f"{request.scheme}://{request.host}"
    return {"downloads": reference_bots(), "base": base}


@functools.cache
def reference_bots() -> tuple[str, ...]:
    """The reference bots' source files, by name (installed files: read once)."""
    return tuple(sorted(path.name for path in BOTS_DIR.glob("*.py")
                        if path.name != "__init__.py"))


@functools.cache
def _bots_zip() -> bytes:
    """Every reference bot in one zip, made once."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ["__init__.py", *reference_bots()]:
            archive.write(BOTS_DIR / name, f"merknera_bots/{name}")
    return buffer.getvalue()


@routes.get("/downloads/bots/{name}", name="bot_source")
async def bot_source(request: web.Request) -> web.StreamResponse:
    """One reference bot's source file."""
    name = request.match_info["name"]
    if name not in reference_bots():
        raise web.HTTPNotFound(text=f'There is no reference bot file "{name[:60]}".')
    return web.Response(body=(BOTS_DIR / name).read_bytes(),
                        content_type="text/x-python", charset="utf-8",
                        headers={"Content-Disposition": f'inline; filename="{name}"'})


@routes.get("/downloads/merknera-bots.zip", name="bots_zip")
async def bots_zip(_request: web.Request) -> web.StreamResponse:
    """Every reference bot in one zip (a ``merknera_bots/`` package: run
    ``python -m merknera_bots.<game>``)."""
    return web.Response(body=_bots_zip(), content_type="application/zip",
                        headers={"Content-Disposition":
                                 'attachment; filename="merknera-bots.zip"'})

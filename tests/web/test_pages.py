"""The pages over plain HTTP against a store of real games: every page answers, bad input
gets a 404 or 400 page, nothing a bot chose can become markup, the headers keep scripts to
this origin, and the API's replay and OpenAPI document say what they should."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from markupsafe import escape

from merknera.app import build_app
from merknera.games import REGISTRY
from tests.web.conftest import Site
from tests.web.store_builder import HOSTILE_DESCRIPTION, HOSTILE_NAME, HOSTILE_WEBSITE


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as session:
        yield session


async def fetch(http: aiohttp.ClientSession, site: Site, path: str) -> tuple[int, str, Any]:
    async with http.get(site.at(path), allow_redirects=False) as response:
        return response.status, await response.text(), response.headers


async def api(http: aiohttp.ClientSession, site: Site, path: str) -> Any:
    status, text, _ = await fetch(http, site, path)
    assert status == 200, f"{path}: {status} {text[:300]}"
    return json.loads(text)


async def test_every_page_answers_with_html_and_strict_headers(
        site: Site, http: aiohttp.ClientSession) -> None:
    games = (await api(http, site, "/api/games?limit=500"))["games"]
    bots = (await api(http, site, "/api/bots?all=1"))["bots"]
    paths = ["/", "/protocol", "/tournaments/1", *(f"/leaderboard/{m}" for m in REGISTRY),
             *(f"/bots/{b['id']}" for b in bots), *(f"/games/{g['id']}" for g in games)]
    for path in paths:
        status, text, headers = await fetch(http, site, path)
        assert status == 200, f"{path}: {status} {text[:500]}"
        assert headers["Content-Type"].startswith("text/html")
        csp = headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp, path
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert "<script>" not in text.replace('<script src="/static/', ""), path


async def test_a_hostile_name_description_and_website_stay_text(
        site: Site, http: aiohttp.ClientSession) -> None:
    bots = (await api(http, site, "/api/bots?game=TICTACTOE"))["bots"]
    hostile = next(bot for bot in bots if bot["name"] == HOSTILE_NAME)
    assert hostile["description"] == HOSTILE_DESCRIPTION
    for path in (f"/bots/{hostile['id']}", "/leaderboard/TICTACTOE", "/", "/tournaments/1"):
        _, text, _ = await fetch(http, site, path)
        assert HOSTILE_NAME not in text, path
        assert escape(HOSTILE_NAME) in text, path
    _, text, _ = await fetch(http, site, f"/bots/{hostile['id']}")
    assert HOSTILE_DESCRIPTION not in text
    assert escape(HOSTILE_DESCRIPTION) in text
    assert f'href="{HOSTILE_WEBSITE}"' not in text  # shown as text, never as a link


@pytest.mark.parametrize(("path", "status", "says"), [
    ("/games/999999", 404, "There is no game 999999"),
    ("/games/abc", 404, 'There is no game "abc"'),
    ("/bots/0", 404, "There is no bot 0"),
    ("/bots/123456789012345678901", 404, "There is no bot"),
    ("/tournaments/77", 404, "There is no tournament 77"),
    ("/leaderboard/CHESS", 404, 'No game called "CHESS"'),
    ("/no/such/page", 404, "There is nothing at this address"),
    ("/bots/1?before=yesterday", 400, '"before" must be a whole number'),
    ("/bots/1?before=-5", 400, '"before" must be a whole number'),
    ("/games/1?step=a%3Cb", 400, '"step" must be a whole number'),
    ("/downloads/bots/..%2Fmerknera%2Fconfig.py", 404, "There is no reference bot file"),
])
async def test_bad_input_gets_an_error_page(site: Site, http: aiohttp.ClientSession, path: str,
                                            status: int, says: str) -> None:
    got, text, headers = await fetch(http, site, path)
    assert got == status, text[:300]
    assert headers["Content-Type"].startswith("text/html")
    assert escape(says) in text, text[:800]
    assert f"<h1>{status}" in text
    assert "<b" not in text.split("<main")[1].replace("<br", "")  # nothing echoed as markup


async def test_leaderboard_names_redirect_to_their_mnemonic(
        site: Site, http: aiohttp.ClientSession) -> None:
    async with http.get(site.at("/leaderboard/tictactoe"), allow_redirects=False) as response:
        assert response.status == 302
        assert response.headers["Location"] == "/leaderboard/TICTACTOE"


async def test_unknown_api_routes_answer_json(site: Site, http: aiohttp.ClientSession) -> None:
    status, text, headers = await fetch(http, site, "/api/nothing-here")
    assert status == 404
    assert headers["Content-Type"].startswith("application/json")
    assert "error" in json.loads(text)


async def test_the_reference_bots_can_be_downloaded(site: Site,
                                                    http: aiohttp.ClientSession) -> None:
    status, text, _ = await fetch(http, site, "/protocol")
    assert status == 200 and "/downloads/bots/kit.py" in text
    status, source, headers = await fetch(http, site, "/downloads/bots/tictactoe.py")
    assert status == 200 and "def " in source and headers["Content-Type"].startswith("text/")
    async with http.get(site.at("/downloads/merknera-bots.zip")) as response:
        assert response.status == 200
        archive = zipfile.ZipFile(io.BytesIO(await response.read()))
    names = set(archive.namelist())
    assert {"bots/__init__.py", "bots/kit.py", "bots/launcher.py", "bots/tictactoe.py",
            "bots/scrabble.py"} <= names


async def test_a_replay_has_a_frame_per_stored_move_and_ends_in_the_final_state(
        site: Site, http: aiohttp.ClientSession) -> None:
    games = (await api(http, site, "/api/games?limit=500"))["games"]
    for summary in games:
        game = await api(http, site, f"/api/games/{summary['id']}")
        replay = await api(http, site, f"/api/games/{summary['id']}/replay")
        assert replay["error"] is None, (summary["id"], replay["error"])
        assert replay["game"] == game["game"] and replay["reveal"] is True
        assert [f["seq"] for f in replay["frames"]] == [m["seq"] for m in game["moves"]]
        assert all(frame["text"] for frame in replay["frames"])
        states = [replay["state"]] + [f["state"] for f in replay["frames"] if f["state"]]
        rules = site.platform.games[game["game"]]
        if game["reason"] == "NORMAL":  # the final state is the last frame's
            final = rules.spectator_view(rules.state_from_json(game["final_state"]), True)
            assert states[-1] == final, summary["id"]


async def test_a_running_game_hides_what_players_may_not_know(
        site: Site, http: aiohttp.ClientSession) -> None:
    db = site.platform.db
    scrabble = await db.fetchval("SELECT MAX(id) FROM games WHERE game = 'SCRABBLE'")
    await db.write_one("UPDATE games SET status = 'RUNNING', outcome = NULL, reason = NULL "
                       "WHERE id = ?", (scrabble,))
    replay = await api(http, site, f"/api/games/{scrabble}/replay")
    assert replay["reveal"] is False
    for state in [replay["state"]] + [f["state"] for f in replay["frames"]]:
        assert "racks" not in state and "bag" not in state and "bagseed" not in state
        assert len(state["racksizes"]) == len(replay["players"])
    exchanges = [f["move"] for f in replay["frames"] if f["move"]["type"] == "EXCHANGE"]
    assert all("exchangetiles" not in move for move in exchanges)


async def test_the_openapi_document_covers_every_api_route(
        site: Site, http: aiohttp.ClientSession) -> None:
    document = await api(http, site, "/api/openapi.json")
    assert document["openapi"].startswith("3.1")
    documented = {(path, method.upper()) for path, item in document["paths"].items()
                  for method in item}
    app = build_app(site.platform.config)  # the routes the platform serves
    served = {(route.resource.canonical, route.method) for route in app.router.routes()
              if route.resource is not None and route.resource.canonical.startswith("/api/")
              and route.method != "HEAD"}
    assert len(served) >= 20
    assert documented == served
    for path, item in document["paths"].items():
        for operation in item.values():
            for ref in json.dumps(operation).split('"$ref": "#/components/schemas/')[1:]:
                assert ref.split('"')[0] in document["components"]["schemas"], path

"""The pages over plain HTTP against a store of real games: every page answers, bad input
gets a 404 or 400 page, nothing a bot chose can become markup, the headers keep scripts to
this origin, and the API's replay and OpenAPI document say what they should."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import jsonpatch
import pytest
from markupsafe import escape

from merknera.app import build_app
from merknera.games import REGISTRY
from merknera.store import stats
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


TIME = re.compile(r'<time datetime="([^"]*)">([^<]*)</time>')
DATE_AND_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}")


async def test_every_time_a_page_shows_is_utc_and_says_so(
        site: Site, http: aiohttp.ClientSession) -> None:
    games = (await api(http, site, "/api/games?limit=5"))["games"]
    bots = (await api(http, site, "/api/bots?all=1"))["bots"][:5]
    paths = ["/", "/tournaments/1", *(f"/bots/{b['id']}" for b in bots),
             *(f"/games/{g['id']}" for g in games)]
    for path in paths:
        status, text, _ = await fetch(http, site, path)
        assert status == 200, path
        times = TIME.findall(text)
        assert times, f"{path} shows no time"
        for stamp, shown in times:
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", stamp), stamp
            assert shown == f"{stamp[:10]} {stamp[11:19]} UTC", (path, stamp, shown)
        # Nothing else on the page reads as a date and time.
        assert DATE_AND_TIME.findall(TIME.sub("", text)) == [], path


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
    ("/bots/%C2%B2", 404, 'There is no bot "²"'),  # isdigit() but not a number int() reads
    ("/bots/%EF%BC%91", 404, 'There is no bot "１"'),  # a full-width 1 is no alias of bot 1
    ("/games/1?step=%C2%B2", 400, '"step" must be a whole number'),
])
async def test_bad_input_gets_an_error_page(site: Site, http: aiohttp.ClientSession, path: str,
                                            status: int, says: str) -> None:
    got, text, headers = await fetch(http, site, path)
    assert got == status, text[:300]
    assert headers["Content-Type"].startswith("text/html")
    assert escape(says) in text, text[:800]
    assert f"<h1>{status}" in text
    assert "<b" not in text.split("<main")[1].replace("<br", "")  # nothing echoed as markup


@pytest.mark.parametrize(("path", "status"), [
    ("/api/games/%C2%B2", 404), ("/api/games/%C2%B2/replay", 404), ("/api/bots/%C2%B2", 404),
    ("/api/games/1/live?after=%C2%B2", 400), ("/api/games?bot=%C2%B2", 400),
    ("/api/admin/bots/%C2%B2/enable", 405), ("/api/games/1/replay?states=whole", 400),
    ("/api/games/1/live?states=%C2%B2", 400),
])
async def test_the_api_refuses_odd_digits_with_json(site: Site, http: aiohttp.ClientSession,
                                                   path: str, status: int) -> None:
    got, text, headers = await fetch(http, site, path)
    assert got == status, text[:300]
    assert headers["Content-Type"].startswith("application/json")
    assert "error" in json.loads(text)


async def test_event_streams_refuse_head_and_a_bad_last_event_id(
        site: Site, http: aiohttp.ClientSession) -> None:
    for path in ("/api/live", "/api/games/1/live"):
        async with http.head(site.at(path)) as response:
            assert response.status == 405, path
    async with http.get(site.at("/api/games/1/live"),
                        headers={"Last-Event-ID": "x"}) as response:
        assert response.status == 400
        assert "Last-Event-ID" in (await response.json())["error"]


async def test_a_finished_replay_is_the_same_gzipped_cached_or_not(
        site: Site, http: aiohttp.ClientSession) -> None:
    first = await api(http, site, "/api/games/1/replay")
    async with http.get(site.at("/api/games/1/replay"),
                        headers={"Accept-Encoding": "identity"}) as response:
        assert "Content-Encoding" not in response.headers
        plain = json.loads(await response.read())
    async with http.get(site.at("/api/games/1/replay"),
                        headers={"Accept-Encoding": "gzip"}) as response:
        assert response.headers["Content-Encoding"] == "gzip"
        gzipped = await response.json()
    assert first == plain == gzipped


async def test_a_game_that_cannot_be_set_up_or_is_not_hosted_says_so(
        site: Site, http: aiohttp.ClientSession) -> None:
    db = site.platform.db
    hexagons = await db.fetchval("SELECT MIN(id) FROM games WHERE game = 'HEXAGONS'")
    await db.write_one("UPDATE games SET settings = '{\"rows\": 4}' WHERE id = ?", (hexagons,))
    replay = await api(http, site, f"/api/games/{hexagons}/replay")
    assert replay["frames"] == [] and replay["state"] is None
    assert "cannot be set up again from its stored settings" in replay["error"]
    status, text, _ = await fetch(http, site, f"/games/{hexagons}")
    assert status == 200
    kalaha = await db.fetchval("SELECT MIN(id) FROM games WHERE game = 'KALAHA'")
    await db.write_one("UPDATE games SET game = 'OLDGAME' WHERE id = ?", (kalaha,))
    for path in (f"/api/games/{kalaha}/replay", f"/api/games/{kalaha}/live"):
        status, text, _ = await fetch(http, site, path)
        assert status == 404, path
        assert "OLDGAME, which is not hosted here" in json.loads(text)["error"]
    status, text, _ = await fetch(http, site, f"/games/{kalaha}")
    assert status == 200 and "OLDGAME" in text


async def test_results_by_opponent_go_by_places_in_games_of_three(
        site: Site, http: aiohttp.ClientSession) -> None:
    db = site.platform.db
    rows = await db.fetchall("SELECT game_id, bot_id, rank FROM seats WHERE game_id IN "
                             "(SELECT game_id FROM seats GROUP BY game_id HAVING COUNT(*) = 3)")
    assert rows, "the web store has a game of three"
    bot = rows[0]["bot_id"]
    expected: dict[int, list[int]] = {}
    seats = await db.fetchall("SELECT game_id, bot_id, rank FROM seats WHERE rank IS NOT NULL")
    places = {(r["game_id"], r["bot_id"]): r["rank"] for r in seats}
    for (game, who), rank in places.items():
        if who != bot and (game, bot) in places:
            mine = places[(game, bot)]
            tally = expected.setdefault(who, [0, 0, 0, 0])
            tally[0] += 1
            tally[1 if mine < rank else 2 if mine == rank else 3] += 1
    found = {o["id"]: [o["played"], o["won"], o["drawn"], o["lost"]]
             for o in await stats.by_opponent(db, bot)}
    assert found == expected


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
    assert {"merknera_bots/__init__.py", "merknera_bots/kit.py", "merknera_bots/launcher.py",
            "merknera_bots/tictactoe.py", "merknera_bots/scrabble.py"} <= names


def rebuilt(replay: dict[str, Any]) -> list[Any]:
    """The state after each frame of a replay (0: the start), from its whole states and its
    patches."""
    states = [replay["state"]]
    for frame in replay["frames"]:
        states.append(frame["state"] if "state" in frame
                      else jsonpatch.apply_patch(states[-1], frame["patch"]))
    return states


async def test_a_replay_has_a_frame_per_stored_move_and_ends_in_the_final_state(
        site: Site, http: aiohttp.ClientSession) -> None:
    games = (await api(http, site, "/api/games?limit=500"))["games"]
    for summary in games:
        game = await api(http, site, f"/api/games/{summary['id']}")
        replay = await api(http, site, f"/api/games/{summary['id']}/replay")
        assert replay["error"] is None, (summary["id"], replay["error"])
        assert replay["game"] == game["game"] and replay["reveal"] is True
        assert replay["states"] == "delta"
        assert [f["seq"] for f in replay["frames"]] == [m["seq"] for m in game["moves"]]
        assert all(frame["text"] for frame in replay["frames"])
        states = rebuilt(replay)
        rules = site.platform.games[game["game"]]
        if game["reason"] == "NORMAL":  # the final state is the last frame's
            final = rules.spectator_view(rules.state_from_json(game["final_state"]), True)
            assert states[-1] == final, summary["id"]
        # Every state whole is the same replay, as the API's other form.
        full = await api(http, site, f"/api/games/{summary['id']}/replay?states=full")
        assert full["states"] == "full"
        assert [f["state"] for f in full["frames"]] == states[1:], summary["id"]
        assert full["state"] == replay["state"]


async def mark_running(site: Site, game_id: int) -> None:
    """Make a finished game look running, under a lease of a node elsewhere that lasts:
    without the lease, the platform's claim loop would take the game, play it to its end
    from its move log, and finish it again while the test reads it."""
    await site.platform.db.write_one(
        "UPDATE games SET status = 'RUNNING', outcome = NULL, reason = NULL, "
        "node = 'a-node-elsewhere', lease_until = 1e12 WHERE id = ?", (game_id,))


async def test_a_running_game_hides_what_players_may_not_know(
        site: Site, http: aiohttp.ClientSession) -> None:
    db = site.platform.db
    scrabble = await db.fetchval("SELECT MAX(id) FROM games WHERE game = 'SCRABBLE'")
    await mark_running(site, scrabble)
    replay = await api(http, site, f"/api/games/{scrabble}/replay")
    assert replay["reveal"] is False
    for state in rebuilt(replay):
        assert "racks" not in state and "bag" not in state and "bagseed" not in state
        assert len(state["racksizes"]) == len(replay["players"])
    exchanges = [f["move"] for f in replay["frames"] if f["move"]["type"] == "EXCHANGE"]
    assert all("exchangetiles" not in move for move in exchanges)


async def test_a_running_game_hides_why_a_move_was_refused(
        site: Site, http: aiohttp.ClientSession) -> None:
    """The reason names what the bot holds ("not in your rack IIVBOLA")."""
    db = site.platform.db
    scrabble = await db.fetchval("SELECT MAX(id) FROM games WHERE game = 'SCRABBLE'")
    seq = await db.fetchval("SELECT MAX(seq) FROM moves WHERE game_id = ?", (scrabble,))
    await db.write_one(
        "INSERT INTO moves (game_id, seq, seat, fault, fault_detail, created_at) VALUES "
        "(?, ?, 0, 'ILLEGAL_MOVE', 'the tile Q (for H8) is not in your rack IIVBOLA', "
        "'2026-01-01T00:00:00.000Z')", (scrabble, seq + 1))
    await mark_running(site, scrabble)
    replay = await api(http, site, f"/api/games/{scrabble}/replay")
    game = await api(http, site, f"/api/games/{scrabble}")
    async with http.get(site.at(f"/api/games/{scrabble}/live?after={seq}")) as response:
        live = (await response.content.readuntil(b"\n\n")).decode()
    for text in (json.dumps(replay), json.dumps(game), live):
        assert "IIVBOLA" not in text
        assert "an illegal move (the details show once the game is over)" in text


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


async def test_the_openapi_document_describes_the_replays_as_served(
        site: Site, http: aiohttp.ClientSession) -> None:
    document = await api(http, site, "/api/openapi.json")
    schemas = document["components"]["schemas"]
    frame_schema, op_schema = schemas["Frame"], schemas["PatchOperation"]
    path = document["paths"]["/api/games/{id}/replay"]["get"]
    states = next(p for p in path["parameters"] if p["name"] == "states")
    assert states["schema"]["enum"] == ["delta", "full"]
    body = path["responses"]["200"]["content"]["application/json"]["schema"]["properties"]
    one_of = [set(choice["required"]) for choice in frame_schema["oneOf"]]
    games = (await api(http, site, "/api/games?game=SQUELCH&status=FINISHED"))["games"]
    for form in states["schema"]["enum"]:
        replay = await api(http, site, f"/api/games/{games[0]['id']}/replay?states={form}")
        assert replay["states"] == form and set(replay) <= set(body)
        for frame in replay["frames"]:
            assert set(frame) <= set(frame_schema["properties"]), frame
            assert [keys <= set(frame) for keys in one_of].count(True) == 1, frame
            for op in frame.get("patch", []):
                assert set(op) <= set(op_schema["properties"])
                assert op["op"] in op_schema["properties"]["op"]["enum"]
        kinds = {"state" in frame for frame in replay["frames"]}
        assert kinds == ({True, False} if form == "delta" else {True}), form

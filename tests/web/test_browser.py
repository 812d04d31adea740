"""The pages in headless Chromium against a store of real games: each page loads without a
script error, replays of every game step, play and jump, a jump anywhere in a long game
draws the board its whole state draws, the page applies patches as the server makes them,
a live game advances as its moves are made, a hostile bot name stays text, and pages fit a
phone's width.  Screenshots go to ``test-artifacts/web/``."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import aiohttp
from playwright.async_api import Browser, Page, expect

from merknera.games import REGISTRY
from merknera.store import games as game_store
from merknera.store.db import Connection
from merknera.web.replay import KEYFRAME_EVERY, Replayer
from tests.web.conftest import Site, Watched, open_page
from tests.web.replay_support import playthrough, tables
from tests.web.store_builder import HOSTILE_DESCRIPTION, HOSTILE_NAME, HOSTILE_WEBSITE
from tests.web.test_jsonpatch import REFUSED


async def get_json(site: Site, path: str) -> Any:
    async with aiohttp.ClientSession() as session, session.get(site.at(path)) as response:
        assert response.status == 200, path
        return await response.json()


async def index_of(page: Page) -> int:
    """How many frames the replay shows."""
    return int(await page.locator("#replay").get_attribute("data-index") or -1)


async def test_home_and_every_leaderboard(site: Site, page: Watched) -> None:
    await page.page.goto(site.at("/"))
    await expect(page.page.locator(".cards .card")).to_have_count(len(REGISTRY))
    recent = await get_json(site, "/api/games?status=FINISHED&limit=15")
    await expect(page.page.locator("#live table.games").nth(1).locator("tbody tr")).to_have_count(
        len(recent["games"]))
    await page.shot("home")
    for mnemonic in REGISTRY:
        await page.page.goto(site.at(f"/leaderboard/{mnemonic}"))
        rows = (await get_json(site, f"/api/leaderboard?game={mnemonic}"))["bots"]
        await expect(page.page.locator("h1")).to_contain_text(REGISTRY[mnemonic].name)
        await expect(page.page.locator("table.leaderboard tbody tr")).to_have_count(len(rows))
        await expect(page.page.locator("svg.interval")).to_have_count(len(rows))
        first = page.page.locator("table.leaderboard tbody tr").first
        await expect(first.locator("a.bot")).to_have_text(rows[0]["name"])
    await page.shot("leaderboard-tictactoe")


async def test_a_hostile_bot_shows_as_text_and_its_owner_reads_its_log(
        site: Site, page: Watched) -> None:
    bots = (await get_json(site, "/api/bots?game=TICTACTOE"))["bots"]
    hostile = next(bot for bot in bots if bot["name"] == HOSTILE_NAME)
    await page.page.goto(site.at(f"/bots/{hostile['id']}"))
    await expect(page.page.locator("h1")).to_contain_text(HOSTILE_NAME)
    await expect(page.page.locator(".description")).to_have_text(HOSTILE_DESCRIPTION)
    await expect(page.page.locator(".lead")).to_contain_text(HOSTILE_WEBSITE)
    await expect(page.page.locator(f'a[href="{HOSTILE_WEBSITE}"]')).to_have_count(0)
    assert await page.page.evaluate("document.querySelectorAll('img').length") == 0
    await expect(page.page.locator(".chart polyline.mu")).to_have_count(1)
    # The log: refused with a wrong token, shown with the owner's.
    page.allowed.append("403")
    await page.page.fill("#log-token", "not-the-token")
    await page.page.click("#log-form button[type=submit]")
    await expect(page.page.locator("#log-status")).to_contain_text("only the bot's owner")
    await page.page.fill("#log-token", site.token)
    await page.page.click("#log-form button[type=submit]")
    await expect(page.page.locator("#log-entries li").first).to_be_visible()
    await expect(page.page.locator("#log-entries")).to_contain_text("Registered")
    await page.shot("bot-hostile")
    # Signed in, the owner may challenge another bot: refused while it is offline, asked
    # for once it is online.
    opponent = next(bot for bot in bots if bot["name"] != HOSTILE_NAME)
    await expect(page.page.locator("#challenge-form")).to_be_visible()
    page.allowed.append("409")
    await page.page.fill("#challenge-opponent", opponent["name"])
    await page.page.fill("#challenge-games", "3")
    await page.page.click("#challenge-form button[type=submit]")
    await expect(page.page.locator("#challenge-status")).to_contain_text("is offline")
    site.platform.scheduler.arena.presence.heard(opponent["id"])
    await page.page.click("#challenge-form button[type=submit]")
    await expect(page.page.locator("#challenge-status")).to_contain_text(
        f"3 games against {opponent['name']}")
    await page.page.click("#log-signout")
    await expect(page.page.locator("#challenge-form")).to_be_hidden()
    # The leaderboard and the home page show the name as text too.
    for path in ("/leaderboard/TICTACTOE", "/"):
        await page.page.goto(site.at(path))
        await expect(page.page.get_by_text(HOSTILE_NAME, exact=True).first).to_be_visible()


async def step_through(page: Page, frames: int) -> None:
    """Every control of the replay, checked by the frame it lands on."""
    await expect(page.locator("#position")).to_have_text(f"{frames} / {frames}")
    await page.click('[data-act="first"]')
    assert await index_of(page) == 0
    await page.click('[data-act="next"]')
    await page.click('[data-act="next"]')
    assert await index_of(page) == min(2, frames)
    await page.click('[data-act="prev"]')
    assert await index_of(page) == min(2, frames) - 1
    await page.keyboard.press("End")
    assert await index_of(page) == frames
    await page.keyboard.press("ArrowLeft")
    assert await index_of(page) == frames - 1
    middle = frames // 2
    await page.locator("#scrub").evaluate(
        "(el, v) => { el.value = v; el.dispatchEvent(new Event('input')); }", middle)
    assert await index_of(page) == middle
    chosen = min(3, frames)
    await page.locator("#moves li").nth(chosen - 1).click()
    assert await index_of(page) == chosen
    await expect(page.locator("#moves li.current-move")).to_have_count(1)
    await page.click('[data-act="first"]')
    await page.click('[data-act="play"]')  # plays on by itself
    await expect(page.locator("#replay")).not_to_have_attribute("data-index", "0")
    await page.click('[data-act="play"]')  # pauses
    paused = await index_of(page)
    await page.wait_for_timeout(900)
    assert await index_of(page) == paused


async def test_every_game_replays_move_by_move(site: Site, page: Watched) -> None:
    games = (await get_json(site, "/api/games?status=FINISHED&limit=500"))["games"]
    seen: set[str] = set()
    for summary in games:
        if summary["game"] in seen:
            continue
        seen.add(summary["game"])
        replay = await get_json(site, f"/api/games/{summary['id']}/replay")
        frames = len(replay["frames"])
        await page.page.goto(site.at(f"/games/{summary['id']}"))
        board = page.page.locator(f"#board .board-{summary['game'].lower()}")
        await expect(board).to_have_count(1)
        await step_through(page.page, frames)
        await page.page.keyboard.press("End")
        await page.shot(f"game-{summary['game'].lower()}")
    assert seen == set(REGISTRY)


async def test_a_tictactoe_board_shows_each_frames_marks(site: Site, page: Watched) -> None:
    games = (await get_json(site, "/api/games?game=TICTACTOE&status=FINISHED"))["games"]
    replay = await get_json(site, f"/api/games/{games[0]['id']}/replay?states=full")
    await page.page.goto(site.at(f"/games/{games[0]['id']}?step=0"))
    cells = page.page.locator("#board [data-cell]")
    await expect(cells).to_have_count(9)
    states = [replay["state"]] + [frame["state"] for frame in replay["frames"]]
    for step, state in enumerate(states):
        if step:
            await page.page.click('[data-act="next"]')
        marks = await cells.evaluate_all("cells => cells.map(c => c.textContent.trim())")
        assert marks == state, (step, marks, state)


async def test_tournament_protocol_and_error_pages(site: Site, page: Watched) -> None:
    tournament = await get_json(site, "/api/tournaments/1")
    await page.page.goto(site.at("/tournaments/1"))
    await expect(page.page.locator("table.standings tbody tr")).to_have_count(
        len(tournament["entrants"]))
    await expect(page.page.locator(".pairings li")).to_have_count(
        len(tournament["games"]) + len(tournament["byes"]))
    await page.shot("tournament")
    await page.page.goto(site.at("/protocol"))
    await expect(page.page.locator("h2#register")).to_be_visible()
    await expect(page.page.locator(".downloads a[href='/downloads/bots/kit.py']")).to_have_count(1)
    await page.shot("protocol")
    page.allowed.append("404")
    response = await page.page.goto(site.at("/games/424242"))
    assert response is not None and response.status == 404
    await expect(page.page.locator("h1")).to_have_text("404 · Not Found")
    await page.shot("not-found")


READER_ZONE = "America/New_York"
"""A reader's zone other than the server's (UTC): the pages' times are still UTC, and say
so."""


async def test_every_time_on_the_pages_says_its_zone(site: Site, browser: Browser) -> None:
    reader = await open_page(browser, timezone=READER_ZONE)
    assert await reader.page.evaluate(
        "Intl.DateTimeFormat().resolvedOptions().timeZone") == READER_ZONE
    game = (await get_json(site, "/api/games?game=TICTACTOE&status=FINISHED"))["games"][0]
    bot = game["seats"][0]["bot_id"]
    for path in ("/", f"/bots/{bot}", f"/games/{game['id']}", "/tournaments/1"):
        await reader.page.goto(site.at(path))
        if path.startswith("/bots/"):  # the log, which the page's script renders
            await reader.page.fill("#log-token", site.token)
            await reader.page.click("#log-form button[type=submit]")
            await expect(reader.page.locator("#log-entries li").first).to_be_visible()
        times = await reader.page.locator("time").evaluate_all(
            "times => times.map(t => [t.dateTime, t.textContent, "
            "new Date(t.dateTime).toISOString()])")
        assert times, f"{path} shows no time"
        for stamp, text, instant in times:
            # The instant in UTC, whatever the reader's zone, with the zone written.
            assert text == instant[:19].replace("T", " ") + " UTC", (path, stamp, text)
        # No time without its zone: every date and time of the text is a <time>'s.
        body = await reader.page.locator("main").inner_text()
        shown = re.findall(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?(?: UTC)?", body)
        assert shown and all(found.endswith(" UTC") for found in shown), (path, shown)
        assert len(shown) == len(times), (path, shown, times)
        await reader.shot(f"zones-{path.strip('/').replace('/', '-') or 'home'}")
    assert reader.unexpected() == []


async def test_pages_fit_a_phone(site: Site, browser: Browser) -> None:
    phone = await open_page(browser, width=390, height=844)
    game = (await get_json(site, "/api/games?game=SCRABBLE&status=FINISHED"))["games"][0]
    bot = game["seats"][0]["bot_id"]
    for path in ("/", "/leaderboard/SCRABBLE", f"/bots/{bot}", f"/games/{game['id']}",
                 "/tournaments/1", "/protocol"):
        await phone.page.goto(site.at(path))
        await phone.page.wait_for_load_state("networkidle")
        overflow = await phone.page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{path} is {overflow} px wider than the phone"
        name = path.strip("/").replace("/", "-") or "home"
        await phone.shot(f"phone-{name}")
    assert phone.unexpected() == []



async def store_hexagons(site: Site, rows: int, cols: int, seed: int) -> int:
    """A finished Hexagons game of two random players stored as the runner stores one, on
    a board larger than the store's own games; its id."""
    game = site.platform.games["HEXAGONS"]
    bots = (await get_json(site, "/api/bots?game=HEXAGONS"))["bots"]
    settings: dict[str, Any] = {"rows": rows, "cols": cols}
    players = [bot["name"] for bot in bots[:2]]
    db = site.platform.db

    def create(conn: Connection) -> int:
        return game_store.create(conn, "HEXAGONS", seed, [bot["id"] for bot in bots[:2]],
                                 settings)

    game_id = await db.transaction(create)
    await game_store.mark_running(db, game_id, [0, 1])
    state, chooser = game.new(settings, players, random.Random(seed)), random.Random(seed)
    calls: list[game_store.LoggedCall] = []
    while (seat := game.to_move(state)) is not None:
        move = chooser.choice(list(game.legal_moves(state, seat)))
        state = game.apply(state, seat, move)
        calls.append(game_store.LoggedCall(len(calls) + 1, seat, move=game.move_to_wire(move),
                                           latency_ms=2.5))
    assert await game_store.record_moves(db, game_id, calls)
    outcome = game.outcome(state)
    assert outcome is not None
    assert await game_store.finish(db, game_id, outcome, game.state_to_json(state))
    return game_id


DRAWN = """([kind, state, ctx]) => {
  const box = document.createElement("div");
  window.MerkneraBoards[kind](box, state, ctx);
  return box.innerHTML;
}"""
"""The board a renderer draws from a whole state, as the page drew every frame before
replays sent patches."""


async def shows(page: Page, full: dict[str, Any], index: int) -> None:
    """The page shows frame ``index`` (0: the start) exactly as its whole state draws."""
    assert await index_of(page) == index
    frame = full["frames"][index - 1] if index else None
    state = frame["state"] if frame else full["state"]
    ctx = {"players": full["players"], "setup": full["setup"], "frame": frame,
           "reveal": full["reveal"]}
    expected = await page.evaluate(DRAWN, [full["game"], state, ctx])
    assert "mb-error" not in expected
    assert await page.locator("#board").inner_html() == expected, index
    await expect(page.locator("#position")).to_have_text(f"{index} / {len(full['frames'])}")


async def test_a_jump_anywhere_in_a_long_game_draws_its_whole_states_board(
        site: Site, page: Watched) -> None:
    game_id = await store_hexagons(site, 13, 13, seed=3)
    full = await get_json(site, f"/api/games/{game_id}/replay?states=full")
    frames = len(full["frames"])
    assert frames > 3 * KEYFRAME_EVERY, frames  # keyframes, and patches after each
    await page.page.goto(site.at(f"/games/{game_id}"))
    await expect(page.page.locator("#board .board-hexagons")).to_have_count(1)
    await shows(page.page, full, frames)
    late = frames - 7
    await page.page.locator("#scrub").evaluate(
        "(el, v) => { el.value = v; el.dispatchEvent(new Event('input')); }", late)
    await shows(page.page, full, late)
    # Back across a keyframe: its frame, then one rebuilt from the keyframe before it.
    await page.page.locator("#moves li").nth(2 * KEYFRAME_EVERY).click()
    await shows(page.page, full, 2 * KEYFRAME_EVERY + 1)
    for index in (2 * KEYFRAME_EVERY, 2 * KEYFRAME_EVERY - 1):
        await page.page.keyboard.press("ArrowLeft")
        await shows(page.page, full, index)
    await page.page.keyboard.press("Home")
    await shows(page.page, full, 0)
    await page.page.keyboard.press("End")
    await shows(page.page, full, frames)
    await page.shot("game-hexagons-13x13")


REBUILT = """(text) => {
  const [start, frames] = JSON.parse(text);
  const before = JSON.stringify(start);
  let state = start;
  const wrong = [];
  frames.forEach((frame, n) => {
    const next = "state" in frame ? frame.state : window.MerkneraPatch.apply(state, frame.patch);
    if (JSON.stringify(next) !== JSON.stringify(frame.expected)) { wrong.push(n + 1); }
    state = next;
  });
  if (JSON.stringify(start) !== before) { wrong.push("the start state was changed"); }
  return wrong;
}"""


async def test_the_page_applies_patches_as_the_server_makes_them(
        site: Site, page: Watched) -> None:
    """Every registered game's seeded playthrough, patched in the browser, gives every view
    (as JSON text, key order included), and patches that do not apply are refused."""
    await page.page.goto(site.at("/games/1"))
    await expect(page.page.locator("#board .mb")).to_have_count(1)
    for mnemonic, seats in tables():
        for reveal in (True, False):
            played = playthrough(mnemonic, seats, reveal)
            replayer = Replayer(played.header, reveal)
            start = replayer.start()["state"]
            frames = [{**frame, "expected": view}
                      for frame, view in zip(replayer.frames(played.rows), played.views[1:],
                                             strict=True)]
            # One JSON string: Playwright passes it at once, where it walks objects slowly.
            wrong = await page.page.evaluate(REBUILT, json.dumps([start, frames]))
            assert wrong == [], (mnemonic, seats, reveal)
    for document, patch, _ in REFUSED:
        said = await page.page.evaluate(
            "([doc, patch]) => { try { window.MerkneraPatch.apply(doc, patch); return null; } "
            "catch (e) { return e.message; } }", [document, patch])
        assert said is not None and said.startswith("operation "), (patch, said)

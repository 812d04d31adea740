"""Live games: a running game's page advances as the moves are made and shows the outcome
when it ends; the event stream resumes after the last frame a client had; the home page's
running games follow the arena.  Real bot processes play on a fresh platform."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import jsonpatch
import pytest
from playwright.async_api import Browser, expect
from pytest_aiohttp import AiohttpServer

from merknera.app import Platform, build_app
from merknera.store import users
from tests.e2e.harness import READY, Processes
from tests.web.conftest import Site, open_page, site_config

DELAY = 0.4
"""Seconds each bot waits before it answers a move: long enough to watch a game advance."""


@dataclass
class SlowGames:
    """A fresh platform and two slow perfect tic-tac-toe bots playing on it."""

    site: Site
    processes: Processes

    async def running_game(self) -> int:
        """The id of a game being played now (waits for one)."""
        db = self.site.platform.db
        async with asyncio.timeout(30):
            while True:
                found = await db.fetchval(
                    "SELECT id FROM games WHERE status = 'RUNNING' AND "
                    "(SELECT COUNT(*) FROM moves WHERE game_id = games.id) BETWEEN 1 AND 3 "
                    "ORDER BY id LIMIT 1")
                if found is not None:
                    return int(found)
                await asyncio.sleep(0.05)


@pytest.fixture
async def arena(tmp_path: Path, aiohttp_server: AiohttpServer) -> AsyncIterator[SlowGames]:
    config = site_config(tmp_path / "merknera.db")
    platform = Platform(config)
    server = await aiohttp_server(build_app(config, platform))
    _, token = await users.create_user(platform.db, "live")
    site = Site(platform, str(server.make_url("/")), token)
    processes = Processes(tmp_path)
    try:
        for name in ("Slow Sam", "Slow Sue"):
            child = await processes.start(
                f"bot-{name}", "-m", "merknera_bots.tictactoe", "--strategy", "perfect", "--delay",
                str(DELAY), "--platform", site.url, "--token", token, "--port", "0",
                "--name", name)
            await processes.first_line(child, READY)
        yield SlowGames(site, processes)
    finally:
        await processes.close()


async def test_a_running_game_page_follows_its_moves_to_the_end(
        arena: SlowGames, browser: Browser) -> None:
    game_id = await arena.running_game()
    watched = await open_page(browser)
    page = watched.page
    await page.goto(arena.site.at(f"/games/{game_id}"))
    await expect(page.locator("#live-badge")).to_be_visible()
    start = int(await page.locator("#replay").get_attribute("data-index") or "")
    assert start < 9
    # More moves arrive while the page is open, without a reload, and it follows them.
    await page.wait_for_function(
        "n => Number(document.querySelector('#replay').dataset.index) >= n "
        "&& document.getElementById('live-badge')", arg=min(start + 2, 9), timeout=15_000)
    await watched.shot("live-game")
    # At the end the page shows the outcome: perfect play draws, on a full board.
    await expect(page.locator("#outcome")).to_contain_text("draw", timeout=30_000)
    await expect(page.locator("#position")).to_have_text("9 / 9")
    await expect(page.locator("#board [data-cell]:empty")).to_have_count(0)
    await watched.shot("live-game-finished")
    assert watched.unexpected() == []


async def test_the_event_stream_resumes_after_the_last_frame(arena: SlowGames) -> None:
    game_id = await arena.running_game()
    url = arena.site.at(f"/api/games/{game_id}/live")
    seen: list[int] = []
    frames: list[dict[str, Any]] = []
    ended = False
    async with aiohttp.ClientSession() as session, session.get(
            url, headers={"Last-Event-ID": "1"}) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        event = ""
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("id: "):
                seen.append(int(line[4:]))
            if line.startswith("event: "):
                event = line[7:]
            if line.startswith("data: ") and event == "frame":
                frames.append(json.loads(line[6:]))
            if line == "event: end":
                ended = True
                break
    assert ended
    assert seen == list(range(2, 10)), seen  # after move 1, every move once, in order
    # The first frame a stream sends is whole (the client may have nothing before it), the
    # others are patches, and together they are every state the game went through.
    assert "state" in frames[0] and all("patch" in frame for frame in frames[1:])
    states = [frames[0]["state"]]
    for frame in frames[1:]:
        states.append(jsonpatch.apply_patch(states[-1], frame["patch"]))
    async with aiohttp.ClientSession() as session, session.get(
            arena.site.at(f"/api/games/{game_id}/replay?states=full")) as response:
        full = await response.json()
    assert states == [frame["state"] for frame in full["frames"][1:]]
    async with aiohttp.ClientSession() as session, session.get(url + "?after=x") as response:
        assert response.status == 400
        assert "error" in json.loads(await response.text())


async def test_the_home_page_follows_the_running_games(arena: SlowGames, browser: Browser) -> None:
    await arena.running_game()
    watched = await open_page(browser)
    page = watched.page
    await page.goto(arena.site.at("/"))
    running = page.locator("#live table.games").first.locator("tbody tr")
    await expect(running.first.locator("a").first).to_have_text(re.compile(r"^#[12]$"))
    await expect(page.locator("#live")).to_have_attribute("data-updated", re.compile(r"^\d+$"))
    # Once both games have ended, the running list empties and the results show them.
    results = page.locator("#live table.games").nth(1).locator("tbody tr")
    await expect(results).to_have_count(2, timeout=40_000)
    await expect(running).to_have_text("None yet.")
    assert watched.unexpected() == []

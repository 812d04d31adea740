"""The web tests' fixtures: a store with real games of every kind (made once per session by
real processes, :mod:`tests.web.store_builder`), the platform serving a copy of it, and
headless Chromium driven by Playwright's async API in the test's own event loop.

Chromium is Debian's (``/usr/bin/chromium``, installed by ``make test`` when missing;
Playwright never downloads a browser here).  Without it the browser tests fail, never
skip: a missing install step must show.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.async_api import Browser, ConsoleMessage, Dialog, Page, async_playwright
from pytest_aiohttp import AiohttpServer

from merknera.app import Platform, build_app
from merknera.config import CallSettings, Config, GameRules, LivenessSettings, StoreSettings

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("MERKNERA_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = REPO / "test-artifacts" / "web"
"""Screenshots the tests take (kept as CI artifacts; ignored by git)."""
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic", "--disable-dev-shm-usage"]
BUILD_PATIENCE = 300
"""Seconds the store builder may take (it takes about 20 here): a guard, not a measure."""


@pytest.fixture(scope="session")
def web_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with ``merknera.db`` (real games of every kind, a tournament, a bot with a
    hostile name) and ``token`` (its bots' owner's token)."""
    workdir = tmp_path_factory.mktemp("web-store")
    done = subprocess.run([sys.executable, "-m", "tests.web.store_builder", str(workdir)],
                          cwd=REPO, capture_output=True, text=True, timeout=BUILD_PATIENCE,
                          check=False)
    assert done.returncode == 0, f"the store builder failed:\n{done.stdout}\n{done.stderr}"
    return workdir


def site_config(db: Path) -> Config:
    """A platform for browsing: no ladder, quick to give up on the stored bots (gone)."""
    return Config(
        store=StoreSettings(db=str(db)),
        calls=CallSettings(ping_timeout=0.5, connect_timeout=0.5),
        liveness=LivenessSettings(
            ping_interval=60.0,
            offline_retry_min=5.0,
            offline_retry_max=30.0,
            offline_grace=2.0,
        ),
        rules=GameRules(move_timeout=5.0),
    )


@dataclass
class Site:
    """A running platform and its base URL."""

    platform: Platform
    url: str
    token: str = ""

    def at(self, path: str) -> str:
        """The absolute URL of ``path``."""
        return self.url.rstrip("/") + path


@pytest.fixture
async def site(web_store: Path, tmp_path: Path, aiohttp_server: AiohttpServer) -> Site:
    """The platform serving a copy of the web store on a real port."""
    db = tmp_path / "merknera.db"
    shutil.copy(web_store / "merknera.db", db)
    config = site_config(db)
    platform = Platform(config)
    server = await aiohttp_server(build_app(config, platform))
    return Site(platform, str(server.make_url("/")), (web_store / "token").read_text().strip())


@dataclass
class Watched:
    """A browser page and what went wrong on it: script errors, console errors, dialogs."""

    page: Page
    problems: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)
    """Substrings of console errors a test expects (a 404 page's own status)."""

    def unexpected(self) -> list[str]:
        """The problems no test expected."""
        return [p for p in self.problems if not any(a in p for a in self.allowed)]

    async def shot(self, name: str) -> Path:
        """A full-page screenshot in the test artifacts."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        await self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def chromium() -> Path:
    """Debian's Chromium; the test fails (never skips) when it is missing."""
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is not at {CHROMIUM}: install Debian's package (apt-get install "
                    "chromium; make test does) or set MERKNERA_CHROMIUM")
    return CHROMIUM


@pytest.fixture
async def browser(chromium: Path) -> AsyncIterator[Browser]:
    """Headless Debian Chromium."""
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(chromium),
                                                    headless=True, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


async def open_page(browser: Browser, width: int = 1200, height: int = 900,
                    timezone: str | None = None) -> Watched:
    """A new page whose errors and dialogs are recorded (a dialog would mean injected
    script ran); ``timezone``: the reader's zone (the machine's by default)."""
    context = await browser.new_context(viewport={"width": width, "height": height},
                                        timezone_id=timezone)
    page = await context.new_page()
    watched = Watched(page)

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            watched.problems.append(f"console: {message.text}")

    async def on_dialog(dialog: Dialog) -> None:
        watched.problems.append(f"dialog: {dialog.message}")
        await dialog.dismiss()

    page.on("console", on_console)
    page.on("pageerror", lambda error: watched.problems.append(f"page error: {error}"))
    page.on("dialog", on_dialog)
    return watched


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Watched]:
    """A desktop-sized page; the test fails if anything unexpected went wrong on it."""
    watched = await open_page(browser)
    yield watched
    assert watched.unexpected() == []

"""The reference bots of every game the platform calls over JSON-RPC (``merknera_bots``),
served in this process for ``merknera try``.

They are served on loopback by a thread of their own, with an event loop of its own: they
start in milliseconds (no interpreter to start, nothing to import again), nothing outlives
the command (a killed command leaves no bot process behind), and a reference bot thinking
over its move never holds up the platform's loop for longer than a switch of the
interpreter's lock, so the time limits of the bot tried, and the latencies measured, are
the platform's as it calls any bot.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from merknera.hosts import host_port

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
"""Where the reference bots listen."""

STOP_SECONDS = 5.0
"""How long the bots' thread may take to close its servers when told to stop."""


@dataclass(frozen=True)
class ReferenceBot:
    """A reference bot: its module in ``merknera_bots`` and the strategy it plays."""

    module: str
    strategy: str
    downloads: bool = False
    """Whether it keeps the game's asset files in a cache (fetched from the platform when
    missing, then it calls ``<G>.Ready`` named with its owner's token)."""

    @property
    def name(self) -> str:
        """Its name on the platform: the module's last part and the strategy,
        ``tictactoe-perfect``."""
        return f"{self.module.rsplit('.', 1)[-1]}-{self.strategy}"

    def make(self, *, seed: int, platform_url: str, token: str, cache: Path,
             files: Mapping[str, bytes]) -> Any:
        """The bot's server (its ``make_app()`` serves it): the module's ``make_bot``,
        seeded; a bot that keeps asset files is given the platform, its name and token,
        and a cache of its own holding ``files`` (contents by SHA1) already."""
        module = importlib.import_module(self.module)
        options: dict[str, Any] = {"seed": seed}
        if self.downloads:
            kept = cache / self.name
            kept.mkdir(parents=True, exist_ok=True)
            for sha1, content in files.items():
                (kept / sha1).write_bytes(content)
            options.update(cache_dir=kept, platform=platform_url, botname=self.name,
                           token=token)
        made = module.make_bot(self.strategy, **options)
        # Some modules give the player behind the bot as well.
        return made[0] if isinstance(made, tuple) else made


def _pair(module: str, strong: str, weak: str = "random",
          downloads: bool = False) -> tuple[ReferenceBot, ...]:
    return (ReferenceBot(module, strong, downloads), ReferenceBot(module, weak, downloads))


REFERENCE_BOTS: Mapping[str, tuple[ReferenceBot, ...]] = {
    "TICTACTOE": _pair("merknera_bots.tictactoe", "perfect"),
    "SCRABBLE": _pair("merknera_bots.scrabble", "best", downloads=True),
    "SQUELCH": _pair("merknera_bots.squelch", "good"),
    "HEXAGONS": _pair("merknera_bots.hexagons", "good"),
    "NOUGHTSANDCROSSES": _pair("merknera_bots.noughtsandcrosses", "perfect"),
    "NUMBERWANG": _pair("merknera_bots.numberwang", "good"),
    "KALAHA": _pair("merknera_bots.kalaha", "good"),
}
"""Every game's reference bots, the stronger first; all of them speak JSON-RPC."""


class ReferenceBots:
    """Reference bots served over HTTP on loopback by a thread with its own event loop."""

    def __init__(self, bots: Sequence[ReferenceBot], *, seed: int, platform_url: str,
                 token: str, cache: Path, files: Mapping[str, bytes] | None = None) -> None:
        """``files``: the game's asset files by SHA1, for the bots that keep them: held
        from the start, they answer NewGame READY, and the seat that prepares in a game is
        the other one (a nameless ``<G>.Ready``, from the same address, finds it)."""
        self._bots = list(bots)
        self._seed = seed
        self._platform_url = platform_url
        self._token = token
        self._cache = cache
        self._files = dict(files or {})
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    async def start(self) -> list[str]:
        """Serve the bots; their endpoints, in their order.

        :raises OSError: if a bot cannot listen.
        """
        started: concurrent.futures.Future[list[str]] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, args=(started,),
                                        name="reference-bots", daemon=True)
        self._thread.start()
        return await asyncio.wrap_future(started)

    async def stop(self) -> None:
        """Close the bots' servers and end their thread."""
        thread, loop, stop = self._thread, self._loop, self._stop
        if thread is None:
            return
        if loop is not None and stop is not None:
            loop.call_soon_threadsafe(stop.set)
        # A daemon thread: one that does not end in time is left to the process's exit.
        await asyncio.to_thread(thread.join, STOP_SECONDS)

    def _run(self, started: concurrent.futures.Future[list[str]]) -> None:
        try:
            asyncio.run(self._serve(started))
        except Exception as exc:
            if started.done():
                log.exception("the reference bots failed")
            else:  # the starter hears of it
                started.set_exception(exc)

    async def _serve(self, started: concurrent.futures.Future[list[str]]) -> None:
        self._stop = asyncio.Event()
        runners: list[web.AppRunner] = []
        try:
            endpoints = []
            for index, bot in enumerate(self._bots):
                # Each random strategy draws from a generator of its own, seeded from the
                # try's seed, so that one game played alone goes the same way again.
                server = bot.make(seed=self._seed + index, platform_url=self._platform_url,
                                  token=self._token, cache=self._cache, files=self._files)
                runner = web.AppRunner(server.make_app(), access_log=None,
                                       handle_signals=False, shutdown_timeout=1.0)
                await runner.setup()
                runners.append(runner)
                await web.TCPSite(runner, LOOPBACK, 0).start()
                port = int(runner.addresses[0][1])
                endpoints.append(f"http://{host_port(LOOPBACK, port)}/rpc")
            self._loop = asyncio.get_running_loop()
            started.set_result(endpoints)
            await self._stop.wait()
        finally:
            for runner in runners:
                await runner.cleanup()

"""``merknera demo`` (what ``make run`` runs): the platform plus reference bots, playing.

It starts the platform on the configured SQLite file with the ladder on, issues a token to
each bot's owner (one user per bot, as if each had its own author: the fair share of games
and the registration limits are per user), starts the reference bots as separate
processes that register over HTTP, prints a line per finished game and a running W/D/L
table, and stops everything on Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from merknera import heap
from merknera.app import Platform
from merknera.config import Config
from merknera.events import Event, GameFinished
from merknera.games import SeatResult
from merknera.server import battlebot_url, running, stop_signals
from merknera.store import Database, users
from merknera.store.results import leaderboard


@dataclass(frozen=True)
class DemoBot:
    """A reference bot the demo starts: its module, strategy and name."""

    module: str
    strategy: str
    name: str
    downloads: bool = False
    """Whether it takes ``--cache DIR`` for the game assets it downloads."""

    @property
    def owner(self) -> str:
        """The user that owns it: its name in lower case, words joined by dashes."""
        words = "".join(c if c.isalnum() else " " for c in self.name.lower()).split()
        return "demo-" + "-".join(words)


DEMO_BOTS: tuple[DemoBot, ...] = (
    DemoBot("merknera_bots.tictactoe", "perfect", "Perfect Polly"),
    DemoBot("merknera_bots.tictactoe", "perfect", "Perfect Pete"),
    DemoBot("merknera_bots.tictactoe", "random", "Random Rita"),
    DemoBot("merknera_bots.tictactoe", "random", "Random Rob"),
    DemoBot("merknera_bots.scrabble", "best", "Wordsmith", downloads=True),
    DemoBot("merknera_bots.scrabble", "best", "Lexicographer", downloads=True),
    DemoBot("merknera_bots.scrabble", "random", "Scribbler", downloads=True),
    DemoBot("merknera_bots.scrabble", "random", "Doodler", downloads=True),
    DemoBot("merknera_bots.squelch", "good", "Dicey Dora"),
    DemoBot("merknera_bots.squelch", "random", "Reckless Rick"),
    DemoBot("merknera_bots.squelch_rest", "good", "Restful Rosie"),
    DemoBot("merknera_bots.hexagons", "good", "Honeycomb"),
    DemoBot("merknera_bots.hexagons", "random", "Hexed"),
    DemoBot("merknera_bots.noughtsandcrosses", "perfect", "Noughty"),
    DemoBot("merknera_bots.noughtsandcrosses", "random", "Crossed Wires"),
    DemoBot("merknera_bots.numberwang", "good", "That's Numberwang"),
    DemoBot("merknera_bots.numberwang", "random", "Wangernumb"),
    DemoBot("merknera_bots.kalaha", "good", "Sower"),
    DemoBot("merknera_bots.kalaha", "random", "Scatter"),
)
DEMO_BATTLEBOT_PORT = 8083
DEMO_HEXAGONS_PORT = 8084
DEMO_KALAHA_PORT = 8085
"""Where ``make run`` serves the Battlebot listener (unless the config names a port)."""
DEMO_GAMES = ("TICTACTOE", "SCRABBLE", "SQUELCH", "HEXAGONS", "NOUGHTSANDCROSSES",
              "NUMBERWANG", "KALAHA")


async def _owner(db: Database, bot: DemoBot) -> str:
    """Who registers ``bot``: the user who has its name already (a database of an earlier
    demo gave every bot to one user), else :attr:`DemoBot.owner`."""
    found: str | None = await db.fetchval(
        "SELECT users.name FROM bots JOIN users ON users.id = bots.user_id "
        "WHERE bots.name = ? ORDER BY bots.id DESC LIMIT 1", (bot.name,))
    return found or bot.owner


async def _token(db: Database, owner: str) -> str:
    """A fresh token of a demo user (tokens are stored hashed, so an old one is lost)."""
    if await users.get_user(db, owner) is None:
        _, token = await users.create_user(db, owner, "make run")
        return token
    return await users.issue_token(db, owner, "make run")


async def _start_bot(bot: DemoBot, base_url: str, token: str, version: str,
                     log_file: IO[bytes], cache: Path) -> asyncio.subprocess.Process:
    extra = ("--cache", str(cache)) if bot.downloads else ()
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", bot.module, "--strategy", bot.strategy, "--platform", base_url,
        "--token", token, "--port", "0", "--name", bot.name, "--version", version, *extra,
        stdout=asyncio.subprocess.DEVNULL, stdin=asyncio.subprocess.DEVNULL, stderr=log_file,
        # Their own session: Ctrl-C in the terminal reaches the demo only, which stops the
        # games before the bots (else games under way would end as forfeits).
        start_new_session=True)


async def _stop_bots(processes: Sequence[asyncio.subprocess.Process]) -> None:
    for process in processes:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
    for process in processes:
        try:
            await asyncio.wait_for(process.wait(), 5.0)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()


def _game_line(event: GameFinished) -> str:
    names = [bot.rsplit(" (", 1)[0] for bot in event.bots]
    if event.scores is not None:
        names = [f"{name} {score:g}" for name, score in zip(names, event.scores, strict=True)]
    if SeatResult.WIN in event.results:
        verdict = f"{names[event.results.index(SeatResult.WIN)]} won"
    elif SeatResult.DRAW in event.results:
        verdict = "draw"
    else:
        verdict = "no result"
    return (f"game {event.game_id:>5}  {event.game:<10} {' vs '.join(names):<34} "
            f"{verdict:<20} {event.termination.value.lower()}: {event.detail}")


def _table(game: str, rows: list[dict[str, Any]]) -> str:
    lines = [f"  {game} standings (rating: mu - 3 sigma, then the 95% interval)",
             f"  {'#':>3} {'bot':<20} {'rating':>7} {'interval':>15} {'P':>4} {'W':>4} "
             f"{'D':>4} {'L':>4}"]
    for row in rows:
        rating = row["rating"]
        interval = f"{rating['low']:.1f}..{rating['high']:.1f}"
        tied = " =" if row.get("tied_with_next") else ""
        lines.append(f"  {row['rank']:>3} {row['name']!s:<20} {rating['conservative']:>7.1f} "
                     f"{interval:>15} {row['played']:>4} {row['won']:>4} {row['drawn']:>4} "
                     f"{row['lost']:>4}{tied}")
    return "\n".join(lines)


async def run_demo(config: Config) -> int:
    """Run until Ctrl-C (with the ladder on, so games keep coming); returns the exit code."""
    # A database of an earlier demo gave every bot to one user, who registers them all at
    # once here: more than a user's usual burst.
    config = config.replace(
        ladder=True,
        registration_burst=max(config.accounts.registration_burst, len(DEMO_BOTS)),
        battlebot_port=config.battlebot.port or DEMO_BATTLEBOT_PORT,
        hexagons_port=config.hexagons.port or DEMO_HEXAGONS_PORT,
        kalaha_port=config.kalaha.port or DEMO_KALAHA_PORT)
    async with running(config) as (live, platform):
        heap.settle()
        with stop_signals() as stop:  # Ctrl-C from the first line printed on
            base_url, listeners = live.listeners.base_url, live.listeners
            print(f"Merknera is running at {base_url} (database {live.store.db})", flush=True)
            print(f"  open {base_url}/ in a browser: leaderboards, bots, replays and live "
                  f"games; the JSON API is described at {base_url}/api/openapi.json",
                  flush=True)
            print(f"  Battlebot's clients register and play at {battlebot_url(live)} "
                  "(see the README)", flush=True)
            print(f"  MebiPenny hexagons clients play at "
                  f"{listeners.url(live.hexagons.port)}, Kalaha boards at "
                  f"{listeners.url(live.kalaha.port)}/api/boards; people "
                  f"play bots at {base_url}/play", flush=True)
            version = time.strftime("demo-%Y%m%d-%H%M%S")
            processes: list[asyncio.subprocess.Process] = []
            bot_log = Path(f"{live.store.db}.bots.log")
            async with platform.events.listen() as queue:
                try:
                    with bot_log.open("ab") as log_file:  # noqa: ASYNC230 (once, at start-up)
                        for bot in DEMO_BOTS:
                            processes.append(await _start_bot(
                                bot, live.listeners.base_url,
                                await _token(platform.db, await _owner(platform.db, bot)), version,
                                log_file, Path(f"{live.store.db}.bot-cache")))
                    print(f"started {len(processes)} reference bots (version {version}, their logs "
                          f"in {bot_log}); Ctrl-C stops everything", flush=True)
                    printer = asyncio.create_task(_print_games(queue, platform))
                    try:
                        await stop.wait()
                    finally:
                        printer.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await printer
                finally:
                    print("\nstopping the games, the bots and the platform...", flush=True)
                    await platform.scheduler.stop()
                    await _stop_bots(processes)
    print("stopped", flush=True)
    return 0


async def _print_games(queue: asyncio.Queue[Event], platform: Platform) -> None:
    """A line per finished game; the standings of the games that had results after a quiet
    moment of two seconds, or every 20 seconds while results keep coming (the ladder)."""
    changed: set[str] = set()
    last_table = time.monotonic()
    while True:
        quiet = False
        try:
            # Not asyncio.wait_for: Python 3.11's drops a cancel that comes as the queue
            # hands over an event, and Ctrl-C then waits here for ever.
            async with asyncio.timeout(2.0 if changed else None):
                event = await queue.get()
        except TimeoutError:
            quiet = True
        else:
            if isinstance(event, GameFinished):
                print(_game_line(event), flush=True)
                changed.add(event.game)
        if changed and (quiet or time.monotonic() - last_table > 20.0):
            for game in DEMO_GAMES:
                if game in changed and (rows := await leaderboard(platform.db, game)):
                    print(_table(game, rows), flush=True)
            changed.clear()
            last_table = time.monotonic()

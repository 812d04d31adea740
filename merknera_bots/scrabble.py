"""Reference Scrabble bots: ``best`` (the highest-scoring play) and ``random`` (any legal play).

Run one with::

    python -m merknera_bots.scrabble --strategy best --platform http://127.0.0.1:8080 \\
        --token TOKEN --port 0 [--cache DIR] [--seed N]

On ``Scrabble.NewGame`` the bot answers ``READY`` when it holds the game's three files
(checked by SHA1) and otherwise ``PREPARING`` at once; it then downloads them in the background
into the cache (``--cache``, default ``~/.cache/merknera-bots``), reads them, and calls
``Scrabble.Ready`` on the platform with their hashes, its name and its token: over HTTP, or,
for a bot started with ``--connect``, as a request on its socket to the platform.

Moves come from :mod:`merknera_bots.scrabble_lexicon`'s generator: ``best`` plays the
highest-scoring play (ties: the first by square), ``random`` a uniformly random one of every
legal play (seeded by ``--seed``). With no play either exchanges its whole rack when the bag
holds a rack's worth of tiles, and passes otherwise. A play is checked by the rules before it
is sent.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import logging
import random
import sys
import tempfile
from collections import OrderedDict
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
import jsonrpcclient

from merknera_bots.kit import Bot, InvalidParamsError
from merknera_bots.launcher import (
    ConnectionLostError,
    PlatformCallError,
    PlatformConnection,
    make_parser,
    platform_rpc_url,
    run_bot,
)
from merknera_bots.scrabble_assets import (
    ASSET_NAMES,
    AssetCache,
    AssetError,
    AssetIds,
    AssetLibrary,
    GameAssets,
    default_cache_dir,
    is_sha1,
)
from merknera_bots.scrabble_check import IllegalPlayError, check_play
from merknera_bots.scrabble_files import BLANK
from merknera_bots.scrabble_lexicon import Move, Position
from merknera_bots.scrabble_movegen import best_move, generate_moves

__all__ = ["GAME", "PREFIX", "STRATEGIES", "ScrabblePlayer", "main", "make_bot"]

logger = logging.getLogger(__name__)

GAME = "SCRABBLE"
PREFIX = "Scrabble"
STRATEGIES = ("best", "random")
LAST_ASSETS = "last-assets.json"
"""In the cache directory: the hashes of the last game announced, for games that go on
after a restart (the platform does not send NewGame again)."""
_MAX_GAMES = 10_000
_TRY_READY_AGAIN = frozenset({-32008, -32603})
"""Error codes of a Ready the platform could not take for now: rate limited, or its store
is down."""


class ScrabblePlayer:
    """One Scrabble bot's state: the games it was told about and their assets.

    ``botname`` and ``token`` go into ``Scrabble.Ready`` calls to ``platform``.
    """

    def __init__(self, strategy: str, *, cache: AssetCache, platform: str, botname: str,
                 token: str, seed: int | None = None, ready_attempts: int = 5,
                 ready_pause: float = 1.0) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}")
        self.strategy = strategy
        self.cache = cache
        self.library = AssetLibrary(cache)
        self.platform = platform
        self.botname = botname
        self.token = token
        self.ready_attempts = ready_attempts
        self.ready_pause = ready_pause
        self._rng = random.Random(seed)
        self._games: OrderedDict[str, AssetIds] = OrderedDict()
        self._preparing: dict[str, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._last: AssetIds | None = None
        self._remembered: AssetIds | None = None
        self.connection: PlatformConnection | None = None
        """The bot's socket to the platform when it connects out (``--connect``): its
        ``Scrabble.Ready`` calls go there instead of to ``/rpc``."""

    def make_bot(self) -> Bot:
        """The :class:`~merknera_bots.kit.Bot` serving this player's methods."""
        bot = Bot(PREFIX, self.next_move)
        bot.method(f"{PREFIX}.NewGame", self.new_game)
        bot.method(f"{PREFIX}.Complete", self.complete)
        return bot

    def use_connection(self, connection: PlatformConnection) -> None:
        """Send ``Scrabble.Ready`` on ``connection``, the bot's socket to the platform."""
        self.connection = connection

    async def idle(self) -> None:
        """Wait until every download, load and Ready call under way has finished."""
        while pending := [t for t in (*self._preparing.values(), *self._background)
                          if not t.done()]:
            await asyncio.wait(pending)

    # --- NewGame and Ready ----------------------------------------------------------------

    async def new_game(self, *, gameid: Any, gameboard: Any, dictionary: Any, letters: Any,
                       **extra: Any) -> dict[str, str]:
        """``Scrabble.NewGame``: READY if the three files are cached, else PREPARING (and
        fetch them in the background, then call ``Scrabble.Ready``)."""
        described = {"gameboard": gameboard, "dictionary": dictionary, "letters": letters}
        urls: dict[str, str] = {}
        hashes: dict[str, str] = {}
        for name in ASSET_NAMES:
            hashes[name], urls[name] = self._descriptor(name, described[name])
        ids = AssetIds(**hashes)
        key = _game_key(gameid)
        self._games[key] = ids
        self._games.move_to_end(key)
        while len(self._games) > _MAX_GAMES:
            self._games.popitem(last=False)
        self._last = ids
        if all(self.cache.has(sha1) for sha1 in hashes.values()):
            # Read the files now, so that the first move does not wait for the word graph.
            self._spawn(self._warm(ids))
            return {"status": "READY"}
        task = self._preparing.get(key)
        if task is None or task.done():
            task = asyncio.create_task(self._prepare(gameid, ids, urls))
            self._preparing[key] = task
            task.add_done_callback(functools.partial(self._prepared, key))
        return {"status": "PREPARING"}

    def _descriptor(self, name: str, value: Any) -> tuple[str, str]:
        if not isinstance(value, dict):
            raise InvalidParamsError(f'{name} must be {{"sha1": ..., "url": ...}}')
        fields = {str(k).lower(): v for k, v in value.items()}
        sha1, url = fields.get("sha1"), fields.get("url")
        if not isinstance(sha1, str) or not is_sha1(sha1.lower()):
            raise InvalidParamsError(f"{name}.sha1 must be 40 hex digits, not {sha1!r}")
        if not isinstance(url, str) or not url:
            raise InvalidParamsError(f"{name}.url must be a URL, not {url!r}")
        absolute = urljoin(self.platform.rstrip("/") + "/", url)
        if urlsplit(absolute).scheme not in ("http", "https"):
            raise InvalidParamsError(f"{name}.url must be an http(s) URL, not {url!r}")
        return sha1.lower(), absolute

    def _prepared(self, key: str, task: asyncio.Task[None]) -> None:
        if self._preparing.get(key) is task:
            del self._preparing[key]

    async def _prepare(self, gameid: Any, ids: AssetIds, urls: dict[str, str]) -> None:
        try:
            await asyncio.gather(*(self.cache.fetch(getattr(ids, name), urls[name])
                                   for name in ASSET_NAMES))
            await self.library.load(ids)
        except AssetError as exc:
            logger.error("game %s: cannot get its files, so not Ready: %s", gameid, exc)
            return
        except Exception:
            logger.exception("game %s: preparing failed", gameid)
            return
        await self._remember(ids)
        await self._send_ready(gameid, ids)

    async def _warm(self, ids: AssetIds) -> None:
        try:
            await self.library.load(ids)
        except AssetError as exc:
            logger.error("cannot read cached files: %s", exc)
            return
        await self._remember(ids)

    async def _send_ready(self, gameid: Any, ids: AssetIds) -> bool:
        """Call ``Scrabble.Ready`` (on the :attr:`connection` when there is one, else over
        HTTP); True if the platform answered OK."""
        params = {"gameid": gameid, "gameboard": ids.gameboard, "dictionary": ids.dictionary,
                  "letters": ids.letters, "botname": self.botname, "token": self.token}
        if self.connection is not None:
            return await self._send_ready_on(self.connection, gameid, params)
        url = platform_rpc_url(self.platform)
        call = jsonrpcclient.request("Scrabble.Ready", params=params)
        timeout = aiohttp.ClientTimeout(total=30)
        for attempt in range(1, self.ready_attempts + 1):
            if attempt > 1:
                await asyncio.sleep(self.ready_pause)
            try:
                async with aiohttp.ClientSession(timeout=timeout) as session, \
                        session.post(url, json=call) as response:
                    body = await response.read()
            except (aiohttp.ClientError, TimeoutError) as exc:
                logger.warning("game %s: Scrabble.Ready to %s failed (attempt %d of %d): %r",
                               gameid, url, attempt, self.ready_attempts, exc)
                continue
            if response.status in (429, 503):
                # The platform is busy, or slows our address down: it says when to retry.
                wait = response.headers.get("Retry-After", "")
                pause = float(wait) if wait.isascii() and wait.isdigit() else self.ready_pause
                logger.warning("game %s: Scrabble.Ready answered HTTP %d; again in %g s "
                               "(attempt %d of %d)", gameid, response.status, pause, attempt,
                               self.ready_attempts)
                await asyncio.sleep(max(0.0, pause - self.ready_pause))
                continue
            try:
                reply = json.loads(body)
            except ValueError:
                reply = None
            if not isinstance(reply, dict):
                logger.error("game %s: malformed Scrabble.Ready reply (HTTP %d): %r",
                             gameid, response.status, body[:200])
                return False
            if reply.get("error") is not None:
                logger.error("game %s: Scrabble.Ready refused: %s", gameid, reply["error"])
                return False
            logger.info("game %s: Ready (%s)", gameid, reply.get("result"))
            return True
        logger.error("game %s: could not reach the platform to say Ready", gameid)
        return False

    async def _send_ready_on(self, connection: PlatformConnection, gameid: Any,
                             params: dict[str, Any]) -> bool:
        """``Scrabble.Ready`` as a request on the bot's socket to the platform."""
        for attempt in range(1, self.ready_attempts + 1):
            if attempt > 1:
                await asyncio.sleep(self.ready_pause)
            try:
                result = await connection.call("Scrabble.Ready", params)
            except PlatformCallError as exc:
                if exc.code in _TRY_READY_AGAIN:
                    logger.warning("game %s: Scrabble.Ready answered %s (attempt %d of %d)",
                                   gameid, exc, attempt, self.ready_attempts)
                    continue
                logger.error("game %s: Scrabble.Ready refused: %s", gameid, exc)
                return False
            except (ConnectionLostError, TimeoutError) as exc:
                # The platform may have taken it; a second Ready of a ready seat is harmless.
                logger.warning("game %s: Scrabble.Ready on %s got no answer (attempt %d of "
                               "%d): %s", gameid, connection.url, attempt, self.ready_attempts,
                               exc or "no answer in time")
                continue
            logger.info("game %s: Ready on the socket (%s)", gameid, result)
            return True
        logger.error("game %s: could not reach the platform to say Ready", gameid)
        return False

    async def _remember(self, ids: AssetIds) -> None:
        """Note ``ids`` in the cache directory as the last game's files."""
        if ids == self._remembered:
            return
        self._remembered = ids
        text = json.dumps({name: getattr(ids, name) for name in ASSET_NAMES})
        try:
            await asyncio.to_thread(_write_atomically, self.cache.directory / LAST_ASSETS, text)
        except OSError as exc:
            logger.warning("cannot write %s: %s", LAST_ASSETS, exc)

    def _recall(self) -> AssetIds | None:
        try:
            data = json.loads((self.cache.directory / LAST_ASSETS).read_text())
            ids = AssetIds(**{name: data[name] for name in ASSET_NAMES})
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return ids if all(is_sha1(getattr(ids, name)) for name in ASSET_NAMES) else None

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def complete(self, *, gameid: Any = None, **params: Any) -> None:
        """``Scrabble.Complete``: log it and forget the game."""
        logger.info("Scrabble.Complete game %s: winner %s, scores %s", gameid,
                    params.get("winner"), params.get("scores"))
        self._games.pop(_game_key(gameid), None)

    # --- NextMove -------------------------------------------------------------------------

    async def next_move(self, *, gameid: Any, tiles: Any, gamestate: Any, blanks: Any = None,
                        tilesremaining: Any = 0, **extra: Any) -> dict[str, Any]:
        """``Scrabble.NextMove``: a PLAY, or an EXCHANGE or PASS when there is no play."""
        key = _game_key(gameid)
        preparing = self._preparing.get(key)
        if preparing is not None:
            await asyncio.shield(preparing)
        ids = self._games.get(key) or self._last or self._recall()
        if ids is None:
            raise InvalidParamsError(f"game {gameid} is unknown: no Scrabble.NewGame for it")
        assets = await self.library.load(ids)
        rack = _rack(tiles)
        try:
            position = Position.from_wire(assets.layout, gamestate, blanks)
        except ValueError as exc:
            raise InvalidParamsError(str(exc)) from None
        bag = tilesremaining if isinstance(tilesremaining, int) else 0
        if self.strategy == "best":
            move = await asyncio.to_thread(_choose_best, position, rack, assets)
        else:
            moves = await asyncio.to_thread(generate_moves, position, rack, assets.lexicon,
                                            assets.letters)
            moves.sort(key=lambda m: m.tiles)
            move = None
            while moves and move is None:
                candidate = moves.pop(self._rng.randrange(len(moves)))
                move = candidate if _is_legal(position, candidate, rack, assets) else None
        if move is not None:
            logger.info("game %s: playing %s for %d", gameid, _describe(move), move.score)
            return move.to_wire()
        if rack and bag >= assets.letters.rack:
            return {"type": "EXCHANGE", "exchangetiles": rack}
        return {"type": "PASS"}


def _game_key(gameid: Any) -> str:
    return json.dumps(gameid) if not isinstance(gameid, str) else gameid


def _rack(tiles: Any) -> list[str]:
    if not isinstance(tiles, list) or len(tiles) > 100:
        raise InvalidParamsError('tiles must be a list of one-letter strings ("*" a blank)')
    rack = []
    for tile in tiles:
        if not (isinstance(tile, str) and (tile == BLANK or (
                len(tile) == 1 and tile.isascii() and tile.isalpha()))):
            raise InvalidParamsError(f'a tile must be a letter or "*", not {tile!r}')
        rack.append(tile.upper())
    return rack


def _is_legal(position: Position, move: Move, rack: Sequence[str], assets: GameAssets) -> bool:
    try:
        score, _ = check_play(position, move.tiles, rack, assets.lexicon, assets.letters)
    except IllegalPlayError as exc:
        logger.error("the generator's play %s is illegal (%s); not playing it", move, exc)
        return False
    if score != move.score:
        logger.error("the generator's play %s scores %d, not %d; not playing it",
                     move, score, move.score)
        return False
    return True


def _choose_best(position: Position, rack: Sequence[str], assets: GameAssets) -> Move | None:
    move = best_move(position, rack, assets.lexicon, assets.letters)
    if move is None or _is_legal(position, move, rack, assets):
        return move
    # Not expected; but a bot should still play, so fall back to the best play that checks.
    ranked = sorted(generate_moves(position, rack, assets.lexicon, assets.letters),
                    key=lambda m: (-m.score, m.tiles))
    return next((m for m in ranked if _is_legal(position, m, rack, assets)), None)


def _describe(move: Move) -> str:
    return " ".join(f"{t.letter.lower() if t.blank else t.letter}@{t.row},{t.col}"
                    for t in move.tiles)


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.",
                                     suffix=".part", delete=False) as file:
        file.write(text)
    try:
        Path(file.name).replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            Path(file.name).unlink()
        raise


def make_bot(strategy: str, *, cache_dir: Path | str | None = None,
             platform: str = "http://127.0.0.1:8080", botname: str = "", token: str = "",
             seed: int | None = None) -> tuple[Bot, ScrabblePlayer]:
    """A :class:`~merknera_bots.kit.Bot` playing ``strategy`` (``"best"`` or ``"random"``), and the
    :class:`ScrabblePlayer` behind it."""
    cache = AssetCache(default_cache_dir() if cache_dir is None else cache_dir)
    player = ScrabblePlayer(strategy, cache=cache, platform=platform, botname=botname,
                            token=token, seed=seed)
    return player.make_bot(), player


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``--strategy best|random [--cache DIR] [--seed N]`` plus the kit's
    common options (see :func:`merknera_bots.launcher.make_parser`)."""
    parser = make_parser("A reference Scrabble bot for the Merknera platform.")
    parser.add_argument("--strategy", choices=STRATEGIES, default="best")
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help=f"where the game files are kept (default {default_cache_dir()})")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the random strategy's generator")
    args: argparse.Namespace = parser.parse_args(argv)
    default_name = f"scrabble-{args.strategy}"
    # The Ready call names the bot and carries the token, so they are fixed here, as
    # run_bot will use them.
    bot, player = make_bot(args.strategy, cache_dir=args.cache, platform=args.platform,
                           botname=args.name or default_name, token=args.token,
                           seed=args.seed)
    descriptions = {
        "best": "Plays the highest-scoring legal play (an anchor-square search over a DAWG).",
        "random": "Plays a uniformly random legal play.",
    }
    return run_bot(bot, args, game=GAME, default_name=default_name,
                   description=descriptions[args.strategy], on_connection=player.use_connection)


if __name__ == "__main__":
    sys.exit(main())

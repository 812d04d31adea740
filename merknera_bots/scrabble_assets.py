"""The Scrabble asset files on the bot's side: a download cache named by SHA1, and loading.

``Scrabble.NewGame`` names three files (``gameboard``, ``dictionary``, ``letters``), each as
``{"sha1", "url"}``. :class:`AssetCache` keeps them in a directory, one file per hash
(``<dir>/<sha1>``): a file is downloaded once (concurrent requests for the same hash share the
download), checked against its SHA1 before it is kept (a mismatch is discarded and fetched
again, a few times), and written atomically (a temporary file renamed into place), so the
cache survives restarts and never holds a partial or wrong file.

:class:`AssetLibrary` turns cached files into the parsed :class:`GameAssets` a game plays
with, once per hash, off the event loop (building the word graph takes a moment).

Like the kit, this imports nothing from ``merknera``; it needs ``aiohttp``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import os
import re
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import aiohttp

from merknera_bots.scrabble_files import BoardLayout, LetterSet
from merknera_bots.scrabble_lexicon import Lexicon

__all__ = [
    "ASSET_NAMES",
    "AssetCache",
    "AssetError",
    "AssetIds",
    "AssetLibrary",
    "GameAssets",
    "default_cache_dir",
    "is_sha1",
    "sha1_of",
]

logger = logging.getLogger(__name__)

ASSET_NAMES = ("gameboard", "dictionary", "letters")
"""The asset params of ``Scrabble.NewGame``, in the order they are fetched."""
MAX_BYTES = 20 * 2**20
"""No asset is larger than this: the English dictionary is about 1 MiB."""
DEFAULT_TIMEOUT = aiohttp.ClientTimeout(total=120, sock_connect=10, sock_read=30)

_SHA1 = re.compile(r"[0-9a-f]{40}")
_T = TypeVar("_T")


class AssetError(Exception):
    """An asset could not be fetched, verified or read; the message says which and why."""


def is_sha1(value: object) -> bool:
    """Whether ``value`` is a SHA1 as this cache names files: 40 lower-case hex digits."""
    return isinstance(value, str) and _SHA1.fullmatch(value) is not None


def sha1_of(data: bytes) -> str:
    """The hex SHA1 of ``data``."""
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/merknera-bots``, else ``~/.cache/merknera-bots``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "merknera-bots"


class AssetCache:
    """Files named by their SHA1 in ``directory``, downloaded on demand and verified."""

    def __init__(self, directory: Path | str, *, max_bytes: int = MAX_BYTES,
                 timeout: aiohttp.ClientTimeout = DEFAULT_TIMEOUT, attempts: int = 3,
                 retry_pause: float = 1.0) -> None:
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.attempts = attempts
        self.retry_pause = retry_pause
        self._verified: set[str] = set()
        self._inflight: dict[str, asyncio.Task[Path]] = {}

    def path(self, sha1: str) -> Path:
        """Where the file with hash ``sha1`` is (or will be) kept."""
        if not is_sha1(sha1):
            raise ValueError(f"not a SHA1: {sha1!r}")
        return self.directory / sha1

    def has(self, sha1: str) -> bool:
        """Whether the file is in the cache with the right contents.

        Each file is hashed once per process; a file whose contents do not match its name
        (damaged on disk) is deleted, to be downloaded again.
        """
        if sha1 in self._verified:
            return True
        path = self.path(sha1)
        try:
            data = path.read_bytes()
        except OSError:
            return False
        if sha1_of(data) != sha1:
            logger.warning("cached %s does not match its hash; deleting it", path)
            with contextlib.suppress(OSError):
                path.unlink()
            return False
        self._verified.add(sha1)
        return True

    async def fetch(self, sha1: str, url: str) -> Path:
        """The file with hash ``sha1``: from the cache, else downloaded from ``url``.

        Callers asking for the same hash while it downloads share that download.

        :raises AssetError: if no good copy could be had in ``attempts`` tries.
        """
        if self.has(sha1):
            return self.path(sha1)
        task = self._inflight.get(sha1)
        if task is None:
            task = asyncio.create_task(self._download(sha1, url))
            self._inflight[sha1] = task
            task.add_done_callback(functools.partial(self._landed, sha1))
        # Shielded: one caller giving up does not cancel the others' download.
        return await asyncio.shield(task)

    def _landed(self, sha1: str, task: asyncio.Task[Path]) -> None:
        if self._inflight.get(sha1) is task:
            del self._inflight[sha1]

    async def _download(self, sha1: str, url: str) -> Path:
        problem = ""
        for attempt in range(1, self.attempts + 1):
            if attempt > 1:
                await asyncio.sleep(self.retry_pause)
            try:
                data = await self._get(url)
            except (aiohttp.ClientError, TimeoutError, AssetError) as exc:
                problem = f"downloading {url} failed: {exc!r}"
                logger.warning("%s (attempt %d of %d)", problem, attempt, self.attempts)
                continue
            got = sha1_of(data)
            if got != sha1:
                problem = f"{url} sent a file with SHA1 {got}, not {sha1}"
                logger.warning("%s; discarded (attempt %d of %d)", problem, attempt,
                               self.attempts)
                continue
            path = await asyncio.to_thread(self._store, sha1, data)
            self._verified.add(sha1)
            logger.info("cached %s (%d bytes) from %s", sha1, len(data), url)
            return path
        raise AssetError(f"gave up on {sha1} after {self.attempts} attempts: {problem}")

    async def _get(self, url: str) -> bytes:
        async with aiohttp.ClientSession(timeout=self.timeout) as session, \
                session.get(url) as response:
            if response.status != 200:
                raise AssetError(f"HTTP {response.status}")
            if response.content_length is not None and response.content_length > self.max_bytes:
                raise AssetError(f"{response.content_length} bytes is over the "
                                 f"{self.max_bytes}-byte limit")
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.content.iter_chunked(1 << 16):
                size += len(chunk)
                if size > self.max_bytes:
                    raise AssetError(f"over the {self.max_bytes}-byte limit")
                chunks.append(chunk)
            return b"".join(chunks)

    def _store(self, sha1: str, data: bytes) -> Path:
        """Write ``data`` as the file for ``sha1``: a temporary file, then a rename."""
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.path(sha1)
        fd, temp = tempfile.mkstemp(dir=self.directory, prefix=f".{sha1}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            Path(temp).replace(final)
        except BaseException:
            with contextlib.suppress(OSError):
                Path(temp).unlink()
            raise
        return final


@dataclass(frozen=True)
class AssetIds:
    """The three files of a game, by SHA1."""

    gameboard: str
    dictionary: str
    letters: str


@dataclass(frozen=True)
class GameAssets:
    """The three files of a game, parsed."""

    layout: BoardLayout
    letters: LetterSet
    lexicon: Lexicon


class AssetLibrary:
    """Parsed assets by hash, read from an :class:`AssetCache` once each, off the event loop."""

    def __init__(self, cache: AssetCache) -> None:
        self.cache = cache
        self._boards: dict[str, asyncio.Task[BoardLayout]] = {}
        self._letters: dict[str, asyncio.Task[LetterSet]] = {}
        self._lexicons: dict[str, asyncio.Task[Lexicon]] = {}

    async def load(self, ids: AssetIds) -> GameAssets:
        """The game's assets; the files must be in the cache.

        :raises AssetError: if a file is missing or cannot be parsed.
        """
        layout, letters, lexicon = await asyncio.gather(
            self._once(self._boards, ids.gameboard, BoardLayout.from_json),
            self._once(self._letters, ids.letters, LetterSet.from_json),
            self._once(self._lexicons, ids.dictionary, Lexicon.from_text))
        return GameAssets(layout, letters, lexicon)

    def _once(self, memo: dict[str, asyncio.Task[_T]], sha1: str,
              parse: Callable[[bytes], _T]) -> Awaitable[_T]:
        task = memo.get(sha1)
        if task is None or (task.done() and (task.cancelled() or task.exception())):
            task = asyncio.create_task(asyncio.to_thread(self._read, sha1, parse))
            memo[sha1] = task
        return asyncio.shield(task)

    def _read(self, sha1: str, parse: Callable[[bytes], _T]) -> _T:
        if not self.cache.has(sha1):
            raise AssetError(f"{sha1} is not in the cache at {self.cache.directory}")
        try:
            return parse(self.cache.path(sha1).read_bytes())
        except (OSError, ValueError) as exc:
            raise AssetError(f"cannot read {sha1}: {exc}") from exc

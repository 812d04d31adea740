"""Game asset files: the manifest of their hashes, verification, and serving under /assets/.

The asset directory holds the files and ``manifest.json``::

    {"files": {"scrabble/board-standard.json": {"sha1": "...", "sha256": "...",
                                                "bytes": 2154, "content_type": "..."}},
     "games": {"SCRABBLE": {"gameboard": "scrabble/board-standard.json", ...}}}

At start-up every file is checked against the manifest and the platform refuses to start,
naming the file, if one does not match.  Files are then served from memory at stable URLs,
``/assets/<sha1>/<file name>``, with the SHA1 as ETag and a year of immutable caching: a
changed file has a new hash and so a new URL.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import importlib.resources
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from aiohttp import web

import merknera
from merknera.games import JSON, REGISTRY, AnyGame, JSONObject
from merknera.web.params import accepts_gzip

MANIFEST = "manifest.json"
CONTENT_TYPES = {".json": "application/json", ".txt": "text/plain; charset=utf-8"}
IMMUTABLE = "public, max-age=31536000, immutable"


class AssetError(ValueError):
    """An asset directory or file that cannot be used, naming the file."""


def default_directory() -> Path:
    """The game asset files shipped with the platform: the ``game_assets/`` directory of the
    ``merknera`` package (package data, wherever the package is installed)."""
    return Path(str(importlib.resources.files(merknera) / "game_assets"))


@dataclass(frozen=True)
class AssetFile:
    """One file of the manifest."""

    path: str
    """Its path inside the asset directory, with forward slashes."""
    sha1: str
    sha256: str
    size: int
    content_type: str

    @property
    def name(self) -> str:
        """The file name (the last part of its path)."""
        return PurePosixPath(self.path).name

    def url(self, base_url: str) -> str:
        """The absolute URL the platform serves it at."""
        return f"{base_url}/assets/{self.sha1}/{self.name}"

    def to_json(self) -> JSONObject:
        """The file's entry in the manifest."""
        return {"sha1": self.sha1, "sha256": self.sha256, "bytes": self.size,
                "content_type": self.content_type}


@dataclass(frozen=True)
class Manifest:
    """Which files there are, their hashes, and which game uses which file for what."""

    files: Mapping[str, AssetFile]
    games: Mapping[str, Mapping[str, str]]
    """Per game mnemonic: asset name (e.g. "dictionary") -> file path."""

    def to_json(self) -> JSONObject:
        """The manifest as written to ``manifest.json``."""
        return {"files": {path: f.to_json() for path, f in sorted(self.files.items())},
                "games": {game: dict(sorted(roles.items()))
                          for game, roles in sorted(self.games.items())}}


def describe(path: str, content: bytes) -> AssetFile:
    """A manifest entry for a file's contents."""
    suffix = PurePosixPath(path).suffix
    return AssetFile(path, hashlib.sha1(content).hexdigest(),  # noqa: S324 (a content id)
                     hashlib.sha256(content).hexdigest(), len(content),
                     CONTENT_TYPES.get(suffix, "application/octet-stream"))


def read_manifest(directory: Path) -> Manifest:
    """Read ``manifest.json`` of an asset directory.

    :raises AssetError: if it is missing or malformed.
    """
    where = directory / MANIFEST
    try:
        data = json.loads(where.read_text("utf-8"))
        files = {path: AssetFile(path, str(entry["sha1"]), str(entry["sha256"]),
                                 int(entry["bytes"]), str(entry["content_type"]))
                 for path, entry in data["files"].items()}
        games = {str(game): {str(role): str(path) for role, path in roles.items()}
                 for game, roles in data["games"].items()}
    except OSError as exc:
        raise AssetError(f"cannot read {where}: {exc.strerror}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise AssetError(f"{where} is not a valid asset manifest: {exc!r}") from None
    for game, roles in games.items():
        for role, path in roles.items():
            if path not in files:
                raise AssetError(f"{where}: {game} {role} names {path}, which is not listed")
    return Manifest(files, games)


def check(directory: Path, manifest: Manifest) -> tuple[dict[str, bytes], list[str]]:
    """Read every listed file and compare it with the manifest.

    Returns the contents by path and the problems found, one sentence per file.
    """
    contents: dict[str, bytes] = {}
    problems = []
    for path, expected in sorted(manifest.files.items()):
        target = directory / path
        if ".." in PurePosixPath(path).parts or PurePosixPath(path).is_absolute():
            problems.append(f"{path}: a manifest path must stay inside {directory}")
            continue
        try:
            content = target.read_bytes()
        except OSError as exc:
            problems.append(f"{path}: cannot read it ({exc.strerror})")
            continue
        found = describe(path, content)
        if found.size != expected.size:
            problems.append(f"{path}: {found.size} bytes, the manifest says {expected.size}")
        elif found.sha1 != expected.sha1:
            problems.append(f"{path}: SHA1 {found.sha1}, the manifest says {expected.sha1}")
        elif found.sha256 != expected.sha256:
            problems.append(f"{path}: SHA256 {found.sha256}, "
                            f"the manifest says {expected.sha256}")
        else:
            contents[path] = content
    return contents, problems


def rebuild_manifest(directory: Path) -> Manifest:
    """The manifest with every listed file's hashes computed afresh (for operators who
    replace or add a file and list it in ``manifest.json``)."""
    manifest = read_manifest(directory)
    files = {}
    for path in manifest.files:
        try:
            files[path] = describe(path, (directory / path).read_bytes())
        except OSError as exc:
            raise AssetError(f"{path}: cannot read it ({exc.strerror})") from None
    return Manifest(files, manifest.games)


class AssetStore:
    """The verified asset files, in memory, and their descriptors and URLs."""

    def __init__(self, manifest: Manifest, contents: Mapping[str, bytes]) -> None:
        self.manifest = manifest
        self._contents = dict(contents)
        self._by_sha1 = {f.sha1: f for f in manifest.files.values()}
        self._gzipped: dict[str, asyncio.Task[bytes]] = {}
        """Each file compressed, by path: once, at its first request that accepts gzip
        (compressing the dictionary costs far more than sending it)."""

    @classmethod
    def load(cls, directory: Path) -> AssetStore:
        """Read and verify every file of a directory's manifest.

        :raises AssetError: naming every file that does not match.
        """
        manifest = read_manifest(directory)
        contents, problems = check(directory, manifest)
        if problems:
            raise AssetError("asset files do not match the manifest "
                             f"({directory / MANIFEST}): " + "; ".join(problems))
        return cls(manifest, contents)

    def roles(self, game: str) -> Mapping[str, AssetFile]:
        """A game's assets by name (empty for games without assets)."""
        return {role: self.manifest.files[path]
                for role, path in self.manifest.games.get(game, {}).items()}

    def contents(self, game: str) -> dict[str, bytes]:
        """A game's asset files' contents by asset name."""
        return {role: self._contents[f.path] for role, f in self.roles(game).items()}

    def descriptors(self, game: str, base_url: str) -> dict[str, JSON]:
        """``{"<asset name>": {"sha1", "url"}}`` for a game's NewGame call."""
        return {role: {"sha1": f.sha1, "url": f.url(base_url)}
                for role, f in sorted(self.roles(game).items())}

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """``GET /assets/{sha1}/{name}`` (and HEAD), with conditional requests."""
        found = self._by_sha1.get(request.match_info["sha1"].lower())
        if found is None or found.name != request.match_info["name"]:
            raise web.HTTPNotFound(text=json.dumps({"error": "no such asset"}),
                                   content_type="application/json")
        headers = {"ETag": f'"{found.sha1}"', "Cache-Control": IMMUTABLE,
                   "X-Content-SHA256": found.sha256}
        if _matches(request.headers.get("If-None-Match", ""), found.sha1):
            return web.Response(status=304, headers=headers)
        body = self._contents[found.path]
        if found.size > 1024:
            headers["Vary"] = "Accept-Encoding"
            if accepts_gzip(request):
                headers["Content-Encoding"] = "gzip"
                body = await self._gzip(found.path)
        return web.Response(body=body, headers=headers,
                            content_type=found.content_type.split(";")[0],
                            charset="utf-8" if "charset" in found.content_type else None)

    async def _gzip(self, path: str) -> bytes:
        """The file at ``path`` gzipped, compressed off the event loop the first time."""
        task = self._gzipped.get(path)
        if task is None:
            task = self._gzipped[path] = asyncio.ensure_future(asyncio.to_thread(
                gzip.compress, self._contents[path], 6, mtime=0))
        return await asyncio.shield(task)


def _matches(if_none_match: str, sha1: str) -> bool:
    """Whether an If-None-Match header names this file (weak comparison, or ``*``)."""
    tags = [tag.strip() for tag in if_none_match.split(",")]
    return any(tag == "*" or tag.removeprefix("W/") == f'"{sha1}"' for tag in tags)


def load_games(store: AssetStore) -> dict[str, AnyGame]:
    """Every registered game set up with its asset files.

    :raises AssetError: naming the game and the file it could not use.
    """
    loaded = {}
    for mnemonic, game in REGISTRY.items():
        if game.assets and set(store.roles(mnemonic)) != set(game.assets):
            raise AssetError(f"{mnemonic} needs the assets {', '.join(game.assets)}; the "
                             f"manifest gives {', '.join(sorted(store.roles(mnemonic))) or 'none'}")
        files = tuple(sorted((role, f.sha256) for role, f in store.roles(mnemonic).items()))
        key = (mnemonic, id(game), files)
        cached = _LOADED.get(key)
        if cached is not None and cached[0] is game:
            loaded[mnemonic] = cached[1]
            continue
        try:
            loaded[mnemonic] = game.with_assets(store.contents(mnemonic))
        except ValueError as exc:
            raise AssetError(f"{mnemonic} cannot use its asset files: {exc}") from None
        if len(_LOADED) >= LOADED_KEPT:
            del _LOADED[next(iter(_LOADED))]
        _LOADED[key] = (game, loaded[mnemonic])
    return loaded


LOADED_KEPT = 16
"""Games set up with asset files, kept for the next platform built in the same process."""

_LOADED: dict[tuple[str, int, tuple[tuple[str, str], ...]], tuple[AnyGame, AnyGame]] = {}
"""By game, its identity and its files' SHA256s: the game with those files, beside the
game it was made from (which keeps that identity from being reused).  A game with its
assets is an immutable value, so the platforms built in one process (a test session, the
bench's direct mode) share it: Scrabble's dictionary takes 25 ms to read, and each
platform's copy of it was more for the collector to walk and then to free."""

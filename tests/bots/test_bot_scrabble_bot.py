"""The Scrabble reference bots over JSON-RPC: the asset cache, Scrabble.Ready and moves.

Real aiohttp servers play the platform's two parts: one serves the asset files under
``/assets/<sha1>/<name>`` (counting downloads, and able to send wrong or oversized files), the
other is the platform's ``/rpc`` and records the calls it gets.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pytest_aiohttp import AiohttpClient, AiohttpServer

from merknera.assets import default_directory
from merknera_bots.scrabble import ScrabblePlayer
from merknera_bots.scrabble_assets import AssetCache, sha1_of
from merknera_bots.scrabble_check import check_play
from merknera_bots.scrabble_files import BoardLayout, LetterSet
from merknera_bots.scrabble_lexicon import Lexicon, Move, Position, Tile
from merknera_bots.scrabble_movegen import generate_moves
from tests.support.bot_process import bot_process, ready_line

ASSETS = default_directory() / "scrabble"
# A guard against a hung process or server, not a measurement.
PATIENCE = 30.0

BOARD = json.dumps({
    "name": "small", "rows": 7, "cols": 7, "start": {"row": 3, "col": 3},
    "squares": [
        ["TW", "", "", "DL", "", "", "TW"],
        ["", "DW", "", "", "", "DW", ""],
        ["", "", "TL", "", "TL", "", ""],
        ["DL", "", "", "DW", "", "", "DL"],
        ["", "", "TL", "", "TL", "", ""],
        ["", "DW", "", "", "", "DW", ""],
        ["TW", "", "", "DL", "", "", "TW"],
    ]}).encode()
LETTERS = (ASSETS / "letters-english.json").read_bytes()
WORDS = sorted(w for w in (ASSETS / "dictionary-english.txt").read_text().split()
               if len(w) <= 7 and set(w) <= set("AERSTN"))
DICTIONARY = ("\n".join(WORDS) + "\n").encode()
FILES = {"gameboard": ("board-small.json", BOARD), "dictionary": ("words.txt", DICTIONARY),
         "letters": ("letters-english.json", LETTERS)}
HASHES = {name: sha1_of(data) for name, (_, data) in FILES.items()}


@dataclass
class AssetServer:
    """Serves FILES by hash; ``corrupt`` hashes get other bytes, ``delay`` slows each reply."""

    server: TestServer
    hits: Counter[str] = field(default_factory=Counter)
    corrupt: set[str] = field(default_factory=set)
    extra: dict[str, bytes] = field(default_factory=dict)
    delay: float = 0.0
    chunked: bool = False
    """Send files without a Content-Length."""

    def descriptors(self) -> dict[str, dict[str, str]]:
        return {name: {"sha1": HASHES[name],
                       "url": str(self.server.make_url(f"/assets/{HASHES[name]}/{file}"))}
                for name, (file, _) in FILES.items()}


@dataclass
class FakePlatform:
    """The platform's /rpc: records every call; answers Ready OK, or ``ready_error``."""

    server: TestServer
    calls: list[dict[str, Any]] = field(default_factory=list)
    ready_error: str | None = None
    ready_busy: int = 0
    """Ready calls answered 429 (Retry-After: 1) before the others are taken."""
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def url(self) -> str:
        return str(self.server.make_url(""))

    def readies(self) -> list[dict[str, Any]]:
        return [c["params"] for c in self.calls if c.get("method") == "Scrabble.Ready"]

    async def wait_for(self, count: int) -> None:
        async with asyncio.timeout(PATIENCE):
            while len(self.readies()) < count:
                self.arrived.clear()
                await self.arrived.wait()


@pytest.fixture
async def assets(aiohttp_server: AiohttpServer) -> AssetServer:
    by_hash = {HASHES[name]: data for name, (_, data) in FILES.items()}
    state: list[AssetServer] = []

    async def serve(request: web.Request) -> web.StreamResponse:
        me = state[0]
        sha1 = request.match_info["sha1"]
        me.hits[sha1] += 1
        if me.delay:
            await asyncio.sleep(me.delay)
        data = me.extra.get(sha1, by_hash.get(sha1))
        if data is None:
            raise web.HTTPNotFound
        if sha1 in me.corrupt:
            data = data.replace(b"A", b"E")
        if not me.chunked:
            return web.Response(body=data)
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        for start in range(0, len(data), 4096):
            await response.write(data[start:start + 4096])
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/assets/{sha1}/{name}", serve)
    state.append(AssetServer(await aiohttp_server(app)))
    return state[0]


@pytest.fixture
async def platform(aiohttp_server: AiohttpServer) -> FakePlatform:
    state: list[FakePlatform] = []

    async def rpc(request: web.Request) -> web.Response:
        me = state[0]
        call = await request.json()
        me.calls.append(call)
        me.arrived.set()
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": call.get("id")}
        if call.get("method") == "Scrabble.Ready" and me.ready_busy > 0:
            me.ready_busy -= 1
            reply["error"] = {"code": -32008, "message": "too many wrong tokens; try again"}
            return web.json_response(reply, status=429, headers={"Retry-After": "1"})
        if call.get("method") == "RegistrationService.Register":
            name, version = call["params"]["botname"], call["params"]["botversion"]
            reply["result"] = {"message": f"Hello, {name} (version: {version}), good luck "
                                          "with Scrabble!"}
        elif call.get("method") == "Scrabble.Ready" and me.ready_error is None:
            reply["result"] = {"status": "OK"}
        else:
            reply["error"] = {"code": -32602, "message": me.ready_error or "unknown method"}
        return web.json_response(reply)

    app = web.Application()
    app.router.add_post("/rpc", rpc)
    state.append(FakePlatform(await aiohttp_server(app)))
    return state[0]


Client = TestClient[Any, Any]
Factory = Callable[..., Coroutine[Any, Any, tuple[ScrabblePlayer, Client]]]


@pytest.fixture
def make_player(tmp_path: Path, platform: FakePlatform,
                aiohttp_client: AiohttpClient) -> Factory:
    async def make(strategy: str = "best", *, cache_dir: Path | None = None,
                   seed: int | None = None, **cache_options: Any
                   ) -> tuple[ScrabblePlayer, Client]:
        cache_options.setdefault("retry_pause", 0.01)
        cache = AssetCache(cache_dir or tmp_path / "cache", **cache_options)
        player = ScrabblePlayer(strategy, cache=cache, platform=platform.url,
                                botname="scrabbler", token="tok-123", seed=seed,
                                ready_pause=0.01)
        return player, await aiohttp_client(player.make_bot().make_app())

    return make


async def _call(client: Client, method: str, params: Any, id_: Any = 1) -> dict[str, Any]:
    response = await client.post("/rpc", json={"jsonrpc": "2.0", "method": method,
                                               "params": params, "id": id_})
    assert response.status == 200
    reply = await response.json()
    assert isinstance(reply, dict)
    return reply


async def _new_game(client: Client, assets: AssetServer, gameid: int) -> str:
    reply = await _call(client, "Scrabble.NewGame",
                        {"gameid": gameid, "players": 2, **assets.descriptors()}, gameid)
    status = reply["result"]["status"]
    assert isinstance(status, str)
    return status


def _small() -> tuple[BoardLayout, LetterSet, Lexicon]:
    return BoardLayout.from_json(BOARD), LetterSet.from_json(LETTERS), Lexicon(WORDS)


def _move_params(gameid: int, position: Position, rack: list[str],
                 bag: int = 50) -> dict[str, Any]:
    gamestate, blanks = position.to_wire()
    return {"gameid": gameid, "tiles": rack, "gamestate": gamestate, "blanks": blanks,
            "players": [{"name": "scrabbler", "score": 0, "tiles": len(rack)},
                        {"name": "other", "score": 0, "tiles": 7}],
            "tilesremaining": bag, "you": 0}


def _tiles_of(result: dict[str, Any]) -> tuple[Tile, ...]:
    assert result["type"] == "PLAY"
    return tuple(sorted(Tile(t["row"], t["col"], t.get("letter", t["tile"]), t["tile"] == "*")
                        for t in result["playtiles"]))


# --- the cache and Scrabble.Ready -------------------------------------------------------


async def test_an_empty_cache_prepares_downloads_and_says_ready(
        make_player: Factory, assets: AssetServer, platform: FakePlatform,
        tmp_path: Path) -> None:
    player, client = await make_player()
    assert await _new_game(client, assets, 7) == "PREPARING"
    await platform.wait_for(1)
    await player.idle()
    assert platform.readies() == [{
        "gameid": 7, "gameboard": HASHES["gameboard"], "dictionary": HASHES["dictionary"],
        "letters": HASHES["letters"], "botname": "scrabbler", "token": "tok-123"}]
    (ready_call,) = [c for c in platform.calls if c["method"] == "Scrabble.Ready"]
    assert ready_call["jsonrpc"] == "2.0" and "id" in ready_call
    # Each file once, kept under its hash, with nothing half-written left about.
    assert assets.hits == Counter(HASHES.values())
    cache = tmp_path / "cache"
    for name, (_, data) in FILES.items():
        assert (cache / HASHES[name]).read_bytes() == data
    assert not list(cache.glob("*.part")) and not list(cache.glob(".*.part"))

    # Another game with the same files: READY at once, nothing downloaded, no Ready call.
    assert await _new_game(client, assets, 8) == "READY"
    await player.idle()
    assert assets.hits == Counter(HASHES.values())
    assert len(platform.readies()) == 1


async def test_the_cache_survives_a_restart(make_player: Factory, assets: AssetServer,
                                            platform: FakePlatform, tmp_path: Path) -> None:
    first, client = await make_player()
    assert await _new_game(client, assets, 1) == "PREPARING"
    await first.idle()
    # A new process on the same directory.
    second, client = await make_player()
    assert await _new_game(client, assets, 2) == "READY"
    await second.idle()
    # The READY answer had the files read at once: the bot no longer needs them on disk.
    for sha1 in HASHES.values():
        (tmp_path / "cache" / sha1).rename(tmp_path / sha1)
    layout, _, _ = _small()
    reply = await _call(client, "Scrabble.NextMove",
                        _move_params(2, Position.empty(layout), ["R", "A", "T", "E", "S"]))
    assert reply["result"]["type"] == "PLAY"
    for sha1 in HASHES.values():
        (tmp_path / sha1).rename(tmp_path / "cache" / sha1)
    # A game that began before the restart goes on without a NewGame: the last files.
    third, client = await make_player()
    reply = await _call(client, "Scrabble.NextMove",
                        _move_params(1, Position.empty(layout), ["R", "A", "T", "E", "S"]))
    assert reply["result"]["type"] == "PLAY"
    await third.idle()
    assert assets.hits == Counter(HASHES.values())
    assert len(platform.readies()) == 1


async def test_a_file_with_wrong_contents_is_refused(
        make_player: Factory, assets: AssetServer, platform: FakePlatform, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    assets.corrupt.add(HASHES["dictionary"])
    player, client = await make_player(attempts=3)
    assert await _new_game(client, assets, 3) == "PREPARING"
    await player.idle()
    assert platform.readies() == []
    assert assets.hits[HASHES["dictionary"]] == 3  # retried, then given up
    assert not (tmp_path / "cache" / HASHES["dictionary"]).exists()
    assert {p.name for p in (tmp_path / "cache").iterdir()} == {
        HASHES["gameboard"], HASHES["letters"]}
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any(HASHES["dictionary"] in m and "gave up" in m for m in errors), errors
    # Once the platform serves the right file, a repeated NewGame gets it.
    assets.corrupt.clear()
    assert await _new_game(client, assets, 3) == "PREPARING"
    await player.idle()
    assert [r["gameid"] for r in platform.readies()] == [3]


@pytest.mark.parametrize("chunked", [False, True])
async def test_an_oversized_file_is_refused(make_player: Factory, assets: AssetServer,
                                            platform: FakePlatform, chunked: bool,
                                            caplog: pytest.LogCaptureFixture) -> None:
    assets.chunked = chunked
    player, client = await make_player(attempts=1, max_bytes=len(DICTIONARY) - 1)
    assert await _new_game(client, assets, 4) == "PREPARING"
    await player.idle()
    assert platform.readies() == []
    assert any("limit" in r.getMessage() for r in caplog.records)


async def test_concurrent_games_download_each_file_once(
        make_player: Factory, assets: AssetServer, platform: FakePlatform) -> None:
    assets.delay = 0.2
    player, client = await make_player()
    statuses = await asyncio.gather(*(_new_game(client, assets, g) for g in range(10, 16)))
    assert statuses == ["PREPARING"] * 6
    await platform.wait_for(6)
    await player.idle()
    assert assets.hits == Counter(HASHES.values())
    assert sorted(r["gameid"] for r in platform.readies()) == list(range(10, 16))


async def test_a_refused_ready_is_logged(make_player: Factory, assets: AssetServer,
                                         platform: FakePlatform,
                                         caplog: pytest.LogCaptureFixture) -> None:
    platform.ready_error = 'wrong hash for "dictionary"'
    player, client = await make_player()
    assert await _new_game(client, assets, 5) == "PREPARING"
    await platform.wait_for(1)
    await player.idle()
    assert any("Ready refused" in r.getMessage() and "dictionary" in r.getMessage()
               for r in caplog.records if r.levelno >= logging.ERROR)


async def test_a_ready_answered_429_is_sent_again_after_retry_after(
        make_player: Factory, assets: AssetServer, platform: FakePlatform) -> None:
    platform.ready_busy = 1
    player, client = await make_player()
    assert await _new_game(client, assets, 5) == "PREPARING"
    await platform.wait_for(2)
    await player.idle()
    assert [ready["gameid"] for ready in platform.readies()] == [5, 5]


async def test_bad_new_game_params(make_player: Factory, assets: AssetServer) -> None:
    _, client = await make_player()
    descriptors = assets.descriptors()
    for broken in ({"sha1": "abc", "url": descriptors["letters"]["url"]},
                   {"sha1": HASHES["letters"], "url": "ftp://example.org/x"},
                   "letters.json"):
        reply = await _call(client, "Scrabble.NewGame",
                            {"gameid": 1, "players": 2, **descriptors, "letters": broken})
        assert reply["error"]["code"] == -32602, reply
    reply = await _call(client, "Scrabble.NewGame", {"gameid": 1, "players": 2})
    assert reply["error"]["code"] == -32602


# --- moves ------------------------------------------------------------------------------


async def _ready_player(make_player: Factory, assets: AssetServer, strategy: str = "best",
                        seed: int | None = None) -> tuple[ScrabblePlayer, Client]:
    player, client = await make_player(strategy, seed=seed)
    await _new_game(client, assets, 1)
    await player.idle()
    return player, client


def _position() -> Position:
    layout, _, _ = _small()
    return Position.empty(layout).play(Move(
        (Tile(3, 2, "R"), Tile(3, 3, "A", True), Tile(3, 4, "T"), Tile(3, 5, "E")), 0)
    ).play(Move((Tile(1, 4, "S"), Tile(2, 4, "E")), 0))


async def test_best_plays_the_top_scoring_legal_play(make_player: Factory,
                                                     assets: AssetServer) -> None:
    _, client = await _ready_player(make_player, assets)
    _, letters, lexicon = _small()
    position = _position()
    for rack in (["S", "N", "A", "R", "E", "T", "A"], ["*", "T", "N"], ["E"]):
        reply = await _call(client, "Scrabble.NextMove", _move_params(1, position, rack))
        tiles = _tiles_of(reply["result"])
        score, _ = check_play(position, tiles, rack, lexicon, letters)
        top = max(m.score for m in generate_moves(position, rack, lexicon, letters))
        assert score == top
        for wire in reply["result"]["playtiles"]:
            assert set(wire) == ({"row", "col", "tile", "letter"} if wire["tile"] == "*"
                                 else {"row", "col", "tile"})


async def test_the_first_move_covers_the_start(make_player: Factory,
                                               assets: AssetServer) -> None:
    _, client = await _ready_player(make_player, assets)
    layout, letters, lexicon = _small()
    reply = await _call(client, "Scrabble.NextMove",
                        _move_params(1, Position.empty(layout), ["S", "T", "A", "R", "E"]))
    tiles = _tiles_of(reply["result"])
    assert (3, 3) in {(t.row, t.col) for t in tiles}
    check_play(Position.empty(layout), tiles, "STARE", lexicon, letters)


async def test_random_is_legal_seeded_and_idempotent(make_player: Factory,
                                                     assets: AssetServer) -> None:
    _, first = await _ready_player(make_player, assets, "random", seed=42)
    _, second = await _ready_player(make_player, assets, "random", seed=42)
    _, letters, lexicon = _small()
    position = _position()
    rack = ["S", "N", "A", "R", "*", "T", "A"]
    plays = {m.tiles for m in generate_moves(position, rack, lexicon, letters)}
    seen = []
    for call_id in range(1, 9):
        params = _move_params(1, position, rack)
        one = await _call(first, "Scrabble.NextMove", params, call_id)
        two = await _call(second, "Scrabble.NextMove", params, call_id)
        assert one == two  # the same seed plays the same
        # A repeated call (same id and params) gets the same answer.
        assert await _call(first, "Scrabble.NextMove", params, call_id) == one
        tiles = _tiles_of(one["result"])
        assert tiles in plays
        check_play(position, tiles, rack, lexicon, letters)
        seen.append(tiles)
    assert len(set(seen)) > 1  # it does vary


async def test_no_play_exchanges_or_passes(make_player: Factory, assets: AssetServer) -> None:
    _, client = await _ready_player(make_player, assets)
    rack = ["Q", "Z", "X"]  # no word in the small dictionary has these
    reply = await _call(client, "Scrabble.NextMove", _move_params(1, _position(), rack, 7))
    assert reply["result"] == {"type": "EXCHANGE", "exchangetiles": rack}
    reply = await _call(client, "Scrabble.NextMove", _move_params(1, _position(), rack, 6))
    assert reply["result"] == {"type": "PASS"}


async def test_bad_next_move_params(make_player: Factory, assets: AssetServer,
                                    tmp_path: Path) -> None:
    # Nothing known about the game, nothing in the cache: an error, not a guess.
    _, client = await make_player(cache_dir=tmp_path / "elsewhere")
    layout, _, _ = _small()
    reply = await _call(client, "Scrabble.NextMove", _move_params(9, Position.empty(layout),
                                                                  ["A", "T"]))
    assert reply["error"]["code"] == -32602
    _, client = await _ready_player(make_player, assets)
    for params in (_move_params(1, Position.empty(layout), ["AT"]),
                   {**_move_params(1, Position.empty(layout), ["A"]), "gamestate": [[""] * 7]},
                   {**_move_params(1, Position.empty(layout), ["A"]), "tiles": "AT"}):
        reply = await _call(client, "Scrabble.NextMove", params)
        assert reply["error"]["code"] == -32602, reply


# --- the command line -------------------------------------------------------------------


async def test_the_command_line_registers_prepares_and_plays(
        assets: AssetServer, platform: FakePlatform, tmp_path: Path) -> None:
    async with bot_process("merknera_bots.scrabble", "--strategy", "best", "--platform",
                           platform.url, "--token", "t0k", "--port", "0", "--cache",
                           str(tmp_path / "c"), "--version", "2.1") as process:
        word, port, name = await ready_line(process)
        assert (word, name) == ("READY", "scrabble-best")
        (register,) = platform.calls
        assert register["method"] == "RegistrationService.Register"
        assert register["params"]["game"] == "SCRABBLE"
        assert register["params"]["botversion"] == "2.1"
        assert register["params"]["rpcendpoint"] == f"http://127.0.0.1:{port}/rpc"

        async def call(method: str, params: Any) -> dict[str, Any]:
            async with asyncio.timeout(PATIENCE), aiohttp.ClientSession() as session, \
                    session.post(f"http://127.0.0.1:{port}/rpc", json={
                        "jsonrpc": "2.0", "method": method, "params": params,
                        "id": 1}) as response:
                reply = await response.json()
            assert isinstance(reply, dict)
            return reply

        reply = await call("Scrabble.NewGame", {"gameid": 77, "players": 2,
                                                **assets.descriptors()})
        assert reply["result"] == {"status": "PREPARING"}
        await platform.wait_for(1)
        assert platform.readies() == [{
            "gameid": 77, **HASHES, "botname": "scrabble-best", "token": "t0k"}]
        layout, letters, lexicon = _small()
        rack = ["R", "A", "T", "E", "S"]
        reply = await call("Scrabble.NextMove", _move_params(77, Position.empty(layout), rack))
        tiles = _tiles_of(reply["result"])
        check_play(Position.empty(layout), tiles, rack, lexicon, letters)
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), PATIENCE) == 0

"""A game stopped after any move and resumed ends exactly as the same game played through.

For every registered game and every fault kind it can suffer, two seeded games are played
with the same bots over real HTTP on a real SQLite file: one straight through, one with
the platform stopped (its runners cancelled, as a crash or a restart does) after moves
1, 2, 3, ... (every move) and started again on the same file each time, so that the runner
resumes from the stored move log through :func:`merknera.scheduler.play.replay`.  Their stored move
logs, outcomes, seat results and final states must be equal: live play and replay decide
what a reply or a fault does by one rule (:meth:`Play.advance`).

The bots answer every position by a fixed rule of its params, and commit the fault under
test when asked for their second move (a strike fault again when asked the third time,
so that a seat plays on after two strikes).  What a bot remembers (the ids of the requests
it was asked for moves) is rebuilt from the stored requests after each stop: a reply whose
row the stop lost is asked for again, and the bot must then answer as it did the first
time, as a bot that counts nothing would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import secrets
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from merknera.app import Platform
from merknera.config import (
    CallSettings,
    Config,
    GameRules,
    ListenerSettings,
    LivenessSettings,
    StoreSettings,
)
from merknera.events import GameFinished
from merknera.games import JSON, REGISTRY, AnyGame
from merknera.protocol.faults import FaultKind
from merknera.scheduler.play import STRIKE_FAULTS
from merknera.scheduler.registration import RegistrationRequest
from merknera.store import users
from merknera_bots import hexagons as hexagon_bot
from merknera_bots import kalaha as kalaha_bot
from merknera_bots import noughtsandcrosses as noughts_bot
from tests.support import until

SEED = 20261124
MOVE_TIMEOUT = 5.0
"""Long enough that no answer is late under load but the one meant to be..."""
SHORT_MOVE_TIMEOUT = 1.0
"""...which is, by twice this, in the games that test timeouts."""

Chooser = Callable[[dict[str, Any]], JSON]


def _first_empty(params: dict[str, Any]) -> JSON:
    return {"position": params["gamestate"].index("")}


def _occupied(params: dict[str, Any]) -> JSON:
    taken = [i for i, cell in enumerate(params["gamestate"]) if cell]
    return {"position": taken[0]} if taken else None


def _scrabble_illegal(params: dict[str, Any]) -> JSON:
    # Nothing was played (both seats pass): a tile off the centre square is illegal.
    tile = next(t for t in params["tiles"])
    placed: dict[str, JSON] = {"row": 0, "col": 0, "tile": tile}
    if tile == "*":
        placed["letter"] = "E"
    return {"type": "PLAY", "playtiles": [placed]}


def _squelch(params: dict[str, Any]) -> JSON:
    return {"take": params["options"][0]["id"], "stay": True}


def _hexagon(params: dict[str, Any]) -> JSON:
    position = hexagon_bot.read_position(params["rows"], params["cols"], params["lines"],
                                         params["hexagons"])
    line = hexagon_bot.choose_random(position, random.Random(json.dumps(params,
                                                                        sort_keys=True)))
    wire: JSON = json.loads(json.dumps(hexagon_bot.line_to_wire(line)))
    return wire


def _hexagon_drawn(params: dict[str, Any]) -> JSON:
    lines = params["lines"]
    return {"line": lines[0]["endpoints"]} if lines else None


def _kalaha(params: dict[str, Any]) -> JSON:
    seat = kalaha_bot.PLAYERS.index(params["player"])
    position = kalaha_bot.read_position(params["rowOne"], params["rowTwo"])
    return {"pitIndex": kalaha_bot.moves(position, seat)[0]}


def _kalaha_other_player(params: dict[str, Any]) -> JSON:
    other = "TWO" if params["player"] == "ONE" else "ONE"
    return {**_kalaha(params), "player": other}  # type: ignore[dict-item]


def _noughts(params: dict[str, Any]) -> JSON:
    return noughts_bot.choose_perfect_turn(params["state"])


def _noughts_wrong_mark(params: dict[str, Any]) -> JSON:
    turn = noughts_bot.choose_perfect_turn(params["state"])
    return {**turn, "mark": "O" if turn["mark"] == "X" else "X"}


@dataclass(frozen=True)
class Script:
    """How the test's bots play one game."""

    choose: Chooser
    illegal: Chooser | None
    """A well-formed move the rules refuse; None for a game without one (Numberwang:
    any number may be added)."""
    settings: dict[str, JSON] = field(default_factory=dict)
    """Default settings for the test (short games)."""


SCRIPTS: dict[str, Script] = {
    "TICTACTOE": Script(_first_empty, _occupied),
    "SCRABBLE": Script(lambda params: {"type": "PASS"}, _scrabble_illegal),
    "SQUELCH": Script(_squelch, lambda params: {"take": "no such option", "stay": True},
                      {"gameCount": 1, "maxPoints": 2000}),
    "HEXAGONS": Script(_hexagon, _hexagon_drawn, {"rows": 3, "cols": 3}),
    "NOUGHTSANDCROSSES": Script(_noughts, _noughts_wrong_mark),
    "NUMBERWANG": Script(lambda params: {"n": 1}, None),
    "KALAHA": Script(_kalaha, _kalaha_other_player),
}


def cases() -> Iterator[Any]:
    """Every (game, fault kind) a game can suffer, and a game without faults."""
    for mnemonic, game in REGISTRY.items():
        script = SCRIPTS[mnemonic]
        yield pytest.param(mnemonic, None, id=f"{mnemonic}-no-fault")
        for kind in FaultKind:
            if kind is FaultKind.ILLEGAL_MOVE and script.illegal is None:
                continue
            if kind is FaultKind.NOT_READY and not game.assets:
                continue  # a game without assets counts every NewGame answer as ready
            if kind is FaultKind.DISQUALIFIED:
                continue  # committed only through a gateway that judges moves itself
            yield pytest.param(mnemonic, kind, id=f"{mnemonic}-{kind.value}")


def test_every_game_has_a_script() -> None:
    assert set(SCRIPTS) == set(REGISTRY)


class Stopper:
    """Holds an ask for a move of game 1 once the move log has reached the next stop, and
    says so: the test then stops the platform right there, the runner waiting on the ask
    (it would otherwise be some moves further on before a stop took effect)."""

    def __init__(self, db: str, stops: list[int]) -> None:
        self._db = db
        self.pending = sorted(stops)
        self.reached = asyncio.Event()
        self._release = asyncio.Event()

    def stored(self) -> int:
        """How many rows game 1's move log has (committed)."""
        with contextlib.closing(sqlite3.connect(self._db)) as conn:
            found: int = conn.execute("SELECT COUNT(*) FROM moves WHERE game_id = 1"
                                      ).fetchone()[0]
        return found

    async def hold(self, game_id: object) -> bool:
        """Whether this ask was held (until the platform was stopped): never answer it."""
        if game_id != 1 or not self.pending:
            return False
        stored = self.stored()
        if stored == self.pending[0] - 1:
            # The runner queues a move's row and asks for the next move before the row is
            # committed: the row the stop waits for may be on its way.
            with contextlib.suppress(TimeoutError):
                await until(lambda: self.stored() >= self.pending[0], within=0.02,
                            every=0.002)
            stored = self.stored()
        if stored < self.pending[0]:
            return False
        self.reached.set()
        await self._release.wait()
        return True

    def stopped(self) -> None:
        """The platform is stopped: let the held asks go, and aim at the next stop."""
        self._release.set()
        stored = self.stored()
        self.pending = [stop for stop in self.pending if stop > stored]
        self.reached = asyncio.Event()
        self._release = asyncio.Event()


class OracleBot:
    """A JSON-RPC bot that answers by its game's script and commits one kind of fault."""

    def __init__(self, game: AnyGame, script: Script, fault: FaultKind | None) -> None:
        self.game = game
        self.script = script
        self.fault = fault
        self.stopper: Stopper | None = None
        self.asked: dict[object, list[object]] = {}
        """By game id: the ids of the requests for a move, in the order they came."""

    def remember(self, requests: list[bytes]) -> None:
        """Forget everything but what the stored requests say was asked."""
        self.asked = {}
        for body in requests:
            call = json.loads(body)
            self._note(call["params"], call["id"])

    def _note(self, params: dict[str, Any], request_id: object) -> int:
        """Which ask for a move in its game this is: 1 for the bot's first (the same
        request sent again, after a dropped connection, is the same ask)."""
        ids = self.asked.setdefault(params[self.game.calls.game_id], [])
        if request_id not in ids:
            ids.append(request_id)
        return ids.index(request_id) + 1

    def _faults_here(self, ask: int) -> bool:
        if self.fault is None:
            return False
        return ask == 2 or (self.fault in STRIKE_FAULTS and ask == 3)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        call = json.loads(await request.read())
        method, params, request_id = call["method"], call.get("params") or {}, call["id"]
        calls = self.game.calls
        if method == f"{calls.prefix}.{calls.open}":
            ready = "PREPARING" if self.fault is FaultKind.NOT_READY else "READY"
            return _result(request_id, {"status": ready})
        if method != f"{calls.prefix}.{calls.move}":
            return _result(request_id, {"ping": "OK"} if method == "Status.Ping" else None)
        if self.stopper is not None and await self.stopper.hold(params[calls.game_id]):
            return web.Response(status=503)  # to a platform that has gone
        if not self._faults_here(self._note(params, request_id)):
            return _result(request_id, self.script.choose(params))
        match self.fault:
            case FaultKind.TIMEOUT:
                await asyncio.sleep(SHORT_MOVE_TIMEOUT * 2)
                return _result(request_id, self.script.choose(params))
            case FaultKind.UNREACHABLE:
                assert request.transport is not None
                request.transport.abort()  # before any reply: the platform tries once more
                return web.Response()
            case FaultKind.HTTP_STATUS:
                return web.Response(status=500, text="it broke")
            case FaultKind.MALFORMED_REPLY:
                return web.Response(text="this is not JSON", content_type="application/json")
            case FaultKind.RPC_ERROR:
                return web.json_response({"jsonrpc": "2.0", "id": request_id,
                                          "error": {"code": -32000, "message": "no idea"}})
            case FaultKind.INVALID_MOVE:
                return _result(request_id, "not a move of any game")
            case FaultKind.ILLEGAL_MOVE:
                assert self.script.illegal is not None
                return _result(request_id, self.script.illegal(params))
        raise AssertionError(f"no fault to commit for {self.fault}")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/rpc", self.handle)
        return app


def _result(request_id: object, result: JSON) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "id": request_id, "result": result})


@dataclass
class Match:
    """Two oracle bots and the platform's database file for one game between them."""

    config: Config
    game: AnyGame
    bots: tuple[OracleBot, OracleBot]
    endpoints: tuple[str, str]

    async def play(self, stop_after: list[int]) -> dict[str, Any]:
        """Play game 1 to its end, stopping the platform at the first ask for a move once
        the move log has reached each of these lengths, and starting it again; what is
        stored of it."""
        stopper = Stopper(self.config.store.db, stop_after)
        for bot in self.bots:
            bot.stopper = stopper
        platform = await self._start()
        _, token = await users.create_user(platform.db, "owner")
        for number, endpoint in enumerate(self.endpoints):
            await platform.registrar.register(RegistrationRequest(
                token=token, botname=f"oracle{number}", botversion="1",
                game=self.game.mnemonic, rpcendpoint=endpoint))
        while True:
            finished = await self._until(platform, stopper)
            await platform.stop()
            stopper.stopped()
            if finished:
                return self._stored()
            for bot_id, bot in enumerate(self.bots, start=1):
                bot.remember(self._requests(bot_id))
            platform = await self._start()

    async def resume(self, rows: int, into: str) -> dict[str, Any]:
        """Resume game 1 from a copy (at ``into``) of this match's finished database cut
        back to its first ``rows`` rows, as a platform that died after committing them
        leaves it (the stops of :meth:`play` come at asks for moves, never between a
        game's last row and its end); what is stored of it once it has ended again.  The
        same bots play: the stored endpoints are theirs."""
        shutil.copyfile(self.config.store.db, into)
        self.config = self.config.replace(db=into)
        with contextlib.closing(sqlite3.connect(self.config.store.db)) as conn, conn:
            conn.execute("DELETE FROM moves WHERE game_id = 1 AND seq > ?", (rows,))
            conn.execute("DELETE FROM rating_history WHERE game_id = 1")
            conn.execute("UPDATE seats SET result = NULL, rank = NULL, score = NULL "
                         "WHERE game_id = 1")
            conn.execute("UPDATE games SET status = 'RUNNING', outcome = NULL, reason = NULL, "
                         "detail = NULL, final_state = NULL, finished_at = NULL WHERE id = 1")
        for bot_id, bot in enumerate(self.bots, start=1):
            bot.remember(self._requests(bot_id))
        platform = await self._start()
        finished = await self._until(platform, Stopper(self.config.store.db, []))
        await platform.stop()
        assert finished
        return self._stored()

    async def _start(self) -> Platform:
        platform = Platform(self.config)
        await platform.start()
        return platform

    @staticmethod
    async def _until(platform: Platform, stopper: Stopper) -> bool:
        """Wait for the game to finish (True) or for the stopper to hold an ask (False)."""
        async with platform.events.listen(1) as queue:

            async def finished() -> None:
                while not isinstance(await queue.get(), GameFinished):
                    pass

            if await _finished(platform):
                return True
            done, pending = await asyncio.wait(
                [asyncio.ensure_future(finished()), asyncio.ensure_future(stopper.reached.wait())],
                timeout=60, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            assert done, "the game neither finished nor reached a stop in 60 s"
            return not stopper.reached.is_set()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.config.store.db)
        conn.row_factory = sqlite3.Row
        return conn

    def _stored(self) -> dict[str, Any]:
        with self._connect() as conn:
            game = dict(conn.execute("SELECT status, outcome, reason, detail, final_state "
                                     "FROM games WHERE id = 1").fetchone())
            game["seats"] = [tuple(row) for row in conn.execute(
                "SELECT seat, result, rank, score FROM seats WHERE game_id = 1 ORDER BY seat")]
            game["moves"] = [tuple(row) for row in conn.execute(
                "SELECT seq, seat, move, fault, fault_detail FROM moves WHERE game_id = 1 "
                "ORDER BY seq")]
        return game

    def _requests(self, bot_id: int) -> list[bytes]:
        """The requests of the bot's calls stored in every game (the round robin of two
        bots is two games; only the first is compared, but the bots play both)."""
        with self._connect() as conn:
            return [row[0].encode() for row in conn.execute(
                "SELECT moves.request FROM moves JOIN seats ON seats.game_id = moves.game_id "
                "AND seats.seat = moves.seat WHERE seats.bot_id = ? AND moves.request IS NOT "
                "NULL ORDER BY moves.game_id, moves.seq", (bot_id,))]


async def _finished(platform: Platform) -> bool:
    row = await platform.db.fetchone("SELECT status FROM games WHERE id = 1")
    return row is not None and row["status"] == "FINISHED"


async def _match(tmp_path: Path, name: str, mnemonic: str, fault: FaultKind | None,
                 aiohttp_server: AiohttpServer) -> Match:
    game = REGISTRY[mnemonic]
    script = SCRIPTS[mnemonic]
    # Seat 1 commits the fault: the second seat's history is the one a restart most often
    # cuts in the middle of a round.
    bots = (OracleBot(game, script, None), OracleBot(game, script, fault))
    endpoints = tuple([str((await aiohttp_server(bot.app())).make_url("/rpc")) for bot in bots])
    timeout = SHORT_MOVE_TIMEOUT if fault is FaultKind.TIMEOUT else MOVE_TIMEOUT
    config = Config(
        store=StoreSettings(db=str(tmp_path / f"{name}.db")),
        listeners=ListenerSettings(port=0),
        rules=GameRules(move_timeout=timeout),
        calls=CallSettings(
            ping_timeout=5.0,
            notify_timeout=5.0,
            connect_timeout=5.0,
            announce_timeout=5.0,
        ),
        liveness=LivenessSettings(
            ready_timeout=0.3,
            ping_interval=60.0,
            offline_retry_min=0.05,
            offline_retry_max=0.2,
            offline_grace=10.0,
        ),
    )
    assert len(endpoints) == 2
    return Match(config, game, bots, (endpoints[0], endpoints[1]))


@pytest.mark.parametrize(("mnemonic", "fault"), list(cases()))
async def test_a_game_stopped_after_any_move_ends_as_one_played_through(
        mnemonic: str, fault: FaultKind | None, tmp_path: Path,
        aiohttp_server: AiohttpServer, monkeypatch: pytest.MonkeyPatch) -> None:
    game = REGISTRY[mnemonic]
    monkeypatch.setattr(type(game), "default_settings",
                        {**game.default_settings, **SCRIPTS[mnemonic].settings})
    # Both games get the same seed (the dice, the tile bag).
    monkeypatch.setattr(secrets, "randbits", lambda bits: SEED)

    played = await _match(tmp_path, "through", mnemonic, fault, aiohttp_server)
    through = await played.play([])
    assert through["status"] == "FINISHED"
    faults = [move[3] for move in through["moves"] if move[3] is not None]
    if fault is None:
        assert faults == []
    else:
        assert faults[0] == fault.value, through["moves"]
    length = len(through["moves"])
    stopped = await (await _match(tmp_path, "stopped", mnemonic, fault,
                                  aiohttp_server)).play(list(range(1, length)))
    assert stopped == through
    for rows in sorted({max(length - 1, 0), length}):
        resumed = await played.resume(rows, str(tmp_path / f"resumed{rows}.db"))
        assert resumed == through, rows

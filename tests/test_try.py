"""``merknera try`` in-process: a real private platform playing real HTTP bots (the tests'
own, and the reference bots on their thread), the transcript read as a bot's author reads it."""

from __future__ import annotations

import asyncio
import io
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from merknera import cli
from merknera.config import CallSettings, Config, GameRules
from merknera.games import JSON
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.faults import FaultKind
from merknera.reference_bots import REFERENCE_BOTS, ReferenceBots
from merknera.try_cli import TryRequest, game_seeds, run_try, seatings
from tests.support import ScriptedBot, first_empty, free_port, serve_bot

CONFIG = Config(rules=GameRules(move_timeout=5.0),
                games={"TICTACTOE": GameRules(move_timeout=1.0)},
                calls=CallSettings(ping_timeout=1.0, notify_timeout=1.0, connect_timeout=1.0))
"""Short limits for tic-tac-toe, so that a bot that does not answer is found out quickly
(the other games' reference bots think for longer)."""

CALL_LINE = re.compile(r"^(ping|game \d+) +(\S+) +(-|\d+\.\d ms)  (.*)$")
GAME_LINE = re.compile(r"^game (\d+): your-bot in seat ([01]) against (\S+), seed (\d+): "
                       r"(WIN|DRAW|LOSS|NONE) \((\w+): (.*)\)$")


@dataclass
class Tried:
    """What a try printed and its exit status."""

    status: int
    lines: list[str]

    def calls(self, method: str = "") -> list[str]:
        """The call lines (text), of ``method`` if given."""
        return [line for line in self.lines if (found := CALL_LINE.match(line))
                and found.group(2).endswith(method)]

    def games(self) -> list[re.Match[str]]:
        """The game lines (text), parsed."""
        return [found for line in self.lines if (found := GAME_LINE.match(line))]

    def records(self, kind: str) -> list[dict[str, Any]]:
        """The JSON lines of ``kind`` (--json)."""
        return [record for line in self.lines if (record := json.loads(line))["kind"] == kind]


async def tried(url: str, game: str = "TICTACTOE", config: Config = CONFIG,
                **options: Any) -> Tried:
    """``merknera try URL --game GAME`` in this process."""
    out = io.StringIO()
    status = await run_try(config, TryRequest(url, game, **options), out)
    return Tried(status, out.getvalue().splitlines())


# -- a good bot -----------------------------------------------------------------------------


async def test_a_good_bot_passes_with_a_line_per_call(aiohttp_server: AiohttpServer) -> None:
    bot = ScriptedBot()
    result = await tried(await serve_bot(aiohttp_server, bot), seed=7)
    assert result.status == 0, result.lines
    # Two games against each reference bot, one in each seat.
    games = result.games()
    assert [(int(g.group(2)), g.group(3)) for g in games] == [
        (1, "tictactoe-perfect"), (0, "tictactoe-perfect"), (1, "tictactoe-random"),
        (0, "tictactoe-random")]
    assert {g.group(6) for g in games} == {"NORMAL"}
    # A line per call the bot was made, as it was made: its ping, and each game's calls.
    assert result.calls("Status.Ping") == [line for line in result.lines
                                           if line.startswith("ping")]
    assert len(result.calls("Status.Ping")) == len(bot.methods("Ping")) == 1
    for method in ("NewGame", "NextMove", "Complete"):
        assert len(result.calls(f"TicTacToe.{method}")) == len(bot.methods(method)), method
    moves = result.calls("TicTacToe.NextMove")
    assert len(moves) >= 4 * 2  # two moves a game at least
    assert all(re.search(r' ms  \{"position":[0-8]\}$', line) for line in moves), moves
    # Its NewGame answers (Merknera's "method not found") count as ready: no fault.
    assert all(re.search(r"  RPC_ERROR \(no strike by itself\): the bot answered an error: "
                         "can't find method TicTacToe.NewGame", line)
               for line in result.calls("TicTacToe.NewGame")), result.calls("NewGame")
    played = {g.group(5) for g in games}
    wins, draws, losses = (sum(g.group(5) == r for g in games) for r in ("WIN", "DRAW", "LOSS"))
    assert played <= {"WIN", "DRAW", "LOSS"}
    assert result.lines[-2:] == [
        f"4 games (seed 7; --seed 7 deals them again): {wins} won, {draws} drawn, {losses} "
        "lost, 0 without a result", "faults: none"]
    # Against perfect play, first-empty never wins.
    assert all(g.group(5) != "WIN" for g in games if g.group(3) == "tictactoe-perfect")


async def test_json_lines_give_the_calls_then_the_games_then_the_summary(
        aiohttp_server: AiohttpServer) -> None:
    bot = ScriptedBot()
    result = await tried(await serve_bot(aiohttp_server, bot), games=2, seed=3, json=True)
    assert result.status == 0
    kinds = [json.loads(line)["kind"] for line in result.lines]
    assert kinds == sorted(kinds, key=["call", "game", "summary"].index)
    assert kinds.count("game") == 2 and kinds[-1] == "summary"
    calls = result.records("call")
    assert calls[0]["call"] == "Status.Ping" and calls[0]["game"] is None
    assert '"ping": "OK"' in calls[0]["body"]  # a reply the platform does not read
    moves = [call for call in calls if call["call"] == "TicTacToe.NextMove"]
    assert len(moves) == len(bot.methods("NextMove"))
    for move in moves:
        assert set(move) == {"kind", "game", "call", "latency_ms", "reply"}
        assert move["game"] in (1, 2) and move["latency_ms"] >= 0
        assert move["reply"] == {"position": move["reply"]["position"]}
    games = result.records("game")
    assert [(g["game"], g["seat"], g["opponent"]) for g in games] == [
        (1, 1, "tictactoe-perfect"), (2, 0, "tictactoe-perfect")]
    assert [g["seed"] for g in games] == game_seeds(3, 2)
    for game in games:
        assert game["outcome"] in ("WIN", "DRAW") and game["reason"] == "NORMAL"
        assert game["result"] in ("DRAW", "LOSS") and game["faults"] == 0
        assert isinstance(game["detail"], str)
    assert result.records("summary") == [{
        "kind": "summary", "games": 2, "seed": 3, "wins": 0,
        "draws": sum(g["result"] == "DRAW" for g in games),
        "losses": sum(g["result"] == "LOSS" for g in games), "no_result": 0, "faults": {}}]


# -- bots at fault ----------------------------------------------------------------------------


@dataclass
class FaultyBot:
    """A tic-tac-toe bot whose NextMove answer is scripted with the request in hand (to
    drop the connection); it answers every other call, and records the methods called."""

    next_move: Callable[[web.Request, dict[str, Any], Any], Awaitable[web.StreamResponse]]
    methods: list[str] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/rpc", self._handle)
        return app

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        call = await request.json()
        method, params, call_id = call["method"], call.get("params") or {}, call["id"]
        self.methods.append(method)
        if method.endswith(".NextMove"):
            return await self.next_move(request, params, call_id)
        result: JSON = {"ping": "OK"} if method == "Status.Ping" else None
        return web.json_response({"jsonrpc": "2.0", "result": result, "id": call_id})


def answer(result: JSON) -> Callable[..., Awaitable[web.StreamResponse]]:
    async def reply(request: web.Request, params: dict[str, Any],
                    call_id: Any) -> web.StreamResponse:
        return web.json_response({"jsonrpc": "2.0", "result": result, "id": call_id})
    return reply


async def never_answers(request: web.Request, params: dict[str, Any],
                        call_id: Any) -> web.StreamResponse:
    await asyncio.Event().wait()  # until the platform gives up on it and the test ends
    raise AssertionError("unreachable")


async def not_json(request: web.Request, params: dict[str, Any],
                   call_id: Any) -> web.StreamResponse:
    return web.Response(text="lol, not json")


async def a_taken_cell(request: web.Request, params: dict[str, Any],
                       call_id: Any) -> web.StreamResponse:
    board = params["gamestate"]
    taken = [cell for cell, mark in enumerate(board) if mark]
    position = taken[0] if taken else first_empty(params)
    return web.json_response({"jsonrpc": "2.0", "result": {"position": position},
                              "id": call_id})


async def an_error(request: web.Request, params: dict[str, Any],
                   call_id: Any) -> web.StreamResponse:
    return web.json_response({"jsonrpc": "2.0", "id": call_id,
                              "error": {"code": -1, "message": "boom"}})


async def status_500(request: web.Request, params: dict[str, Any],
                     call_id: Any) -> web.StreamResponse:
    return web.Response(status=500, text="Internal Server Error")


async def hangs_up(request: web.Request, params: dict[str, Any],
                   call_id: Any) -> web.StreamResponse:
    assert request.transport is not None
    request.transport.close()
    return web.Response()


@pytest.mark.parametrize(("next_move", "fault", "penalty", "says"), [
    (never_answers, FaultKind.TIMEOUT, "forfeit", "no reply within 1 s"),
    (not_json, FaultKind.MALFORMED_REPLY, "strike 1 of 3", "the body is not JSON"),
    (a_taken_cell, FaultKind.ILLEGAL_MOVE, "strike 1 of 3", "is already taken by"),
    (answer({"position": 9}), FaultKind.INVALID_MOVE, "strike 1 of 3",
     '"position" must be between 0 and 8'),
    (an_error, FaultKind.RPC_ERROR, "strike 1 of 3", "boom (code -1)"),
    (status_500, FaultKind.HTTP_STATUS, "strike 1 of 3", "HTTP status 500"),
    (hangs_up, FaultKind.UNREACHABLE, "forfeit", "the connection was lost before a reply"),
])
async def test_a_faulty_bot_fails_with_its_fault_named(
        aiohttp_server: AiohttpServer, next_move: Any, fault: FaultKind, penalty: str,
        says: str) -> None:
    bot = FaultyBot(next_move)
    server = await aiohttp_server(bot.app())
    result = await tried(str(server.make_url("/rpc")), games=1)
    assert result.status == 1, result.lines
    line = next(line for line in result.calls("TicTacToe.NextMove") if fault.value in line)
    assert f"{fault.value} ({penalty}): " in line and says in line, line
    (game,) = result.games()
    assert game.group(5) == "LOSS"
    assert game.group(6) == ("STRIKES" if penalty.startswith("strike") else fault.value)
    counted = [line for line in result.calls() if f"{fault.value} (" in line]
    if penalty == "forfeit":
        assert counted == [line]
    else:  # asked again until its strikes run out
        assert [re.sub(r".*\((strike [^)]*)\).*", r"\1", each) for each in counted] == [
            "strike 1 of 3", "strike 2 of 3", "strike 3 of 3: forfeit"]
    assert result.lines[-1] == (f"faults: {len(counted)} {fault.value}: the platform would "
                                "count them against the bot")


async def test_json_names_each_fault_and_what_it_cost(aiohttp_server: AiohttpServer) -> None:
    server = await aiohttp_server(FaultyBot(answer({"position": "four"})).app())
    result = await tried(str(server.make_url("/rpc")), games=1, json=True)
    assert result.status == 1
    faults = [call["fault"] for call in result.records("call") if "fault" in call
              and call["fault"]["counted"]]
    assert [(f["kind"], f["penalty"]) for f in faults] == [
        ("INVALID_MOVE", "strike 1 of 3"), ("INVALID_MOVE", "strike 2 of 3"),
        ("INVALID_MOVE", "strike 3 of 3: forfeit")]
    moves = [call for call in result.records("call") if call["call"] == "TicTacToe.NextMove"]
    assert all(call["reply"] == {"position": "four"} for call in moves)
    (game,) = result.records("game")
    assert (game["outcome"], game["reason"], game["result"], game["faults"]) == (
        "WIN", "STRIKES", "LOSS", 3)
    assert result.records("summary")[0]["faults"] == {"INVALID_MOVE": 3}


async def test_a_bot_that_fails_its_ping_is_at_fault(aiohttp_server: AiohttpServer) -> None:
    async def handle(request: web.Request) -> web.StreamResponse:
        call = await request.json()
        if call["method"] == "Status.Ping":
            return web.Response(status=404, text="no such method")
        result = ({"position": first_empty(call["params"])}
                  if call["method"].endswith(".NextMove") else None)
        return web.json_response({"jsonrpc": "2.0", "result": result, "id": call["id"]})

    app = web.Application()
    app.router.add_post("/rpc", handle)
    server = await aiohttp_server(app)
    result = await tried(str(server.make_url("/rpc")), games=1)
    # It plays (the platform takes a registered bot for online), but a bot whose pings
    # fail is taken for offline by the platform's pinger once it is idle.
    assert result.status == 1
    assert re.match(r"ping +Status\.Ping .*  HTTP_STATUS: HTTP status 404", result.lines[0])
    assert len(result.games()) == 1
    assert result.lines[-1].startswith("faults: 1 HTTP_STATUS")


async def test_an_unreachable_url_is_refused_before_any_game(
        capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}/rpc"
    result = await tried(url)
    assert result.status == 2
    assert result.games() == [] and not result.calls("NewGame")
    assert f"merknera try: cannot reach {url}: cannot connect" in capsys.readouterr().err


@pytest.mark.parametrize(("url", "options", "says"), [
    ("not-a-url", {}, 'The rpcendpoint was refused: the endpoint "not-a-url"'),
    ("http://127.0.0.1:1/rpc", {"game": "CHESS"}, "no game 'CHESS' is hosted"),
    ("http://127.0.0.1:1/", {"protocol": BotProtocol.SQUELCH_REST},
     'A bot of protocol "squelch-rest" can play only SQUELCH'),
])
async def test_a_try_that_cannot_be_made_is_a_usage_error(
        capsys: pytest.CaptureFixture[str], url: str, options: dict[str, Any],
        says: str) -> None:
    result = await tried(url, **options)
    assert (result.status, result.lines) == (2, [])
    assert says in capsys.readouterr().err


async def test_a_bot_that_cannot_begin_its_game_forfeits_it(
        aiohttp_server: AiohttpServer) -> None:
    """No call of the move log is at fault, but the game is lost: the bot was gone."""
    async def handle(request: web.Request) -> web.StreamResponse:
        call = await request.json()
        if call["method"].endswith(".NewGame"):
            assert request.transport is not None
            request.transport.close()  # as a bot that went away
            return web.Response()
        return web.json_response({"jsonrpc": "2.0", "result": {"ping": "OK"},
                                  "id": call["id"]})

    app = web.Application()
    app.router.add_post("/rpc", handle)
    server = await aiohttp_server(app)
    result = await tried(str(server.make_url("/rpc")), games=1)
    assert result.status == 1
    opened = result.calls("TicTacToe.NewGame")
    assert opened and all("UNREACHABLE (no strike by itself): the connection was lost" in line
                          for line in opened), opened
    assert not result.calls("TicTacToe.NextMove")
    (game,) = result.games()
    assert (game.group(5), game.group(6)) == ("LOSS", "UNREACHABLE")
    assert "your-bot stayed offline for more than 2 s before the game began" in game.group(7)
    assert result.lines[-1].startswith("faults: 1 UNREACHABLE")


async def test_a_bot_not_ready_in_time_forfeits_without_a_call_at_fault(
        aiohttp_server: AiohttpServer) -> None:
    bot = ScriptedBot(new_game={"status": "PREPARING"})  # and it never calls Ready
    result = await tried(await serve_bot(aiohttp_server, bot), "SCRABBLE",
                         CONFIG.replace(ready_timeout=0.5), games=1)
    assert result.status == 1
    assert re.search(r"  \{\"status\":\"PREPARING\"\}$", result.calls("Scrabble.NewGame")[0])
    (line,) = [line for line in result.lines if "(no call)" in line]
    assert re.match(r"game 1 +\(no call\) +-  NOT_READY \(forfeit\): did not answer "
                    r"Scrabble\.NewGame with READY nor call Scrabble\.Ready within 0\.5 s", line)
    assert [(g.group(5), g.group(6)) for g in result.games()] == [("LOSS", "NOT_READY")]
    assert result.lines[-1].startswith("faults: 1 NOT_READY")


async def test_a_bot_of_the_squelchbot_rest_api(aiohttp_server: AiohttpServer) -> None:
    from merknera_bots.squelch_rest import SquelchRestBot

    server = await aiohttp_server(SquelchRestBot("random", name="rest", seed=1).make_app())
    result = await tried(str(server.make_url("")), "SQUELCH", games=2,
                         protocol=BotProtocol.SQUELCH_REST, json=True)
    assert result.status == 0, result.lines[-3:]
    calls = result.records("call")
    assert calls[0]["call"] == "GET /bot/info" and calls[0]["reply"] == "rest"
    assert {call["call"] for call in calls} >= {"PUT /match/{matchId}/start",
                                                "PUT /match/{matchId}/end"}
    assert [g["opponent"] for g in result.records("game")] == ["squelch-good"] * 2


async def test_a_scrabble_bot_plays_the_reference_bots_that_hold_the_files(
        aiohttp_server: AiohttpServer) -> None:
    """The reference bots are given the game's files: they answer NewGame READY at once."""
    async def passes(params: dict[str, Any], _id: Any) -> JSON:
        return {"type": "PASS"}

    bot = ScriptedBot(next_move=passes, new_game={"status": "READY"})
    result = await tried(await serve_bot(aiohttp_server, bot), "SCRABBLE", games=1, json=True)
    assert result.status == 0, result.lines[-3:]
    assert [call["reply"] for call in result.records("call")
            if call["call"] == "Scrabble.NewGame"] == [{"status": "READY"}]
    (game,) = result.records("game")
    assert (game["opponent"], game["reason"], game["result"]) == (
        "scrabble-best", "NORMAL", "LOSS")
    assert "final scores: scrabble-best " in game["detail"]


@pytest.mark.parametrize(("argv", "says"), [
    (["--game", "TICTACTOE"], "the following arguments are required: URL"),
    (["http://127.0.0.1:1/rpc"], "the following arguments are required: --game"),
    (["http://127.0.0.1:1/rpc", "--game", "TICTACTOE", "--games", "0"],
     "0 is not from 1 to 1000"),
    (["http://127.0.0.1:1/rpc", "--game", "TICTACTOE", "--games", "two"],
     "not a whole number: 'two'"),
    (["http://127.0.0.1:1/rpc", "--game", "TICTACTOE", "--protocol", "guest"],
     "invalid choice: 'guest'"),
])
def test_the_command_line_refuses_with_status_2(
        capsys: pytest.CaptureFixture[str], argv: list[str], says: str) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["try", *argv])
    assert exited.value.code == 2
    assert says in capsys.readouterr().err


# -- opponents and seeds ----------------------------------------------------------------------


async def test_against_plays_the_bot_at_another_url(aiohttp_server: AiohttpServer) -> None:
    mine, theirs = ScriptedBot(), ScriptedBot()
    result = await tried(await serve_bot(aiohttp_server, mine),
                         against=(await serve_bot(aiohttp_server, theirs),), seed=5)
    assert result.status == 0
    assert [(g.group(2), g.group(3)) for g in result.games()] == [("1", "against-1"),
                                                                  ("0", "against-1")]
    # First-empty against first-empty: X completes 2-4-6.
    assert [g.group(5) for g in result.games()] == ["LOSS", "WIN"]
    assert theirs.methods("NextMove") and mine.methods("NextMove")
    # Only the tried bot's calls are lines.
    assert len(result.calls("NextMove")) == len(mine.methods("NextMove"))


async def test_the_same_seed_deals_the_same_games(aiohttp_server: AiohttpServer) -> None:
    url = await serve_bot(aiohttp_server, ScriptedBot())
    against = (await serve_bot(aiohttp_server, ScriptedBot()),)

    async def dealt(seed: int) -> list[tuple[Any, ...]]:
        result = await tried(url, against=against, seed=seed, games=3, json=True)
        assert result.status == 0
        return [(g["seed"], g["seat"], g["opponent"], g["result"], g["detail"])
                for g in result.records("game")]

    first = await dealt(11)
    assert await dealt(11) == first
    other = await dealt(12)
    assert [game[0] for game in other] != [game[0] for game in first]
    assert [game[1:] for game in other] == [game[1:] for game in first]


def test_the_games_take_turns_at_seats_and_opponents() -> None:
    assert seatings(9, [1, 2], 6) == [(1, 9), (9, 1), (2, 9), (9, 2), (1, 9), (9, 1)]
    assert game_seeds(4, 3) == game_seeds(4, 3) != game_seeds(5, 3)
    assert game_seeds(4, 5)[:3] == game_seeds(4, 3)


async def test_the_reference_bots_of_each_game_play_it(tmp_path: Path) -> None:
    """A game's weaker reference bot, tried against the game's reference bots."""
    assert set(REFERENCE_BOTS) == {"TICTACTOE", "SCRABBLE", "SQUELCH", "HEXAGONS",
                                   "NOUGHTSANDCROSSES", "NUMBERWANG", "KALAHA"}
    for game in ("NOUGHTSANDCROSSES", "NUMBERWANG", "KALAHA", "HEXAGONS", "SQUELCH"):
        bots = ReferenceBots(REFERENCE_BOTS[game][1:], seed=1, platform_url="", token="",
                             cache=tmp_path)
        (endpoint,) = await bots.start()
        try:
            result = await tried(endpoint, game, games=1, json=True)
        finally:
            await bots.stop()
        assert result.status == 0, (game, result.lines[-3:])
        assert [g["reason"] for g in result.records("game")] == ["NORMAL"], game

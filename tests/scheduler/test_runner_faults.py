"""The game runner against real aiohttp bot servers: results, strikes, forfeits, Error calls."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from merknera.events import Event, GameFinished, MovePlayed
from merknera.games import JSON, SeatResult, Termination
from merknera.games.tictactoe import TicTacToe
from merknera.protocol.faults import FaultKind
from tests.support import Arena, ScriptedBot, first_empty, serve_bot


async def duel(arena: Arena, aiohttp_server: AiohttpServer, good: ScriptedBot,
               bad: ScriptedBot) -> tuple[dict[str, Any], dict[str, Any]]:
    """Register good then bad: game 1 seats bad first (X), game 2 seats good first."""
    await arena.register("good", await serve_bot(aiohttp_server, good))
    await arena.register("bad", await serve_bot(aiohttp_server, bad))
    await arena.settle()
    first, second = await arena.game(1), await arena.game(2)
    assert [s["name"] for s in first["seats"]] == ["good", "bad"]
    assert [s["name"] for s in second["seats"]] == ["bad", "good"]
    return first, second


def results(game: dict[str, Any]) -> dict[str, str]:
    return {seat["name"]: seat["result"] for seat in game["seats"]}


async def test_two_good_bots_play_to_the_right_result(arena: Arena,
                                                      aiohttp_server: AiohttpServer) -> None:
    x_bot, o_bot = ScriptedBot(), ScriptedBot()
    first, second = await duel(arena, aiohttp_server, x_bot, o_bot)
    # First-empty against first-empty: X takes 0, 2, 4, 6 and completes 2-4-6 on move 7.
    for game in (first, second):
        assert (game["status"], game["outcome"], game["reason"]) == ("FINISHED", "WIN", "NORMAL")
        assert game["detail"] == "X completed the line 2-4-6"
        assert [m["move"]["position"] for m in game["moves"]] == [0, 1, 2, 3, 4, 5, 6]
        assert [m["seq"] for m in game["moves"]] == list(range(1, 8))
        assert all(m["fault"] is None and m["latency_ms"] >= 0 for m in game["moves"])
        assert game["moves"][0]["request"]["method"] == "TicTacToe.NextMove"
        assert game["moves"][0]["request"]["params"]["gamestate"] == [""] * 9
        assert game["final_state"] == ["X", "O", "X", "O", "X", "O", "X", "", ""]
    assert results(first) == {"good": "WIN", "bad": "LOSS"}
    assert results(second) == {"bad": "WIN", "good": "LOSS"}
    # Complete goes to both bots with the final board (not the one before the last move).
    completes = {(c["gameid"], c["mark"]): c for c in x_bot.methods("Complete")
                 + o_bot.methods("Complete")}
    assert set(completes) == {(1, "X"), (1, "O"), (2, "X"), (2, "O")}
    assert completes[(1, "X")]["winner"] is True and completes[(1, "O")]["winner"] is False
    assert completes[(1, "X")]["gamestate"] == first["final_state"]
    assert x_bot.methods("Error") == [] and o_bot.methods("Error") == []
    # NewGame came first for every seat; an error reply to it counts as READY.
    assert len(x_bot.methods("NewGame")) == 2
    assert x_bot.methods("NewGame")[0]["players"] == 2


async def sleepy(params: dict[str, Any], _id: Any) -> JSON:
    await asyncio.sleep(5)
    return {"position": first_empty(params)}


async def text_body(params: dict[str, Any], _id: Any) -> web.Response:
    return web.Response(text="lol, not json")


async def error_reply(params: dict[str, Any], call_id: Any) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "id": call_id,
                              "error": {"code": -1, "message": "boom"}})


async def string_error(params: dict[str, Any], call_id: Any) -> web.Response:
    return web.json_response({"result": None, "error": "I am confused", "id": call_id})


async def always_centre(params: dict[str, Any], _id: Any) -> JSON:
    return {"position": 4}


async def off_board(params: dict[str, Any], _id: Any) -> JSON:
    return {"position": 9}


async def http_500(params: dict[str, Any], _id: Any) -> web.Response:
    return web.Response(status=500, text="Internal Server Error")


async def wrong_id(params: dict[str, Any], call_id: Any) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "result": {"position": 4}, "id": 999999999})


async def huge(params: dict[str, Any], call_id: Any) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "result": {"position": 4, "pad": "x" * 70000},
                              "id": call_id})


async def deep(params: dict[str, Any], call_id: Any) -> web.Response:
    return web.Response(body=b"[" * 20000 + b"]" * 20000, content_type="application/json")


async def not_an_object(params: dict[str, Any], _id: Any) -> JSON:
    return [4]


@pytest.mark.parametrize(("behaviour", "fault", "code", "reason", "says"), [
    (sleepy, FaultKind.TIMEOUT, 1, "TIMEOUT", "no reply within 1 s"),
    (text_body, FaultKind.MALFORMED_REPLY, 4, "STRIKES", "the body is not JSON"),
    (error_reply, FaultKind.RPC_ERROR, 5, "STRIKES", "boom (code -1)"),
    (string_error, FaultKind.RPC_ERROR, 5, "STRIKES", "I am confused"),
    (always_centre, FaultKind.ILLEGAL_MOVE, 7, "STRIKES", "position 4 is already taken by"),
    (off_board, FaultKind.INVALID_MOVE, 6, "STRIKES", '"position" must be between 0 and 8'),
    (not_an_object, FaultKind.INVALID_MOVE, 6, "STRIKES", "expected an object"),
    (http_500, FaultKind.HTTP_STATUS, 3, "STRIKES", "HTTP status 500"),
    (wrong_id, FaultKind.MALFORMED_REPLY, 4, "STRIKES", "does not match the request id"),
    (huge, FaultKind.MALFORMED_REPLY, 4, "STRIKES", "larger than 65536 bytes"),
    (deep, FaultKind.MALFORMED_REPLY, 4, "STRIKES", "nested too deeply"),
])
async def test_a_faulty_bot_loses_as_the_protocol_says(
        arena: Arena, aiohttp_server: AiohttpServer, behaviour: Any, fault: FaultKind,
        code: int, reason: str, says: str) -> None:
    good, bad = ScriptedBot(), ScriptedBot(next_move=behaviour)
    games = await duel(arena, aiohttp_server, good, bad)
    for game in games:
        assert (game["status"], game["outcome"], game["reason"]) == ("FINISHED", "WIN", reason)
        assert results(game) == {"good": "WIN", "bad": "LOSS"}
        faults = [m for m in game["moves"] if m["fault"] is not None]
        expected = 1 if reason == "TIMEOUT" else 3
        assert [m["fault"] for m in faults] == [fault.value] * expected
        assert all(says in m["fault_detail"] for m in faults)
        seq = [m["seq"] for m in game["moves"]]
        assert seq == list(range(1, len(seq) + 1))
        assert says in game["detail"]
    errors = bad.methods("Error")
    assert len(errors) == 2 * (1 if reason == "TIMEOUT" else 3)
    assert {e["errorcode"] for e in errors} == {code}
    assert all(says in e["message"] for e in errors)
    if reason == "STRIKES":
        # A game's Error calls reach the bot before its Complete.
        order = [(method.rsplit(".", 1)[1], params["gameid"]) for method, params in bad.calls
                 if method.endswith((".Error", ".Complete"))]
        for game_id in (1, 2):
            mine = [what for what, gid in order if gid == game_id]
            assert mine == ["Error", "Error", "Error", "Complete"]
        assert sorted(e["message"].split("(")[-1] for e in errors if e["gameid"] == 1) == [
            "strike 1 of 3: you will be asked again)", "strike 2 of 3: you will be asked again)",
            "strike 3 of 3: you forfeit the game)"]
    assert good.methods("Error") == []
    assert {(c["gameid"], c["winner"]) for c in bad.methods("Complete")} == {(1, False),
                                                                           (2, False)}
    assert {(c["gameid"], c["winner"]) for c in good.methods("Complete")} == {(1, True),
                                                                            (2, True)}


async def test_a_strike_then_a_good_move_continues_the_game(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    seen: set[int] = set()

    async def once_wrong(params: dict[str, Any], call_id: Any) -> JSON:
        if params["gameid"] not in seen:
            seen.add(params["gameid"])
            return {"position": "four"}
        return {"position": first_empty(params)}

    first, second = await duel(arena, aiohttp_server, ScriptedBot(), ScriptedBot(once_wrong))
    for game in (first, second):
        assert (game["outcome"], game["reason"]) == ("WIN", "NORMAL")
        faults = [m["fault"] for m in game["moves"] if m["fault"]]
        assert faults == ["INVALID_MOVE"]
        assert len([m for m in game["moves"] if m["move"] is not None]) == 7


async def test_an_unreachable_bot_forfeits_after_the_grace_period(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    good = ScriptedBot()
    await arena.register("good", await serve_bot(aiohttp_server, good))
    # Nothing listens on port 9 (discard) of loopback: every call is refused.
    await arena.register("gone", "http://127.0.0.1:9/rpc")
    await arena.settle()
    for game_id in (1, 2):
        game = await arena.game(game_id)
        assert (game["outcome"], game["reason"]) == ("WIN", "UNREACHABLE")
        assert results(game) == {"good": "WIN", "gone": "LOSS"}
        assert "stayed offline for more than 1.5 s before the game began" in game["detail"]
        assert game["moves"] == []
    status = await arena.platform.db.fetchval("SELECT status FROM bots WHERE name = 'gone'")
    assert status == "OFFLINE"
    log = await arena.platform.db.fetchall(
        "SELECT message FROM bot_log JOIN bots ON bots.id = bot_log.bot_id "
        "WHERE bots.name = 'gone' ORDER BY bot_log.id")
    assert any("is offline: TicTacToe.NewGame: cannot connect" in row["message"] for row in log)


async def test_the_events_of_a_forfeit_carry_the_enums(arena: Arena,
                                                       aiohttp_server: AiohttpServer) -> None:
    async with arena.platform.events.listen() as queue:
        await duel(arena, aiohttp_server, ScriptedBot(), ScriptedBot(next_move=always_centre))
        heard: list[Event] = []
        while not queue.empty():
            heard.append(queue.get_nowait())
    finished = {e.game_id: e for e in heard if isinstance(e, GameFinished)}
    assert set(finished) == {1, 2}
    for event in finished.values():
        assert event.termination is Termination.STRIKES
        by_bot = dict(zip(event.bots, event.results, strict=True))
        assert by_bot == {"good (1.0)": SeatResult.WIN, "bad (1.0)": SeatResult.LOSS}
        # The ids go with the names (good registered first), and only the striking bot is
        # at fault.
        assert dict(zip(event.bots, event.bot_ids, strict=True)) == {"good (1.0)": 1,
                                                                     "bad (1.0)": 2}
        assert event.at_fault == (2,)
    faults = [e.fault for e in heard if isinstance(e, MovePlayed) and e.fault is not None]
    # Three strikes in each game, each an illegal move (the centre, taken by then).
    assert faults == [FaultKind.ILLEGAL_MOVE] * 6


class UnforeseenTicTacToe(TicTacToe):
    """Tic-tac-toe whose reader fails on a reply it did not foresee (a bug of its own: the
    platform's games are checked for this by check_game, a plugin's may not be)."""

    def parse_move(self, result: JSON) -> int:
        if isinstance(result, dict) and "surprise" in result:
            raise KeyError("surprise")
        return super().parse_move(result)


async def surprising(params: dict[str, Any], _id: Any) -> JSON:
    return {"surprise": True}


async def test_a_reply_the_game_did_not_foresee_is_its_senders_fault(
        arena: Arena, aiohttp_server: AiohttpServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # Handling a seat's reply failed: the runner used to end the game ABORTED, with no
    # result, which a losing bot could do at will.  The seat is at fault, as for any reply
    # that is no move: a strike, and at the third the game.
    monkeypatch.setitem(arena.platform.games, "TICTACTOE", UnforeseenTicTacToe())
    good, bad = ScriptedBot(), ScriptedBot(next_move=surprising)
    for game in await duel(arena, aiohttp_server, good, bad):
        assert (game["status"], game["outcome"], game["reason"]) == ("FINISHED", "WIN",
                                                                     "STRIKES")
        assert results(game) == {"good": "WIN", "bad": "LOSS"}
        faults = [(m["fault"], m["fault_detail"]) for m in game["moves"] if m["fault"]]
        assert faults == [("INVALID_MOVE", "the reply is not a move of the game (KeyError)")] * 3
    assert len(bad.methods("Error")) == 6 and good.methods("Error") == []

"""A bot of the Squelchbot REST API faults as a JSON-RPC bot does: the same stored faults,
strikes and forfeits; a dropped connection is sent again, signed anew (see
tests/support/squelch_rest.py)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from merknera.config import GameRules
from merknera.protocol.faults import FaultKind
from merknera.protocol.signing import TIMESTAMP_HEADER
from tests.conftest import ArenaFactory
from tests.support.squelch_rest import (  # noqa: F401 (same_short_matches: a fixture)
    DROP,
    GENEROUS_LIMIT,
    REST_LIMIT,
    ROUTES,
    Answer,
    Behaviour,
    Heard,
    RestBot,
    RpcBot,
    api,
    first_and_stay,
    move_log,
    read_call,
    same_short_matches,
    seat,
    seat_good,
    without,
)

# --- faults ------------------------------------------------------------------------------------


async def oversleep(params: dict[str, Any], limit: float) -> Answer:
    # Twice the bot's own limit: for the REST bot that is 0.6 s, so a platform that gave it
    # the 1 s move_timeout instead of its rest_call_timeout would see no timeout at all.
    await asyncio.sleep(2 * limit)
    return await first_and_stay(params, limit)


async def http_500(params: dict[str, Any], limit: float) -> Answer:
    return web.Response(status=500, text="Internal Server Error")


async def not_json(params: dict[str, Any], limit: float) -> Answer:
    return web.Response(text="lol, not json", content_type="application/json")


async def not_a_choice(params: dict[str, Any], limit: float) -> Answer:
    return {"option": params["options"][0]["id"]}


async def unknown_option(params: dict[str, Any], limit: float) -> Answer:
    return {"take": "99", "stay": True}


async def hang_up(params: dict[str, Any], limit: float) -> Answer:
    return DROP


@dataclass(frozen=True)
class FaultCase:
    """A fault a seat makes at every choose, and how each wire describes it."""

    behaviour: Behaviour
    kind: FaultKind
    reason: str
    rest_says: str
    rpc_says: str
    rest_limit: float = GENEROUS_LIMIT
    """The REST seat's ``rest_call_timeout``: short only where the fault is a timeout."""

    @property
    def faults(self) -> int:
        """The faults the seat makes in a match before it forfeits."""
        return 3 if self.reason == "STRIKES" else 1


FAULTS = [
    FaultCase(oversleep, FaultKind.TIMEOUT, "TIMEOUT", f"no reply within {REST_LIMIT:g} s",
              "no reply within 1 s", rest_limit=REST_LIMIT),
    FaultCase(http_500, FaultKind.HTTP_STATUS, "STRIKES", "HTTP status 500 to PUT /match/",
              "HTTP status 500"),
    FaultCase(not_json, FaultKind.MALFORMED_REPLY, "STRIKES",
              "the choose reply: the body is not JSON",
              "the body is not JSON"),
    FaultCase(not_a_choice, FaultKind.INVALID_MOVE, "STRIKES", 'the reply has no "take"',
              'the reply has no "take"'),
    FaultCase(unknown_option, FaultKind.ILLEGAL_MOVE, "STRIKES", "there is no option '99'",
              "there is no option '99'"),
    FaultCase(hang_up, FaultKind.UNREACHABLE, "UNREACHABLE",
              "the connection was lost before a reply", "the connection was lost before a reply"),
]


@pytest.mark.parametrize("case", FAULTS, ids=[case.kind.value for case in FAULTS])
async def test_a_rest_bot_faults_as_a_json_rpc_bot_does(
        case: FaultCase, make_arena: ArenaFactory, aiohttp_server: AiohttpServer,
        tmp_path: Path) -> None:
    rules = {"SQUELCH": GameRules(move_timeout=1.0, max_strikes=3,
                                  rest_call_timeout=case.rest_limit)}
    # The reference good bot (bot 1) against a seat that faults at every choose (bot 2):
    # match 1 seats the faulty bot second, match 2 first; once over REST, once over JSON-RPC.
    arena = await make_arena(db=str(tmp_path / "rest.db"), games=rules)
    rest = RestBot(choose=case.behaviour, limit=case.rest_limit)
    await seat_good(arena, aiohttp_server)
    await seat(arena, aiohttp_server, "faulty", rest)
    await arena.settle(60.0)
    twin_arena = await make_arena(db=str(tmp_path / "rpc.db"), games=rules)
    rpc = RpcBot(next_move=case.behaviour)
    await seat_good(twin_arena, aiohttp_server)
    await seat(twin_arena, aiohttp_server, "faulty", rpc)
    await twin_arena.settle(60.0)

    for match in (1, 2):
        game, twin = await arena.game(match), await twin_arena.game(match)
        for played, says in ((game, case.rest_says), (twin, case.rpc_says)):
            assert (played["status"], played["outcome"], played["reason"]) == (
                "FINISHED", "WIN", case.reason), played["detail"]
            assert {s["name"]: s["result"] for s in played["seats"]} == {"good": "WIN",
                                                                         "faulty": "LOSS"}
            faults = [m for m in played["moves"] if m["fault"] is not None]
            assert [m["fault"] for m in faults] == [case.kind.value] * case.faults
            faulty_seat = 1 if match == 1 else 0
            assert {m["seat"] for m in faults} == {faulty_seat}
            assert all(says in m["fault_detail"] for m in faults), faults
            assert says in played["detail"]
        # The same call made the same fault, with the same consequences, on either wire.
        assert move_log(game) == move_log(twin)

    # The JSON-RPC bot heard of each fault in an Error; the REST bot only in its log, since
    # the spec has no such call (every request it got is one of the spec's: read_call).
    errors = rpc.squelch_calls("Error")
    assert len(errors) == 2 * case.faults
    assert {params["errorcode"] for _, params in errors} == {case.kind.error_code}
    names = {call.name for call in rest.calls()}
    assert names <= set(ROUTES) and "MatchEnd" in names
    log = await api(arena, "/api/bots/2/log")
    logged = [e for e in log["log"] if e["message"].startswith(f"Fault {case.kind.value} ")]
    assert {e["game_id"] for e in logged} == {1, 2} and len(logged) == 2 * case.faults
    if case.kind is FaultKind.HTTP_STATUS:
        # The REST fault names the call as the spec does, its ids filled in.
        detail = next(m["fault_detail"] for m in (await arena.game(1))["moves"] if m["fault"])
        assert re.search(r"to PUT /match/1/game/1/turn/\d+/choose: Internal Server Error",
                         detail), detail
    if case.kind is FaultKind.UNREACHABLE:
        # Every try of the choose was dropped: it went out again, the same URL and body.
        chooses = [h for h in rest.heard if h.path.startswith("/match/1/")
                   and h.path.endswith("/choose")]
        assert len(chooses) >= 2 and len({(h.path, h.body) for h in chooses}) == 1


# --- a connection that drops once --------------------------------------------------------------


async def test_a_dropped_connection_is_sent_again_and_the_game_goes_on(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer, tmp_path: Path) -> None:
    seen: set[tuple[str, str, bytes]] = set()

    def first_try(heard: Heard) -> bool:
        # Every call's first try (told apart by URL and body), not the pings.
        key = (heard.method, heard.path, heard.body)
        if heard.method != "PUT" or key in seen:
            return False
        seen.add(key)
        return True

    # Whole matches are played: the opponent is a scripted bot, which answers at once
    # however busy the machine (the reference good bot's final-round tables take a while).
    arena = await make_arena(db=str(tmp_path / "drop.db"))
    rest = RestBot(drop=first_try)
    await seat(arena, aiohttp_server, "other", RpcBot())
    secret = await seat(arena, aiohttp_server, "dropped", rest)
    await arena.settle(60.0)
    twin_arena = await make_arena(db=str(tmp_path / "twin.db"))
    await seat(twin_arena, aiohttp_server, "other", RpcBot())
    await seat(twin_arena, aiohttp_server, "dropped", RpcBot())
    await twin_arena.settle(60.0)

    for match in (1, 2):
        game = await arena.game(match)
        assert (game["status"], game["reason"]) == ("FINISHED", "NORMAL"), game["detail"]
        assert [m for m in game["moves"] if m["fault"]] == []
        # Nothing was lost: the match went exactly as one without drops.
        assert move_log(game) == move_log(await twin_arena.game(match))
    # Each call came twice, the same URL and body, signed both times; the first was dropped.
    puts = [heard for heard in rest.heard if heard.method == "PUT"]
    tries: dict[tuple[str, bytes], list[Heard]] = {}
    for heard in puts:
        tries.setdefault((heard.path, heard.body), []).append(heard)
    assert len(tries) == len(seen) and all(len(sent) == 2 for sent in tries.values())
    assert all(heard.signed_by(secret) for heard in puts)
    calls = [read_call(sent[1]) for sent in tries.values()]
    assert {call.name for call in calls} >= set(ROUTES) - {"Squelch"}
    assert sum(call.name == "NextMove" for call in calls) >= 4


async def test_a_resent_call_carries_a_later_timestamp(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer, tmp_path: Path) -> None:
    dropped: list[str] = []

    def first_choose(heard: Heard) -> bool:
        if heard.path.endswith("/choose") and not dropped:
            dropped.append(heard.path)
            return True
        return False

    arena = await make_arena(db=str(tmp_path / "drop.db"))
    rest = RestBot(drop=first_choose)
    await seat(arena, aiohttp_server, "other", RpcBot())
    await seat(arena, aiohttp_server, "dropped", rest)
    await arena.settle(60.0)
    sent = [h for h in rest.heard if dropped and h.path == dropped[0]]
    assert len(sent) == 2 and sent[0].body == sent[1].body
    # PROTOCOL: a second try is signed anew with a later timestamp, so that a bot that
    # refuses a signature it has seen (a replay) takes it.
    assert int(sent[1].headers[TIMESTAMP_HEADER]) > int(sent[0].headers[TIMESTAMP_HEADER])

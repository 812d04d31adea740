"""The admin API: refused without the token (nothing changes), and what it does with it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pytest_aiohttp import AiohttpServer

from merknera.games import JSON
from merknera.protocol import jsonrpc
from merknera.store import users
from tests.conftest import ArenaFactory
from tests.support import Arena, ScriptedBot, first_empty

TOKEN = "s3cret-admin-token"
CALLS = [("POST", "/api/admin/bots/1/disable"), ("POST", "/api/admin/bots/1/enable"),
         ("GET", "/api/admin/ladder"), ("POST", "/api/admin/ladder/pause"),
         ("POST", "/api/admin/ladder/resume"), ("POST", "/api/admin/tournaments"),
         ("POST", "/api/admin/users/alice/suspend"), ("POST", "/api/admin/users/alice/unsuspend")]


async def two_bots(arena: Arena, aiohttp_server: AiohttpServer) -> None:
    for name in ("one", "two"):
        server = await aiohttp_server(ScriptedBot().app())
        await arena.register(name, str(server.make_url("/rpc")))
    await arena.settle()


@pytest.mark.parametrize(("method", "path"), CALLS)
@pytest.mark.parametrize(("header", "status"), [
    (None, 401), ("Bearer", 401), ("Bearer wrong", 403), ("Basic " + TOKEN, 401)])
async def test_admin_calls_are_refused_without_the_token(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer, method: str, path: str,
        header: str | None, status: int) -> None:
    arena = await make_arena(admin_token=TOKEN, ladder=True, ladder_interval=60.0)
    await two_bots(arena, aiohttp_server)
    before = await arena.counts()
    headers = {"Authorization": header} if header else {}
    response = await arena.client.request(method, path, headers=headers,
                                          json={"game": "TICTACTOE", "format": "swiss",
                                                "rounds": 1})
    assert response.status == status
    assert "error" in await response.json()
    assert await arena.counts() == before
    assert await arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM bots WHERE status = 'DISABLED'") == 0
    assert await arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM users WHERE suspended_reason IS NOT NULL") == 0
    assert arena.platform.ladder_state() == "RUNNING"


async def test_without_a_configured_token_there_is_no_admin(arena: Arena) -> None:
    response = await arena.client.post("/api/admin/ladder/pause",
                                       headers={"Authorization": "Bearer anything"})
    assert response.status == 403
    assert "no admin token is configured" in (await response.json())["error"]


async def test_admin_disables_enables_pauses_and_creates(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(admin_token=TOKEN, ladder=True, ladder_interval=60.0)
    await two_bots(arena, aiohttp_server)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    db = arena.platform.db
    one = await db.fetchval("SELECT id FROM bots WHERE name = 'one'")
    response = await arena.client.post(f"/api/admin/bots/{one}/disable", headers=auth,
                                       json={"reason": "misbehaving"})
    assert response.status == 200
    assert await db.fetchval("SELECT status FROM bots WHERE id = ?", (one,)) == "DISABLED"
    assert (await arena.client.post(f"/api/admin/bots/{one}/disable",
                                    headers=auth)).status == 409
    refused = await arena.register("one", "http://127.0.0.1:9/rpc")
    assert "disabled by an admin (misbehaving)" in str(refused["error"])
    response = await arena.client.post(f"/api/admin/bots/{one}/enable", headers=auth)
    assert response.status == 200
    assert await db.fetchval("SELECT status FROM bots WHERE id = ?", (one,)) in (
        "OFFLINE", "ONLINE")
    paused = await arena.client.post("/api/admin/ladder/pause", headers=auth)
    assert (await paused.json()) == {"ladder": "PAUSED"}
    resumed = await arena.client.post("/api/admin/ladder/resume", headers=auth)
    assert (await resumed.json()) == {"ladder": "RUNNING"}
    # What the document's schema refuses is 400; terms no bots allow 422; terms the
    # current bots do not allow 409.
    for terms, status, says in [
        ({"game": "CHESS", "format": "swiss", "rounds": 1}, 400, '"game" must be one of'),
        ({"game": "TICTACTOE", "format": {}, "rounds": 1}, 400, '"format" must be one of'),
        ({"game": "TICTACTOE", "format": "SWISS", "rounds": 1}, 400, '"format" must be one'),
        ({"game": "TICTACTOE", "format": "swiss", "rounds": 0}, 400, '"rounds" must be'),
        ({"game": "TICTACTOE", "format": "swiss", "rounds": 1.5}, 400, '"rounds" must be'),
        ({"game": "TICTACTOE", "format": "swiss", "rounds": 1, "bots": None}, 400,
         '"bots" must be a list'),
        ({"game": "TICTACTOE", "format": "round-robin", "rounds": 11}, 422,
         "a round robin has at most 10 cycles"),
        ({"game": "TICTACTOE", "format": "round-robin", "rounds": 1, "bots": [999]}, 409,
         "bots [999] are not current TICTACTOE bots"),
        ({"game": "KALAHA", "format": "round-robin", "rounds": 1}, 409,
         "a tournament needs at least two bots; KALAHA has 0"),
    ]:
        bad = await arena.client.post("/api/admin/tournaments", headers=auth, json=terms)
        assert (bad.status, (await bad.json())["error"][:len(says)]) == (status, says), terms
    made = await arena.client.post("/api/admin/tournaments", headers=auth,
                                   json={"game": "TICTACTOE", "format": "round-robin",
                                         "rounds": 1.0})  # an integer, to JSON Schema
    assert made.status == 201
    tournament = (await made.json())["id"]
    assert await db.fetchval("SELECT COUNT(*) FROM tournament_entrants WHERE tournament_id = ?",
                             (tournament,)) == 2


async def test_an_undecodable_authorization_header_is_refused(
        make_arena: ArenaFactory) -> None:
    arena = await make_arena(admin_token=TOKEN)
    reader, writer = await asyncio.open_connection(arena.client.host, arena.client.port)
    writer.write(b"GET /api/admin/ladder HTTP/1.1\r\nHost: x\r\n"
                 b"Authorization: Bearer \xff\xfe\r\nConnection: close\r\n\r\n")
    await writer.drain()
    status = (await reader.readline()).split()[1]
    writer.close()
    assert status == b"403"


async def test_a_name_an_admin_disabled_stays_disabled_in_every_version(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(admin_token=TOKEN)
    await two_bots(arena, aiohttp_server)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    db = arena.platform.db
    one = await db.fetchval("SELECT id FROM bots WHERE name = 'one'")
    await arena.client.post(f"/api/admin/bots/{one}/disable", headers=auth,
                            json={"reason": "spamming"})
    before = await arena.counts()
    refused = await arena.register("one", "http://127.0.0.1:9/rpc", version="2.0")
    assert refused["error"]["code"] == jsonrpc.NOT_ALLOWED  # type: ignore[index]
    assert "disabled by an admin (spamming); no new version" in str(refused["error"])
    assert await arena.counts() == before
    await arena.client.post(f"/api/admin/bots/{one}/enable", headers=auth)
    accepted = await arena.register("one", "http://127.0.0.1:9/rpc", version="2.0")
    assert "A new version" in str(accepted["result"])


async def test_a_suspended_user_registers_nothing_and_their_bots_come_back_with_them(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(admin_token=TOKEN)
    await two_bots(arena, aiohttp_server)
    db = arena.platform.db
    _, bob = await users.create_user(db, "bob")
    suspended = asyncio.Event()

    async def waiting_move(params: dict[str, Any], _id: Any) -> JSON:
        await suspended.wait()  # bob's games are under way until alice is suspended
        return {"position": first_empty(params)}

    bobs = ScriptedBot(next_move=waiting_move)
    await arena.register("bobs", str((await aiohttp_server(bobs.app())).make_url("/rpc")),
                         token=bob)
    await bobs.wait_for("NextMove", 1)  # bob's games against alice's bots are under way
    auth = {"Authorization": f"Bearer {TOKEN}"}
    response = await arena.client.post("/api/admin/users/alice/suspend", headers=auth,
                                       json={"reason": "impersonation"})
    suspended.set()
    assert response.status == 200
    body = await response.json()
    assert body["suspended"] is True and len(body["bots_disabled"]) == 2
    statuses = {row[0]: row[1] for row in await db.fetchall("SELECT name, status FROM bots")}
    assert statuses == {"one": "DISABLED", "two": "DISABLED", "bobs": "ONLINE"}
    await arena.settle()
    unfinished = await db.fetchval("SELECT COUNT(*) FROM games WHERE status != 'FINISHED'")
    assert unfinished == 0
    ended = await db.fetchall("SELECT DISTINCT reason FROM games WHERE id IN (SELECT game_id "
                              "FROM seats WHERE bot_id IN (SELECT id FROM bots "
                              "WHERE name = 'bobs'))")
    assert [row[0] for row in ended] == ["ABORTED"]  # nobody is rated for them
    for name, version in (("three", "1.0"), ("one", "2.0")):
        refused = await arena.register(name, "http://127.0.0.1:9/rpc", version=version)
        assert 'User "alice" is suspended by an admin (impersonation)' in str(refused["error"])
    # An admin disables one of them for itself meanwhile: it stays out afterwards.
    one, two = body["bots_disabled"]
    also = await arena.client.post(f"/api/admin/bots/{one}/disable", headers=auth,
                                   json={"reason": "spam of its own"})
    assert also.status == 200
    lifted = await arena.client.post("/api/admin/users/alice/unsuspend", headers=auth)
    assert (await lifted.json())["bots_enabled"] == [two]
    statuses = {row[0]: row[1] for row in await db.fetchall("SELECT name, status FROM bots")}
    assert statuses["one"] == "DISABLED" and statuses["two"] != "DISABLED"
    accepted = await arena.register("three", "http://127.0.0.1:9/rpc")
    assert "result" in accepted, accepted
    unknown = await arena.client.post("/api/admin/users/nobody/suspend", headers=auth)
    assert unknown.status == 404

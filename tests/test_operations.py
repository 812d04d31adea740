"""The operator's commands (``merknera user ...``, ``merknera bot ...``) run as processes
beside a platform that serves the same store and plays the ladder, on SQLite and on
PostgreSQL: what they print, and that the platform honours what they changed (a suspended
user's token refused on /rpc and the API, a rotated token refused and the new one taken, a
disabled bot left out of the ladder and taken back in once enabled)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Awaitable
from typing import Any

from pytest_aiohttp import AiohttpServer

from merknera.protocol import jsonrpc
from merknera.store import users
from tests.conftest import ArenaFactory
from tests.support import Arena, ScriptedBot, random_mover, until

PATIENCE = 30.0
"""Seconds to wait for the platform to do something (a guard against a hang)."""


async def merknera(arena: Arena, *args: str) -> tuple[int, str, str]:
    """``merknera ARGS --db <the arena's store>`` as a process: exit code, stdout, stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "merknera", *args, "--db", arena.platform.config.store.db,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def ok(arena: Arena, *args: str) -> str:
    """Its stdout; it must exit 0."""
    code, out, err = await merknera(arena, *args)
    assert code == 0, f"merknera {' '.join(args)} exited {code}: {err}"
    return out



async def ladder(make_arena: ArenaFactory, store_target: str) -> Arena:
    """A platform on ``store_target`` that keeps pairing its bots; it looks at the store
    every second (a third of the lease)."""
    return await make_arena(db=store_target, ladder=True, ladder_interval=0.1,
                            lease_seconds=3, max_games_per_bot=2)


async def serve_bot(arena: Arena, aiohttp_server: AiohttpServer, name: str, seed: int,
                    token: str | None = None) -> str:
    """A bot server registered as ``name``; its endpoint."""
    server = await aiohttp_server(ScriptedBot(next_move=random_mover(seed)).app())
    endpoint = str(server.make_url("/rpc"))
    reply = await arena.register(name, endpoint, token=token)
    assert "result" in reply, reply
    return endpoint


async def bot_id(arena: Arena, name: str) -> int:
    found = await arena.platform.db.fetchval("SELECT id FROM bots WHERE name = ?", (name,))
    assert isinstance(found, int)
    return found


async def newest_game(arena: Arena) -> int:
    return int(await arena.platform.db.fetchval("SELECT COALESCE(MAX(id), 0) FROM games"))


async def games_of_since(arena: Arena, bot: int, since: int) -> int:
    """Games seating ``bot`` created after the game ``since``."""
    return int(await arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM seats WHERE bot_id = ? AND game_id > ?", (bot, since)))


async def games_since(arena: Arena, since: int) -> int:
    return int(await arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM games WHERE id > ?", (since,)))


async def log_status(arena: Arena, bot: int, token: str) -> tuple[int, dict[str, Any]]:
    """The bot log API's answer to ``token``."""
    response = await arena.client.get(f"/api/bots/{bot}/log",
                                      headers={"Authorization": f"Bearer {token}"})
    return response.status, await response.json()


async def test_a_disabled_bot_gets_no_game_until_it_is_enabled(
        make_arena: ArenaFactory, store_target: str, aiohttp_server: AiohttpServer) -> None:
    arena = await ladder(make_arena, store_target)
    for seed, name in enumerate(("one", "two", "three")):
        await serve_bot(arena, aiohttp_server, name, seed)
    one = await bot_id(arena, "one")
    await until(lambda: _at_least(games_of_since(arena, one, 0), 1), within=PATIENCE)

    out = await ok(arena, "bot", "disable", "one", "--reason", "spam")
    lines = out.splitlines()
    assert lines[0] == f'Disabled bot "one" 1.0 (id {one}, TICTACTOE): spam.'
    assert re.fullmatch(r"\d+ unfinished games? ended without a result( \(ids [\d, ]+\))?; "
                        r"`merknera bot enable one` puts it back\.", lines[1]), lines[1]
    db = arena.platform.db
    assert await db.fetchval("SELECT status FROM bots WHERE id = ?", (one,)) == "DISABLED"
    assert await db.fetchval(  # its games under way ended with the command
        "SELECT COUNT(*) FROM games JOIN seats ON seats.game_id = games.id "
        "WHERE seats.bot_id = ? AND games.status != 'FINISHED'", (one,)) == 0
    refused = await arena.register("one", "http://127.0.0.1:9/rpc")
    assert "disabled by an admin (spam)" in str(refused["error"])
    # The ladder goes on without it.
    since = await newest_game(arena)
    await until(lambda: _at_least(games_since(arena, since), 4), within=PATIENCE)
    assert await games_of_since(arena, one, since) == 0

    listed = json.loads(await ok(arena, "bot", "list", "--json"))
    assert [(b["name"], b["status"], b["disabled_by"], b["disabled_reason"]) for b in listed
            if b["name"] == "one"] == [("one", "DISABLED", "ADMIN", "spam")]
    assert {b["name"] for b in listed} == {"one", "two", "three"}
    table = (await ok(arena, "bot", "list", "--game", "tictactoe")).splitlines()
    assert table[0].split() == ["ID", "NAME", "VERSION", "GAME", "OWNER", "PROTOCOL",
                                "STATUS", "LAST", "SEEN", "DISABLED"]
    row = next(line for line in table if " one " in line)
    assert row.split()[:7] == [str(one), "one", "1.0", "TICTACTOE", "alice", "jsonrpc",
                               "DISABLED"]
    assert row.endswith("by ADMIN: spam")
    assert table[0].index("STATUS") == row.index("DISABLED")  # the columns line up
    assert (await ok(arena, "bot", "list", "--game", "KALAHA")).splitlines()[1:] == []

    out = await ok(arena, "bot", "enable", "one")
    assert out == (f'Enabled bot "one" 1.0 (id {one}, TICTACTOE): it plays again once it '
                   "answers a ping.\n")
    # The platform finds it in the store, pings it, and the ladder pairs it again.
    since = await newest_game(arena)
    await until(lambda: _at_least(games_of_since(arena, one, since), 1), within=PATIENCE)

    code, _, err = await merknera(arena, "bot", "enable", "one")
    assert code == 1
    assert f'bot "one" 1.0 (id {one}, TICTACTOE) is not disabled' in err
    code, _, err = await merknera(arena, "bot", "disable", "nobody")
    assert (code, err) == (1, 'merknera: there is no bot named "nobody"\n')


async def _at_least(count: Awaitable[int], least: int) -> bool:
    return await count >= least


async def test_a_suspended_users_token_is_refused_and_their_bots_sit_out(
        make_arena: ArenaFactory, store_target: str, aiohttp_server: AiohttpServer) -> None:
    arena = await ladder(make_arena, store_target)
    _, bob = await users.create_user(arena.platform.db, "bob")
    await serve_bot(arena, aiohttp_server, "one", 1)
    await serve_bot(arena, aiohttp_server, "two", 2)
    bobs_endpoint = await serve_bot(arena, aiohttp_server, "bobs", 3, token=bob)
    bobs = await bot_id(arena, "bobs")
    await until(lambda: _at_least(games_of_since(arena, bobs, 0), 1), within=PATIENCE)
    assert (await log_status(arena, bobs, bob))[0] == 200

    out = await ok(arena, "user", "suspend", "bob", "--reason", "cheating")
    lines = out.splitlines()
    assert lines[0] == 'Suspended user "bob": cheating.'
    assert lines[1].startswith("Their token is refused on /rpc and the API, and 1 current bot "
                               f"of theirs is disabled (ids {bobs}; ")
    assert lines[1].endswith("`merknera user unsuspend bob` lifts it.")
    db = arena.platform.db
    assert await db.fetchval("SELECT status FROM bots WHERE id = ?", (bobs,)) == "DISABLED"
    # Their token: refused on /rpc and on the API, saying why.
    refused = await arena.register("bobs", bobs_endpoint, token=bob)
    error: Any = refused["error"]
    assert error["code"] == jsonrpc.NOT_ALLOWED
    assert 'User "bob" is suspended by an admin (cheating)' in error["message"]
    status, body = await log_status(arena, bobs, bob)
    assert (status, body["error"]) == (403, 'User "bob" is suspended by an admin (cheating); '
                                             "their token is refused until the suspension is "
                                             "lifted")
    # Their bots sit out; the others play on.
    since = await newest_game(arena)
    await until(lambda: _at_least(games_since(arena, since), 3), within=PATIENCE)
    assert await games_of_since(arena, bobs, since) == 0

    listed = {u["name"]: u for u in json.loads(await ok(arena, "user", "list", "--json"))}
    assert listed["bob"]["suspended"] is True
    assert listed["bob"]["suspended_reason"] == "cheating"
    assert listed["bob"]["suspended_at"].endswith("Z")
    assert (listed["bob"]["tokens"], listed["bob"]["bots"]) == (1, 1)
    assert (listed["alice"]["suspended"], listed["alice"]["bots"]) == (False, 2)
    table = (await ok(arena, "user", "list")).splitlines()
    assert table[0].split() == ["ID", "NAME", "TOKENS", "BOTS", "CREATED", "SUSPENDED"]
    bob_row = next(line for line in table if " bob " in line)
    assert bob_row.endswith(" UTC: cheating") and " since " in bob_row
    assert table[0].index("SUSPENDED") == bob_row.index("since")

    out = await ok(arena, "user", "unsuspend", "bob")
    assert out == (f'Lifted the suspension of user "bob"; 1 bot enabled again (ids {bobs}): '
                   "they play once they answer a ping.\n")
    assert (await log_status(arena, bobs, bob))[0] == 200
    since = await newest_game(arena)
    await until(lambda: _at_least(games_of_since(arena, bobs, since), 1), within=PATIENCE)
    assert await ok(arena, "user", "unsuspend", "bob") == (
        'User "bob" is not suspended; nothing changed.\n')
    code, _, err = await merknera(arena, "user", "suspend", "nobody")
    assert (code, err) == (1, 'merknera: there is no user named "nobody"\n')


async def test_a_rotated_token_is_refused_and_the_new_one_taken(
        make_arena: ArenaFactory, store_target: str, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(db=store_target)
    old = arena.token
    endpoint = await serve_bot(arena, aiohttp_server, "one", 1)  # the old token is known
    one = await bot_id(arena, "one")
    assert (await log_status(arena, one, old))[0] == 200

    out = await ok(arena, "user", "token", "rotate", "alice")
    lines = out.splitlines()
    assert lines[:2] == ['Revoked 1 token of "alice": refused from now on.',
                         'The new API token for "alice" follows; it is shown only now:']
    new = lines[2]
    assert len(new) == users.TOKEN_LENGTH and new != old and len(lines) == 3

    refused = await arena.register("one", endpoint, token=old)
    error: Any = refused["error"]
    assert error["code"] == jsonrpc.UNKNOWN_TOKEN
    status, body = await log_status(arena, one, old)
    assert (status, body["error"]) == (403, "only the bot's owner may read its log")
    accepted = await arena.register("one", endpoint, token=new)
    assert "result" in accepted, accepted
    assert (await log_status(arena, one, new))[0] == 200
    listed = {u["name"]: u for u in json.loads(await ok(arena, "user", "list", "--json"))}
    assert listed["alice"]["tokens"] == 1

    # Another token besides: `user token NAME` still issues one; a rotation revokes both.
    issued = (await ok(arena, "user", "token", "alice")).splitlines()[-1]
    assert (await log_status(arena, one, issued))[0] == 200
    out = await ok(arena, "user", "token", "rotate", "alice")
    assert out.startswith('Revoked 2 tokens of "alice"')
    for gone in (new, issued):
        assert (await log_status(arena, one, gone))[0] == 403
    # Nobody to rotate for: an unknown user, a user without a token.
    code, _, err = await merknera(arena, "user", "token", "rotate", "nobody")
    assert (code, err) == (1, 'merknera: there is no user named "nobody"\n')
    await arena.platform.db.transaction(
        lambda conn: users.insert_user(conn, "owner (Battlebot)", "2026-01-01T00:00:00.000Z"))
    code, _, err = await merknera(arena, "user", "token", "rotate", "owner (Battlebot)")
    assert code == 1
    assert 'the user "owner (Battlebot)" has no current token to rotate' in err
    code, _, err = await merknera(arena, "user", "token", "alice", "bob")
    assert code == 2 and "rotate NAME" in err

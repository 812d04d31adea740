"""What one user may register: how often, how many names, and which names."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from merknera.protocol import jsonrpc
from merknera.store import bots, users
from tests.conftest import ArenaFactory
from tests.support import Arena

ENDPOINT = "http://127.0.0.1:9/rpc"


async def register(arena: Arena, name: str, *, token: str | None = None,
                   version: str = "1.0") -> tuple[int, dict[str, Any], str | None]:
    """Register with the status and Retry-After of the HTTP answer."""
    response = await arena.client.post("/rpc", json={
        "jsonrpc": "2.0", "method": "RegistrationService.Register", "id": 1,
        "params": {"token": token or arena.token, "botname": name, "botversion": version,
                   "game": "TICTACTOE", "rpcendpoint": ENDPOINT}})
    return response.status, await response.json(), response.headers.get("Retry-After")


async def test_a_burst_of_registrations_is_cut_short(make_arena: ArenaFactory) -> None:
    arena = await make_arena(registration_burst=3, registration_interval=30.0)
    for number in range(3):
        status, reply, _ = await register(arena, "flood", version=str(number))
        assert status == 200 and "result" in reply, reply
    before = await arena.counts()
    status, reply, retry = await register(arena, "flood", version="3")
    assert (status, reply["error"]["code"], retry) == (429, jsonrpc.RATE_LIMITED, "30")
    assert reply["error"]["message"] == (
        'User "alice" has made 3 registrations in quick succession; after that one more is '
        "allowed every 30 s: try again in 30 s")
    assert await arena.counts() == before  # no bot, no game
    _, bob = await users.create_user(arena.platform.db, "bob")
    status, reply, _ = await register(arena, "bobs", token=bob)
    assert status == 200 and "result" in reply  # the limit is alice's alone


async def test_registrations_come_back_one_per_interval(make_arena: ArenaFactory) -> None:
    arena = await make_arena(registration_burst=1, registration_interval=0.2)
    assert (await register(arena, "steady", version="1"))[0] == 200
    assert (await register(arena, "steady", version="2"))[0] == 429
    await asyncio.sleep(0.25)
    assert (await register(arena, "steady", version="2"))[0] == 200


async def test_a_token_revoked_since_its_last_registration_is_refused_and_counted(
        make_arena: ArenaFactory) -> None:
    arena = await make_arena(auth_failure_burst=1, auth_failure_interval=30.0)
    assert (await register(arena, "kept"))[0] == 200  # the token is known good from now
    await arena.platform.db.write_one("UPDATE tokens SET status = 'REVOKED'")
    before = await arena.counts()
    status, reply, _ = await register(arena, "late")
    assert (status, reply["error"]["code"]) == (200, jsonrpc.UNKNOWN_TOKEN)
    assert await arena.counts() == before
    # It counted as a wrong token: with a burst of one, the next try must wait.
    status, reply, retry = await register(arena, "late")
    assert (status, reply["error"]["code"], retry) == (429, jsonrpc.RATE_LIMITED, "30")


async def test_a_user_has_at_most_so_many_bot_names(make_arena: ArenaFactory) -> None:
    arena = await make_arena(max_bots_per_user=2)
    for name in ("first", "second"):
        assert "result" in (await register(arena, name))[1]
    status, reply, _ = await register(arena, "third")
    assert (status, reply["error"]["code"]) == (200, jsonrpc.NOT_ALLOWED)
    assert 'User "alice" has registered 2 bot names, as many as a user may' in (
        reply["error"]["message"])
    assert "result" in (await register(arena, "first", version="2.0"))[1]


@pytest.mark.parametrize(("name", "code", "message"), [
    ("tester", jsonrpc.NAME_TAKEN, 'The bot name "tester" is too like "Tester", which '
                                   "another user has"),
    ("TESTER", jsonrpc.NAME_TAKEN, "is too like"),
    ("Ｔester", jsonrpc.NAME_TAKEN, "is too like"),          # a full-width T
    ("T\u0435ster", jsonrpc.INVALID_PARAMS, "mixes Cyrillic and Latin letters"),
    ("Test\u200ber", jsonrpc.INVALID_PARAMS, "an invisible formatting character (U+200B"),
    ("\u202eretseT", jsonrpc.INVALID_PARAMS, "(U+202E RIGHT-TO-LEFT OVERRIDE)"),
    ("Tes\x9bter", jsonrpc.INVALID_PARAMS, "a control character (U+009B)"),
    ("Test\u00a0er", jsonrpc.INVALID_PARAMS, "a space other than the plain space"),
])
async def test_a_name_like_another_users_is_refused(arena: Arena, name: str, code: int,
                                                     message: str) -> None:
    _, bob = await users.create_user(arena.platform.db, "bob")
    assert "result" in (await register(arena, "Tester", token=bob))[1]
    before = await arena.counts()
    _, reply, _ = await register(arena, name)
    assert reply["error"]["code"] == code, reply
    assert message in reply["error"]["message"]
    assert await arena.counts() == before


async def test_a_name_like_ones_own_is_refused_too(arena: Arena) -> None:
    assert "result" in (await register(arena, "Mine"))[1]
    _, reply, _ = await register(arena, "MINE")
    assert reply["error"]["code"] == jsonrpc.NOT_ALLOWED
    assert reply["error"]["message"].startswith(
        'The bot name "MINE" is too like your bot "Mine"; register a new version of that one')


async def test_a_capital_i_for_an_l_is_the_same_name(arena: Arena) -> None:
    _, bob = await users.create_user(arena.platform.db, "bob")
    assert "result" in (await register(arena, "billy", token=bob))[1]
    _, reply, _ = await register(arena, "bIlly")
    assert reply["error"]["code"] == jsonrpc.NAME_TAKEN
    assert 'The bot name "bIlly" is too like "billy"' in reply["error"]["message"]


async def test_a_name_from_before_the_rules_keeps_working(arena: Arena) -> None:
    """A name stored before names were checked (a no-break space in it) is its owner's
    still: new versions of it are taken."""
    user = await users.find_user_by_token(arena.platform.db, arena.token)
    assert user is not None
    await arena.platform.db.transaction(lambda conn: bots.insert(
        conn, name="old\u00a0timer", version="1", game="TICTACTOE", user_id=user.id,
        meta=bots.BotMetadata(ENDPOINT), secret="s"))
    status, reply, _ = await register(arena, "old\u00a0timer", version="2")
    assert status == 200 and "A new version" in reply["result"]["message"], reply
    _, refused, _ = await register(arena, "new\u00a0timer")
    assert "a space other than the plain space" in refused["error"]["message"]


@pytest.mark.parametrize("name", ["anonymous", "ANONYMOUS", "ａｎｏｎｙｍｏｕｓ"])
async def test_the_name_of_people_without_a_name_is_nobodys(make_arena: ArenaFactory,
                                                            name: str) -> None:
    arena = await make_arena()
    before = await arena.counts()
    status, reply, _ = await register(arena, name)
    assert status == 200 and reply["error"]["code"] == jsonrpc.NOT_ALLOWED, reply
    assert "kept for people who play without a name" in reply["error"]["message"]
    assert await arena.counts() == before

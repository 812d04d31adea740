"""Presence of a bot that speaks the Squelchbot REST API: its ping is ``GET /bot/info``.

The bots are real aiohttp servers (:class:`tests.support.InfoBot`) on the in-process
platform; the pinger runs on its own, every ``PING_INTERVAL`` seconds, and the tests wait
for what it does (no test measures time).  Each bot is alone in its game, so no game
calls it: every request it gets is a ping.
"""

from __future__ import annotations

from typing import Any

import pytest
from pytest_aiohttp import AiohttpServer

from tests.conftest import ArenaFactory
from tests.support import Arena, InfoBot, until

PING_INTERVAL = 0.2
"""Seconds between pings of an online bot: short, so that the pinger acts within a test."""


async def register_rest(arena: Arena, aiohttp_server: AiohttpServer, bot: InfoBot,
                        name: str = "pinged") -> None:
    """Serve ``bot`` and register it (bot 1) as a Squelch bot of the REST API."""
    server = await aiohttp_server(bot.app())
    reply = await arena.rpc("RegistrationService.Register", {
        "token": arena.token, "botname": name, "botversion": "1.0", "game": "SQUELCH",
        "rpcendpoint": str(server.make_url("")), "protocol": "squelch-rest"})
    assert "result" in reply, reply


async def shown(arena: Arena, bot_id: int = 1) -> dict[str, Any]:
    """A bot as ``/api/bots/{id}`` shows it."""
    response = await arena.client.get(f"/api/bots/{bot_id}")
    assert response.status == 200, await response.text()
    found = await response.json()
    assert isinstance(found, dict)
    return found


async def bot_log(arena: Arena, bot_id: int = 1) -> list[str]:
    """The messages of a bot's log, oldest first (read as its owner)."""
    response = await arena.client.get(f"/api/bots/{bot_id}/log",
                                      headers={"Authorization": f"Bearer {arena.token}"})
    assert response.status == 200, await response.text()
    return [entry["message"] for entry in reversed((await response.json())["log"])]


async def shown_as(arena: Arena, status: str, self_name: str | None = None) -> None:
    """Wait until the API shows the bot with ``status`` (and ``self_name``, if given)."""
    async def holds() -> bool:
        bot = await shown(arena)
        return bot["status"] == status and (self_name is None
                                            or bot["self_name"] == self_name)

    await until(holds)


def fail_with_500(bot: InfoBot) -> None:
    bot.status = 500


def hang_up(bot: InfoBot) -> None:
    bot.drop = True


@pytest.mark.parametrize(("fail", "why"), [
    (fail_with_500, "GET /bot/info failed: HTTP status 500"),
    (hang_up, "GET /bot/info failed: the connection was lost before a reply"),
], ids=["HTTP 500", "dropped"])
async def test_a_rest_bot_whose_info_fails_goes_offline_and_back(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer,
        fail: Any, why: str) -> None:
    arena = await make_arena(ping_interval=PING_INTERVAL)
    bot = InfoBot(name="pinged v1")
    await register_rest(arena, aiohttp_server, bot)
    await shown_as(arena, "ONLINE", "pinged v1")  # registration's own ping was answered

    fail(bot)
    await shown_as(arena, "OFFLINE")
    log = await bot_log(arena)
    offline = [m for m in log if " is offline: " in m]
    assert len(offline) == 1, log
    assert offline[0].startswith(f"pinged (version: 1.0) is offline: {why}"), log
    # What it was last called is still shown while it is away.
    assert (await shown(arena))["self_name"] == "pinged v1"

    # An offline bot is pinged again (backing off) and is back once /bot/info answers.
    bot.status, bot.drop = 200, False
    await shown_as(arena, "ONLINE")
    log = await bot_log(arena)
    assert log[-1] == "pinged (version: 1.0) is online: it answered a ping", log
    assert {path for _, path in bot.heard} == {"/bot/info"}


async def test_a_rest_bot_s_new_name_is_shown_after_its_next_ping(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(ping_interval=PING_INTERVAL)
    bot = InfoBot(name="first name")
    await register_rest(arena, aiohttp_server, bot)
    await shown_as(arena, "ONLINE", "first name")

    bot.name = "  second name, now cut at 20 characters"
    await shown_as(arena, "ONLINE", "second name, now cut")
    page = await arena.client.get("/bots/1")
    text = await page.text()
    assert page.status == 200 and "second name, now cut" in text and "first name" not in text

    # A name that may not be shown (a right-to-left override) is not taken: the last good
    # one stays, and the bot stays online (it did answer).
    bot.name = "\u202eeman driht"
    pings = bot.pings()
    await until(lambda: bot.pings() >= pings + 2)  # a ping heard it, and the next began
    found = await shown(arena)
    assert (found["status"], found["self_name"]) == ("ONLINE", "second name, now cut")
    # A name that is no string at all is no name either.
    bot.name = 42
    pings = bot.pings()
    await until(lambda: bot.pings() >= pings + 2)
    assert (await shown(arena))["self_name"] == "second name, now cut"
    # And a good one is taken again.
    bot.name = "third"
    await shown_as(arena, "ONLINE", "third")

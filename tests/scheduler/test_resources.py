"""The platform out of descriptors: its own failure, never a bot's forfeit.

The test makes the process's open-files limit bite for real: every descriptor number up to
the highest in use is taken and the soft limit set just above, so that the next socket the
platform opens to call a bot fails with EMFILE, as it would under a flood of connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_aiohttp import AiohttpServer

from merknera.scheduler import leases, runner
from merknera.scheduler.registration import RegistrationRequest
from tests.conftest import ArenaFactory
from tests.support import Arena, ScriptedBot, until


@contextlib.contextmanager
def no_descriptors_left() -> Iterator[None]:
    """While the block runs, opening any file or socket fails with EMFILE."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # The listing counts the descriptor of the listing itself, closed again by now: `<=`
    # fills that one too, whether or not it was the highest.
    highest = max(int(fd.name) for fd in Path("/proc/self/fd").iterdir())
    fillers: list[int] = []
    try:
        while (fd := os.open(os.devnull, os.O_RDONLY)) <= highest:
            fillers.append(fd)
        os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 1, hard))
        with pytest.raises(OSError, match="Too many open files"):
            os.open(os.devnull, os.O_RDONLY)  # the limit bites
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        for filler in fillers:
            os.close(filler)


async def register_in_process(arena: Arena, name: str, endpoint: str) -> None:
    """Register without HTTP: while no descriptor is left, the platform cannot accept a
    connection either (the test shares its process)."""
    await arena.platform.registrar.register(RegistrationRequest(
        token=arena.token, botname=name, botversion="1", game="TICTACTOE",
        rpcendpoint=endpoint))


async def test_a_shortage_that_passes_costs_nobody_anything(
        arena: Arena, aiohttp_server: AiohttpServer, caplog: pytest.LogCaptureFixture) -> None:
    first, second = ScriptedBot(), ScriptedBot()
    await arena.register("first", str((await aiohttp_server(first.app())).make_url("/rpc")))
    endpoint = str((await aiohttp_server(second.app())).make_url("/rpc"))
    with caplog.at_level(logging.WARNING, "merknera.scheduler.runner"), no_descriptors_left():
        # The platform has never called either bot: NewGame needs sockets there are none of.
        await register_in_process(arena, "second", endpoint)
        await until(lambda: "short of its own resources" in caplog.text)
    assert "Too many open files; trying again" in caplog.text
    await arena.settle()
    for game_id in (1, 2):
        game = await arena.game(game_id)
        assert (game["status"], game["reason"]) == ("FINISHED", "NORMAL"), game["detail"]
        assert [move["fault"] for move in game["moves"]] == [None] * len(game["moves"])


async def test_a_shortage_that_lasts_leaves_the_game_to_go_on_later(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "RESOURCE_PAUSES", (0.05, 0.05))
    monkeypatch.setattr(leases, "CLAIM_EVERY", 0.2)
    arena = await make_arena()
    first, second = ScriptedBot(), ScriptedBot()
    await arena.register("first", str((await aiohttp_server(first.app())).make_url("/rpc")))
    endpoint = str((await aiohttp_server(second.app())).make_url("/rpc"))
    with no_descriptors_left():
        await register_in_process(arena, "second", endpoint)
        async with asyncio.timeout(10.0):
            await arena.platform.scheduler.wait_idle()  # the runners gave up for now
        stored = await arena.platform.db.fetchall("SELECT status, outcome FROM games")
        assert [tuple(row) for row in stored] == [("PENDING", None), ("PENDING", None)]
    assert first.calls == [] and second.calls == []
    # Descriptors are back: the sweeper starts the games again and they are played out.
    async def played_out() -> bool:
        finished: int = await arena.platform.db.fetchval(
            "SELECT COUNT(*) FROM games WHERE status = 'FINISHED'")
        return finished == 2

    await until(played_out, within=5.0)
    await arena.settle()
    for game_id in (1, 2):
        game = await arena.game(game_id)
        assert (game["status"], game["reason"]) == ("FINISHED", "NORMAL"), game["detail"]
        assert [move["fault"] for move in game["moves"]] == [None] * len(game["moves"])
    statuses = {row[0] for row in await arena.platform.db.fetchall("SELECT status FROM bots")}
    assert statuses == {"ONLINE"}  # nobody was taken for offline

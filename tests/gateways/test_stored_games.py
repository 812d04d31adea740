"""A gateway's game no longer in memory is rebuilt from the store off the event loop, once
if it is finished (its answer never changes), in its client's place (a client may hold its
share, 429 beyond), and refused with 503 and ``Retry-After`` while the platform is making
as many such answers as it may; a short one is made at once in its place.

The platform is served as ``merknera serve`` serves it, with its Kalaha and hexagons
listeners; the games are finished games of the store (as a platform that has since
restarted finds them), asked for by their handles at the listeners, as their clients ask.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import random
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import aiohttp
import pytest

from merknera.app import Platform
from merknera.config import Config
from merknera.games import REGISTRY
from merknera.gateways import tables as tables_module
from merknera.server import running
from merknera.store import bots as bot_store
from merknera.store import games, users
from merknera.store.db import Connection
from merknera.work import Deadline, Work
from tests.support import free_port, until

PATIENCE = 30.0
"""Seconds to wait for what must happen well within that (a guard against a hang)."""


@dataclasses.dataclass
class Served:
    config: Config
    platform: Platform
    session: aiohttp.ClientSession

    async def get(self, port: int, path: str) -> tuple[int, Any, Any]:
        """Status, headers and JSON body of a GET at a listener."""
        async with self.session.get(f"http://127.0.0.1:{port}{path}") as answer:
            return answer.status, answer.headers, json.loads(await answer.text())


@contextlib.asynccontextmanager
async def every_place_taken(work: Work, jobs: int | None = None) -> AsyncIterator[None]:
    """Jobs that hold ``jobs`` places of the line (all of them by default) until the block
    ends."""
    release = threading.Event()

    def wait(_: Deadline) -> bool:
        return release.wait(PATIENCE)

    count = work.workers + work.waiting if jobs is None else jobs
    blockers = [asyncio.create_task(work.run(wait)) for _ in range(count)]
    try:
        await until(lambda: work.held == count, PATIENCE)
        yield
    finally:
        release.set()
        for blocker in blockers:
            assert await blocker


@pytest.fixture
async def served(config: Config) -> AsyncIterator[Served]:
    changed = config.replace(port=0, kalaha_port=free_port(),
                             hexagons_port=free_port(), request_burst=100000,
                             request_rate=100000.0)
    async with AsyncExitStack() as stack:
        live, platform = await stack.enter_async_context(running(changed))
        session = await stack.enter_async_context(aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=PATIENCE)))
        yield Served(live, platform, session)


async def finished(served: Served, mnemonic: str, handle: str, settings: dict[str, Any],
                   seed: int) -> None:
    """A game of two random players played to its end and stored under ``handle``."""
    db, game = served.platform.db, REGISTRY[mnemonic]
    user, _ = await users.create_user(db, f"owner{seed}")

    def seat_bots(conn: Connection) -> int:
        ids = [bot_store.insert(conn, name=f"{name}{seed}", version="1", game=mnemonic,
                                user_id=user.id, secret="s",
                                meta=bot_store.BotMetadata("http://127.0.0.1:9/rpc")).id
               for name in ("First", "Second")]
        return games.create(conn, mnemonic, seed, ids, settings, origin="MATCH",
                            handle=handle)

    game_id = await db.transaction(seat_bots)
    await games.mark_running(db, game_id, [0, 1])
    state = game.new({**game.default_settings, **settings}, [f"First{seed}", f"Second{seed}"],
                     random.Random(seed))
    chooser = random.Random(seed + 1)
    calls: list[games.LoggedCall] = []
    while (seat := game.to_move(state)) is not None:
        move = chooser.choice(list(game.legal_moves(state, seat)))
        state = game.apply(state, seat, move)
        calls.append(games.LoggedCall(len(calls) + 1, seat, move=game.move_to_wire(move)))
    assert await games.record_moves(db, game_id, calls)
    outcome = game.outcome(state)
    assert outcome is not None
    assert await games.finish(db, game_id, outcome, game.state_to_json(state))


async def test_a_finished_gateway_game_is_rebuilt_once_and_refused_while_busy(
        served: Served) -> None:
    tables, work = served.platform.tables, served.platform.work
    kalaha, hexagons = served.config.kalaha.port, served.config.hexagons.port
    boards = [str(uuid.UUID(int=random.Random(seed).getrandbits(128))) for seed in (1, 2)]
    for seed, board in enumerate(boards, 1):
        await finished(served, "KALAHA", board, {}, seed)
    for seed, handle in ((3, "feed5eed"), (4, "5eedfeed")):
        await finished(served, "HEXAGONS", handle, {"rows": 9, "cols": 9}, seed)

    first = await served.get(kalaha, f"/api/boards/{boards[0]}")
    assert first[0] == 200 and first[2]["boardId"] == boards[0] and first[2]["gameOver"]
    shown = await served.get(hexagons, "/feed5eed")
    assert shown[0] == 200 and shown[2]["state"] == "completed", shown
    assert tables.rebuilt == 2
    for _ in range(3):
        assert (await served.get(kalaha, f"/api/boards/{boards[0]}"))[2] == first[2]
        assert (await served.get(hexagons, "/feed5eed"))[2] == shown[2]
    assert tables.rebuilt == 2  # kept: finished games never change

    # Every worker busy and every place in line taken: a game kept is answered still, and
    # a short one rebuilt at once; a long one that would take a worker is refused for now.
    async with every_place_taken(work):
        assert (await served.get(hexagons, "/feed5eed"))[2] == shown[2]
        status, _, body = await served.get(kalaha, f"/api/boards/{boards[1]}")
        assert status == 200 and body["boardId"] == boards[1] and body["gameOver"], body
        async with served.session.get(f"http://127.0.0.1:{hexagons}/5eedfeed") as answer:
            assert answer.status == 503 and int(answer.headers["Retry-After"]) >= 1
            assert "as many such answers" in await answer.text()
    status, _, body = await served.get(hexagons, "/5eedfeed")
    assert status == 200 and body["state"] == "completed", body
    assert tables.rebuilt == 4


async def test_a_stored_game_is_rebuilt_in_its_clients_place(served: Served) -> None:
    work, hexagons = served.platform.work, served.config.hexagons.port
    work.wait_limit = PATIENCE  # the places below wait for as long as the test needs
    work.per_client = 2  # fewer than the long games the client asks for below
    await finished(served, "HEXAGONS", "5ma11", {"rows": 3, "cols": 3}, 1)  # 12 moves
    longs = [f"10ng{n}" for n in range(4)]
    for seed, handle in enumerate(longs, 10):
        await finished(served, "HEXAGONS", handle, {"rows": 9, "cols": 9}, seed)
    # Every place in the line taken: a short game is rebuilt and shown at once, in the
    # client's place, as a short one is.
    async with every_place_taken(work):
        status, _, text = await answer(served, hexagons, "/5ma11")
        assert status == 200 and json.loads(text)["state"] == "completed", text

    # The worker busy: a client asking for several long ones at once holds its share of
    # places, and is refused the rest at once.
    async with every_place_taken(work, jobs=1):
        asked = [asyncio.create_task(answer(served, hexagons, f"/{handle}"))
                 for handle in longs]
        await until(lambda: sum(get.done() for get in asked) == len(longs) - work.per_client,
                    PATIENCE)
        for get in asked:
            if get.done():
                status, headers, text = get.result()
                assert status == 429 and int(headers["Retry-After"]) >= 1
                assert "your address is waiting" in text
        assert work.placed == 1 + work.per_client
    statuses = sorted(status for status, _, _ in await asyncio.gather(*asked))
    assert statuses == [200] * work.per_client + [429] * (len(longs) - work.per_client)
    assert work.placed == 0


@pytest.fixture
def two_stored_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep two finished stored games (set before the platform makes its tables)."""
    monkeypatch.setattr(tables_module, "STORED_KEPT", 2)


async def test_the_latest_finished_stored_games_are_kept(
        two_stored_kept: None, served: Served) -> None:
    tables, hexagons = served.platform.tables, served.config.hexagons.port
    handles = ["feed0001", "feed0002", "feed0003"]
    for seed, handle in enumerate(handles, 20):
        await finished(served, "HEXAGONS", handle, {"rows": 5, "cols": 5}, seed)
    for handle in [*handles, handles[2], handles[1]]:
        status, _, body = await served.get(hexagons, f"/{handle}")
        assert status == 200 and body["state"] == "completed"
    assert tables.rebuilt == 3  # the last two kept
    assert (await served.get(hexagons, f"/{handles[0]}"))[0] == 200
    assert tables.rebuilt == 4  # the first was let go: rebuilt again


async def answer(served: Served, port: int, path: str) -> tuple[int, Any, str]:
    """Status, headers and text of a GET at a listener."""
    async with served.session.get(f"http://127.0.0.1:{port}{path}") as got:
        return got.status, got.headers, await got.text()

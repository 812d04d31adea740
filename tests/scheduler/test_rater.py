"""The rater: passes over the rating queue a moment after results are stored, at start for
results a stopped node left queued, and once more at its stop."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from merknera.games.base import Outcome, Termination
from merknera.ratings import Rating, update
from merknera.scheduler import rater as rater_module
from merknera.scheduler.rater import Rater
from merknera.store import Database
from merknera.store import ratings as rating_store
from merknera.store.db import now
from tests.store.test_ratings import make_bots, new_game, store_result, tables
from tests.support import until

FAR_AHEAD = "2999-01-01T00:00:00.000Z"
"""A stamp from a node whose clock runs far ahead."""


async def queued(db: Database) -> int:
    count: int = await db.fetchval("SELECT COUNT(*) FROM rating_queue")
    return count


async def in_step(db: Database) -> bool:
    """Whether the ratings are what a rebuild gives (checked by doing one)."""
    live = await tables(db)
    return (await rating_store.rebuild(db)).changed == 0 and await tables(db) == live


def win(seat: int) -> Outcome:
    return Outcome(Termination.NORMAL, (0, 1) if seat == 0 else (1, 0), "won")


async def test_results_left_queued_by_a_stopped_node_are_rated_at_start(db: Database) -> None:
    a, b, c = await make_bots(db, 3)
    for seats, stamp in (([a, b], "2030-01-01T00:00:01.000Z"),
                         ([b, c], "2030-01-01T00:00:02.000Z")):
        assert await store_result(db, await new_game(db, seats), win(0), stamp)
    rater = Rater(db)
    rater.start()
    try:
        await rater.wait_idle()
        assert await queued(db) == 0
        assert len(await rating_store.for_game(db, "TICTACTOE")) == 3
    finally:
        await rater.stop()
    assert await in_step(db)


async def test_a_result_of_the_newest_millisecond_is_rated_by_a_later_pass(
        db: Database) -> None:
    a, b = await make_bots(db, 2)
    rater = Rater(db)
    rater.start()
    try:
        await rater.wait_idle()
        # Stamped with the newest stamp handed out: the first pass leaves it for the next.
        assert await store_result(db, await new_game(db, [a, b]), win(1), now())
        rater.poke()
        await rater.wait_idle()
        assert await queued(db) == 0
        assert (await rating_store.get(db, b)) is not None
    finally:
        await rater.stop()


async def test_a_result_stamped_ahead_by_another_node_is_rated_all_the_same(
        db: Database) -> None:
    a, b, c = await make_bots(db, 3)
    rater = Rater(db)
    rater.start()
    try:
        assert await store_result(db, await new_game(db, [a, b]), win(0), FAR_AHEAD)
        rater.poke()
        await rater.wait_idle()  # not for ever: the second pass rates it
        assert await queued(db) == 0
        assert await store_result(db, await new_game(db, [b, c]), win(0), now())
        rater.poke()
        await rater.wait_idle()
        assert await queued(db) == 0
    finally:
        await rater.stop()
    # rated before the game from ahead, whose rating was done again after it
    assert [point.game_id for point in await rating_store.history(db, b)][-1] == (
        await db.fetchval("SELECT id FROM games WHERE finished_at = ?", (FAR_AHEAD,)))
    assert await in_step(db)


async def test_the_stop_rates_what_is_left(db: Database) -> None:
    a, b = await make_bots(db, 2)
    rater = Rater(db)
    rater.start()
    await rater.wait_idle()
    assert await store_result(db, await new_game(db, [a, b]), win(0), now())
    rater.poke()
    await rater.stop()  # before the pass, which waits to gather results
    assert await queued(db) == 0
    assert await in_step(db)


async def test_a_failed_pass_is_tried_again(db: Database,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = await make_bots(db, 2)
    failures: list[int] = []

    def fails_once(ratings: Sequence[Rating], ranks: Sequence[int]) -> tuple[Rating, ...]:
        if not failures:
            failures.append(1)
            raise RuntimeError("the rating maths failed once")
        return update(ratings, ranks)

    monkeypatch.setattr(rating_store, "update", fails_once)
    monkeypatch.setattr(rater_module, "RETRY", 0.01)
    assert await store_result(db, await new_game(db, [a, b]), win(0),
                              "2030-01-01T00:00:01.000Z")
    rater = Rater(db)
    rater.start()
    try:
        await rater.wait_idle()
    finally:
        await rater.stop()
    assert failures == [1] and await queued(db) == 0
    assert await in_step(db)


async def test_a_result_nobody_announced_is_rated_by_a_sweep(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """A runner cancelled as its finish committed pokes nobody: a slow sweep rates it."""
    monkeypatch.setattr(rater_module, "SWEEP", 0.05)
    a, b = await make_bots(db, 2)
    rater = Rater(db)
    rater.start()
    try:
        await rater.wait_idle()
        assert await store_result(db, await new_game(db, [a, b]), win(0),
                                  "2030-01-01T00:00:01.000Z")
        await until(lambda: queued_none(db), within=5.0)
    finally:
        await rater.stop()
    assert await rating_store.get(db, a) is not None


async def queued_none(db: Database) -> bool:
    return await queued(db) == 0

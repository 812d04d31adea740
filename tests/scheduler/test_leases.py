"""Game leases on both stores: one node plays a game at a time, a node that stopped
renewing loses its games to another, and the store refuses the old node's moves and result
once it has lost the lease (merknera.scheduler.leases)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from merknera.games import Outcome, Termination
from merknera.scheduler.leases import LeaseLostError, Leases, live_nodes
from merknera.store import Database, games, users
from merknera.store import bots as bot_store
from merknera.store.db import Connection

LEASE = 15.0


async def new_game(db: Database) -> int:
    user, _ = await users.create_user(db, f"owner{time.monotonic_ns()}")

    def work(conn: Connection) -> int:
        ids = [bot_store.insert(conn, name=f"b{time.monotonic_ns()}-{n}", version="1",
                                game="TICTACTOE", user_id=user.id,
                                meta=bot_store.BotMetadata("http://127.0.0.1:9/rpc"),
                                secret="s").id for n in range(2)]
        return games.create(conn, "TICTACTOE", 7, ids)
    return await db.transaction(work)


def nodes(db: Database) -> tuple[Leases, Leases]:
    return (Leases(db, "node-a", "http://a", LEASE), Leases(db, "node-b", "http://b", LEASE))


async def expire(db: Database, node: str) -> None:
    """As if ``node`` had stopped renewing a lease ago (killed)."""
    await db.write_one("UPDATE games SET lease_until = ? WHERE node = ?",
                       (time.time() - 1, node))
    await db.write_one("UPDATE nodes SET seen_at = ? WHERE id = ?",
                       (time.time() - 2 * LEASE, node))


async def test_one_node_plays_a_game_until_its_lease_runs_out(db: Database) -> None:
    a, b = nodes(db)
    game_id = await new_game(db)
    assert await b.claimable(10, []) == [game_id]  # nobody plays it: anyone may
    assert await a.claim(game_id)
    assert not await b.claim(game_id)
    assert await b.claimable(10, []) == []
    assert await a.claim(game_id)  # its own again: a restarted runner on the same node
    await a.heartbeat()
    await b.heartbeat()
    assert [node.id for node in await live_nodes(db, LEASE)] == ["node-a", "node-b"]

    await expire(db, "node-a")
    assert await b.claimable(10, []) == [game_id]
    assert await b.claim(game_id)
    assert await a.heartbeat() == {game_id}  # a learns it lost the game
    with pytest.raises(LeaseLostError):
        await a.secure(game_id, 1.0)
    await b.secure(game_id, 1.0)
    assert [node.id for node in await live_nodes(db, LEASE)] == ["node-a", "node-b"]


async def test_the_store_refuses_the_moves_and_the_result_of_a_node_without_the_lease(
        db: Database) -> None:
    a, b = nodes(db)
    game_id = await new_game(db)
    assert await a.claim(game_id)
    assert await games.record_moves(db, game_id, [games.LoggedCall(1, 0, move={"p": 4})],
                                    a.node)
    await expire(db, "node-a")
    assert await b.claim(game_id)
    # The old node's late move and result go nowhere; the new node's are kept.
    assert not await games.record_moves(db, game_id, [games.LoggedCall(2, 1, move={"p": 0})],
                                        a.node)
    draw = Outcome(Termination.NORMAL, (0, 0), "a draw")
    assert not await games.finish(db, game_id, draw, None, node=a.node)
    assert await games.record_moves(db, game_id, [games.LoggedCall(2, 1, move={"p": 1})],
                                    b.node)
    assert await games.finish(db, game_id, draw, None, node=b.node)
    record = await games.load(db, game_id)
    assert record is not None
    assert [(move.seq, move.move) for move in record.moves] == [(1, {"p": 4}), (2, {"p": 1})]
    assert await b.claimable(10, []) == []  # finished: nobody's


async def test_a_node_that_stops_hands_its_games_over_at_once(db: Database) -> None:
    a, b = nodes(db)
    first, second = await new_game(db), await new_game(db)
    assert await a.claim(first) and await a.claim(second)
    await a.heartbeat()
    assert await b.claimable(10, []) == []
    await a.stopped()
    assert await b.claimable(10, []) == [first, second]
    assert [node.id for node in await live_nodes(db, LEASE)] == []


async def test_a_node_takes_back_its_own_games_that_have_no_runner(db: Database) -> None:
    a, _ = nodes(db)
    first, second = await new_game(db), await new_game(db)
    assert await a.claim(first) and await a.claim(second)
    assert await a.claimable(10, [first]) == [second]
    assert await a.claimable(1, []) == [first]


async def test_a_lease_about_to_run_out_is_not_used_for_a_call(db: Database) -> None:
    a, _ = nodes(db)
    game_id = await new_game(db)
    assert await a.claim(game_id)
    await a.secure(game_id, 60.0)  # at most half a lease is asked for
    # The renewal is due; with no heartbeat the lease is not trusted for long.
    a._held[game_id] = time.monotonic() + 0.3  # a renewal long overdue
    if db.backend == "sqlite":  # one node to a file: nobody else could take the game
        await a.secure(game_id, 5.0)
        a.release(game_id)
    with pytest.raises(LeaseLostError):
        await a.secure(game_id, 5.0)


async def test_runners_started_together_claim_their_games_in_one_write(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = nodes(db)
    fresh, played, taken = await new_game(db), await new_game(db), await new_game(db)
    assert await games.record_moves(db, played, [games.LoggedCall(1, 0, move={"p": 4}),
                                                 games.LoggedCall(2, 1, move={"p": 0})])
    assert await b.claim(taken)
    writes = 0
    submit = db.submit

    def counted(work: Any) -> Any:
        nonlocal writes
        writes += 1
        return submit(work)

    monkeypatch.setattr(db, "submit", counted)
    got = await asyncio.gather(a.take(fresh), a.take(played), a.take(taken))
    assert writes == 1
    assert got[2] is None  # node b plays it
    assert [record.id for record in got if record is not None] == [fresh, played]
    by_id = {record.id: record for record in got if record is not None}
    assert by_id[fresh].moves == ()
    assert [(move.seq, move.seat, move.move) for move in by_id[played].moves] == [
        (1, 0, {"p": 4}), (2, 1, {"p": 0})]
    for record in by_id.values():
        assert [seat.seat for seat in record.seats] == [0, 1]
        assert record == await games.load(db, record.id)  # as one game's load reads it
    assert sorted(await b.heartbeat()) == []  # b lost nothing
    assert await a.heartbeat() == set()  # and a holds both of its own


async def test_a_game_that_does_not_load_fails_alone(db: Database) -> None:
    a, _ = nodes(db)
    first, broken, last = await new_game(db), await new_game(db), await new_game(db)
    await db.write_one("UPDATE games SET settings = 'not JSON' WHERE id = ?", (broken,))
    got = await asyncio.gather(a.take(first), a.take(broken), a.take(last),
                               return_exceptions=True)
    assert isinstance(got[1], ValueError)  # json's error, as one game's claim raised it
    assert [record.id for record in got if isinstance(record, games.GameRecord)] == [
        first, last]
    # The broken game's claim was rolled back with its load: it is nobody's.
    assert await a.claimable(10, [first, last]) == [broken]

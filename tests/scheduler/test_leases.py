"""Game leases on both stores: one node plays a game at a time, a node that stopped
renewing loses its games to another, and the store refuses the old node's moves and result
once it has lost the lease (merknera.scheduler.leases)."""

from __future__ import annotations

import time

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
        await a.hold(game_id, 1.0)
    await b.hold(game_id, 1.0)
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
    await a.hold(game_id, 60.0)  # at most half a lease is asked for
    # The renewal is due; with no heartbeat the lease is not trusted for long.
    a._held[game_id] = time.monotonic() + 0.3  # a renewal long overdue
    if db.backend == "sqlite":  # one node to a file: nobody else could take the game
        await a.hold(game_id, 5.0)
        a.release(game_id)
    with pytest.raises(LeaseLostError):
        await a.hold(game_id, 5.0)

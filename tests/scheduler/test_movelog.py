"""The move log on both stores: a game goes on while two of its writes are uncommitted
(merknera.scheduler.movelog.IN_FLIGHT), and a game finished elsewhere meanwhile is noticed
at a later write, with none of its later rows stored."""

from __future__ import annotations

import json

from merknera.config import Config
from merknera.events import EventBus, MovePlayed
from merknera.games import Outcome, Termination, get_game
from merknera.scheduler.movelog import IN_FLIGHT, MoveLog
from merknera.scheduler.play import Play, Played, replay
from merknera.store import Database, games
from merknera.store import bots as bot_store
from tests.scheduler.test_leases import new_game

NODE = "node-a"


async def started(db: Database) -> tuple[int, Play]:
    game_id = await new_game(db)
    await db.write_one("UPDATE games SET node = ?, lease_until = 1e12 WHERE id = ?",
                       (NODE, game_id))
    await games.mark_running(db, game_id, [0, 1])
    record = await games.load(db, game_id)
    assert record is not None
    seated = await bot_store.get_many(db, [seat.bot_id for seat in record.seats])
    game = get_game("TICTACTOE")
    return game_id, replay(record, game, Config().rules_for("TICTACTOE"),
                           [seated[seat.bot_id] for seat in record.seats])


async def play(log: MoveLog, game: Play, position: int) -> bool:
    seat = game.game.to_move(game.state)
    assert seat is not None
    verdict = game.judge(seat, {"position": position})
    assert isinstance(verdict, Played)
    if not await log.append(game, [(seat, None, verdict)]):
        return False
    game.advance(seat, verdict)
    return True


async def test_a_game_goes_on_while_its_last_writes_commit(db: Database) -> None:
    game_id, game = await started(db)
    events = EventBus()
    async with events.listen(game_id) as heard:
        log = MoveLog(db, events, game_id, NODE)
        for position in (0, 4, 8):
            assert await play(log, game, position)
            assert len(log._queued) <= IN_FLIGHT  # never more unchecked than that
        assert await log.written()
        assert not log._queued
        announced = [heard.get_nowait() for _ in range(heard.qsize())]
    rows = await db.fetchall("SELECT seq, move FROM moves WHERE game_id = ? ORDER BY seq",
                             (game_id,))
    assert [(row[0], json.loads(row[1])) for row in rows] == [
        (1, {"position": 0}), (2, {"position": 4}), (3, {"position": 8})]
    # Each announced once committed, in order.
    assert [e.seq for e in announced if isinstance(e, MovePlayed)] == [1, 2, 3]


async def test_a_game_finished_elsewhere_is_noticed_a_write_later(db: Database) -> None:
    assert IN_FLIGHT == 2, "the sequence below is written for two writes in flight"
    game_id, game = await started(db)
    log = MoveLog(db, EventBus(), game_id, NODE)
    assert await play(log, game, 0)
    assert await games.finish(db, game_id, Outcome.no_result(Termination.ABORTED, "by an admin"),
                              None)
    # Queued before the finish was known here: refused by the store, not yet checked.
    assert await play(log, game, 4)
    assert await play(log, game, 8)  # the write before it is not checked yet either
    assert not await play(log, game, 2)  # now it is: the game is over
    assert not log._queued
    moves = await db.fetchval("SELECT COUNT(*) FROM moves WHERE game_id = ?", (game_id,))
    assert moves == 1

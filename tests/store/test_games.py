"""The games store hands back enums, not the text it keeps: a move's fault, each seat's
result, the game's summary and termination, and a tournament game's status and result come
back as the members that were stored, from a real SQLite file closed and opened again."""

from __future__ import annotations

import functools

import pytest

from merknera.games import Outcome, SeatResult, Termination
from merknera.protocol.faults import FaultKind
from merknera.store import Database, games, results, users
from merknera.store import bots as bot_store
from merknera.store import tournaments as tournament_store
from merknera.store.db import Connection
from merknera.store.games import GameResult, GameStatus


async def make_bots(db: Database, count: int) -> list[int]:
    user, _ = await users.create_user(db, "owner")

    def work(conn: Connection) -> list[int]:
        return [bot_store.insert(conn, name=f"bot-{number}", version="1", game="TICTACTOE",
                                 user_id=user.id,
                                 meta=bot_store.BotMetadata("http://127.0.0.1:9/rpc"),
                                 secret="s").id
                for number in range(count)]
    return await db.transaction(work)


async def test_faults_results_and_termination_round_trip_as_enums(store_target: str) -> None:
    path = store_target
    db = await Database.open(path)
    try:
        first, second = await make_bots(db, 2)
        game_id = await db.transaction(
            lambda conn: games.create(conn, "TICTACTOE", 7, [first, second]))
        await games.mark_running(db, game_id, [0, 1])
        assert await games.record_moves(db, game_id, [
            games.LoggedCall(1, 0, move={"position": 4})])
        for seq in (2, 3, 4):
            assert await games.record_moves(db, game_id, [games.LoggedCall(
                seq, 1, fault=FaultKind.ILLEGAL_MOVE,
                fault_detail="position 4 is already taken")])
        running = await games.load(db, game_id)
        assert running is not None
        # Not finished yet: nothing to say about how it ended.
        assert (running.result, running.termination) == (None, None)
        assert [seat.result for seat in running.seats] == [None, None]
        assert await games.finish(db, game_id, Outcome.forfeit(
            1, 2, Termination.STRIKES, "bot-1 made 3 faulty replies"), None)
        # A move after the finish is refused, whatever its fault.
        assert not await games.record_moves(db, game_id, [
            games.LoggedCall(5, 1, fault=FaultKind.TIMEOUT)])
    finally:
        await db.close()

    db = await Database.open(path)
    try:
        record = await games.load(db, game_id)
        assert record is not None
        assert record.status is GameStatus.FINISHED
        assert record.result is GameResult.WIN
        assert record.termination is Termination.STRIKES
        assert [seat.result for seat in record.seats] == [SeatResult.WIN, SeatResult.LOSS]
        assert [move.fault for move in record.moves] == [None] + [FaultKind.ILLEGAL_MOVE] * 3
        assert record.moves[0].move == {"position": 4}
        assert await results.game_status(db, game_id) is GameStatus.FINISHED
        assert await results.game_status(db, game_id + 1) is None
        start = await db.read(functools.partial(results.replay_start, game_id=game_id))
        assert start is not None and start.status is GameStatus.FINISHED
        # The file still holds the enums' text: the schema and the API's JSON are unchanged.
        row = await db.fetchone("SELECT outcome, reason FROM games WHERE id = ?", (game_id,))
        assert row is not None and tuple(row) == ("WIN", "STRIKES")
        assert [r[0] for r in await db.fetchall(
            "SELECT fault FROM moves WHERE game_id = ? ORDER BY seq", (game_id,))] == [
            None, "ILLEGAL_MOVE", "ILLEGAL_MOVE", "ILLEGAL_MOVE"]
        assert [r[0] for r in await db.fetchall(
            "SELECT result FROM seats WHERE game_id = ? ORDER BY seat", (game_id,))] == [
            "WIN", "LOSS"]
    finally:
        await db.close()


async def test_games_made_together_keep_their_order_seeds_and_seats(db: Database) -> None:
    first, second, third = await make_bots(db, 3)
    # A seed may repeat (a test pins the dice): each row is still its own game.
    seatings = [(5, [first, second]), (5, [second, first]), (9, [third, first, second])]
    ids = await db.transaction(lambda conn: games.create_many(
        conn, "TICTACTOE", seatings, {"size": 3}, origin="LADDER"))
    assert len(set(ids)) == 3
    for game_id, (seed, seated) in zip(ids, seatings, strict=True):
        record = await games.load(db, game_id)
        assert record is not None
        assert (record.seed, [seat.bot_id for seat in record.seats]) == (seed, seated)
        assert record.settings == {"size": 3}
    origins = await db.fetchall("SELECT DISTINCT origin FROM games")
    assert [row[0] for row in origins] == ["LADDER"]
    assert await db.transaction(lambda conn: games.create_many(conn, "TICTACTOE", [])) == []
    with pytest.raises(ValueError, match="names one game"):
        await db.transaction(lambda conn: games.create_many(
            conn, "TICTACTOE", seatings[:2], handle="h-1"))
    assert await db.fetchval("SELECT COUNT(*) FROM games") == 3


async def test_a_game_without_a_result_reads_back_none_for_every_seat(store_target: str) -> None:
    db = await Database.open(store_target)
    try:
        bot_ids = await make_bots(db, 2)
        game_id = await db.transaction(lambda conn: games.create(conn, "TICTACTOE", 1, bot_ids))
        assert await games.finish(db, game_id, Outcome.no_result(
            Termination.SUPERSEDED, "a newer version was registered"), None)
        record = await games.load(db, game_id)
        assert record is not None
        assert (record.result, record.termination) == (GameResult.NO_RESULT,
                                                       Termination.SUPERSEDED)
        assert [seat.result for seat in record.seats] == [SeatResult.NONE, SeatResult.NONE]
    finally:
        await db.close()


async def test_a_tournament_game_reads_back_its_status_and_first_seat_result(
        store_target: str) -> None:
    db = await Database.open(store_target)
    try:
        first, second = await make_bots(db, 2)

        def create(conn: Connection) -> tuple[int, int, int]:
            tournament_id = tournament_store.create(conn, "TICTACTOE", "ROUND_ROBIN", 1,
                                                    [first, second])
            played = games.create(conn, "TICTACTOE", 1, [first, second], origin="TOURNAMENT",
                                  tournament_id=tournament_id, round_number=1)
            waiting = games.create(conn, "TICTACTOE", 2, [second, first], origin="TOURNAMENT",
                                   tournament_id=tournament_id, round_number=1)
            return tournament_id, played, waiting

        tournament_id, played, waiting = await db.transaction(create)
        assert await games.finish(db, played, Outcome.draw(2, "the board is full"), None)
        tournament = await db.read(functools.partial(tournament_store.load,
                                                     tournament_id=tournament_id))
        assert tournament is not None
        by_id = {game.game_id: game for game in tournament.games}
        assert (by_id[played].status, by_id[played].result) == (GameStatus.FINISHED,
                                                                SeatResult.DRAW)
        assert (by_id[waiting].status, by_id[waiting].result) == (GameStatus.PENDING, None)
    finally:
        await db.close()

"""Ratings in the store: a result queued for rating in the transaction that stores it,
rated by passes in the order of finish, never for games without a result, and rebuilt
from the results to the same floats."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from merknera import cli
from merknera.games.base import Outcome, Termination
from merknera.ratings import DEFAULT, Rating, update
from merknera.store import Database, games, users
from merknera.store import bots as bot_store
from merknera.store import ratings as rating_store
from merknera.store.db import Connection

T0, T1, T2, T3 = ("2030-01-01T00:00:00.000Z", "2030-01-01T00:00:01.000Z",
                  "2030-01-01T00:00:02.000Z", "2030-01-01T00:00:03.000Z")


async def make_bots(db: Database, count: int, game: str = "TICTACTOE") -> list[int]:
    user, _ = await users.create_user(db, f"owner-{game}")

    def work(conn: Connection) -> list[int]:
        return [bot_store.insert(conn, name=f"{game.lower()}-{number}", version="1", game=game,
                                 user_id=user.id,
                                 meta=bot_store.BotMetadata("http://127.0.0.1:9/rpc"),
                                 secret="s").id
                for number in range(count)]
    return await db.transaction(work)


async def new_game(db: Database, bot_ids: Sequence[int], game: str = "TICTACTOE") -> int:
    return await db.transaction(lambda conn: games.create(conn, game, 7, bot_ids))


async def store_result(db: Database, game_id: int, outcome: Outcome, stamp: str) -> bool:
    """Store how a game ended (its rating is queued)."""
    return await db.transaction(
        lambda conn: games.finish_in(conn, game_id, outcome, None, [], stamp))


async def finish(db: Database, game_id: int, outcome: Outcome, stamp: str) -> bool:
    """Store how a game ended, then run a rating pass (as a node's rater does)."""
    stored = await store_result(db, game_id, outcome, stamp)
    await rating_store.rate_queue(db)
    return stored


def ranked(*ranks: int) -> Outcome:
    return Outcome(Termination.NORMAL, ranks, "ranked")


async def stored(db: Database) -> dict[int, Rating]:
    return {row["bot_id"]: Rating(row["mu"], row["sigma"])
            for row in await db.fetchall("SELECT * FROM ratings")}


async def tables(db: Database) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    ratings = await db.fetchall("SELECT * FROM ratings ORDER BY bot_id")
    history = await db.fetchall("SELECT * FROM rating_history ORDER BY game_id, bot_id")
    return [tuple(r) for r in ratings], [tuple(r) for r in history]


async def test_a_result_is_queued_with_it_and_rated_by_the_next_pass(db: Database) -> None:
    a, b = await make_bots(db, 2)
    game_id = await new_game(db, [a, b])
    assert await store_result(db, game_id, Outcome.win(1, 2, "O won"), T1)
    assert await stored(db) == {}
    assert await db.fetchval("SELECT game_id FROM rating_queue") == game_id
    assert await rating_store.rate_queue(db) == rating_store.RatingPass(1, 0)
    loser_after, winner_after = update([DEFAULT, DEFAULT], [1, 0])  # a is X, b is O
    rows = {row["bot_id"]: row for row in await db.fetchall("SELECT * FROM ratings")}
    assert set(rows) == {a, b}
    assert Rating(rows[b]["mu"], rows[b]["sigma"]) == winner_after
    assert Rating(rows[a]["mu"], rows[a]["sigma"]) == loser_after
    assert rows[b]["mu"] > 25.0 > rows[a]["mu"]
    for row in rows.values():
        assert (row["game"], row["rated_games"], row["updated_at"]) == ("TICTACTOE", 1, T1)
    history = await db.fetchall("SELECT * FROM rating_history ORDER BY bot_id")
    assert [(h["game_id"], h["bot_id"], h["mu"], h["sigma"], h["ordinal"]) for h in history] == [
        (game_id, a, loser_after.mu, loser_after.sigma, loser_after.conservative),
        (game_id, b, winner_after.mu, winner_after.sigma, winner_after.conservative)]
    assert await db.fetchval("SELECT COUNT(*) FROM rating_queue") == 0
    # finished once: a second finish changes nothing and queues nothing
    assert not await finish(db, game_id, Outcome.win(0, 2, "X won"), T2)
    assert (await stored(db))[b] == winner_after
    assert await rating_store.rate_queue(db) == rating_store.RatingPass(0, 0)


async def test_the_result_and_its_place_in_the_queue_commit_or_fail_together(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = await make_bots(db, 2)
    game_id = await new_game(db, [a, b])

    def finish_then_fail(conn: Connection) -> None:
        assert games.finish_in(conn, game_id, Outcome.win(0, 2, "X won"), None, [], T1)
        assert conn.execute("SELECT COUNT(*) FROM rating_queue").fetchone()[0] == 1
        raise RuntimeError("something later in the transaction failed")

    with pytest.raises(RuntimeError, match="later"):
        await db.transaction(finish_then_fail)
    game = await db.fetchone("SELECT status, outcome FROM games WHERE id = ?", (game_id,))
    assert game is not None and (game["status"], game["outcome"]) == ("PENDING", None)
    assert await db.fetchval("SELECT COUNT(*) FROM rating_queue") == 0

    # A pass that fails changes nothing: the result stays queued for the next one.
    assert await store_result(db, game_id, Outcome.win(0, 2, "X won"), T1)

    def broken(*_args: object) -> tuple[Rating, ...]:
        raise RuntimeError("the rating maths failed")

    monkeypatch.setattr(rating_store, "update", broken)
    with pytest.raises(RuntimeError, match="rating maths"):
        await rating_store.rate_queue(db)
    assert await stored(db) == {}
    assert await db.fetchval("SELECT COUNT(*) FROM rating_history") == 0
    assert await db.fetchval("SELECT COUNT(*) FROM rating_queue") == 1
    monkeypatch.undo()
    assert await rating_store.rate_queue(db) == rating_store.RatingPass(1, 0)
    assert len(await stored(db)) == 2


async def test_a_pass_leaves_the_results_of_its_stamp_for_the_next(db: Database) -> None:
    """A result stored after a pass is queued may carry the pass's own stamp and a smaller
    id: the pass leaves results of that stamp alone, so none is ever rated out of order."""
    a, b, c = await make_bots(db, 3)
    g1, g2, g3 = [await new_game(db, seats) for seats in ([a, b], [b, c], [a, c])]
    assert await store_result(db, g1, ranked(0, 1), T1)
    assert await store_result(db, g3, ranked(1, 0), T2)
    assert await db.transaction(
        lambda conn: rating_store.rate_queued(conn, T2)) == rating_store.RatingPass(1, 1)
    assert [point.game_id for point in await rating_store.history(db, a)] == [g1]
    assert await store_result(db, g2, ranked(0, 0), T2)  # the same stamp, a smaller id
    assert await db.transaction(
        lambda conn: rating_store.rate_queued(conn, T3)) == rating_store.RatingPass(2, 0)
    live = await tables(db)
    summary = await rating_store.rebuild(db)
    assert summary.changed == 0 and await tables(db) == live
    assert [point.game_id for point in await rating_store.history(db, c)] == [g2, g3]


@pytest.mark.parametrize("rated_at", [None, T0, "2030-01-01T00:09:00.000Z"],
                         ids=["on top of nothing", "on top of a rated game",
                              "under a rated game that finished after them"])
async def test_one_pass_over_many_results_rates_as_a_rebuild_does(
        db: Database, rated_at: str | None) -> None:
    """The last case is another node's result, rated first though stamped later: the pass
    rates its games in order under it, then that game again."""
    bots = await make_bots(db, 5)
    seatings = [(bots[i % 5], bots[(i * 2 + 1) % 5]) for i in range(12)]
    seatings = [seats for seats in seatings if seats[0] != seats[1]]
    if rated_at is not None:
        assert await finish(db, await new_game(db, [bots[0], bots[1]]), ranked(0, 1),
                            rated_at)
    for index, seats in enumerate(seatings):
        game_id = await new_game(db, list(seats))
        stamp = f"2030-01-01T00:01:{index // 3:02d}.000Z"  # three to a millisecond
        assert await store_result(db, game_id, ranked(index % 2, (index + 1) % 2), stamp)
    assert await rating_store.rate_queue(db) == rating_store.RatingPass(len(seatings), 0)
    live = await tables(db)
    summary = await rating_store.rebuild(db)
    assert (summary.games, summary.changed) == (len(seatings) + (rated_at is not None), 0)
    assert await tables(db) == live


@pytest.mark.parametrize("termination", [Termination.SUPERSEDED, Termination.ABORTED])
async def test_games_without_a_result_are_not_rated(db: Database,
                                                    termination: Termination) -> None:
    a, b, c = await make_bots(db, 3)
    rated = await new_game(db, [a, b])
    unrated = await new_game(db, [b, c])
    assert await finish(db, unrated, Outcome.no_result(termination, "ended"), T1)
    assert await stored(db) == {}
    assert await finish(db, rated, Outcome.draw(2, "a draw"), T2)
    assert set(await stored(db)) == {a, b}
    assert await db.fetchval(
        "SELECT COUNT(*) FROM rating_history WHERE game_id = ?", (unrated,)) == 0
    summary = await rating_store.rebuild(db)
    assert (summary.games, summary.bots, summary.changed) == (1, 2, 0)


async def test_a_forfeit_counts_as_a_loss(db: Database) -> None:
    a, b, c = await make_bots(db, 3)
    game_id = await new_game(db, [a, b, c])
    outcome = Outcome.forfeit(0, 3, Termination.STRIKES, "seat 0 struck out")
    assert outcome.ranks == (1, 0, 0)
    assert await finish(db, game_id, outcome, T1)
    after = await stored(db)
    assert [after[a], after[b], after[c]] == list(update([DEFAULT] * 3, [1, 0, 0]))
    assert after[a].mu < 25.0 < after[b].mu == after[c].mu


async def test_a_bot_in_two_seats_is_not_rated(db: Database) -> None:
    a, b = await make_bots(db, 2)
    twice = await new_game(db, [a, a])
    assert await finish(db, twice, Outcome.win(0, 2, "X won"), T1)
    assert await stored(db) == {}
    fair = await new_game(db, [a, b])
    assert await finish(db, fair, Outcome.win(0, 2, "X won"), T2)
    assert set(await stored(db)) == {a, b}
    assert (await rating_store.rebuild(db)).games == 1


async def test_games_are_rated_in_the_order_they_finished_whatever_the_commit_order(
        db: Database) -> None:
    a, b, c = await make_bots(db, 3)
    g1, g2, g3, g4 = [await new_game(db, seats) for seats in ([a, b], [b, c], [a, c], [a, b])]
    # g2 commits first, then g1 with the same millisecond: g1 sorts first (smaller id).
    assert await finish(db, g2, ranked(0, 1), T1)
    assert await finish(db, g1, ranked(1, 0), T1)
    # the clock steps back: g3 commits after g4 but with an earlier time.
    assert await finish(db, g4, ranked(0, 0), T3)
    assert await finish(db, g3, ranked(0, 1), T2)

    # What the results say in the order of finish: g1, g2, g3, g4.
    expected = {a: DEFAULT, b: DEFAULT, c: DEFAULT}
    for seats, ranks in (([a, b], [1, 0]), ([b, c], [0, 1]), ([a, c], [0, 1]),
                         ([a, b], [0, 0])):
        for bot, rating in zip(seats, update([expected[s] for s in seats], ranks),
                               strict=True):
            expected[bot] = rating
    assert await stored(db) == expected
    rows = {row["bot_id"]: row for row in await db.fetchall("SELECT * FROM ratings")}
    assert {bot: (row["rated_games"], row["updated_at"]) for bot, row in rows.items()} == {
        a: (3, T3), b: (3, T3), c: (2, T2)}
    # the history follows the same order: b's points are after g1, g2, g4
    b_history = await rating_store.history(db, b)
    assert [point.game_id for point in b_history] == [g1, g2, g4]
    assert b_history[-1].rating == expected[b]

    live = await tables(db)
    summary = await rating_store.rebuild(db)
    assert (summary.games, summary.bots, summary.changed) == (4, 3, 0)
    assert await tables(db) == live


async def test_a_rebuild_replaces_ratings_out_of_step_with_the_results(db: Database) -> None:
    a, b, c, d = await make_bots(db, 4, game="SCRABBLE")
    (e,) = await make_bots(db, 1, game="TICTACTOE")
    stamps = [f"2030-01-01T00:00:{second:02d}.000Z" for second in range(10)]
    seatings = [[a, b, c, d], [d, c], [b, d, a], [c, a], [a, b, c, d]]
    ranks = [(3, 1, 0, 2), (0, 0), (1, 0, 1), (1, 0), (0, 0, 0, 1)]
    for index, (seats, rank) in enumerate(zip(seatings, ranks, strict=True)):
        game_id = await new_game(db, seats, game="SCRABBLE")
        assert await finish(db, game_id, ranked(*rank), stamps[index])
    live = await tables(db)
    assert len(live[0]) == 4 and len(live[1]) == 4 + 2 + 3 + 2 + 4
    await db.write_one("UPDATE ratings SET mu = mu + 1 WHERE bot_id = ?", (b,))
    await db.write_one("DELETE FROM rating_history WHERE bot_id = ?", (c,))
    await db.write_one("INSERT INTO ratings VALUES (?, 'TICTACTOE', 30, 1, 3, ?)", (e, T0))
    summary = await rating_store.rebuild(db)
    assert (summary.games, summary.bots, summary.changed) == (5, 4, 2)
    assert await tables(db) == live
    by_game = await rating_store.for_game(db, "SCRABBLE")
    assert set(by_game) == {a, b, c, d} and by_game[a].rated_games == 4
    assert await rating_store.for_game(db, "TICTACTOE") == {}
    assert await rating_store.get(db, e) is None


def test_the_ratings_rebuild_command(store_target: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = store_target

    async def fill() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        db = await Database.open(path)
        try:
            a, b, c = await make_bots(db, 3)
            for index, (seats, outcome) in enumerate([
                    ([a, b], ranked(0, 1)), ([b, c], ranked(0, 0)), ([c, a], ranked(1, 0)),
                    ([a, c], Outcome.no_result(Termination.ABORTED, "aborted"))]):
                assert await finish(db, await new_game(db, seats), outcome,
                                    f"2030-01-01T00:00:0{index}.000Z")
            live = await tables(db)
            await db.write_one("DELETE FROM ratings")
            return live
        finally:
            await db.close()

    async def read() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        db = await Database.open(path)
        try:
            return await tables(db)
        finally:
            await db.close()

    live = asyncio.run(fill())
    assert cli.main(["ratings", "rebuild", "--db", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"Rebuilt the ratings in {path}: 3 games rated, 3 bots rated." in out
    assert "3 bots' stored ratings differed and were replaced." in out
    assert asyncio.run(read()) == live
    assert cli.main(["ratings", "rebuild", "--db", str(path)]) == 0
    assert "The stored ratings were already the same." in capsys.readouterr().out


async def test_results_stored_before_ratings_existed_are_rated_once_at_start(
        db: Database) -> None:
    a, b, c = await make_bots(db, 3)
    twice = await new_game(db, [c, c])  # never rated, and no reason to rebuild
    assert await finish(db, twice, ranked(0, 1), T0)
    assert await rating_store.rebuild_if_needed(db) is None
    for seats, stamp in (([a, b], T1), ([b, c], T2)):
        assert await finish(db, await new_game(db, seats), ranked(0, 1), stamp)
    live = await tables(db)
    # as if these results had been stored before migration 002
    await db.write_one("DELETE FROM rating_history")
    await db.write_one("DELETE FROM ratings")
    summary = await rating_store.rebuild_if_needed(db)
    assert summary is not None and (summary.games, summary.bots) == (2, 3)
    assert await tables(db) == live
    assert await rating_store.rebuild_if_needed(db) is None


async def test_a_game_with_an_anonymous_seat_keeps_its_result_but_rates_nobody(
        db: Database) -> None:
    a, b = await make_bots(db, 2)
    unrated = await db.transaction(
        lambda conn: games.create(conn, "TICTACTOE", 7, [a, b], rated=False))
    assert await finish(db, unrated, Outcome.win(0, 2, "X won"), T1)
    assert await db.fetchval("SELECT outcome FROM games WHERE id = ?", (unrated,)) == "WIN"
    assert await stored(db) == {}
    # A rated game after it is rated on top of nothing, live and in a rebuild alike.
    rated = await new_game(db, [a, b])
    assert await finish(db, rated, Outcome.win(1, 2, "O won"), T2)
    live = await tables(db)
    assert [row[0] for row in live[1]] == [rated, rated]
    summary = await db.transaction(rating_store.rebuild_in)
    assert (summary.games, summary.changed) == (1, 0)
    assert await tables(db) == live


class Interleaved:
    """A connection that lets another node's finish commit right after a statement of the
    rebuild's (on PostgreSQL, READ COMMITTED shows such a commit to the next statement)."""

    def __init__(self, conn: Connection, after: str,
                 other: Callable[[Connection], object]) -> None:
        self._conn, self._after, self._other = conn, after, other
        self.dialect = conn.dialect

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        cursor = self._conn.execute(sql, parameters)
        if sql.startswith(self._after):
            self._other(self._conn)
        return cursor

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self._conn.executemany(sql, parameters)


@pytest.mark.parametrize("after", ["SELECT games.id", "DELETE FROM rating_queue"],
                         ids=["after the results are read", "after the queue is emptied"])
async def test_a_finish_that_commits_during_a_rebuild_is_rated_once(db: Database,
                                                                   after: str) -> None:
    a, b = await make_bots(db, 2)
    first, second = await new_game(db, [a, b]), await new_game(db, [a, b])
    assert await finish(db, first, ranked(1, 0), T1)

    def other(conn: Connection) -> object:
        return games.finish_in(conn, second, ranked(0, 1), None, [], T2)

    await db.transaction(lambda conn: rating_store.rebuild_in(Interleaved(conn, after, other)))
    assert await db.fetchval("SELECT COUNT(*) FROM rating_queue") == 1  # not rated: queued
    assert await rating_store.rate_queue(db) == rating_store.RatingPass(1, 0)
    assert (await rating_store.get(db, a)) is not None
    assert [point.game_id for point in await rating_store.history(db, a)] == [first, second]
    live = await tables(db)
    assert (await rating_store.rebuild(db)).changed == 0 and await tables(db) == live

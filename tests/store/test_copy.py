"""``merknera db copy`` (CLI and :func:`merknera.store.copy.copy`): every row of a populated
arena moved whole into PostgreSQL, and a copy that plays on.  The copies it refuses are in
tests/store/test_copy_refused.py, which copies the arena made here."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from merknera import cli
from merknera.games import Outcome, Termination
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.faults import FaultKind
from merknera.scheduler.leases import Leases
from merknera.store import Database, games, logs, results, trials, users
from merknera.store import bots as bot_store
from merknera.store import ratings as rating_store
from merknera.store import tournaments as tournament_store
from merknera.store.copy import copy
from merknera.store.db import Connection
from merknera.store.postgres import connect_sync
from tests.support.postgres import Cluster

ORDER = {
    "users": "id", "tokens": "id", "bots": "id", "tournaments": "id", "games": "id",
    "seats": "game_id, seat", "moves": "id", "bot_log": "id", "ratings": "bot_id",
    "rating_history": "game_id, bot_id", "tournament_entrants": "tournament_id, bot_id",
    "tournament_byes": "tournament_id, round", "nodes": "id", "rating_queue": "game_id",
    "challenges": "id", "duels": "id",
}
"""Every table of the store and the key its rows are read in (integers, or node ids that
sort alike in any collation)."""

ODD_TEXT = ("two lines\nand a\ttab, a backslash \\ and a \\N, a \\. alone, 'quotes' \"too\", "
            "ünïcødé ♟ 🙂, and a comma, at the end,")
"""Text that COPY's text format must escape (a literal \\N is not NULL)."""

LATER = "2099-01-01T00:00:00.000Z"
"""When the game left running finishes, on both sides."""

Dump = dict[str, tuple[list[str], list[tuple[Any, ...]]]]


@dataclass(frozen=True)
class Populated:
    """What :func:`populate` made."""

    bots: dict[str, int]
    games: dict[str, int]
    running: int
    """The game left RUNNING, leased to a node that died."""


# -- filling an arena ---------------------------------------------------------------------------


async def populate(path: Path) -> Populated:
    """A SQLite arena with rows in every table, as a node would have left it."""
    db = await Database.open(path)
    try:
        return await _populate(db)
    finally:
        await db.close()


async def _populate(db: Database) -> Populated:
    alice, _ = await users.create_user(db, "alice")
    bob, _ = await users.create_user(db, "bob", "bob's first token")
    carol, _ = await users.create_user(db, "carol")
    await users.issue_token(db, "alice", ODD_TEXT)
    await db.write_one("UPDATE tokens SET status = 'REVOKED' WHERE user_id = ?", (bob.id,))
    await users.issue_token(db, "bob", "bob's second token")

    def bot(conn: Connection, name: str, version: str, game: str, owner: int,
            **meta: Any) -> int:
        return bot_store.insert(
            conn, name=name, version=version, game=game, user_id=owner,
            meta=bot_store.BotMetadata("http://127.0.0.1:9/rpc", **meta),
            secret=f"secret of {name} {version}").id

    bots = await db.transaction(lambda conn: {
        "old": bot(conn, "noughts", "1", "TICTACTOE", alice.id),
        "crosses": bot(conn, "crosses", "1", "TICTACTOE", bob.id,
                       website="https://example.org/ü"),
        "third": bot(conn, "third", "1.0-β", "TICTACTOE", carol.id, language="Go"),
        "sower": bot(conn, "sower", "1", "KALAHA", alice.id),
        "reaper": bot(conn, "reaper", "1", "KALAHA", bob.id),
        "guest": bot(conn, "guest-1", "1", "KALAHA", carol.id, protocol=BotProtocol.GUEST),
    })
    made: dict[str, int] = {}

    async def play(label: str, game: str, seed: int, seats: list[int],
                   calls: list[games.LoggedCall], outcome: Outcome | None,
                   log_lines: list[tuple[int, str]] | None = None, **create: Any) -> int:
        game_id = await db.transaction(
            lambda conn: games.create(conn, game, seed, seats, {"size": 3}, **create))
        made[label] = game_id
        await games.mark_running(db, game_id, range(len(seats)))
        if calls:
            assert await games.record_moves(db, game_id, calls)
        if outcome is not None:
            assert await games.finish(db, game_id, outcome, {"board": "XO.", "x": 0.1},
                                      log_lines or [])
            await rating_store.rate_queue(db)  # as a node's rater does, and at its stop
        return game_id

    move = games.LoggedCall
    await play("old", "TICTACTOE", 1, [bots["old"], bots["crosses"]],
               [move(1, 0, {"position": 4}, request='{"jsonrpc": "2.0"}', reply=ODD_TEXT,
                     latency_ms=3.217),
                move(2, 1, {"position": 0}, latency_ms=0.1 + 0.2)],
               Outcome.win(0, 2, "noughts won"))
    superseded = await play("superseded", "TICTACTOE", 2, [bots["third"], bots["old"]],
                            [move(1, 0, {"position": 8})], None)
    ended = await db.transaction(lambda conn: bot_store.supersede(conn, "noughts"))
    assert ended == [superseded]
    assert await games.finish(db, superseded, Outcome.no_result(
        Termination.SUPERSEDED, "noughts 2 was registered"), None)
    bots["new"] = await db.transaction(lambda conn: bot(
        conn, "noughts", "2", "TICTACTOE", alice.id, language="Python", description=ODD_TEXT))

    await play("draw", "TICTACTOE", 2**63 - 1, [bots["new"], bots["crosses"]],
               [move(1, 0, {"position": 4}, latency_ms=1 / 3)], Outcome.draw(2, "a draw"),
               [(bots["new"], ODD_TEXT), (bots["crosses"], "a draw, again")])
    await play("faults", "TICTACTOE", 9007199254740993, [bots["crosses"], bots["third"]],
               [move(1, 0, {"position": 4}, latency_ms=12.5),
                move(2, 1, fault=FaultKind.ILLEGAL_MOVE, fault_detail="4 is taken",
                     reply='{"result": 4}', latency_ms=7.25),
                move(3, 1, fault=FaultKind.TIMEOUT, fault_detail="no reply in 1.0 s",
                     latency_ms=1000.001),
                move(4, 1, fault=FaultKind.MALFORMED_REPLY, fault_detail=ODD_TEXT,
                     reply=ODD_TEXT, latency_ms=2e-3)],
               Outcome.forfeit(1, 2, Termination.STRIKES, "third made 3 faulty replies"))
    await play("scores", "KALAHA", 0, [bots["sower"], bots["reaper"]],
               [move(1, 0, {"pit": 2}), move(2, 1, {"pit": 5})],
               Outcome.by_scores((0.1 + 0.2, 1 / 3), "reaper has more seeds"))
    await play("match", "KALAHA", 5, [bots["sower"], bots["guest"]], [move(1, 0, {"pit": 1})],
               Outcome.win(1, 2, "the guest won"), origin="MATCH", contest="pool-1",
               handle="abcd0001", rated=False)

    tournament = await db.transaction(lambda conn: tournament_store.create(
        conn, "TICTACTOE", "SWISS", 1, [bots["new"], bots["crosses"], bots["third"]]))
    await db.transaction(
        lambda conn: tournament_store.start_round(conn, tournament, 1, [bots["third"]]))
    await play("tournament", "TICTACTOE", 6, [bots["new"], bots["crosses"]],
               [move(1, 0, {"position": 2})], Outcome.win(1, 2, "crosses won"),
               origin="TOURNAMENT", tournament_id=tournament, round_number=1)
    await db.transaction(lambda conn: tournament_store.finish(conn, tournament))

    # A challenge's pair, and a candidate version's duel with a pair.
    bots["candidate"] = await db.transaction(lambda conn: bot_store.insert(
        conn, name="noughts", version="3-rc", game="TICTACTOE", user_id=alice.id,
        meta=bot_store.BotMetadata("http://127.0.0.1:9/rpc"), secret="s", candidate=True).id)
    challenge = await db.transaction(lambda conn: trials.create_challenge(
        conn, alice.id, bots["new"], bots["crosses"], 2))
    paired = await db.transaction(lambda conn: trials.add_pair(
        conn, "TICTACTOE", 11, bots["new"], bots["crosses"], {}, challenge_id=challenge))
    made["challenge"], made["challenge, seats swapped"] = paired
    duel = await db.transaction(lambda conn: trials.create_duel(
        conn, alice.id, bots["candidate"], bots["new"], trials.DuelTerms(elo1=10.5)))
    made["duel"], made["duel, seats swapped"] = await db.transaction(
        lambda conn: trials.add_pair(conn, "TICTACTOE", 12, bots["candidate"], bots["new"],
                                     {}, duel_id=duel))
    await db.transaction(lambda conn: trials.end_duel(conn, duel, "STOPPED", None,
                                                      [0, 1, 0, 0, 0]))

    # A node that played, stopped cleanly, and one that died holding a running game.
    stopped = Leases(db, "node-a", "http://127.0.0.1:8001", 15.0)
    await stopped.heartbeat()
    await stopped.stopped()
    died = Leases(db, "node-b", "http://127.0.0.1:8002", 15.0)
    running = await db.transaction(lambda conn: games.create(
        conn, "TICTACTOE", 7, [bots["crosses"], bots["new"]]))
    await games.mark_running(db, running, [0, 1])
    assert await died.claim(running)
    assert await games.record_moves(db, running, [
        move(1, 0, {"position": 4}, request="{}", reply="{}", latency_ms=4.75),
        move(2, 1, fault=FaultKind.TIMEOUT, fault_detail="no reply", latency_ms=1000.0)],
        node="node-b")
    assert await died.heartbeat() == set()
    made["pending"] = await db.transaction(lambda conn: games.create(
        conn, "KALAHA", 8, [bots["reaper"], bots["sower"]]))

    def discipline(conn: Connection) -> None:
        assert bot_store.disable(conn, bots["third"], "ADMIN", "cheats", with_owner=True) == []
        users.set_suspended(conn, carol.id, "cheats")
        bot_store.disable(conn, bots["reaper"], "FAULTS", "3 faulty games")
        bot_store.update_registration(conn, bots["reaper"],
                                      bot_store.BotMetadata("http://127.0.0.1:10/rpc"))

    await db.transaction(discipline)
    await bot_store.set_self_name(db, bots["sower"], "The Sower")
    await logs.write(db, bots["crosses"], "went offline")
    await logs.write(db, bots["new"], ODD_TEXT, made["draw"])
    return Populated(bots, made, running)


# -- reading both sides -------------------------------------------------------------------------


def exact(value: Any) -> Any:
    """A value with its type, floats by their bits (== would let 0.0 equal -0.0)."""
    if isinstance(value, float):
        return ("float", value.hex())
    return (type(value).__name__, value)


async def dump(target: str | Path) -> Dump:
    """Every table's column names and rows, in key order."""
    db = await Database.open(target)
    try:
        tables = await db.table_names()
        assert set(tables) == set(ORDER), "a new table: say here how to order its rows"
        found: Dump = {}
        for table in tables:
            rows = await db.fetchall(
                f"SELECT * FROM {table} ORDER BY {ORDER[table]}")  # noqa: S608
            names = list(rows[0].keys()) if rows else []
            found[table] = (names, [tuple(exact(value) for value in row) for row in rows])
        return found
    finally:
        await db.close()


def counts(found: Dump) -> dict[str, int]:
    return {table: len(rows) for table, (_, rows) in found.items()}


def pg_rows(url: str) -> dict[str, int]:
    """Rows of every store table of a PostgreSQL database (none there: {})."""
    conn = connect_sync(url)
    try:
        tables = [row[0] for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            "AND tablename != 'merknera_schema' ORDER BY tablename")]
        found = {}
        for table in tables:
            row = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()  # noqa: S608
            assert row is not None
            found[table] = int(row[0])
        return found
    finally:
        conn.raw.close()


def rated(found: Dump) -> tuple[int, int]:
    """(games rated, bots rated) of a dump."""
    history = found["rating_history"][1]
    return len({row[0] for row in history}), len(found["ratings"][1])


# -- the checks of a copy -----------------------------------------------------------------------


async def same_standings(source: Database, target: Database) -> None:
    for game in ("TICTACTOE", "KALAHA"):
        ratings = await rating_store.for_game(source, game)
        assert ratings and await rating_store.for_game(target, game) == ratings
        board = await results.leaderboard(source, game)
        assert board and await results.leaderboard(target, game) == board


async def play_on(db: Database, arena: Populated) -> None:
    """The game left running gets a move and finishes, rated."""
    assert await games.record_moves(db, arena.running, [
        games.LoggedCall(3, 0, {"position": 0}, latency_ms=2.5)])

    def finish(conn: Connection) -> bool:
        return games.finish_in(conn, arena.running, Outcome.win(0, 2, "crosses won"),
                               {"board": "X"}, [(arena.bots["crosses"], "won")], LATER)
    assert await db.transaction(finish)
    assert (await rating_store.rate_queue(db)).rated == 1


async def play_on_unrated(db: Database, arena: Populated) -> None:
    """The game left running finishes, and its node dies before rating it."""
    assert await games.record_moves(db, arena.running, [
        games.LoggedCall(3, 0, {"position": 0}, latency_ms=2.5)])
    assert await games.finish(db, arena.running, Outcome.win(0, 2, "crosses won"),
                              {"board": "X"}, [], node=None)


async def new_rows_follow(db: Database, arena: Populated) -> None:
    """Rows made in the copied store get ids past the copied ones, in every table whose
    ids PostgreSQL generates."""
    generated = {row[0] for row in await db.fetchall(
        "SELECT table_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND is_identity = 'YES'")}
    top = {table: int(await db.fetchval(f"SELECT MAX(id) FROM {table}"))  # noqa: S608
           for table in generated}
    user, _ = await users.create_user(db, "dave")
    bot = await db.transaction(lambda conn: bot_store.insert(
        conn, name="dave-bot", version="1", game="TICTACTOE", user_id=user.id,
        meta=bot_store.BotMetadata("http://127.0.0.1:11/rpc"), secret="s"))
    tournament = await db.transaction(lambda conn: tournament_store.create(
        conn, "TICTACTOE", "ROUND_ROBIN", 1, [bot.id, arena.bots["crosses"]]))
    game_id = await db.transaction(lambda conn: games.create(
        conn, "TICTACTOE", 9, [bot.id, arena.bots["crosses"]]))
    assert await games.record_moves(db, game_id, [games.LoggedCall(1, 0, {"position": 4})])
    await logs.write(db, bot.id, "registered", game_id)
    challenge = await db.transaction(lambda conn: trials.create_challenge(
        conn, user.id, bot.id, arena.bots["crosses"], 1))
    duel = await db.transaction(lambda conn: trials.create_duel(
        conn, user.id, bot.id, arena.bots["crosses"], trials.DuelTerms()))
    made = {
        "users": user.id, "bots": bot.id, "tournaments": tournament, "games": game_id,
        "challenges": challenge, "duels": duel,
        "tokens": await db.fetchval("SELECT id FROM tokens WHERE user_id = ?", (user.id,)),
        "moves": await db.fetchval("SELECT id FROM moves WHERE game_id = ?", (game_id,)),
        "bot_log": await db.fetchval("SELECT id FROM bot_log WHERE bot_id = ?", (bot.id,)),
    }
    assert made == {table: top[table] + 1 for table in generated}


async def check_copied(source: Path, target: str, arena: Populated) -> Dump:
    """The target holds the source's rows and plays on as the source does; the source's
    dump."""
    before, after = await dump(source), await dump(target)
    # The rating queue is empty once a node has stopped (a node that died may leave rows:
    # test_results_queued_for_rating_are_rated_in_the_copy).
    assert all(rows for table, (_, rows) in before.items() if table != "rating_queue"), (
        "every table has rows to copy")
    assert after == before
    assert [row[0][1] for row in after["games"][1]] == sorted(
        [*arena.games.values(), arena.running])
    assert [row[0][1] for row in after["bots"][1]] == sorted(arena.bots.values())
    old, new = await Database.open(source), await Database.open(target)
    try:
        await same_standings(old, new)
        for db in (old, new):
            await play_on(db, arena)
        await same_standings(old, new)
        assert await rating_store.get(new, arena.bots["crosses"]) == (
            await rating_store.get(old, arena.bots["crosses"]))
        await new_rows_follow(new, arena)
    finally:
        await old.close()
        await new.close()
    return before


def with_password(postgres: Cluster, url: str) -> str:
    """The URL with a password (the throwaway cluster trusts its connections)."""
    return url.replace(f"//{postgres.user}@", f"//{postgres.user}:hunter2@")


def copied_lines(out: str) -> dict[str, int]:
    return {match[1]: int(match[2].replace(",", "")) for match in re.finditer(
        r"^  (\w+) +([\d,]+) rows \(the same count on both sides\)$", out, re.MULTILINE)}


# -- copies that go through ---------------------------------------------------------------------


def test_the_command_copies_an_arena_row_for_row(
        postgres: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "arena.db"
    arena = asyncio.run(populate(source))
    target = postgres.new_database()
    assert cli.main(["db", "copy", "--from", str(source),
                     "--to", with_password(postgres, target)]) == 0
    out, err = capsys.readouterr()
    assert "hunter2" not in out + err
    shown = with_password(postgres, target).replace(":hunter2@", ":***@")
    assert out.splitlines()[0] == f"Copied {source} into {shown}:"
    before = asyncio.run(check_copied(source, target, arena))
    assert copied_lines(out) == counts(before)
    games_rated, bots_rated = rated(before)
    assert out.splitlines()[-1] == (
        f"Ratings rebuilt from the copied results: {games_rated} games, {bots_rated} bots, "
        "the same as copied.")


async def test_copy_moves_an_arena_row_for_row(postgres: Cluster, tmp_path: Path) -> None:
    source = tmp_path / "arena.db"
    arena = await populate(source)
    target = await asyncio.to_thread(postgres.new_database)
    summary = await copy(str(source), target)
    before = await check_copied(source, target, arena)
    assert summary.rows == counts(before)
    assert (summary.rated_games, summary.rated_bots) == rated(before) == (5, 6)


async def test_results_queued_for_rating_are_rated_in_the_copy(postgres: Cluster,
                                                                tmp_path: Path) -> None:
    """A node that died between storing a result and rating it: the copy rates the result,
    as the node's next start would have."""
    source = tmp_path / "arena.db"
    arena = await populate(source)
    old = await Database.open(source)
    try:
        await play_on_unrated(old, arena)
        assert await old.fetchval("SELECT COUNT(*) FROM rating_queue") == 1
    finally:
        await old.close()
    target = await asyncio.to_thread(postgres.new_database)
    summary = await copy(str(source), target)
    assert summary.rows["rating_queue"] == 1
    new = await Database.open(target)
    try:
        assert await new.fetchval("SELECT COUNT(*) FROM rating_queue") == 0
    finally:
        await new.close()
    old = await Database.open(source)
    try:  # what the source's next start would have done
        expected = await old.transaction(rating_store.rebuild_in)
    finally:
        await old.close()
    assert expected.changed == 2  # the queued game's two bots
    assert (summary.rated_games, summary.rated_bots) == (expected.games, expected.bots)
    rebuilt, copied = await dump(source), await dump(target)
    for table in ("ratings", "rating_history", "rating_queue"):
        assert copied[table] == rebuilt[table], table

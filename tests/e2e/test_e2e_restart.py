"""A platform killed with SIGKILL mid-game resumes every game from its store on restart.

Two quick bots play their two games to the end; then two bots that think for 0.3 s a move
join, which schedules ten more games. While several of those are half-played the platform is
killed (SIGKILL: no shutdown code runs) and the SQLite file is read. The platform then starts
again on the same file; the bots keep running and do not register again: the platform pings
them and resumes the games. Nothing stored before the crash may change, and every game must
end with a log that replays to its result.
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass
from typing import Any

from tests.e2e.harness import E2E

FAST = [("perfect", "quick-perfect", 0.0), ("random", "quick-random", 0.0)]
SLOW = [("perfect", "slow-perfect", 0.3), ("random", "slow-random", 0.3)]
GAMES = 4 * 3  # two per ordered pair of the four bots
MIDWAY = 3
"""Games that must be under way (MIDWAY_MOVES moves, no result) when the platform is killed."""
MIDWAY_MOVES = 2


@dataclass
class Snapshot:
    """The store's games, seats and moves, as plain tuples."""

    games: dict[int, dict[str, Any]]
    seats: dict[tuple[int, int], dict[str, Any]]
    moves: dict[tuple[int, int], dict[str, Any]]
    bots: int

    def played(self, game_id: int) -> int:
        """Accepted moves of a game."""
        return sum(1 for (gid, _), row in self.moves.items()
                   if gid == game_id and row["move"] is not None)


def _rows(rows: list[sqlite3.Row]) -> list[dict[str, Any]]:
    return [dict(zip(row.keys(), tuple(row), strict=True)) for row in rows]


def snapshot(e2e: E2E) -> Snapshot:
    """Read the store (read-only) into a :class:`Snapshot`."""
    games = _rows(e2e.read_db("SELECT * FROM games ORDER BY id"))
    seats = _rows(e2e.read_db("SELECT * FROM seats ORDER BY game_id, seat"))
    # Every column but the row id, which is the store's business.
    moves = _rows(e2e.read_db(
        "SELECT game_id, seq, seat, move, request, reply, latency_ms, fault, fault_detail, "
        "created_at FROM moves ORDER BY game_id, seq"))
    bots = e2e.read_db("SELECT COUNT(*) FROM bots")[0][0]
    return Snapshot({g["id"]: g for g in games},
                    {(s["game_id"], s["seat"]): s for s in seats},
                    {(m["game_id"], m["seq"]): m for m in moves}, bots)


async def test_sigkilled_platform_resumes_games_from_the_store(e2e: E2E) -> None:
    token = await e2e.add_user("e2e")
    await e2e.start_platform()
    fast = await e2e.start_bots(token, FAST)
    await e2e.wait_all_finished(2)
    slow = await e2e.start_bots(token, SLOW)

    async def half_played() -> tuple[list[int] | None, str]:
        games = await e2e.games()
        unfinished = [g["id"] for g in games if g["status"] != "FINISHED"]
        details = await asyncio.gather(*(e2e.game(gid) for gid in unfinished))
        started = [d["id"] for d in details
                   if sum(m["move"] is not None for m in d["moves"]) >= MIDWAY_MOVES]
        seen = (f"{len(games)} games, {len(unfinished)} unfinished, {len(started)} of them "
                f"with {MIDWAY_MOVES}+ moves")
        return (started if len(games) == GAMES and len(started) >= MIDWAY else None), seen

    await e2e.wait_until(f"{MIDWAY} games with {MIDWAY_MOVES}+ moves and no result",
                         half_played, interval=0.05)
    await e2e.kill_platform()

    before = snapshot(e2e)
    assert len(before.games) == GAMES
    finished_before = [gid for gid, g in before.games.items() if g["status"] == "FINISHED"]
    midway = [gid for gid, g in before.games.items()
              if g["status"] != "FINISHED" and before.played(gid) >= MIDWAY_MOVES]
    # The quick pair's two games; and the games caught mid-way (the poll saw MIDWAY of them a
    # moment before the kill, and each needs seconds more to finish).
    assert len(finished_before) >= 2, before.games
    assert len(midway) >= MIDWAY - 1, {gid: before.played(gid) for gid in before.games}

    # The same store, a new process; the bots are still running and do not register again.
    await e2e.start_platform()
    await e2e.wait_all_finished(GAMES)
    after = snapshot(e2e)
    games = {g["id"]: g for g in await asyncio.gather(*(e2e.game(gid) for gid in after.games))}

    assert sorted(after.games) == sorted(before.games), "games were created or lost"
    assert after.bots == before.bots == len(FAST + SLOW)
    assert all(bot.child.running for bot in fast + slow)

    # Every call stored before the crash is still there, unchanged.
    for key, row in before.moves.items():
        assert after.moves.get(key) == row, f"game {key[0]} seq {key[1]} changed or vanished"
    # Every game finished before the crash kept its result.
    for gid in finished_before:
        assert after.games[gid] == before.games[gid], gid
        for seat in (0, 1):
            assert after.seats[gid, seat] == before.seats[gid, seat], (gid, seat)

    for gid, game in games.items():
        # The whole log, old part and new: seq 1..n, legal, in turn, replaying to the result.
        board = e2e.check_tictactoe_game(game)
        assert game["reason"] == "NORMAL", (gid, game["reason"], game["detail"])
        assert [m for m in game["moves"] if m["fault"] is not None] == [], gid
        played = 9 - board.count("")
        assert played == after.played(gid) == len(game["moves"]), gid
        if game["outcome"] == "DRAW":
            assert played == 9, (gid, board)
        else:
            assert game["outcome"] == "WIN", (gid, game["outcome"])
            winner = next(s["seat"] for s in game["seats"] if s["result"] == "WIN")
            # The winner made the last move, and could not have won before its third.
            assert game["moves"][-1]["seat"] == winner, (gid, game["moves"][-1])
            assert played >= 5, (gid, board)
    for gid in midway:
        # Resumed where its log ended, not restarted or abandoned.
        assert after.played(gid) > before.played(gid), (gid, before.played(gid))

    log = e2e.platform_log()
    assert "Traceback" not in log, log[-4000:]

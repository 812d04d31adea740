"""Per-bot figures measured by the platform, and head-to-head records."""

from __future__ import annotations

import math
import statistics
from typing import Any

from merknera.store.db import Database

LATENCY_SAMPLE = 2000
"""The latest move replies a bot's latency figures are computed over."""


def _percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of sorted values."""
    index = max(0, min(len(values) - 1, math.ceil(fraction * len(values)) - 1))
    return values[index]


_AGAINST = ("CASE WHEN {mine}.rank IS NULL OR {other}.rank IS NULL THEN 'NONE' "
            "WHEN {mine}.rank < {other}.rank THEN 'WIN' WHEN {mine}.rank = {other}.rank "
            "THEN 'DRAW' ELSE 'LOSS' END")
"""One seat's result against another seat of the same game, by their places (0 is first):
in a game of three or more, two bots that both lost to a third still placed apart."""


async def bot_figures(db: Database, bot_id: int) -> dict[str, Any]:
    """A bot's move latency (p50/p95 of its latest replies, in ms) and faults by kind."""
    rows = await db.fetchall(
        "SELECT moves.latency_ms FROM moves JOIN seats ON seats.game_id = moves.game_id "
        "AND seats.seat = moves.seat WHERE seats.bot_id = ? AND moves.latency_ms IS NOT NULL "
        "ORDER BY moves.id DESC LIMIT ?", (bot_id, LATENCY_SAMPLE))
    latencies = sorted(row[0] for row in rows)
    faults = {row[0]: row[1] for row in await db.fetchall(
        "SELECT moves.fault, COUNT(*) FROM moves JOIN seats ON seats.game_id = moves.game_id "
        "AND seats.seat = moves.seat WHERE seats.bot_id = ? AND moves.fault IS NOT NULL "
        "GROUP BY moves.fault ORDER BY moves.fault", (bot_id,))}
    return {
        "latency": {
            "replies": len(latencies),
            "p50_ms": _percentile(latencies, 0.5) if latencies else None,
            "p95_ms": _percentile(latencies, 0.95) if latencies else None,
            "mean_ms": round(statistics.fmean(latencies), 3) if latencies else None,
        },
        "faults": faults,
    }


async def head_to_head(db: Database, first: int, second: int) -> dict[str, Any]:
    """The finished games between two bots, from the first one's view."""
    rows = await db.fetchall(
        f"SELECT games.id, games.game, {_AGAINST.format(mine='a', other='b')}, a.seat, "
        "games.finished_at FROM games "
        "JOIN seats a ON a.game_id = games.id AND a.bot_id = ? "
        # Another seat: asked about a bot and itself, this finds no games.
        "JOIN seats b ON b.game_id = games.id AND b.bot_id = ? AND b.seat != a.seat "
        "WHERE games.status = 'FINISHED' ORDER BY games.id DESC", (first, second))
    tally = {"WIN": 0, "DRAW": 0, "LOSS": 0, "NONE": 0}
    for row in rows:
        tally[row[2]] += 1
    return {"bot": first, "opponent": second, "played": tally["WIN"] + tally["DRAW"]
            + tally["LOSS"], "won": tally["WIN"], "drawn": tally["DRAW"],
            "lost": tally["LOSS"], "no_result": tally["NONE"],
            "games": [{"id": row[0], "game": row[1], "result": row[2], "seat": row[3],
                       "finished_at": row[4]} for row in rows[:100]]}


async def by_opponent(db: Database, bot_id: int, limit: int = 100) -> list[dict[str, Any]]:
    """A bot's record against each bot it met in games with a result, most met first."""
    against = _AGAINST.format(mine="mine", other="other")
    rows = await db.fetchall(
        "SELECT other.bot_id, bots.name, bots.version, COUNT(*) AS played, "
        f"COUNT(CASE WHEN {against} = 'WIN' THEN 1 END), "
        f"COUNT(CASE WHEN {against} = 'DRAW' THEN 1 END), "
        f"COUNT(CASE WHEN {against} = 'LOSS' THEN 1 END) "
        "FROM seats mine JOIN seats other ON other.game_id = mine.game_id "
        "AND other.seat != mine.seat JOIN bots ON bots.id = other.bot_id "
        "WHERE mine.bot_id = ? AND mine.rank IS NOT NULL "
        "GROUP BY other.bot_id, bots.id ORDER BY played DESC, bots.name, other.bot_id LIMIT ?",
        (bot_id, limit))
    return [{"id": row[0], "name": row[1], "version": row[2], "played": row[3], "won": row[4],
             "drawn": row[5], "lost": row[6]} for row in rows]

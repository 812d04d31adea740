"""What pages and the API show, shaped from the store: a tournament with its table, the
geometry of the leaderboard's interval bars and of a bot's rating chart.

Charts are drawn on the server as SVG (numbers in, coordinates out), so a page needs no
script to show them and no chart library.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from merknera.scheduler import tournaments
from merknera.store import Database
from merknera.store import tournaments as tournament_store


async def tournament_detail(db: Database, tournament_id: int) -> dict[str, Any] | None:
    """A tournament: entrants, games by round, byes, and the table (None if unknown)."""
    found = await db.read(functools.partial(tournament_store.load,
                                            tournament_id=tournament_id))
    if found is None:
        return None
    names = await db.read(functools.partial(tournament_store.entrant_names,
                                            tournament_id=tournament_id))
    return {
        "id": found.id, "game": found.game, "format": found.format, "rounds": found.rounds,
        "total_rounds": tournaments.total_rounds(found), "round": found.round,
        "status": found.status, "created_at": found.created_at,
        "finished_at": found.finished_at,
        "entrants": [{"id": bot_id, "seed": seed, **names.get(bot_id, {})}
                     for seed, bot_id in enumerate(found.entrants, start=1)],
        "games": [{"id": g.game_id, "round": g.round, "first": g.first, "second": g.second,
                   "status": g.status.value,
                   "result": None if g.result is None else g.result.value}
                  for g in found.games],
        "byes": [{"round": round_number, "bot": bot_id} for round_number, bot_id in found.byes],
        "table": [{**dataclasses.asdict(row), **names.get(row.entrant, {})}
                  for row in tournaments.table(found)],
    }


@dataclass(frozen=True)
class IntervalBar:
    """One leaderboard row's 95% interval on the board's common scale, in percent."""

    low: float
    high: float
    mu: float
    conservative: float


def interval_bars(ratings: Sequence[dict[str, Any]]) -> list[IntervalBar]:
    """The bars of the rows' ``rating`` objects, all on one scale (the lowest interval
    start to the highest interval end, with a little room either side)."""
    if not ratings:
        return []
    lowest: float = min(min(r["low"], r["conservative"]) for r in ratings)
    highest: float = max(r["high"] for r in ratings)
    room = max(highest - lowest, 1.0) * 0.04
    lowest, highest = lowest - room, highest + room

    def at(value: float) -> float:
        return round(100 * (value - lowest) / (highest - lowest), 2)

    return [IntervalBar(at(r["low"]), at(r["high"]), at(r["mu"]), at(r["conservative"]))
            for r in ratings]


@dataclass(frozen=True)
class Chart:
    """A rating history as SVG coordinates in a ``width`` x ``height`` box."""

    width: int
    height: int
    mu: str
    """The mean's polyline points."""
    band: str
    """The 95% interval as a closed polygon's points."""
    conservative: str
    """The conservative estimate's polyline points."""
    ticks: list[tuple[float, str]]
    """(y, label) of the rating axis."""
    games: int


def rating_chart(history: Sequence[dict[str, Any]], width: int = 600,
                 height: int = 200) -> Chart | None:
    """The chart of a bot's rating after each rated game (None before its first)."""
    if not history:
        return None
    mus: list[float] = [point["mu"] for point in history]
    sigmas: list[float] = [point["sigma"] for point in history]
    lows = [mu - 1.96 * sigma for mu, sigma in zip(mus, sigmas, strict=True)]
    highs = [mu + 1.96 * sigma for mu, sigma in zip(mus, sigmas, strict=True)]
    conservative: list[float] = [point["conservative"] for point in history]
    bottom, top = min(*lows, *conservative), max(highs)
    if top - bottom < 1:
        top, bottom = top + 0.5, bottom - 0.5
    left, pad = 40, 8
    steps = max(len(history) - 1, 1)

    def x(index: int) -> float:
        return round(left + (width - left - pad) * index / steps, 1)

    def y(value: float) -> float:
        return round(pad + (height - 2 * pad) * (top - value) / (top - bottom), 1)

    def line(values: Sequence[float]) -> str:
        return " ".join(f"{x(i)},{y(v)}" for i, v in enumerate(values))

    band = line(highs) + " " + " ".join(
        f"{x(i)},{y(v)}" for i, v in reversed(list(enumerate(lows))))
    step = tick_step(top - bottom)
    ticks = [(y(n * step), f"{n * step:g}")
             for n in range(math.ceil(bottom / step), math.floor(top / step) + 1)]
    return Chart(width, height, line(mus), band, line(conservative), ticks, len(history))


def tick_step(span: float, most: int = 6) -> float:
    """The smallest of 1, 2 or 5 times a power of ten that puts at most ``most`` ticks on
    an axis ``span`` long."""
    power = 10.0 ** math.floor(math.log10(max(span, 1e-9) / most))
    return next(f * power for f in (1, 2, 5, 10) if span / (f * power) <= most)

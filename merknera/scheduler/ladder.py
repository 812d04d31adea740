"""The continuous ladder: keeps pairing online bots of each game.

A pass looks at the online, enabled bots of a game with room for another game (fewer than
``max_games_per_bot`` unfinished games), takes them in priority order (the fewest rated
games first, so a new version gets its first games quickly, then the most uncertain) and
gives each an opponent whose rating is close or uncertain: the one with the best TrueSkill
match quality among its neighbours in rating order, a recent opponent counting for less.
Each bot gets at most one new game per pass, and a pass never adds more games than the
free concurrency allows.

:func:`choose_pairs` is the pure part (what ``bench/ladder.py`` times); :class:`Ladder` runs
it against the store and the scheduler every ``ladder_interval`` seconds, reading the recent
opponents of only the bots it reaches (:func:`choose_pairs_reading`).
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import functools
import logging
import math
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from merknera.games import JSON
from merknera.ratings import MODEL
from merknera.scheduler.core import Scheduler
from merknera.store import competition, games, logs
from merknera.store.db import Connection

log = logging.getLogger(__name__)

BETA = MODEL.beta
"""Performance spread of one game, in rating points (the rating model's)."""
NEIGHBOURS = 8
"""How far either way in rating order a bot looks for an opponent: the pass stays
O(n log n) however many bots there are."""
RECENT_PENALTY = 0.5
"""Match quality is multiplied by this for a pair that met in their last few games."""
READ_AHEAD = 4
"""Bots per slot whose recent opponents :func:`choose_pairs_reading` reads at first (a pass
reaches about two per slot: one per pair, and each partner skipped at its own turn)."""


@dataclass(frozen=True)
class Candidate:
    """A bot the ladder may pair."""

    bot_id: int
    mu: float
    sigma: float
    rated_games: int
    recent: frozenset[int] = frozenset()
    """Bots it played lately."""
    first_seats: int = 0
    """How often it had the first seat in its last ten games."""


def quality(a: Candidate, b: Candidate) -> float:
    """TrueSkill's match quality of a pair: the chance of a draw relative to equal, sure
    players; high for close ratings and for uncertain ones."""
    spread = 2 * BETA**2 + a.sigma**2 + b.sigma**2
    return math.sqrt(2 * BETA**2 / spread) * math.exp(-((a.mu - b.mu) ** 2) / (2 * spread))


def _priority(candidate: Candidate) -> tuple[int, float, int]:
    """The order in which :func:`choose_pairs` pairs bots: the fewest rated games first,
    then the most uncertain."""
    return candidate.rated_games, -candidate.sigma, candidate.bot_id


def choose_pairs(candidates: Sequence[Candidate], slots: int) -> list[tuple[int, int]]:
    """Pairs of bot ids to play, at most ``slots`` of them, each bot in at most one.

    The first of each pair takes seat 0: the one that had the first seat less often of
    late, so that no bot always moves first (ties alternate with the pass's pair count).
    """
    if slots <= 0 or len(candidates) < 2:
        return []
    by_mu = sorted(candidates, key=lambda c: (c.mu, c.bot_id))
    keys = [(c.mu, c.bot_id) for c in by_mu]
    taken: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for bot in sorted(candidates, key=_priority):
        if len(pairs) >= slots:
            break
        if bot.bot_id in taken:
            continue
        here = bisect.bisect_left(keys, (bot.mu, bot.bot_id))
        best: Candidate | None = None
        best_quality = -1.0
        for index in range(max(0, here - NEIGHBOURS), min(len(by_mu), here + NEIGHBOURS + 1)):
            other = by_mu[index]
            if other.bot_id == bot.bot_id or other.bot_id in taken:
                continue
            score = quality(bot, other)
            if other.bot_id in bot.recent:
                score *= RECENT_PENALTY
            if score > best_quality:
                best, best_quality = other, score
        if best is None:
            continue
        taken.update((bot.bot_id, best.bot_id))
        first, second = bot, best
        if (best.first_seats, len(pairs) % 2) < (bot.first_seats, 1 - len(pairs) % 2):
            first, second = best, bot
        pairs.append((first.bot_id, second.bot_id))
    return pairs


def choose_pairs_reading(candidates: Sequence[Candidate], slots: int,
                         read_recent: Callable[[list[int]], Mapping[int, frozenset[int]]]
                         ) -> list[tuple[int, int]]:
    """The pairs of :func:`choose_pairs` for candidates whose recent opponents are not known
    yet, asking ``read_recent`` for those of the bots the pairing reaches rather than of
    every candidate (a bot left out of its answer met nobody).

    Reading every candidate's last games was most of a pass, and a pass pairs few of them.
    :func:`choose_pairs` gives the bots their turns in priority order and looks at the recent
    opponents of a bot only at a turn that pairs it (they weigh its choice of partner, not
    whether it has one).  Its partner always comes later in the order: an earlier one was
    free at its own turn, with this bot (free too) among its neighbours, and would have been
    paired then.  So the pairing turns come in the order of the pairs, and if that of the
    last pair (its earlier bot's) is among the first ``reach`` bots, no other bot's
    opponents were looked at.  Failing that (it takes many bots without a free neighbour),
    every candidate's are read.
    """
    if slots <= 0 or len(candidates) < 2:
        return []
    order = sorted(candidates, key=_priority)
    reach = min(len(order), READ_AHEAD * slots)
    while True:
        recent = read_recent([bot.bot_id for bot in order[:reach]])
        known = [dataclasses.replace(bot, recent=recent.get(bot.bot_id, frozenset()))
                 for bot in order[:reach]]
        pairs = choose_pairs([*known, *order[reach:]], slots)
        if reach == len(order) or not pairs:
            return pairs
        # the turn of the last pair: that of its bot earlier in priority order
        if next(index for index, bot in enumerate(order) if bot.bot_id in pairs[-1]) < reach:
            return pairs
        reach = len(order)


class Ladder:
    """Runs :func:`choose_pairs` for every game while the ladder is on and not paused."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self._arena = scheduler.arena
        self.paused = False
        self._task: asyncio.Task[None] | None = None

    @property
    def state(self) -> str:
        """OFF (not configured), PAUSED or RUNNING."""
        if not self._arena.config.scheduling.ladder:
            return "OFF"
        return "PAUSED" if self.paused else "RUNNING"

    def start(self) -> None:
        """Start the passes (when the configuration turns the ladder on)."""
        if self._arena.config.scheduling.ladder and self._task is None:
            self._task = asyncio.create_task(self._loop(), name="ladder")

    async def stop(self) -> None:
        """Stop the passes."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self._arena.config.scheduling.ladder_interval)
            if self.paused:
                continue
            try:
                await self.pass_once()
            except Exception:
                log.exception("a ladder pass failed")  # the next pass tries again

    async def pass_once(self) -> list[int]:
        """One scheduling pass over every game; returns the ids of the games created."""
        arena = self._arena
        free = await self._scheduler.free()
        if free <= 0:
            return []
        created: list[int] = []
        for mnemonic in sorted(arena.games):
            # A held client may have no room for a game (a Battlebot client plays one at
            # a time, a guest only those its players start): only those it can open for.
            online = [bot_id for bot_id in arena.presence.online_bots(mnemonic)
                      if (bot := arena.presence.bot(bot_id)) is not None
                      and arena.carriers.can_open(bot)]
            if len(online) < 2:
                continue
            pairs = await arena.db.read(functools.partial(
                _pair, bot_ids=online, cap=arena.config.scheduling.max_games_per_bot,
                slots=free - len(created)))
            if not pairs:
                continue
            settings = arena.new_game_settings(mnemonic)
            names = {bot_id: bot.name for pair in pairs for bot_id in pair
                     if (bot := arena.presence.bot(bot_id)) is not None}
            created += await arena.db.transaction(functools.partial(
                _create, game=mnemonic, pairs=pairs, settings=settings, names=names))
            if len(created) >= free:
                break
        await self._scheduler.offer(created)
        return created


def _pair(conn: Connection, bot_ids: list[int], cap: int,
          slots: int) -> list[tuple[int, int]]:
    """The pass's pairs among the bots with room for another game, read and chosen on the
    reader's thread: one trip to the store, however many opponents the pairing looks up."""
    found = [Candidate(bot.bot_id, bot.mu, bot.sigma, bot.rated_games,
                       first_seats=bot.first_seats)
             for bot in competition.contenders(conn, bot_ids, cap)]
    return choose_pairs_reading(found, slots,
                                functools.partial(competition.recent_opponents, conn))


def _create(conn: Connection, game: str, pairs: list[tuple[int, int]],
            settings: dict[str, JSON], names: dict[int, str]) -> list[int]:
    # Checked again in the transaction: a bot superseded or disabled since the pass read
    # the candidates must not get a game it would forfeit.
    ids = [bot_id for pair in pairs for bot_id in pair]
    current = set(competition.current(conn, ids))
    created = []
    for pair in pairs:
        if not set(pair) <= current:
            continue
        game_id = games.create(conn, game, secrets.randbits(63), pair, dict(settings),
                               origin="LADDER")
        created.append(game_id)
        for seat, bot_id in enumerate(pair):
            other = names.get(pair[1 - seat], f"bot {pair[1 - seat]}")
            logs.add(conn, bot_id, f"Ladder game with {other}. You are player "
                                   f"{'one' if seat == 0 else 'two'} (gameId: {game_id})",
                     game_id)
    return created

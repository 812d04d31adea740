"""The continuous ladder: keeps pairing online bots of each game.

A pass looks at the online, enabled bots of a game with room for another game (fewer than
``max_games_per_bot`` unfinished games), takes them in priority order (the fewest rated
games first, so a new version gets its first games quickly, then the most uncertain) and
gives each the opponent among its neighbours in rating order whose game teaches the most
(:func:`teaching`: how much the game is expected to narrow the two ratings), weighed down
by how much of the bot's latest games that opponent already took (:func:`meeting_shares`);
an opponent that took :data:`MAX_SHARE` of them or more is chosen only when no other is
free.  Each bot gets at most one new game per pass, and a pass never adds more games than
the free concurrency allows.

:func:`choose_pairs` is the pure part (what ``bench/ladder.py`` times and plays seasons
with); :class:`Ladder` runs it against the store and the scheduler every
``ladder_interval`` seconds, reading the latest opponents of only the bots it reaches
(:func:`choose_pairs_reading`).
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
MEETING_GAMES = competition.RECENT_GAMES
"""How many of a bot's latest games make the history its meeting shares come from (the
store reads that many)."""
MEETING_DECAY = 0.8
"""The weight of a game in that history relative to the next newer one: a meeting counts
for about half after three more games, and for little after twelve."""
FRESHNESS = 16.0
"""How steeply a game's value falls with the opponent's meeting share: it is multiplied by
``exp(-FRESHNESS * share)``, so an opponent met in a fifth of the bot's latest games is
worth about a twenty-fifth of a fresh one."""
MAX_SHARE = 0.4
"""An opponent with this meeting share or more is chosen only when no other is free: no
opponent takes most of a bot's games while others are there."""
READ_AHEAD = 4
"""Bots per slot whose latest opponents :func:`choose_pairs_reading` reads at first (a pass
reaches about two per slot: one per pair, and each partner skipped at its own turn)."""


History = tuple[tuple[int, ...], ...]
"""The other seats of a bot's latest games, newest first."""


@dataclass(frozen=True)
class Candidate:
    """A bot the ladder may pair."""

    bot_id: int
    mu: float
    sigma: float
    rated_games: int
    recent: History = ()
    """The other seats of its latest games (up to :data:`MEETING_GAMES`), newest first."""
    first_seats: int = 0
    """How often it had the first seat in its last ten games."""


def win_probability(a: Candidate, b: Candidate) -> float:
    """The rating model's chance that ``a`` finishes ahead of ``b`` in a two-seat game
    (Plackett-Luce with two seats: a logistic curve of the difference of the means over
    the spread of the two performances)."""
    spread = math.sqrt(2 * BETA**2 + a.sigma**2 + b.sigma**2)
    return 1.0 / (1.0 + math.exp((b.mu - a.mu) / spread))


def teaching(a: Candidate, b: Candidate) -> float:
    """How much one game between ``a`` and ``b`` is expected to narrow their ratings: the
    drop of the sum of their variances (rating points squared).

    One game's result carries ``p (1 - p) / c**2`` of Fisher information about the
    difference of the two skills (``p`` the win probability, ``c`` the spread of
    :func:`win_probability`); a Gaussian update with it takes ``sigma_a**4 * I / (1 +
    (sigma_a**2 + sigma_b**2) * I)`` off ``a``'s variance, and the like off ``b``'s.  So a
    game teaches much when either rating is uncertain and the result is in doubt, and
    little between sure ratings far apart, whose result is known beforehand.
    """
    a_var, b_var = a.sigma * a.sigma, b.sigma * b.sigma
    c_squared = 2 * BETA * BETA + a_var + b_var
    p = 1.0 / (1.0 + math.exp((b.mu - a.mu) / math.sqrt(c_squared)))  # win_probability's
    information = p * (1.0 - p) / c_squared
    return (a_var * a_var + b_var * b_var) * information / (1.0 + (a_var + b_var) * information)


def meeting_shares(recent: Sequence[Sequence[int]]) -> dict[int, float]:
    """The share of a bot's latest games (``recent``, newest first) that each opponent
    was in, each game weighing :data:`MEETING_DECAY` times the next newer one: a share is
    between 0 (not met lately) and 1 (in every game)."""
    weights: dict[int, float] = {}
    weight, total = 1.0, 0.0
    for others in recent[:MEETING_GAMES]:
        for other in others:
            weights[other] = weights.get(other, 0.0) + weight
        total += weight
        weight *= MEETING_DECAY
    return {other: met / total for other, met in weights.items()}


def _priority(candidate: Candidate) -> tuple[int, float, int]:
    """The order in which :func:`choose_pairs` pairs bots: the fewest rated games first,
    then the most uncertain."""
    return candidate.rated_games, -candidate.sigma, candidate.bot_id


def choose_pairs(candidates: Sequence[Candidate], slots: int) -> list[tuple[int, int]]:
    """Pairs of bot ids to play, at most ``slots`` of them, each bot in at most one.

    At its turn a bot takes, among its free neighbours, the opponent with a meeting share
    under :data:`MAX_SHARE` (any, if none is) whose game teaches the most times
    ``exp(-FRESHNESS * share)``.  The shares are those of the bot whose turn it is: its
    partner's history is not needed (:func:`choose_pairs_reading` reads only the bots it
    reaches).  Every bot gets at most one game a pass and the fewest rated games go first,
    so the bots' counts of games stay close and a pair's share is much the same from
    either side.

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
        shares = meeting_shares(bot.recent)
        best: Candidate | None = None
        best_value = (False, -1.0)
        for index in range(max(0, here - NEIGHBOURS), min(len(by_mu), here + NEIGHBOURS + 1)):
            other = by_mu[index]
            if other.bot_id == bot.bot_id or other.bot_id in taken:
                continue
            share = shares.get(other.bot_id, 0.0)
            taught = teaching(bot, other)
            if share:
                taught *= math.exp(-FRESHNESS * share)
            value = (share < MAX_SHARE, taught)
            if value > best_value:
                best, best_value = other, value
        if best is None:
            continue
        taken.update((bot.bot_id, best.bot_id))
        first, second = bot, best
        if (best.first_seats, len(pairs) % 2) < (bot.first_seats, 1 - len(pairs) % 2):
            first, second = best, bot
        pairs.append((first.bot_id, second.bot_id))
    return pairs


def choose_pairs_reading(candidates: Sequence[Candidate], slots: int,
                         read_recent: Callable[[list[int]], Mapping[int, History]]
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
        known = [dataclasses.replace(bot, recent=recent.get(bot.bot_id, ()))
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

"""The ladder: how it spreads a bot's games and orders the leaderboard, and how long a pass
takes.

    .venv/bin/python bench/ladder.py spread [--seeds 20] [--passes 300]
    .venv/bin/python bench/ladder.py pass [--sizes 100 1000 10000] [--repeat 5]

(without a part, both with their defaults).

**spread** plays seasons without a platform or a store: the ladder's pure pairing
(:func:`merknera.scheduler.ladder.choose_pairs`) pass after pass, every bot free at each
pass, the games played at once in the pass's order, and each result through the real rating
update (:func:`merknera.ratings.update`).  Two fields of bots: the tic-tac-toe reference bots
of ``make run`` (two perfect, two random), their games played by the game's own referee and
the bots' own move functions; and twelve bots of known Elo (two of them equal and perfect:
they draw every game between them), results drawn by the Elo win probability.  For each,
the pairing as it is and the one it replaced (a copy here: TrueSkill's match quality, a
pair that met in the last three games at half) over ``--seeds`` seeded seasons: the games
until the leaderboard's order is right and stays right to the end of the season (bots of
equal strength in either order), and the largest share of one bot's games taken by one
opponent.

**pass** builds a store with that many online tic-tac-toe bots with ratings and a history of
finished games, starts the real platform on it, and times ``Ladder.pass_once`` (reading who
is free, rated and recently met; choosing the pairs; creating the games), median of
``--repeat`` passes, plus the pure pairing step alone and the memory a pass allocates at
its peak.  Target: a pass under 50 ms at 1,000 bots.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import itertools
import math
import random
import statistics
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from merknera.app import Platform
from merknera.config import Config, LivenessSettings, LogSettings, SchedulingSettings, StoreSettings
from merknera.games.tictactoe import TicTacToe
from merknera.ratings import DEFAULT, Rating, rank_key, update
from merknera.scheduler.ladder import BETA, NEIGHBOURS, Candidate, choose_pairs
from merknera.store import Database, bots, games, now
from merknera.store.db import Connection
from merknera_bots.tictactoe import choose_perfect, choose_random

HISTORY = 40
"""Finished games per bot in the store (the pass's reads must not grow with history)."""


async def build(db_path: Path, size: int) -> None:
    """A store with ``size`` current bots, their ratings and ``HISTORY`` games each."""
    db = await Database.open(db_path)
    rng = random.Random(size)

    def work(conn: Connection) -> None:
        stamp = now()
        conn.execute("INSERT INTO users (name, created_at) VALUES ('bench', ?)", (stamp,))
        conn.executemany(
            "INSERT INTO bots (name, version, game, user_id, endpoint, status, secret, "
            "created_at) VALUES (?, '1', 'TICTACTOE', 1, 'http://127.0.0.1:9/', 'OFFLINE', "
            "'s', ?)", [(f"bot{n}", stamp) for n in range(size)])
        conn.executemany(
            "INSERT INTO ratings (bot_id, game, mu, sigma, rated_games, updated_at) "
            "VALUES (?, 'TICTACTOE', ?, ?, ?, ?)",
            [(n + 1, rng.gauss(25, 5), rng.uniform(1, 8), rng.randint(1, 50), stamp)
             for n in range(size)])
        for n in range(size * HISTORY // 2):
            game_id = games.create(conn, "TICTACTOE", n, (rng.randint(1, size),
                                                          rng.randint(1, size)))
            conn.execute("UPDATE games SET status = 'FINISHED', outcome = 'NO_RESULT', "
                         "reason = 'ABORTED', finished_at = ? WHERE id = ?", (stamp, game_id))

    await db.transaction(work)
    await db.close()


async def measure(size: int, repeat: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "ladder.db"
        await build(db_path, size)
        # No retry pings during the passes (the bots' endpoint does not answer).
        platform = Platform(Config(
            store=StoreSettings(db=str(db_path)),
            scheduling=SchedulingSettings(concurrency=32),
            log=LogSettings(level="WARNING"),
            liveness=LivenessSettings(offline_retry_min=3600.0, offline_retry_max=3600.0),
        ))
        await platform.start()
        try:
            presence = platform.scheduler.arena.presence
            current = await bots.current(platform.db)
            # The platform pings every bot at start-up.  Those pings must be over before
            # the passes are timed: at 1,000 bots they took the first pass to 0.4-0.9 s and
            # often the second to 0.1 s, which made the median of three a ping timing.
            await asyncio.gather(*(presence.ping(bot.id) for bot in current))
            for bot in current:
                presence.registered(bot)  # as if each had just answered
            passes = []
            peak = 0
            # Timed passes, then one traced for its memory: tracing every allocation slows
            # the pass several times over, so it must not be timed.
            for traced in [False] * repeat + [True]:
                if traced:
                    tracemalloc.start()
                started = time.perf_counter()
                created = await platform.ladder.pass_once()
                if traced:
                    peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
                else:
                    passes.append(time.perf_counter() - started)
                await platform.scheduler.cancel(created)
                await platform.db.write_one(
                    "UPDATE games SET status = 'FINISHED', outcome = 'NO_RESULT', "
                    "reason = 'ABORTED' WHERE status != 'FINISHED'")
        finally:
            await platform.stop()
    rng = random.Random(1)
    candidates = [Candidate(n, rng.gauss(25, 5), rng.uniform(1, 8), rng.randint(0, 50),
                            tuple((rng.randrange(size),) for _ in range(20)))
                  for n in range(size)]
    pure = []
    for _ in range(repeat):
        started = time.perf_counter()
        choose_pairs(candidates, 32)
        pure.append(time.perf_counter() - started)
    return statistics.median(passes), statistics.median(pure), peak / 2**20


Pairing = Callable[[Sequence[Candidate], int], list[tuple[int, int]]]
RECENT_PENALTY = 0.5
"""The replaced pairing's factor for a pair that met in the last three games."""


def old_quality(a: Candidate, b: Candidate) -> float:
    """The replaced pairing's measure: TrueSkill's match quality."""
    spread = 2 * BETA**2 + a.sigma**2 + b.sigma**2
    return math.sqrt(2 * BETA**2 / spread) * math.exp(-((a.mu - b.mu) ** 2) / (2 * spread))


def old_choose_pairs(candidates: Sequence[Candidate], slots: int) -> list[tuple[int, int]]:
    """The pairing the ladder had before it weighed what a game teaches and how often a
    pair met (a copy: the best match quality among the neighbours, a pair that met in the
    bot's last three games at half)."""
    if slots <= 0 or len(candidates) < 2:
        return []
    by_mu = sorted(candidates, key=lambda c: (c.mu, c.bot_id))
    keys = [(c.mu, c.bot_id) for c in by_mu]
    taken: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for bot in sorted(candidates, key=lambda c: (c.rated_games, -c.sigma, c.bot_id)):
        if len(pairs) >= slots:
            break
        if bot.bot_id in taken:
            continue
        recent = {other for game in bot.recent[:3] for other in game}
        here = bisect.bisect_left(keys, (bot.mu, bot.bot_id))
        best: Candidate | None = None
        best_quality = -1.0
        for index in range(max(0, here - NEIGHBOURS), min(len(by_mu), here + NEIGHBOURS + 1)):
            other = by_mu[index]
            if other.bot_id == bot.bot_id or other.bot_id in taken:
                continue
            score = old_quality(bot, other) * (RECENT_PENALTY if other.bot_id in recent else 1)
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


@dataclass(frozen=True)
class Player:
    """A simulated bot: its name, its true strength, and how it plays."""

    name: str
    strength: float
    """Elo; bots of equal strength may be listed in either order."""
    perfect: bool = False
    """Two perfect players draw every game between them."""


Play = Callable[[Player, Player, random.Random], tuple[int, int]]
"""One game between seat 0 and seat 1: their ranks (0 best, equal ranks a draw)."""

REFEREE = TicTacToe()


def tictactoe(first: Player, second: Player, rng: random.Random) -> tuple[int, int]:
    """A game of tic-tac-toe by the game's referee, each seat played by the reference bot's
    own move function (a random bot draws from ``rng``)."""
    state = REFEREE.new({}, [first.name, second.name], rng)
    while (seat := REFEREE.to_move(state)) is not None:
        player = (first, second)[seat]
        mark = "XO"[seat]
        move = (choose_perfect(state.cells, mark) if player.perfect
                else choose_random(state.cells, mark, rng))
        state = REFEREE.apply(state, seat, move)
    outcome = REFEREE.outcome(state)
    assert outcome is not None and outcome.ranks is not None
    return outcome.ranks[0], outcome.ranks[1]


DRAWS = 0.2
"""Draws between bots of equal Elo (fewer the further apart); perfect players always draw."""


def by_elo(first: Player, second: Player, rng: random.Random) -> tuple[int, int]:
    """A result drawn by the Elo win probability of the two strengths."""
    if first.perfect and second.perfect:
        return 0, 0
    score = 1 / (1 + 10 ** ((second.strength - first.strength) / 400))
    draw = DRAWS * (1 - abs(2 * score - 1))
    roll = rng.random()
    if roll < score - draw / 2:
        return 0, 1
    if roll < score + draw / 2:
        return 0, 0
    return 1, 0


REFERENCE = [Player("Perfect Polly", 1, perfect=True), Player("Perfect Pete", 1, perfect=True),
             Player("Random Rita", 0), Player("Random Rob", 0)]
ELO_FIELD = [Player("perfect A", 1650, perfect=True), Player("perfect B", 1650, perfect=True),
             *(Player(f"elo {elo}", elo) for elo in range(1500, 0, -150))]


@dataclass
class Season:
    """What one season showed."""

    games: int
    settled_after: int | None
    """Games until the leaderboard's order was right for good (None: not right at the
    end)."""
    right: float
    """The share of the season's games after which the order was right."""
    shares: dict[str, float]
    """Each bot's largest share of its games taken by one opponent."""


def season(players: Sequence[Player], play: Play, pairing: Pairing, passes: int,
           seed: int) -> Season:
    """``passes`` ladder passes over ``players``, every bot free at each pass."""
    rng = random.Random(seed)
    ratings = [DEFAULT] * len(players)
    rated = [0] * len(players)
    history: list[list[tuple[int, int]]] = [[] for _ in players]  # (opponent, my seat)
    met = [Counter[int]() for _ in players]
    games_played = right_games = 0
    settled_after: int | None = 0
    for _ in range(passes):
        candidates = [Candidate(bot, ratings[bot].mu, ratings[bot].sigma, rated[bot],
                                tuple((other,) for other, _ in reversed(history[bot][-20:])),
                                sum(1 for _, seat in history[bot][-10:] if seat == 0))
                      for bot in range(len(players))]
        for first, second in pairing(candidates, len(players) // 2):
            ranks = play(players[first], players[second], rng)
            ratings[first], ratings[second] = update([ratings[first], ratings[second]], ranks)
            for bot, other, seat in ((first, second, 0), (second, first, 1)):
                rated[bot] += 1
                history[bot].append((other, seat))
                met[bot][other] += 1
            games_played += 1
            if right_order(players, ratings):
                right_games += 1
                if settled_after is None:
                    settled_after = games_played
            else:
                settled_after = None
    return Season(games_played, settled_after, right_games / games_played,
                  {player.name: max(met[bot].values()) / rated[bot]
                   for bot, player in enumerate(players) if rated[bot]})


def right_order(players: Sequence[Player], ratings: Sequence[Rating]) -> bool:
    """Whether the leaderboard (by the conservative estimate) lists no bot above a
    stronger one."""
    board = sorted(range(len(players)), key=lambda bot: rank_key(ratings[bot]))
    return all(players[upper].strength >= players[lower].strength
               for upper, lower in itertools.pairwise(board))


def report_spread(seeds: int, passes: int) -> None:
    fields: list[tuple[str, Sequence[Player], Play, int]] = [
        ("tic-tac-toe reference bots", REFERENCE, tictactoe, passes),
        ("twelve bots, 150 Elo apart", ELO_FIELD, by_elo, passes * 2)]
    pairings: list[tuple[str, Pairing]] = [("before", old_choose_pairs), ("after", choose_pairs)]
    print(f"{seeds} seasons each; the figures are medians over the seasons, 'worst' the "
          "largest")
    print(f"{'field':<27} {'pairing':<7} {'games':>6} {'order right for good':>21} "
          f"{'order right':>12} {'largest share (worst)':>22}")
    print(f"{'':<27} {'':<7} {'':>6} {'after (games)':>21} {'(of games)':>12} "
          f"{'of one opponent':>22}")
    for field, players, play, rounds in fields:
        for label, pairing in pairings:
            seasons = [season(players, play, pairing, rounds, seed) for seed in range(seeds)]
            settled = sorted(math.inf if s.settled_after is None else s.settled_after
                             for s in seasons)
            median = statistics.median_low(settled)
            never = sum(1 for after in settled if after == math.inf)
            after = ("never" if median == math.inf else str(median)) + (
                f" ({never} never)" if never else "")
            largest = [max(s.shares.values()) for s in seasons]
            print(f"{field:<27} {label:<7} {seasons[0].games:>6} {after:>21} "
                  f"{statistics.median(s.right for s in seasons):>12.0%} "
                  f"{statistics.median(largest):>15.0%} ({max(largest):.0%})")
            shares = {name: statistics.median(s.shares[name] for s in seasons)
                      for name in seasons[0].shares}
            print("    largest share per bot: " + ", ".join(
                f"{name} {share:.0%}" for name, share in shares.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = parser.add_subparsers(dest="part")
    spread = parts.add_parser("spread", help="seasons of simulated bots: spread and order")
    spread.add_argument("--seeds", type=int, default=20)
    spread.add_argument("--passes", type=int, default=300,
                        help="passes over the reference bots (twice as many for the twelve)")
    timing = parts.add_parser("pass", help="a pass's time against the store")
    timing.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    timing.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.part in (None, "spread"):
        report_spread(getattr(args, "seeds", 20), getattr(args, "passes", 300))
    if args.part in (None, "pass"):
        asyncio.run(report_passes(getattr(args, "sizes", [100, 1000, 10000]),
                                  getattr(args, "repeat", 5)))


async def report_passes(sizes: list[int], repeat: int) -> None:
    print(f"{'bots':>7} {'pass (ms)':>10} {'pairing (ms)':>13} {'peak MiB':>9}")
    for size in sizes:
        full, pure, mib = await measure(size, repeat)
        print(f"{size:>7} {full * 1e3:10.1f} {pure * 1e3:13.2f} {mib:9.1f}")
    print("target: a pass under 50 ms at 1,000 bots")


if __name__ == "__main__":
    main()

"""Tournaments: created by an operator, played round by round to the end.

A tournament is a round robin (``rounds`` cycles: 1 = every pair once, 2 = every pair
twice with the seats swapped) or a Swiss system of ``rounds`` rounds (fewer than the
entrants), between two-seat games of one game type.  Entrants are seeded by rating (the
conservative estimate), then by id.  The director looks at every unfinished tournament
each second: when a round's games have all ended it pairs the next round
(:mod:`merknera.scheduler.pairing`) or, after the last, finishes the tournament; its table
comes from :mod:`merknera.scheduler.standings`.  Games that end without a result score
nothing; byes score a win.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
from collections.abc import Sequence

from merknera.games import JSON, REGISTRY, SeatResult
from merknera.ratings import DEFAULT, Rating
from merknera.scheduler.core import Scheduler
from merknera.scheduler.pairing import (
    NO_RESULT,
    Outcome,
    Pairing,
    Result,
    round_robin,
    round_robin_rounds,
    swiss_round,
)
from merknera.scheduler.standings import StandingRow, standings
from merknera.store import competition, games, logs
from merknera.store import tournaments as store
from merknera.store.db import Connection
from merknera.store.games import GameStatus
from merknera.store.tournaments import Tournament

log = logging.getLogger(__name__)

FORMATS = {"round-robin": "ROUND_ROBIN", "swiss": "SWISS"}
"""The formats by their command-line names."""
MAX_CYCLES = 10
"""The most cycles of a round robin (every pair meets ``rounds`` times)."""
_FIRST_VIEW: dict[SeatResult | None, Outcome] = {
    SeatResult.WIN: 1.0, SeatResult.DRAW: 0.5, SeatResult.LOSS: 0.0}


class EntrantsError(ValueError):
    """Terms the bots of the moment do not allow: bots that are not current ones, fewer
    than two, or as many Swiss rounds as entrants (other bots may allow them later)."""


def plan_entrants(conn: Connection, game: str, fmt: str, rounds: int,
                  bot_ids: Sequence[int] | None) -> tuple[str, list[int]]:
    """Check a tournament's terms; returns the stored format and the entrants in seed
    order.  Runs inside the transaction that creates it.

    :raises EntrantsError: when the bots named, or the current ones, do not allow them;
        :class:`ValueError` for terms no bots would allow; each saying what is wrong.
    """
    if game not in REGISTRY:
        raise ValueError(f'unknown game "{game}"; known: {", ".join(sorted(REGISTRY))}')
    rules = REGISTRY[game]
    if rules.min_seats > 2:
        raise ValueError(f"{game} needs {rules.min_seats} seats; tournaments are of pairs")
    stored = FORMATS.get(fmt.lower(), fmt.upper() if fmt.upper() in FORMATS.values() else "")
    if not stored:
        raise ValueError(f'unknown format "{fmt}"; use round-robin or swiss')
    current = {row[0] for row in conn.execute(
        "SELECT id FROM bots WHERE game = ? AND status IN ('ONLINE', 'OFFLINE') "
        "AND protocol != 'guest' AND candidate = 0", (game,))}
    chosen = sorted(current) if bot_ids is None else list(dict.fromkeys(bot_ids))
    strangers = [bot_id for bot_id in chosen if bot_id not in current]
    if strangers:
        raise EntrantsError(f"bots {strangers} are not current {game} bots")
    if len(chosen) < 2:
        raise EntrantsError(f"a tournament needs at least two bots; {game} has {len(chosen)}")
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    if stored == "ROUND_ROBIN" and rounds > MAX_CYCLES:
        raise ValueError(f"a round robin has at most {MAX_CYCLES} cycles (--rounds)")
    if stored == "SWISS" and rounds >= len(chosen):
        raise EntrantsError(f"a Swiss tournament of {len(chosen)} bots has fewer than "
                         f"{len(chosen)} rounds; use round-robin for every pair")
    ratings = competition.ratings_of(conn, chosen)

    def conservative(bot_id: int) -> float:
        mu, sigma, _ = ratings.get(bot_id, (DEFAULT.mu, DEFAULT.sigma, 0))
        return Rating(mu, sigma).conservative

    seeded = sorted(chosen, key=lambda bot_id: (-conservative(bot_id), bot_id))
    return stored, seeded


def total_rounds(tournament: Tournament) -> int:
    """How many rounds the tournament has."""
    if tournament.format == "ROUND_ROBIN":
        return round_robin_rounds(len(tournament.entrants), tournament.rounds)
    return tournament.rounds


def results(tournament: Tournament) -> list[Result]:
    """Every finished game and every bye, from the first seat's view."""
    found = [Result(g.round, g.first, g.second,
                    _FIRST_VIEW.get(g.result, NO_RESULT))
             for g in tournament.games if g.status is GameStatus.FINISHED]
    found += [Result(round_number, bot_id, None, 1.0) for round_number, bot_id in tournament.byes]
    return found


def table(tournament: Tournament) -> list[StandingRow]:
    """The tournament's standings: points, then Buchholz, Sonneborn-Berger, wins."""
    return standings(list(tournament.entrants), results(tournament))


def next_round(tournament: Tournament, current: set[int]) -> list[Pairing]:
    """The pairings of the round after the current one.

    Entrants no longer current (superseded or disabled) have withdrawn: a Swiss round leaves
    them out, and a round robin's opponent of one gets a bye.
    """
    if tournament.format == "ROUND_ROBIN":
        return round_robin(list(tournament.entrants),
                           cycles=tournament.rounds)[tournament.round]
    return swiss_round([e for e in tournament.entrants if e in current], results(tournament))


class Director:
    """Plays every unfinished tournament round by round."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self._arena = scheduler.arena
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    async def create(self, game: str, fmt: str, rounds: int,
                     bot_ids: Sequence[int] | None) -> int:
        """Create a tournament (it begins within a second).

        :raises EntrantsError: when the bots named, or the current ones, do not allow them;
        :class:`ValueError` for terms no bots would allow; each saying what is wrong.
        """
        tournament_id = await self._arena.db.transaction(
            functools.partial(create_in, game=game, fmt=fmt, rounds=rounds, bot_ids=bot_ids))
        self._wake.set()
        return tournament_id

    def start(self) -> None:
        """Start looking after tournaments."""
        self._task = asyncio.create_task(self._loop(), name="tournaments")

    async def stop(self) -> None:
        """Stop (tournaments go on at the next start)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        while True:
            try:
                await self.step()
            except Exception:
                log.exception("a tournament step failed")  # the next step tries again
            self._wake.clear()
            try:
                async with asyncio.timeout(1.0):
                    await self._wake.wait()
            except TimeoutError:
                pass

    async def step(self) -> None:
        """Pair the next round of every tournament whose round is over, or finish it."""
        for tournament_id in await self._arena.db.read(store.unfinished):
            try:
                await self._advance(tournament_id)
            except Exception:
                # One broken tournament must not hold up the others.
                log.exception("tournament %d could not advance", tournament_id)

    async def _advance(self, tournament_id: int) -> None:
        db = self._arena.db
        tournament = await db.read(functools.partial(store.load, tournament_id=tournament_id))
        if tournament is None or any(g.status is not GameStatus.FINISHED
                                     and g.round == tournament.round
                                     for g in tournament.games):
            return
        if tournament.round >= total_rounds(tournament):
            await db.transaction(functools.partial(store.finish, tournament_id=tournament_id))
            log.info("tournament %d finished", tournament_id)
            return
        current = await db.read(functools.partial(_current, bot_ids=tournament.entrants))
        pairs = next_round(tournament, current)
        settings = self._arena.new_game_settings(tournament.game)
        created = await db.transaction(functools.partial(
            _start_round, tournament=tournament, pairs=pairs, settings=settings))
        await self._scheduler.offer(created)


def create_in(conn: Connection, game: str, fmt: str, rounds: int,
              bot_ids: Sequence[int] | None) -> int:
    """Create a tournament inside a write transaction (the CLI and the director)."""
    stored, entrants = plan_entrants(conn, game, fmt, rounds, bot_ids)
    return store.create(conn, game, stored, rounds, entrants)


def _current(conn: Connection, bot_ids: Sequence[int]) -> set[int]:
    """Those of the bots still in play (neither superseded nor disabled)."""
    return set(competition.current(conn, bot_ids))


def _start_round(conn: Connection, tournament: Tournament, pairs: list[Pairing],
                 settings: dict[str, JSON]) -> list[int]:
    round_number = tournament.round + 1
    # Checked again here, in the transaction: a bot superseded or disabled meanwhile has
    # withdrawn, and its opponent gets a bye rather than a rated forfeit.
    current = _current(conn, tournament.entrants)
    played = []
    for pair in pairs:
        present = [bot for bot in (pair.first, pair.second) if bot in current]
        if len(present) == 2:
            played.append(pair)
        elif present:
            played.append(Pairing(present[0], None))
    store.start_round(conn, tournament.id, round_number,
                      [pair.first for pair in played if pair.second is None])
    created = []
    for pair in played:
        if pair.second is None:
            logs.add(conn, pair.first, f"Tournament {tournament.id}, round {round_number}: "
                                       "a bye (it counts as a win)")
            continue
        game_id = games.create(conn, tournament.game, secrets.randbits(63),
                               (pair.first, pair.second), dict(settings),
                               origin="TOURNAMENT", tournament_id=tournament.id,
                               round_number=round_number)
        created.append(game_id)
        for seat, bot_id in enumerate((pair.first, pair.second)):
            logs.add(conn, bot_id, f"Tournament {tournament.id}, round {round_number}: you "
                                   f"are player {'one' if seat == 0 else 'two'} "
                                   f"(gameId: {game_id})", game_id)
    return created

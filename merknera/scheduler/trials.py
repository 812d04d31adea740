"""Challenges and duels (docs/bots/protocol.md section 8): games an owner asks for, unrated,
in pairs (one seed, seats swapped), at two seats.

An owner's request is checked and stored here (:meth:`Trials.challenge`,
:meth:`Trials.duel`); the coordinating node's passes then make their games a pair at a time
while the bots are online, within their own share of the places in play
(``trial_share``), so that they never starve the ladder.  After each pair a duel's
sequential test (:mod:`merknera.sprt`) decides whether to play on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import time
from dataclasses import dataclass

from merknera import sprt
from merknera.games import JSON, REGISTRY, JSONObject
from merknera.protocol.bot_protocols import BotProtocol
from merknera.scheduler.core import Scheduler
from merknera.scheduler.registration import Registrar, RegistrationError
from merknera.store import bots, logs, trials
from merknera.store.bots import Bot, BotStatus
from merknera.store.db import Connection, stamp_at
from merknera.store.trials import Challenge, Duel, DuelTerms, PlayedGame

log = logging.getLogger(__name__)

PASS_SECONDS = 0.25
"""Seconds between the passes that make games and judge duels."""
DUEL_PAIRS_AT_ONCE = 2
"""Pairs of one duel in play at once, at most."""
MAX_GAMES = 100
"""Games one challenge may ask for."""
MAX_PAIRS = 100_000
"""Pairs one duel may play, at most."""
DUELS_PER_OWNER = 2
"""Duels one owner may have running at once: with two pairs each in play, an owner's duels
take at most eight games of the trials' share."""


class TrialError(Exception):
    """A request refused: the HTTP status it is answered with, and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Tally:
    """A side's results over games: wins, draws, losses."""

    wins: int
    draws: int
    losses: int

    @classmethod
    def of(cls, games: list[PlayedGame]) -> Tally:
        """The asking side's tally over the games that ended with a result."""
        points = [game.points for game in games if game.points is not None]
        return cls(points.count(1.0), points.count(0.5), points.count(0.0))


class Trials:
    """Owners' challenges and duels, and the passes that play them."""

    def __init__(self, scheduler: Scheduler, registrar: Registrar) -> None:
        self._scheduler = scheduler
        self._registrar = registrar
        self._arena = scheduler.arena
        self._task: asyncio.Task[None] | None = None

    # -- the passes (a duty of the coordinating node) ---------------------------------------

    def start(self) -> None:
        """Start passing (this node coordinates)."""
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="trials")

    async def stop(self) -> None:
        """Stop passing (another node coordinates now, or the platform stops)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _loop(self) -> None:
        while True:
            try:
                await self.pass_once()
            except Exception:
                log.exception("a pass of challenges and duels failed")  # the next tries again
            await asyncio.sleep(PASS_SECONDS)

    async def pass_once(self) -> list[int]:
        """Judge the running duels, and make the next games of duels and challenges within
        their share; returns the ids of the games made."""
        arena = self._arena
        db = arena.db
        room = arena.config.scheduling.trial_places - await db.read(trials.unfinished_games)
        made: list[int] = []
        # One trial that fails (a store hiccup, a bug) must not stop the others.
        for duel in await db.read(trials.running_duels):
            try:
                made += await self._duel_pass(duel, room - len(made))
            except Exception:
                log.exception("duel %d could not be judged or played", duel.id)
        for challenge in await db.read(trials.open_challenges):
            try:
                made += await self._challenge_pass(challenge, room - len(made))
            except Exception:
                log.exception("challenge %d could not be played", challenge.id)
        if made:
            await self._scheduler.offer(made)
        return made

    async def _duel_pass(self, duel: Duel, room: int) -> list[int]:
        db = self._arena.db
        played = await db.read(functools.partial(trials.played, duel_id=duel.id,
                                                 side=duel.candidate_id))
        terms = duel.terms
        counts = trials.pentanomial(played)
        verdict = sprt.sprt(counts, terms.elo0, terms.elo1, terms.alpha, terms.beta)
        pairs = {game.pair for game in played}
        busy = {game.pair for game in played if game.status != "FINISHED"}
        # Every pair asked for has been played (a pair with a game that ended without a
        # result counts for nothing, and leaves the duel undecided at max_pairs).
        if verdict.decision is not None or (len(pairs) >= terms.max_pairs and not busy):
            await self._end_duel(duel, "FINISHED", verdict.decision, counts)
            return []
        presence = self._arena.presence
        gone = [bot.name + " " + bot.version for bot_id in (duel.candidate_id, duel.baseline_id)
                if presence.bot(bot_id) is None
                and (bot := await bots.get(self._arena.db, bot_id)) is not None]
        if gone:
            await self._end_duel(duel, "STOPPED", None, counts,
                                 f"{' and '.join(gone)} left play (superseded or disabled)")
            return []
        made: list[int] = []
        while (room - len(made) >= 2 and len(busy) < DUEL_PAIRS_AT_ONCE
               and len(pairs) < terms.max_pairs
               and self._online(duel.candidate_id, duel.baseline_id)):
            pair = await self._pair(duel.candidate_id, duel.baseline_id, single=False,
                                    duel_id=duel.id)
            if not pair:
                break
            made += pair
            busy.add(len(pairs))
            pairs.add(len(pairs))
        return made

    async def _challenge_pass(self, challenge: Challenge, room: int) -> list[int]:
        """The challenge's next pair, once its last one is over: one pair in play at a
        time, so that a challenge never crowds its opponent."""
        if room < 1 or not self._online(challenge.bot_id, challenge.opponent_id):
            return []
        made = await self._arena.db.read(functools.partial(
            trials.played, challenge_id=challenge.id, side=challenge.bot_id))
        left = challenge.games - len(made)
        single = left == 1
        if left <= 0 or room < (1 if single else 2) or any(
                game.status != "FINISHED" for game in made):
            return []
        return await self._pair(challenge.bot_id, challenge.opponent_id, single=single,
                                challenge_id=challenge.id)

    def _online(self, *bot_ids: int) -> bool:
        """Whether these bots are online and could each open a game now (a client that
        holds one game at a time may not)."""
        arena = self._arena
        return all(arena.presence.is_online(bot_id)
                   and (bot := arena.presence.bot(bot_id)) is not None
                   and arena.carriers.can_open(bot) for bot_id in bot_ids)

    async def _pair(self, first: int, second: int, *, single: bool,
                    challenge_id: int | None = None,
                    duel_id: int | None = None) -> list[int]:
        arena = self._arena
        bot = arena.presence.bot(first)
        if bot is None:
            return []
        settings = arena.new_game_settings(bot.game)
        seed = secrets.randbits(63)
        return await arena.db.transaction(lambda conn: trials.add_pair(
            conn, bot.game, seed, first, second, settings, single=single,
            challenge_id=challenge_id, duel_id=duel_id))

    async def _end_duel(self, duel: Duel, status: str, result: str | None,
                        counts: list[int], why: str = "") -> None:
        outcome = {"H1": "the candidate is stronger (H1)",
                   "H0": "the candidate is not stronger (H0)"}.get(result or "", "undecided")
        line = (f"Duel {duel.id} {status.lower()}: {outcome} after {sum(counts)} pairs "
                f"(pentanomial {counts}){': ' + why if why else ''}")

        def end(conn: Connection) -> None:
            if trials.end_duel(conn, duel.id, status, result, counts):
                for bot_id in (duel.candidate_id, duel.baseline_id):
                    logs.add(conn, bot_id, line)

        await self._arena.db.transaction(end)

    # -- owners' requests ------------------------------------------------------------------

    async def challenge(self, user_id: int, body: JSONObject) -> int:
        """Store a challenge from ``body`` (``bot``, ``version``, ``opponent``, ``games``)
        by the owner ``user_id``; its id.

        :raises TrialError: saying what is wrong.
        """
        name, version = _text(body, "bot"), _optional_text(body, "version")
        opponent_name = _text(body, "opponent")
        count = body.get("games", 2)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_GAMES:
            raise TrialError(400, f'"games" must be a whole number from 1 to {MAX_GAMES}')
        config = self._arena.config.scheduling
        since = stamp_at(time.time() - 3600)

        def create(conn: Connection) -> int:
            bot = _own_version(conn, user_id, name, version)
            opponent = _current(conn, opponent_name)
            if opponent is None:
                raise TrialError(404, f'no bot "{opponent_name}" is in play')
            if opponent.name == bot.name:
                raise TrialError(400, "a bot cannot challenge its own name: duel its "
                                      "versions instead (POST /api/duels)")
            if opponent.game != bot.game:
                raise TrialError(400, f'"{opponent.name}" plays {opponent.game}, not {bot.game}')
            if not self._arena.presence.is_online(opponent.id):
                raise TrialError(409, f'"{opponent.name}" is offline; challenge a bot that is '
                                      "online")
            _two_seats(bot.game)
            asked = trials.challenges_since(conn, user_id, since)
            if asked >= config.max_challenges_per_owner:
                raise TrialError(429, f"you asked for {asked} challenges in the last hour, as "
                                      "many as an owner may; try again later")
            challenge_id = trials.create_challenge(conn, user_id, bot.id, opponent.id, count)
            logs.add(conn, bot.id, f"Challenge {challenge_id}: {count} unrated games against "
                                   f"{opponent.name}")
            logs.add(conn, opponent.id, f"Challenge {challenge_id}: {count} unrated games "
                                        f"against {bot.name} (version {bot.version})")
            return challenge_id

        return await self._arena.db.transaction(create)

    async def duel(self, user_id: int, body: JSONObject) -> int:
        """Store a duel from ``body`` (``bot``, ``candidate``, ``baseline``, ``elo0``,
        ``elo1``, ``alpha``, ``beta``, ``max_pairs``) by the owner ``user_id``; its id.

        :raises TrialError: saying what is wrong.
        """
        name, candidate_version = _text(body, "bot"), _text(body, "candidate")
        baseline_version = _optional_text(body, "baseline")
        defaults = DuelTerms()
        terms = DuelTerms(_number(body, "elo0", defaults.elo0),
                          _number(body, "elo1", defaults.elo1),
                          _number(body, "alpha", defaults.alpha),
                          _number(body, "beta", defaults.beta),
                          int(_number(body, "max_pairs", defaults.max_pairs, whole=True)))
        if not terms.elo0 < terms.elo1:
            raise TrialError(400, '"elo0" must be below "elo1"')
        if max(abs(terms.elo0), abs(terms.elo1)) > 1000:
            raise TrialError(400, '"elo0" and "elo1" must be within 1000 Elo of 0')
        if not (0 < terms.alpha < 0.5 and 0 < terms.beta < 0.5):
            raise TrialError(400, '"alpha" and "beta" must be between 0 and 0.5')
        if not 1 <= terms.max_pairs <= MAX_PAIRS:
            raise TrialError(400, f'"max_pairs" must be from 1 to {MAX_PAIRS}')

        def create(conn: Connection) -> int:
            candidate = _own_version(conn, user_id, name, candidate_version)
            baseline = _own_version(conn, user_id, name, baseline_version)
            if not candidate.candidate:
                raise TrialError(400, f'version {candidate.version} of "{name}" is not a '
                                      'candidate (register it with "candidate": true)')
            if baseline.id == candidate.id:
                raise TrialError(400, "the candidate and the baseline are one version")
            if baseline.game != candidate.game:
                raise TrialError(400, f'version {candidate.version} of "{name}" plays '
                                      f"{candidate.game}, its baseline {baseline.version} "
                                      f"{baseline.game}: a duel is of one game")
            _two_seats(candidate.game)
            running = trials.running_duels(conn)
            if any(d.candidate_id == candidate.id or d.baseline_id == candidate.id
                   for d in running):
                raise TrialError(409, f'version {candidate.version} of "{name}" is in a '
                                      "running duel already; stop it first")
            if sum(d.user_id == user_id for d in running) >= DUELS_PER_OWNER:
                raise TrialError(429, f"you have {DUELS_PER_OWNER} duels running, as many as "
                                      "an owner may; stop one or wait for it to end")
            duel_id = trials.create_duel(conn, user_id, candidate.id, baseline.id, terms)
            line = (f"Duel {duel_id}: version {candidate.version} against {baseline.version}, "
                    f"H0 {terms.elo0:g} Elo, H1 {terms.elo1:g} Elo")
            for bot in (candidate, baseline):
                logs.add(conn, bot.id, line)
            return duel_id

        return await self._arena.db.transaction(create)

    async def stop_duel(self, user_id: int, duel_id: int) -> None:
        """The owner stops a running duel.

        :raises TrialError: not theirs, unknown, or not running.
        """
        duel = await self._owned_duel(user_id, duel_id)
        if duel.status != "RUNNING":
            raise TrialError(409, f"duel {duel_id} is {duel.status.lower()} already")
        await self._stop(duel, "stopped by its owner")

    async def _stop(self, duel: Duel, why: str) -> None:
        """End a running duel undecided, on the pairs played so far."""
        played = await self._arena.db.read(functools.partial(
            trials.played, duel_id=duel.id, side=duel.candidate_id))
        await self._end_duel(duel, "STOPPED", None, trials.pentanomial(played), why)

    async def promote(self, user_id: int, duel_id: int) -> Bot:
        """The duel's candidate becomes the current version of its name (the duel stops
        if it runs); the version as made current.

        :raises TrialError: not theirs, unknown, or the candidate is not in play.
        """
        duel = await self._owned_duel(user_id, duel_id)
        candidate = await bots.get(self._arena.db, duel.candidate_id)
        if candidate is None or candidate.status is BotStatus.DISABLED:
            raise TrialError(409, f"the candidate version {candidate.version if candidate else ''}"
                                  " is disabled")
        if not candidate.candidate:
            raise TrialError(409, f"version {candidate.version} is current already")
        if duel.status == "RUNNING":
            await self._stop(duel, "its candidate was made current")
        try:
            return await self._registrar.make_current(candidate)
        except RegistrationError as exc:
            raise TrialError(409, exc.message) from None

    async def _owned_duel(self, user_id: int, duel_id: int) -> Duel:
        duel = await self._arena.db.read(lambda conn: trials.duel(conn, duel_id))
        if duel is None:
            raise TrialError(404, f"no duel {duel_id}")
        if duel.user_id != user_id:
            raise TrialError(403, f"duel {duel_id} is another owner's")
        return duel

    # -- what the API and the pages show ---------------------------------------------------

    async def challenge_view(self, challenge_id: int) -> JSONObject | None:
        """A challenge as ``GET /api/challenges/N`` shows it."""
        def read(conn: Connection) -> JSONObject | None:
            challenge = trials.challenge(conn, challenge_id)
            if challenge is None:
                return None
            games = trials.played(conn, challenge_id=challenge_id, side=challenge.bot_id)
            found = {b.id: b for b in (bots.by_id(conn, challenge.bot_id),
                                        bots.by_id(conn, challenge.opponent_id)) if b}
            return _challenge_view(challenge, games, found)

        return await self._arena.db.read(read)

    async def duel_view(self, duel_id: int) -> JSONObject | None:
        """A duel as ``GET /api/duels/N`` shows it, with the LLR after each pair."""
        def read(conn: Connection) -> tuple[Duel, list[PlayedGame], dict[int, Bot]] | None:
            duel = trials.duel(conn, duel_id)
            if duel is None:
                return None
            games = trials.played(conn, duel_id=duel_id, side=duel.candidate_id)
            found = {b.id: b for b in (bots.by_id(conn, duel.candidate_id),
                                        bots.by_id(conn, duel.baseline_id)) if b}
            return duel, games, found

        got = await self._arena.db.read(read)
        if got is None:
            return None
        duel, games, found = got
        return await asyncio.to_thread(_duel_view, duel, games, found)


def _challenge_view(challenge: Challenge, games: list[PlayedGame],
                    found: dict[int, Bot]) -> JSONObject:
    made, tally = len(games), Tally.of(games)
    finished = sum(game.status == "FINISHED" for game in games)
    # A bot that left play (a newer version, disabled) ends the challenge short.
    gone = any(bot_id not in found or found[bot_id].status in (
        BotStatus.SUPERSEDED, BotStatus.DISABLED)
        for bot_id in (challenge.bot_id, challenge.opponent_id))
    status = ("finished" if (made == challenge.games or gone) and finished == made else
              "pending" if not any(game.status != "PENDING" for game in games) else "running")
    bot, opponent = found.get(challenge.bot_id), found.get(challenge.opponent_id)
    return {"id": challenge.id, "status": status,
            "bot": bot.name if bot else None, "version": bot.version if bot else None,
            "opponent": opponent.name if opponent else None, "asked": challenge.games,
            "games": [game.game_id for game in games], "wins": tally.wins,
            "draws": tally.draws, "losses": tally.losses, "created_at": challenge.created_at}


def _duel_view(duel: Duel, games: list[PlayedGame], found: dict[int, Bot]) -> JSONObject:
    terms = duel.terms
    # An ended duel shows what it was decided on (games in play then finish unheeded).
    counts = duel.decided if duel.decided is not None else trials.pentanomial(games)
    verdict = sprt.sprt(counts, terms.elo0, terms.elo1, terms.alpha, terms.beta)
    tally = Tally.of(games)
    candidate, baseline = found.get(duel.candidate_id), found.get(duel.baseline_id)
    history = _llr_history(games, sum(counts), terms)
    return {
        "id": duel.id, "status": duel.status.lower(), "result": duel.result,
        "bot": candidate.name if candidate else None,
        "candidate": candidate.version if candidate else None,
        "baseline": baseline.version if baseline else None,
        "elo0": terms.elo0, "elo1": terms.elo1, "alpha": terms.alpha, "beta": terms.beta,
        "max_pairs": terms.max_pairs, "pairs": sum(counts), "wins": tally.wins,
        "draws": tally.draws, "losses": tally.losses, "pentanomial": list[JSON](counts),
        "llr": round(verdict.llr, 4), "bounds": [round(verdict.lower, 4), round(verdict.upper, 4)],
        "elo": round(verdict.estimate.elo, 2),
        "elo_ci95": [round(verdict.estimate.low, 2), round(verdict.estimate.high, 2)],
        "llr_history": list[JSON](history),
        "games": [{"game_id": game.game_id, "pair": game.pair, "status": game.status.lower(),
                   "points": game.points} for game in games],
        "created_at": duel.created_at, "finished_at": duel.finished_at,
    }


HISTORY_POINTS = 200
"""LLRs a duel's history gives at most (evenly spaced over its pairs): each costs tens of
microseconds, and a duel may play thousands of pairs."""


def _llr_history(games: list[PlayedGame], pairs: int, terms: DuelTerms) -> list[float]:
    """The LLR after each of the first ``pairs`` complete pairs, in the order of their
    numbers: at most :data:`HISTORY_POINTS` of them, evenly spaced, the last always."""
    scores = trials.pair_scores(games)[:pairs]
    step = max(1, -(-len(scores) // HISTORY_POINTS))
    history: list[float] = []
    running = [0] * 5
    for count, score in enumerate(scores, start=1):
        running[score] += 1
        if count % step == 0 or count == len(scores):
            history.append(round(sprt.llr(running, terms.elo0, terms.elo1), 4))
    return history


def _own_version(conn: Connection, user_id: int, name: str, version: str | None) -> Bot:
    """The owner's version ``version`` of ``name`` (its current one when None), in play."""
    versions = bots.by_name(conn, name)
    if not versions or versions[0].user_id != user_id:
        raise TrialError(404, f'you have no bot "{name}"')
    live = [bot for bot in versions if bot.status in (BotStatus.ONLINE, BotStatus.OFFLINE)]
    if version is None:
        current = [bot for bot in live if not bot.candidate]
        if not current:
            raise TrialError(409, f'"{name}" has no current version in play')
        return current[-1]
    found = next((bot for bot in versions if bot.version == version), None)
    if found is None:
        raise TrialError(404, f'"{name}" has no version "{version}"')
    if found not in live:
        raise TrialError(409, f'version {version} of "{name}" is {found.status.value.lower()}')
    return found


def _current(conn: Connection, name: str) -> Bot | None:
    """The current version of ``name`` in play (no candidate, no guest), if any."""
    return next((bot for bot in reversed(bots.by_name(conn, name))
                 if bot.status in (BotStatus.ONLINE, BotStatus.OFFLINE) and not bot.candidate
                 and bot.protocol is not BotProtocol.GUEST), None)


def _two_seats(mnemonic: str) -> None:
    game = REGISTRY.get(mnemonic)
    if game is not None and game.min_seats > 2:
        raise TrialError(400, f"{mnemonic} needs {game.min_seats} seats; challenges and duels "
                              "are played at two")


def _text(body: JSONObject, key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value.strip():
        raise TrialError(400, f'"{key}" must be a non-empty string')
    return value.strip()


def _optional_text(body: JSONObject, key: str) -> str | None:
    return None if body.get(key) is None else _text(body, key)


def _number(body: JSONObject, key: str, default: float, *, whole: bool = False) -> float:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            whole and not isinstance(value, int)):
        kind = "a whole number" if whole else "a number"
        raise TrialError(400, f'"{key}" must be {kind}')
    return float(value)

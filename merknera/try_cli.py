"""``merknera try URL --game G``: a bot played before it counts, on a private platform
inside the command.

The platform is the real one (:class:`~merknera.app.Platform`, its runner, time limits,
strikes and forfeits) on a SQLite file in a temporary directory that is deleted when the
command ends, listening on loopback only.  The command creates its own users (no token is
asked for), registers the bot tried and its opponents through the
:class:`~merknera.scheduler.registration.Registrar` (the same checks as
``RegistrationService.Register``), pings the bot, and schedules the games itself, unrated:
``--games`` of them (by default two against each opponent, one in each seat, as the
registration's round robin), their seeds drawn from ``--seed``, so that the same seed deals
the same games.  The opponents are the game's reference bots
(:mod:`merknera.reference_bots`) or the bots at ``--against``.

It prints a line per call to the bot tried as the call is made (watched through the
carriers: :meth:`~merknera.seats.Carriers.watch`; a move's line once the referee's verdict
is in the move log: :class:`~merknera.events.MovePlayed`), a line per game, and a summary;
the exit status is 0 only if the bot made no fault that the platform counts against a bot.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import secrets
import signal
import sys
import tempfile
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from merknera.app import Platform
from merknera.botclient import CallResult
from merknera.config import Config
from merknera.events import Event, GameFinished, MovePlayed
from merknera.games import JSON, REGISTRY, SeatResult, Termination, UnknownGameError, get_game
from merknera.protocol import strict_json
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.excerpt import excerpt
from merknera.protocol.faults import FaultKind
from merknera.reference_bots import LOOPBACK, REFERENCE_BOTS, ReferenceBots
from merknera.scheduler.play import STRIKE_FAULTS
from merknera.scheduler.registration import RegistrationError, RegistrationRequest
from merknera.seats import CallMade
from merknera.server import running
from merknera.store import games, users
from merknera.store.bots import Bot

log = logging.getLogger(__name__)

TRIED_NAME = "your-bot"
"""The name the bot tried plays under."""
VERSION = "try"
"""The version every bot of a try is registered as."""
OFFLINE_GRACE = 2.0
"""Seconds a game waits for a bot that went offline before it forfeits, at most (the
platform waits minutes, for a bot that is restarted; a try need not)."""
EVERYWHERE = ("0.0.0.0/0", "::/0")
"""The networks the private platform calls: any URL may be tried."""

_FORFEITED_BY = {Termination.TIMEOUT: FaultKind.TIMEOUT,
                 Termination.UNREACHABLE: FaultKind.UNREACHABLE,
                 Termination.NOT_READY: FaultKind.NOT_READY}
"""The fault behind a forfeit that no row of the move log names (a seat absent when the
game was to begin)."""


class UsageError(Exception):
    """A try that cannot be made as asked (exit status 2)."""


@dataclass(frozen=True)
class TryRequest:
    """What the command line asks for."""

    url: str
    game: str
    games: int | None = None
    """How many games; None: two against each opponent."""
    seed: int | None = None
    """The seed the games' seeds are drawn from; None: a new one (printed)."""
    protocol: BotProtocol = BotProtocol.JSONRPC
    against: tuple[str, ...] = ()
    """Opponents' URLs (called in ``protocol``); none: the game's reference bots."""
    json: bool = False


def private_config(config: Config, directory: Path) -> Config:
    """The configuration of the private platform: ``config``'s rules of play and limits of
    calls, on a store in ``directory``, listening on loopback at a free port and calling
    any address; no gateway, no ladder, and no fault rule (every game asked for is
    played: one fault fails the try already)."""
    return config.replace(
        db=str(directory / "try.db"), host=LOOPBACK, port=0, public_url="", tls_cert="",
        tls_key="", trusted_proxies=(), battlebot_port=0, battlebot_tls_cert="",
        battlebot_tls_key="", hexagons_port=0, kalaha_port=0, ladder=False, fault_share=0,
        allowed_networks=EVERYWHERE, admin_token="", log_access=False,
        offline_grace=min(config.liveness.offline_grace, OFFLINE_GRACE),
        registration_burst=max(config.accounts.registration_burst, 100))


def game_seeds(seed: int, count: int) -> list[int]:
    """The seeds of a try's games: drawn from ``seed``, the same for the same seed."""
    draw = random.Random(seed)
    return [draw.getrandbits(63) for _ in range(count)]


def seatings(tried: int, opponents: Sequence[int], count: int) -> list[tuple[int, int]]:
    """The seats of a try's games: two against each opponent in turn, the opponent
    first in the first of them (as the registration's round robin seats a newcomer)."""
    return [(opponent, tried) if index % 2 == 0 else (tried, opponent)
            for index in range(count)
            for opponent in [opponents[index // 2 % len(opponents)]]]


@dataclass(frozen=True)
class Planned:
    """A game of the try: its seed, the bot's seat and its opponent."""

    seed: int
    seat: int
    opponent: str


@dataclass
class _Line:
    """One call to the bot tried, and what came of it."""

    game: int | None
    method: str | None
    """None for a fault without a call (a seat not ready, gone before its move)."""
    result: CallResult | None
    fault: tuple[FaultKind, str] | None = None
    heeded: bool = True
    """Whether the platform reads the reply (see :attr:`CallMade.heeded`)."""
    counted: bool = False
    """Whether the platform counts the fault against the bot."""
    penalty: str | None = None
    """What a counted fault cost: ``"strike 1 of 3"``, ``"forfeit"``."""
    ready: bool = True
    """False for a move's call until its verdict is in."""


@dataclass
class _GameLines:
    """A game's lines in the order of its calls: a move's line waits for its verdict, and
    the lines after it wait for it."""

    lines: deque[_Line] = field(default_factory=deque)
    moves: deque[_Line] = field(default_factory=deque)
    """The move calls whose verdicts have not come, oldest first."""


class Transcript:
    """What a try prints, as it happens: a line per call to the bot tried, then a line per
    game and the summary; and the faults it counts."""

    def __init__(self, out: TextIO, *, as_json: bool, max_strikes: int,
                 move_call: str) -> None:
        self._out = out
        self._json = as_json
        self._max_strikes = max_strikes
        self._move_call = move_call
        self.tried: int | None = None
        """The id of the bot tried, once it is registered."""
        self.planned: dict[int, Planned] = {}
        """The games, by id, once they are scheduled."""
        self.finished: dict[int, GameFinished] = {}
        self.faults: Counter[FaultKind] = Counter()
        """The faults counted, by kind."""
        self._faults_in: Counter[int] = Counter()
        self._strikes: Counter[int] = Counter()
        self._games: dict[int | None, _GameLines] = {}
        self._closed = False

    # -- what the platform shows ----------------------------------------------------------

    def call_made(self, made: CallMade) -> None:
        """A call through the carriers (:meth:`~merknera.seats.Carriers.watch`)."""
        if made.bot.id != self.tried:
            return
        try:
            line = _Line(made.game_id, made.method, made.result, heeded=made.heeded)
            if made.call == self._move_call:
                line.ready = False
                self._lines(made.game_id).moves.append(line)
            elif made.result.fault is not None:
                line.fault = (made.result.fault.kind, made.result.fault.message)
            self._add(line)
        except Exception:  # the game must go on: this runs on its path
            log.exception("merknera try could not show a call")

    def event(self, event: Event) -> None:
        """An event of the platform's (:meth:`~merknera.events.EventBus.watch`)."""
        try:
            if isinstance(event, GameFinished) and event.game_id in self.planned:
                self.finished[event.game_id] = event
            elif isinstance(event, MovePlayed):
                self._move_played(event)
        except Exception:
            log.exception("merknera try could not show a move")

    def _move_played(self, event: MovePlayed) -> None:
        planned = self.planned.get(event.game_id)
        if planned is None or event.seat != planned.seat:
            return
        waiting = self._lines(event.game_id).moves
        if event.latency is None or not waiting:
            line = _Line(event.game_id, None, None)  # no call: not ready, or gone
        else:
            line = waiting.popleft()
            line.ready = True
        if event.fault is not None:
            self._faults_in[event.game_id] += 1
            if event.fault in STRIKE_FAULTS:
                self._strikes[event.game_id] += 1
                strikes = self._strikes[event.game_id]
                line.penalty = f"strike {strikes} of {self._max_strikes}" + (
                    ": forfeit" if strikes >= self._max_strikes else "")
            else:
                line.penalty = "forfeit"
            line.fault = (event.fault, event.detail or "")
            line.counted = True
            self.faults[event.fault] += 1
        if line.method is None:
            self._add(line)
        else:
            self._flush(event.game_id)

    def checked(self, method: str, result: CallResult) -> None:
        """The try's own ping of the bot, before its games: one that fails is a fault
        (the platform's pinger would take the bot for offline, and give it no games)."""
        line = _Line(None, method, result)
        if result.fault is not None:
            line.fault = (result.fault.kind, result.fault.message)
            line.counted = True
            self.faults[result.fault.kind] += 1
        self._add(line)

    def _lines(self, game_id: int | None) -> _GameLines:
        return self._games.setdefault(game_id, _GameLines())

    def _add(self, line: _Line) -> None:
        self._lines(line.game).lines.append(line)
        self._flush(line.game)

    def _flush(self, game_id: int | None) -> None:
        lines = self._lines(game_id).lines
        while lines and lines[0].ready:
            self._print_call(lines.popleft())

    # -- the end --------------------------------------------------------------------------

    def finish(self, seed: int) -> int:
        """Print what is left: the calls whose verdicts never came (their games ended
        elsewhere), a line per game, the summary; returns the exit status."""
        for game_id, pending in self._games.items():
            for line in pending.lines:
                line.ready = True
            self._flush(game_id)
        results: Counter[SeatResult] = Counter()
        for game_id, planned in sorted(self.planned.items()):
            finished = self.finished.get(game_id)
            result = SeatResult.NONE if finished is None else finished.results[planned.seat]
            results[result] += 1
            if (finished is not None and self.tried in finished.at_fault
                    and not self._faults_in[game_id]):
                # It forfeited without a call at fault (it was gone when the game began).
                kind = _FORFEITED_BY.get(finished.termination, FaultKind.UNREACHABLE)
                self.faults[kind] += 1
                self._faults_in[game_id] += 1
            self._print_game(game_id, planned, finished, result)
        self._print_summary(seed, results)
        return 1 if self.faults else 0

    # -- printing -------------------------------------------------------------------------

    def _print(self, text: str) -> None:
        if self._closed:
            return
        try:
            print(text, file=self._out, flush=True)
        except BrokenPipeError:  # the reader went away (| head): the games go on
            self._closed = True

    def _print_call(self, line: _Line) -> None:
        result = line.result
        latency = None if result is None else round(result.latency * 1000, 3)
        fault = line.fault
        if fault is None and result is not None and result.fault is not None:
            fault = (result.fault.kind, result.fault.message)  # a verdict that never came
        # The result the platform read; else the body as it came (a reply the platform
        # does not read: a ping's, a Complete's; or a faulty one).
        reply = None if result is None or result.fault is not None else result.result
        body = None if result is None or result.reply is None or reply is not None else (
            excerpt(result.reply.decode("utf-8", errors="replace")))
        if self._json:
            shown: dict[str, JSON] = {"kind": "call", "game": line.game, "call": line.method,
                                      "latency_ms": latency}
            if reply is not None:
                shown["reply"] = reply
            if body is not None:
                shown["body"] = body
            if fault is not None:
                shown["fault"] = {"kind": fault[0].value, "message": fault[1],
                                  "counted": line.counted, "penalty": line.penalty}
            self._print(json.dumps(shown, ensure_ascii=False))
            return
        where = "ping" if line.game is None else f"game {line.game}"
        took = "-" if latency is None else f"{latency:.1f} ms"
        if fault is not None:
            kind, message = fault
            if line.counted:
                then = f" ({line.penalty})" if line.penalty else ""
            else:  # its consequences are counted, if any (a game it could not begin)
                then = " (no strike by itself)" if line.heeded else (
                    " (the platform ignores this reply)")
            said = f"{kind.value}{then}: {message}"
        elif reply is not None:
            said = excerpt(strict_json.dumps(reply).decode())
        else:
            said = body or "(no body)"
        self._print(f"{where:<10} {line.method or '(no call)':<28} {took:>10}  {said}")

    def _print_game(self, game_id: int, planned: Planned, finished: GameFinished | None,
                    result: SeatResult) -> None:
        outcome = None if finished is None else _outcome(finished.results)
        reason = None if finished is None else finished.termination.value
        detail = None if finished is None else finished.detail
        if self._json:
            self._print(json.dumps({
                "kind": "game", "game": game_id, "seed": planned.seed, "seat": planned.seat,
                "opponent": planned.opponent, "outcome": outcome, "reason": reason,
                "detail": detail, "result": result.value,
                "faults": self._faults_in[game_id]}, ensure_ascii=False))
            return
        self._print(f"game {game_id}: {TRIED_NAME} in seat {planned.seat} against "
                    f"{planned.opponent}, seed {planned.seed}: {result.value} "
                    f"({reason or 'unfinished'}: {detail or '-'})")

    def _print_summary(self, seed: int, results: Counter[SeatResult]) -> None:
        faults = {kind.value: count for kind, count in sorted(
            self.faults.items(), key=lambda item: item[0].value)}
        if self._json:
            self._print(json.dumps({
                "kind": "summary", "games": len(self.planned), "seed": seed,
                "wins": results[SeatResult.WIN], "draws": results[SeatResult.DRAW],
                "losses": results[SeatResult.LOSS], "no_result": results[SeatResult.NONE],
                "faults": faults}))
            return
        self._print(f"{len(self.planned)} games (seed {seed}; --seed {seed} deals them "
                    f"again): {results[SeatResult.WIN]} won, {results[SeatResult.DRAW]} "
                    f"drawn, {results[SeatResult.LOSS]} lost, {results[SeatResult.NONE]} "
                    "without a result")
        if faults:
            listed = ", ".join(f"{count} {kind}" for kind, count in faults.items())
            self._print(f"faults: {listed}: the platform would count them against the bot")
        else:
            self._print("faults: none")


def _outcome(results: Sequence[SeatResult]) -> str:
    """A game's outcome as the API names it: WIN, DRAW or NO_RESULT."""
    if SeatResult.WIN in results:
        return "WIN"
    return "DRAW" if SeatResult.DRAW in results else "NO_RESULT"


# -- the try ------------------------------------------------------------------------------


async def run_command(config: Config, request: TryRequest) -> int:
    """:func:`run_try` for the command line: SIGINT or SIGTERM stops it, the private
    platform and its files gone (exit status 128 + the signal's number)."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    caught: list[int] = []

    def stop(signum: int) -> None:
        caught.append(signum)
        task.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop, signum)
    try:
        return await run_try(config, request)
    except asyncio.CancelledError:
        if not caught:
            raise
        print(f"merknera try: stopped by {signal.Signals(caught[0]).name}", file=sys.stderr)
        return 128 + caught[0]
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


async def run_try(config: Config, request: TryRequest, out: TextIO = sys.stdout) -> int:
    """Play the try; the exit status: 0 if the bot made no fault, 1 if it did, 2 if the
    try could not be made (a usage error, a URL refused or not reachable)."""
    try:
        return await _try(config, request, out)
    except UsageError as exc:
        print(f"merknera try: {exc}", file=sys.stderr)
        return 2


async def _try(config: Config, request: TryRequest, out: TextIO) -> int:
    try:
        mnemonic = get_game(request.game).mnemonic
    except UnknownGameError:
        known = ", ".join(sorted(REGISTRY))
        raise UsageError(f"no game {request.game!r} is hosted (the games: {known})") from None
    references = () if request.against else REFERENCE_BOTS.get(mnemonic, ())
    if not request.against and not references:
        raise UsageError(f"{mnemonic} has no reference bots: name an opponent with "
                         "--against URL")
    seed = secrets.randbelow(2**31) if request.seed is None else request.seed
    count = request.games or 2 * max(len(request.against), len(references))
    async with contextlib.AsyncExitStack() as stack:
        # Left in the reverse order: the games, the reference bots, the platform, its files.
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(
            prefix="merknera-try-")))
        live, platform = await stack.enter_async_context(
            running(private_config(config, directory)))
        transcript = Transcript(out, as_json=request.json,
                                max_strikes=live.rules_for(mnemonic).max_strikes,
                                move_call=platform.games[mnemonic].calls.move)
        platform.scheduler.arena.carriers.watch(transcript.call_made)
        platform.events.watch(transcript.event)
        _, author = await users.create_user(platform.db, "author", "merknera try")
        tried = await _register(platform, author, TRIED_NAME, mnemonic, request.url,
                                request.protocol)
        transcript.tried = tried.id
        await _reachable(platform, tried, request.url, transcript)
        if request.against:
            opponents = [await _against(platform, author, f"against-{index}", mnemonic, url,
                                        request.protocol)
                         for index, url in enumerate(request.against, 1)]
        else:
            _, owner = await users.create_user(platform.db, "reference", "merknera try")
            assets = platform.assets
            files = {asset.sha1: assets.contents(mnemonic)[role]
                     for role, asset in assets.roles(mnemonic).items()}
            bots = ReferenceBots(references, seed=seed, platform_url=live.listeners.base_url,
                                 token=owner, cache=directory / "bot-cache", files=files)
            stack.push_async_callback(bots.stop)
            opponents = [await _register(platform, owner, reference.name, mnemonic, endpoint,
                                         BotProtocol.JSONRPC)
                         for reference, endpoint in zip(references, await bots.start(),
                                                        strict=True)]
        stack.push_async_callback(platform.scheduler.stop)  # a stop midway: games first
        await _play(platform, transcript, tried, opponents, seed, count)
        return transcript.finish(seed)


async def _play(platform: Platform, transcript: Transcript, tried: Bot,
                opponents: Sequence[Bot], seed: int, count: int) -> None:
    """Schedule the games (unrated), play them to their ends and deliver their last calls."""
    names = {bot.id: bot.name for bot in opponents}
    planned = list(zip(game_seeds(seed, count), seatings(tried.id, list(names), count),
                       strict=True))
    settings = platform.scheduler.arena.new_game_settings(tried.game)
    ids = await platform.db.transaction(lambda conn: games.create_many(
        conn, tried.game, planned, settings, rated=False))
    for game_id, (game_seed, seated) in zip(ids, planned, strict=True):
        other = next(bot_id for bot_id in seated if bot_id != tried.id)
        transcript.planned[game_id] = Planned(game_seed, seated.index(tried.id), names[other])
    platform.scheduler.submit(ids)
    await platform.scheduler.wait_idle()
    await platform.scheduler.arena.notifier.drain()


async def _against(platform: Platform, token: str, name: str, mnemonic: str, url: str,
                   protocol: BotProtocol) -> Bot:
    """An opponent of ``--against``, registered and reached.

    :raises UsageError: if it is refused or cannot be reached.
    """
    bot = await _register(platform, token, name, mnemonic, url, protocol)
    await _reachable(platform, bot, url)
    return bot


async def _register(platform: Platform, token: str, name: str, mnemonic: str, url: str,
                    protocol: BotProtocol) -> Bot:
    """Register a bot as ``RegistrationService.Register`` would, without its round robin.

    :raises UsageError: with the platform's reason for a refusal.
    """
    params: dict[str, JSON] = {"token": token, "botname": name, "botversion": VERSION,
                               "game": mnemonic, "rpcendpoint": url,
                               "protocol": protocol.value}
    try:
        request = RegistrationRequest.from_params(params)
        enrolment = await platform.registrar.enrol(request, round_robin=False)
    except RegistrationError as exc:
        raise UsageError(f"{url} cannot play {mnemonic} here: {exc.message}") from None
    return enrolment.bot


async def _reachable(platform: Platform, bot: Bot, url: str,
                     transcript: Transcript | None = None) -> None:
    """Ping a bot as the platform does (shown in ``transcript``, if given).

    :raises UsageError: if the bot cannot be reached at all.
    """
    # The carrier's own ping: not the presence's, so that a bot that fails it still plays
    # its games (and the transcript shows them); not one the carriers' watchers see.
    carrier = platform.scheduler.arena.carriers.of(bot)
    pinged = await carrier.ping(bot)
    if transcript is not None:
        transcript.checked(carrier.ping_name, pinged)
    if pinged.fault is not None and pinged.fault.kind is FaultKind.UNREACHABLE:
        raise UsageError(f"cannot reach {url}: {pinged.fault.message}")


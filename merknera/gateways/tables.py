"""Games the gateways start for polling clients (hexagons players, Kalaha boards, people in
the browser): made in the store, their polled seats held, their runners started, and kept
findable by the handle their clients know them by.

Every such game is a platform game (stored, replayable on ``/games/<id>``, listed, rated
unless a seat is anonymous or two seats are played from one network).  What one client
address may keep open is bounded (``max_open_games_per_client``, ``max_open_games`` in
all: the address holding the most gives up its oldest game, which its polled seats then
lose as players who left).
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from merknera.cache import Cache
from merknera.games import MoveError
from merknera.gateways.guests import (
    Guest,
    GuestSecretError,
    GuestThrottledError,
    guest,
    is_anonymous,
)
from merknera.guard.clients import network_key
from merknera.guard.holdings import FullError, Holdings
from merknera.guard.throttle import AuthThrottle, Buckets, RateLimitedError
from merknera.names import Claim
from merknera.refused import Limit, Refusals, RefusedError
from merknera.scheduler.core import Scheduler
from merknera.scheduler.play import ReplayError, replay
from merknera.seats.polled import PolledHold, PolledHolder
from merknera.store import bots, competition, games, logs
from merknera.store.bots import Bot
from merknera.store.db import Connection, StoreUnavailableError
from merknera.store.games import GameRecord, GameStatus
from merknera.tasks import TaskSet
from merknera.work import UNLIMITED, Deadline, Place, Work

log = logging.getLogger(__name__)

T = TypeVar("T")

RECENT_SECONDS = 600.0
"""How long a game that ended stays in memory for its clients' last requests (after that
its handle is looked up in the store)."""
RECENT_GAMES = 2000
"""Ended games kept in memory at most."""
INLINE_MOVES = 64
"""Moves few enough to replay on the event loop itself (a Kalaha game's, a person's
tic-tac-toe game's); a longer game is rebuilt by a worker."""
STORED_KEPT = 64
"""Finished games rebuilt from the store that are kept, the most recently asked for
(a finished game never changes, and a long one takes a while to rebuild)."""


@dataclass(eq=False)
class Table:
    """A game started for polling clients."""

    game_id: int
    mnemonic: str
    handle: str
    bots: tuple[Bot, ...]
    """The seated bots, in seat order."""
    polled: dict[int, PolledHold]
    """The seats held by the clients, by seat."""
    data: dict[str, Any] = field(default_factory=dict)
    """What the gateway keeps with the game (a hexagons game's disqualified players)."""

    @property
    def ended(self) -> bool:
        return all(seat.ended for seat in self.polled.values())

    def any_seat(self) -> PolledHold:
        """A polled seat (each is shown every state)."""
        return next(iter(self.polled.values()))


@dataclass(frozen=True)
class Stored:
    """A game of a gateway rebuilt from the store."""

    record: GameRecord
    state: object
    """The game's state now (the rules' state object)."""
    bots: tuple[Bot, ...]
    """The seated bots, in seat order."""
    shown: dict[Callable[[Stored], Any], Any] = field(default_factory=dict, compare=False)
    """What :meth:`Tables.shown` made of it, by who made it."""


class Tables:
    """The games the gateways started for polling clients, by handle."""

    def __init__(self, scheduler: Scheduler, holder: PolledHolder, work: Work,
                 auth: AuthThrottle, refusals: Refusals) -> None:
        self._scheduler = scheduler
        self._auth = auth
        self._refusals = refusals
        self._work = work
        self._kept: Cache[tuple[str, str], Stored] = Cache(STORED_KEPT)
        self._making: dict[Hashable, asyncio.Future[Any]] = {}
        self.rebuilt = 0
        """Stored games rebuilt from their move logs so far (:meth:`replayed`)."""
        self._arena = self.arena = scheduler.arena
        self._holder = holder
        config = self._arena.config
        self._open: Holdings[Table] = Holdings(config.guests.max_open_games,
                                               config.guests.max_open_games_per_client, "games")
        self._tables: dict[tuple[str, str], Table] = {}
        self._new_names = Buckets(config.accounts.registration_burst,
                                  config.accounts.registration_interval)
        self.forgotten: list[Callable[[Table], None]] = []
        """Called with each ended game as it is forgotten (dropped from memory)."""
        self._ended: Cache[tuple[str, str], Table] = Cache(RECENT_GAMES, ttl=RECENT_SECONDS)
        """The games that ended, kept for their clients' last requests."""
        self._background = TaskSet()

    def find(self, mnemonic: str, handle: str) -> Table | None:
        """The game of ``mnemonic`` known as ``handle``, while it is in memory."""
        self._forget_old()
        return self._tables.get((mnemonic, handle))

    async def stored(self, mnemonic: str, handle: str) -> int | None:
        """The platform's id of a game known as ``handle`` (in memory or not)."""
        table = self.find(mnemonic, handle)
        if table is not None:
            return table.game_id
        return await self._arena.db.read(lambda conn: games.by_handle(conn, mnemonic, handle))

    async def guest(self, claim: Claim, game: str, client: str) -> Guest:
        """The guest ``client`` plays ``game`` as (:func:`merknera.gateways.guests.guest`),
        within its address's limits: ``registration_burst`` new names, then one every
        ``registration_interval`` seconds (a user's registrations' limits; here nobody is
        signed in), and a wrong secret counted as a wrong token is (the guard's
        :class:`~merknera.guard.AuthThrottle`: a guesser is slowed down).

        :raises GuestRefusedError: as :func:`~merknera.gateways.guests.guest`;
            :class:`GuestThrottledError` beyond the address's limits.
        """
        def admit() -> None:
            wait = self._new_names.take(client)
            if wait > 0:
                self._refusals.count(Limit.REGISTRATIONS)
                raise GuestThrottledError(
                    "your address has made as many new player names as it may for now; "
                    f"play under one of them, or try again in {math.ceil(wait)} s", wait)

        try:
            async with self._auth.attempt(client):
                try:
                    return await guest(self._arena, claim, game, admit)
                except GuestSecretError:
                    self._auth.failed(client)
                    raise
        except RateLimitedError as exc:
            raise GuestThrottledError(
                "your address has given too many wrong secrets; try again in "
                f"{exc.retry_after_header} s", exc.retry_after) from None

    def room_for(self, client: str) -> None:
        """Check that ``client`` may open another game now (before making its guests).

        :raises RefusedError: 429 when it holds its share already.
        """
        held, share = self._open.held(client), self._open.per_client
        if held >= share:
            self._refusals.count(Limit.OPEN_GAMES_PER_CLIENT)
            raise RefusedError(429, f"your address holds {share} games open already; finish "
                                    "one first", 5.0)

    async def replayed(self, mnemonic: str, handle: str, client: str) -> Stored | None:
        """The stored game of ``mnemonic`` known as ``handle``, its state rebuilt from its
        move log (a game no longer in memory, or from before a restart); None if there is
        none, or it cannot be rebuilt.  A finished game is rebuilt once and kept (the
        latest :data:`STORED_KEPT`); else it is rebuilt once for all who ask for it
        meanwhile (:meth:`_once`): its move log read in a turn of its own, a long one
        rebuilt off the event loop.

        :raises RefusedError: 429 when ``client`` holds its share of places
            (:class:`~merknera.work.Place`), 503 when the platform is making as many such
            answers as it may at once.
        """
        key = (mnemonic, handle)
        kept = self._kept_game(key)
        if kept is not None:
            return kept
        return await self._once(key, client, lambda place: self._rebuilt(key, place))

    async def shown(self, mnemonic: str, handle: str, show: Callable[[Stored], T],
                    client: str) -> T | None:
        """What ``show`` makes of the stored game ``handle`` (:meth:`replayed`; None if
        there is none): made once for all who ask for it meanwhile, off the event loop for
        a long game, and kept with a finished game (an answer that never changes).

        :raises RefusedError: as :meth:`replayed`.
        """
        key = (mnemonic, handle)
        kept = self._kept_game(key)
        if kept is not None and show in kept.shown:
            found: T = kept.shown[show]
            return found

        async def make(place: Place) -> T | None:
            stored = self._kept_game(key) or await self._rebuilt(key, place)
            if stored is None:
                return None
            if len(stored.record.moves) <= INLINE_MOVES:
                made = show(stored)
            else:
                made = await place.run(lambda _: show(stored))
            if stored.record.status is GameStatus.FINISHED:
                stored.shown[show] = made
            return made

        return await self._once((mnemonic, handle, show), client, make)

    async def _once(self, key: Hashable, client: str,
                    make: Callable[[Place], Awaitable[T]]) -> T:
        """``make(place)``'s result, made once for every caller that asks while it is made:
        in the place of the caller that asked first, which it keeps until it is made (even
        should that caller stop waiting); the others wait in places of their own.

        :raises BusyError: (a :class:`~merknera.refused.RefusedError`) when the caller
            may have no place (429, 503), or ``make`` was refused its turns (503).
        """
        place = self._work.place(client)
        found: T
        pending = self._making.get(key)
        if pending is not None:
            async with place:
                found = await asyncio.shield(pending)
            return found

        async def owned() -> T:
            async with place:
                return await make(place)

        pending = self._making[key] = asyncio.ensure_future(owned())
        pending.add_done_callback(lambda done: self._made(key, done))
        found = await asyncio.shield(pending)
        return found

    def _made(self, key: Hashable, done: asyncio.Future[Any]) -> None:
        del self._making[key]
        if not done.cancelled():
            done.exception()  # retrieved: each caller that still waits has it raised

    def _kept_game(self, key: tuple[str, str]) -> Stored | None:
        return self._kept.get(key)

    async def _rebuilt(self, key: tuple[str, str], place: Place) -> Stored | None:
        """:meth:`replayed`'s game, rebuilt in ``place`` (and kept once finished)."""
        arena = self._arena
        game_id = await self.stored(*key)
        if game_id is None:
            return None
        async with place.reading():
            record = await games.load(arena.db, game_id)
        if record is None or record.game not in arena.games:
            return None
        found = await bots.get_many(arena.db, [seat.bot_id for seat in record.seats])
        if any(seat.bot_id not in found for seat in record.seats):  # one bot may hold two
            return None
        seated = [found[seat.bot_id] for seat in record.seats]
        rules = arena.games[record.game], arena.config.rules_for(record.game)

        def rebuild(_: Deadline) -> object:
            # The whole log at once: a game's length is bounded by its rules.
            return replay(record, *rules, seated).state

        try:
            if len(record.moves) <= INLINE_MOVES:
                state = rebuild(UNLIMITED)
            else:
                state = await place.run(rebuild)
        except (ReplayError, MoveError, ValueError):
            log.exception("game %d cannot be replayed", record.id)
            return None
        self.rebuilt += 1
        stored = Stored(record, state, tuple(seated))
        if record.status is GameStatus.FINISHED:
            self._kept.put(key, stored)
        return stored

    async def opponent(self, mnemonic: str, bot_id: int | None = None) -> Bot | None:
        """An online bot of another protocol (one that is called, not a guest nor a
        connected client) that plays ``mnemonic``: ``bot_id`` if given (a person's pick:
        the games it already plays do not matter, as the person's address's own games
        are bounded), else one at random that has room for a game (fewer than
        ``max_games_per_bot``); None if there is none."""
        arena = self._arena
        wanted = [bot_id] if bot_id is not None else arena.presence.online_bots(mnemonic)
        online = [bot for b in wanted if (bot := arena.presence.bot(b)) is not None
                  and bot.game == mnemonic and not bot.protocol.connects
                  and not bot.candidate and arena.presence.is_online(bot.id)]
        if not online:
            return None
        if bot_id is not None:
            return online[0]
        cap = arena.config.scheduling.max_games_per_bot
        ids = [bot.id for bot in online]
        roomy = await arena.db.read(
            lambda conn: [c.bot_id for c in competition.contenders(conn, ids, cap)])
        chosen = [bot for bot in online if bot.id in roomy]
        return secrets.choice(chosen) if chosen else None

    async def start(self, client: str, mnemonic: str, handle: str, seated: Sequence[Bot],
                    polled: Sequence[int], turn_limit: float,
                    settings: dict[str, Any] | None = None,
                    data: dict[str, Any] | None = None,
                    addresses: Sequence[str | None] = ()) -> Table:
        """Make the game, hold its ``polled`` seats for the clients, and start its runner.

        ``addresses``: the client key of the client playing each seat (None for a bot the
        platform calls), by seat.  The game is rated unless a seat is anonymous or two
        seats are played from one network (:func:`merknera.guard.clients.network_key`: an
        IPv4 address, an IPv6 /48), so that a player cannot gain a rating from its own
        second name.

        :raises RefusedError: when ``client`` has its share of games open already,
            or every place is taken, or (503) the store cannot be reached.
        """
        arena = self._arena
        players = [network_key(address) for address in addresses if address is not None]
        rated = (not any(is_anonymous(bot) for bot in seated)
                 and len(set(players)) == len(players))
        stored = {**arena.new_game_settings(mnemonic), **(settings or {})}
        names = [bot.name for bot in seated]
        lease = arena.leases.fresh()  # the node holding the clients plays it

        def create(conn: Connection) -> int:
            game_id = games.create(conn, mnemonic, secrets.randbits(63),
                                   [bot.id for bot in seated], stored, origin="MATCH",
                                   handle=handle, rated=rated, lease=lease)
            for seat, bot in enumerate(seated):
                others = ", ".join(n for s, n in enumerate(names) if s != seat)
                # Not the handle: it lets its holder move (a board's id, a person's token).
                logs.add(conn, bot.id, f"A game against {others} was started at a gateway "
                                       f"(gameId: {game_id}); you are seat {seat}", game_id)
            return game_id

        table = Table(0, mnemonic, handle, tuple(seated), {}, data=data or {})
        try:
            self._open.take(client, table, lambda: self._turn_out(table))
        except RateLimitedError as exc:
            self._refusals.count(Limit.OPEN_GAMES_PER_CLIENT)
            raise RefusedError(429, exc.message, exc.retry_after) from None
        except FullError as exc:
            self._refusals.count(Limit.OPEN_GAMES_FULL)
            raise RefusedError(503, str(exc), 5.0) from None
        try:
            table.game_id = await arena.db.transaction(create)
        except StoreUnavailableError as exc:  # a refusal like the others (its guest told)
            self._open.give_back(table)
            raise RefusedError(503, exc.for_clients, exc.retry_after) from None
        except BaseException:
            self._open.give_back(table)
            raise
        for seat in polled:
            table.polled[seat] = self._holder.hold(table.game_id, seat, seated[seat],
                                                   turn_limit)
        self._tables[(mnemonic, handle)] = table
        self._background.spawn(self._watch(table))
        self._scheduler.submit([table.game_id], people=True)
        return table

    def _turn_out(self, table: Table) -> None:
        """The table's address gave up its place to a newcomer: its clients have left."""
        for seat in table.polled.values():
            seat.left.set()

    async def _watch(self, table: Table) -> None:
        """Give the game's place back when it is over for every polled seat."""
        try:
            while not table.ended:
                seat = next(s for s in table.polled.values() if not s.ended)
                await seat.changed(seat.version, 3600.0)
        finally:
            self._open.give_back(table)
            self._forget(self._ended.put((table.mnemonic, table.handle), table))

    def _forget_old(self) -> None:
        self._forget(self._ended.fit())

    def _forget(self, ended: list[tuple[tuple[str, str], Table]]) -> None:
        """Drop games that ended from memory (their handles are looked up in the store)."""
        for key, table in ended:
            if self._tables.get(key) is table:
                del self._tables[key]
            for forget in self.forgotten:
                forget(table)

    async def stop(self) -> None:
        """Stop watching (the platform stops)."""
        await self._background.close()

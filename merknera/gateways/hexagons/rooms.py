"""The hexagons server's games (research c.2): made by ``POST /`` or ``GET /match``, joined
by two players (named guests), then played as platform games (:mod:`merknera.gateways.
tables`), with the turn tokens and the disqualified players that the MebiPenny server had.

A game is "initiating" until its second player joins: then the players are shuffled (the
original's random first mover), and the game starts.  A game made for a client alone in
``/match``'s queue for ``hexagons_match_wait`` seconds has an online Hexagons bot of
another protocol as its other player.  A game nobody finishes joining within
``hexagons_join_wait`` seconds is dropped.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from merknera.cache import Cache
from merknera.events import GameFinished
from merknera.games import JSONObject, Seat, SeatResult
from merknera.games.hexagons import Hexagons, HexagonsState
from merknera.gateways.guests import (
    Guest,
    GuestRefusedError,
    GuestThrottledError,
    telling,
)
from merknera.gateways.hexagons import wire
from merknera.gateways.hexagons.wire import COMPLETED, IN_PLAY, INITIATING, Snapshot
from merknera.gateways.tables import Stored, Table, Tables
from merknera.guard.holdings import FullError, Holdings
from merknera.guard.throttle import RateLimitedError
from merknera.names import Claim
from merknera.refused import RefusedError
from merknera.scheduler.arena import Arena
from merknera.seats.polled import PolledHold
from merknera.store.bots import Bot
from merknera.tasks import TaskSet

log = logging.getLogger(__name__)

GAME = "HEXAGONS"
MATCH_ROWS = (5, 7, 9, 11, 13)
"""The rows of a ``/match`` game's board (cols: rows - 3 to rows + 3), as the original's."""
MAX_OBSERVER_TOKENS = 256
"""Observer snapshots kept per game (for ``GET`` with ``X-Observer-Token``)."""
VIEWS_KEPT = 32
"""Games whose Game object now is kept for the next request or stream to show it (the
most recently shown: :meth:`Rooms.shown`)."""


@dataclass(eq=False)
class Room:
    """One hexagons game, from ``POST /`` to its end."""

    handle: str
    rows: int
    cols: int
    delay: float
    """Seconds to wait before answering a move (the original's ``delay_time``)."""
    client: str
    created: float = field(default_factory=time.monotonic)
    joined: list[Bot] = field(default_factory=list)
    addresses: dict[int, str] = field(default_factory=dict)
    """The address each joined player came from, by its bot's id."""
    reserved: Bot | None = None
    """The bot a ``/match`` game was made for (it joins with the client)."""
    started: asyncio.Event = field(default_factory=asyncio.Event)
    table: Table | None = None
    dropped: str | None = None
    """Why the game was dropped before it started, if it was."""
    starting: bool = False
    disqualified: set[str] = field(default_factory=set)
    tokens: dict[Seat, str] = field(default_factory=dict)
    """Each seat's current turn token."""
    observers: Cache[str, Snapshot] = field(
        default_factory=lambda: Cache[str, Snapshot](MAX_OBSERVER_TOKENS))
    """Each observer token's last snapshot, the most recently used kept."""
    ending: asyncio.Task[None] | None = None

    @property
    def state(self) -> str:
        if self.table is None:
            return INITIATING
        return COMPLETED if self.table.ended else IN_PLAY

    def seat_of(self, bot: Bot) -> PolledHold | None:
        table = self.table
        if table is None:
            return None
        return next((s for s in table.polled.values() if s.bot.id == bot.id), None)

    def current(self) -> HexagonsState | None:
        """The game's latest state, once it has one."""
        if self.table is None:
            return None
        seen = self.table.any_seat().seen
        state = None if seen is None else seen.state
        return state if isinstance(state, HexagonsState) else None

    def game_object(self, game: Hexagons) -> JSONObject:
        """The original's Game object now (``"disqualified"`` scores included)."""
        state = self.current()
        if state is None:
            # Once started (before the runner's first state) the players are in their
            # seats' order, as every later Game object shows them, not in the joins'.
            seated = self.joined if self.table is None else self.table.bots
            names = [bot.name for bot in seated]
            return {"rows": self.rows, "cols": self.cols, "lines": [], "hexagons": [],
                    "players": [{"name": name, "score": 0} for name in names],
                    "state": INITIATING if self.table is None else IN_PLAY}
        shown = game.game_object(state, completed=self.state == COMPLETED)
        return wire.disqualify(shown, frozenset(self.disqualified))

    @property
    def version(self) -> tuple[int, ...]:
        """Changes whenever the Game object may: a player joins, the game starts, a state
        comes, the game ends, a player is disqualified."""
        table = self.table
        if table is None:
            return (-1, len(self.joined))
        return (table.any_seat().version, table.ended, len(self.disqualified))

    def observed(self, token: str, shown: wire.Shown) -> wire.Encoded:
        """What an observer's ``GET`` shows of the game ``shown`` now: the delta since its
        last snapshot (which becomes ``shown``'s)."""
        since = self.observers.get(token)
        self.observers.put(token, shown.snapshot)
        return shown.game if since is None else shown.delta(since)

    def new_observer(self, snapshot: Snapshot) -> str:
        token = str(uuid.uuid4())
        self.observers.put(token, snapshot)
        return token


class Rooms:
    """Every hexagons game the listener knows, and the ``/match`` queue."""

    def __init__(self, arena: Arena, tables: Tables, game: Hexagons) -> None:
        self._arena = arena
        self._tables = tables
        self.game = game
        config = arena.config
        self._rooms: dict[str, Room] = {}
        self._initiating: Holdings[Room] = Holdings(config.guests.max_open_games,
                                                    config.guests.max_open_games_per_client,
                                                    "hexagons games waiting for players")
        self._queue: list[_Waiter] = []
        self._by_game: dict[int, Room] = {}
        self._views: Cache[Room, tuple[tuple[int, ...], wire.Shown]] = Cache(VIEWS_KEPT)
        tables.forgotten.append(self._forget)
        self._background = TaskSet()
        arena.finish_hooks.append(self._finished)

    # -- games ------------------------------------------------------------------------------

    def listing(self) -> list[JSONObject]:
        """``GET /``: every game known, with its state."""
        return [{"id": room.handle, "state": room.state} for room in self._rooms.values()]

    def get(self, handle: str) -> Room:
        """The game ``handle``. :raises RefusedError: 404 ``no such game``."""
        room = self._rooms.get(handle)
        if room is None or room.dropped is not None:
            raise RefusedError(404, "no such game")
        return room

    def shown(self, room: Room) -> wire.Shown:
        """The room's Game object now, with its encodings and deltas: built once per
        :attr:`Room.version` for every request and observer that shows it."""
        version = room.version
        kept = self._views.get(room)
        if kept is not None and kept[0] == version:
            return kept[1]
        shown = wire.Shown(room.game_object(self.game))
        self._views.put(room, (version, shown))
        return shown

    async def stored_id(self, handle: str) -> int | None:
        """The platform's id of the game ``handle``, in memory or in the store."""
        return await self._tables.stored(GAME, handle)

    async def stored(self, handle: str, client: str) -> wire.Encoded | None:
        """The Game object of a game no longer in memory, from the store (made and encoded
        in ``client``'s place, off the event loop for a long game, and kept with a finished
        game).

        :raises RefusedError: 429 when ``client`` holds its share of places, 503 when the
            platform is making as many such answers as it may at once.
        """
        return await self._tables.shown(GAME, handle, self._stored_object, client)

    def _stored_object(self, found: Stored) -> wire.Encoded:
        shown = wire.Encoded(self._stored_game(found))
        _ = shown.body  # encoded here, off the loop
        return shown

    def _stored_game(self, found: Stored) -> JSONObject:
        record, state = found.record, found.state
        assert isinstance(state, HexagonsState)
        names = set()
        if record.termination is not None and record.termination.is_forfeit:
            names = {state.players[s.seat] for s in record.seats
                     if s.result is SeatResult.LOSS}
        shown = self.game.game_object(state, completed=record.termination is not None)
        return wire.disqualify(shown, frozenset(names))

    async def create(self, client: str, rows: int, cols: int, delay: float,
                     reserved: Bot | None = None) -> Room:
        """``POST /``: a new game waiting for its players.

        :raises RefusedError: 429/503 when the address (or everybody) has too many waiting.
        """
        handle = wire.new_game_id()
        # 32 bits: an old stored game may have the id (even odds after some 77,000 games).
        while handle in self._rooms or await self._tables.stored(GAME, handle) is not None:
            handle = wire.new_game_id()
        room = Room(handle, rows, cols, delay, client, reserved=reserved)
        try:
            self._initiating.take(client, room, lambda: self._drop(
                room, "its address gave its place to another game"))
        except RateLimitedError as exc:
            raise RefusedError(429, exc.message, exc.retry_after) from None
        except FullError as exc:
            raise RefusedError(503, str(exc), 5.0) from None
        self._rooms[handle] = room
        self._background.spawn(self._expire(room))
        return room

    async def join(self, room: Room, claim: Claim, client: str) -> tuple[Guest, PolledHold]:
        """``POST <game>/players``: the player joins; the game starts with the second.

        :raises RefusedError: 410 ``game already started``; 403 for a name that may not play.
        """
        if _full(room):
            raise RefusedError(410, "game already started")
        try:
            player = await self._tables.guest(claim, GAME, client)
        except GuestThrottledError as exc:
            raise RefusedError(429, str(exc), exc.retry_after) from None
        except GuestRefusedError as exc:
            raise RefusedError(403, f"invalid player data: {exc}") from None
        try:
            return player, await self._seat(room, player.bot, client)
        except RefusedError as exc:
            raise telling(exc, player) from None

    async def _seat(self, room: Room, bot: Bot, client: str) -> PolledHold:
        """The joined player's seat, once the game has started."""
        if _full(room):
            raise RefusedError(410, "game already started")
        if any(other.id == bot.id for other in room.joined):
            raise RefusedError(403, f"invalid player data: {bot.name} has joined this game "
                                 "already")
        room.joined.append(bot)
        room.addresses[bot.id] = client
        players = list(room.joined)
        if room.reserved is not None:
            players.append(room.reserved)
        if len(players) == 2:
            room.starting = True
            await self._start(room, players)
        try:
            async with asyncio.timeout(max(0.0, self._join_deadline(room) - time.monotonic())):
                await room.started.wait()
        except TimeoutError:
            pass
        seat = room.seat_of(bot)
        if seat is None:
            why = room.dropped or "nobody else joined it in time"
            raise RefusedError(410, f"game abandoned: {why}")
        return seat

    def join_wait(self) -> float:
        """Seconds a game waits for its players."""
        return self._arena.config.hexagons.join_wait

    def _join_deadline(self, room: Room) -> float:
        return room.created + self._arena.config.hexagons.join_wait

    async def _start(self, room: Room, players: list[Bot]) -> None:
        order = players[:]
        if secrets.randbelow(2):
            order.reverse()  # the original shuffled the players at the second join
        polled = [seat for seat, bot in enumerate(order) if bot is not room.reserved]
        try:
            room.table = await self._tables.start(
                room.client, GAME, room.handle, order, polled,
                self._arena.config.hexagons.turn_limit,
                settings={"rows": room.rows, "cols": room.cols},
                addresses=[room.addresses.get(bot.id) for bot in order])
        except RefusedError as exc:
            self._drop(room, exc.message)
            raise
        except BaseException:
            self._drop(room, "the server could not start it")
            raise
        self._by_game[room.table.game_id] = room
        self._initiating.give_back(room)
        room.started.set()

    async def _expire(self, room: Room) -> None:
        await asyncio.sleep(max(0.0, self._join_deadline(room) - time.monotonic()))
        if room.table is None:
            self._drop(room, "nobody else joined it in time")

    def _drop(self, room: Room, why: str) -> None:
        """A game that will not start (its players did not all join in time, its address
        gave up its place, the server stops): gone, and its waiting player told why."""
        if room.table is not None:
            return
        room.dropped = why
        self._initiating.give_back(room)
        self._rooms.pop(room.handle, None)
        room.started.set()

    def _forget(self, table: Table) -> None:
        """The tables forgot a game that ended a while ago: so do the rooms (its handle is
        then looked up in the store)."""
        room = self._by_game.pop(table.game_id, None)
        if room is not None and self._rooms.get(room.handle) is room:
            del self._rooms[room.handle]

    def _finished(self, finished: GameFinished) -> None:
        """A forfeit disqualified the loser (the original disqualified a player that took
        too long as well as one that sent a bad move).  A finish hook with nothing to
        wait for: it returns no coroutine."""
        room = self._by_game.get(finished.game_id)
        if room is None or room.table is None or not finished.termination.is_forfeit:
            return
        for bot, result in zip(room.table.bots, finished.results, strict=True):
            if result is SeatResult.LOSS:
                room.disqualified.add(bot.name)

    # -- /match -----------------------------------------------------------------------------

    async def match(self, client: str, gone: Callable[[], bool]) -> str:
        """``GET /match``: wait for another client (or, after ``hexagons_match_wait``, an
        online Hexagons bot), then a new game's handle.  ``gone`` says whether the
        client has left (aiohttp does not cancel a handler whose client went away): a
        waiter that left is never paired.
        """
        self._queue[:] = [w for w in self._queue if not w.future.done() and not w.gone()]
        if [w.client for w in self._queue].count(client) >= (
                self._arena.config.guests.max_open_games_per_client):
            raise RefusedError(429, "your address has as many clients waiting for a match as "
                                 "it may have games", 5.0)
        while self._queue:
            other = self._queue.pop(0)
            try:
                room = await self._random_room(other.client)
            except RefusedError as exc:
                other.future.set_exception(exc)  # the waiter's address is at its limit
                continue
            other.future.set_result(room.handle)
            return room.handle
        mine = _Waiter(client, gone, asyncio.get_running_loop().create_future())
        self._queue.append(mine)
        try:
            while True:
                try:
                    async with asyncio.timeout(self._arena.config.hexagons.match_wait):
                        return await asyncio.shield(mine.future)
                except TimeoutError:
                    if mine.future.done():
                        return mine.future.result()
                if gone():
                    raise RefusedError(410, "the client left")  # nobody reads this
                bot = await self._tables.opponent(GAME)
                if bot is not None and not mine.future.done():
                    mine.future.cancel()
                    return (await self._random_room(client, bot)).handle
        finally:
            if mine in self._queue:
                self._queue.remove(mine)
            if not mine.future.done():
                mine.future.cancel()

    async def _random_room(self, client: str, reserved: Bot | None = None) -> Room:
        rows = secrets.choice(MATCH_ROWS)
        cols = min(25, max(3, rows + secrets.randbelow(7) - 3))
        return await self.create(client, rows, cols, 0.0, reserved)

    # -- upkeep -----------------------------------------------------------------------------

    async def stop(self) -> None:
        """Stop expiring games, and send the waiting clients away."""
        await self._background.close()
        for room in list(self._rooms.values()):
            self._drop(room, "the server is stopping")
        for waiter in self._queue:
            if not waiter.future.done():
                waiter.future.set_exception(RefusedError(503, "the server is stopping", 5.0))
        self._queue.clear()


@dataclass(eq=False)
class _Waiter:
    """A client in ``/match``'s queue."""

    client: str
    gone: Callable[[], bool]
    future: asyncio.Future[str]


def _full(room: Room) -> bool:
    """Whether the game has its players (or is starting, or gone)."""
    players = len(room.joined) + (room.reserved is not None)
    return room.table is not None or room.starting or room.dropped is not None or players >= 2

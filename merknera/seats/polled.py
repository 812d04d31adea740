"""Seats held by clients that send their moves as requests and are answered when they are
to move again: MebiPenny hexagons players (long polls), Kalaha boards, people in the
browser.  Wire-neutral: a gateway renders the states in its own wire.

The gateway holds a seat (:meth:`PolledTransport.hold`) before it starts the game's runner.
The runner shows the seat every state (:meth:`PolledTransport.witness`); a request of the
client waits for the state that gives its seat the move, or for the end
(:meth:`PolledSeat.wait`); the client's move goes to the seat's
:class:`~merknera.seats.connected.Seating` (:meth:`PolledSeat.send`), from which the runner
takes it (:func:`~merknera.seats.connected.next_turn`), within the seat's turn limit.  A
client that never moves loses on that limit: nothing it does (or does not do) holds a game
up for longer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from merknera.botclient import CallResult, Fault
from merknera.games import JSON, AnyGame, JSONObject, Seat
from merknera.protocol.faults import FaultKind
from merknera.seats.base import SeatCall, Transport, Witnessed
from merknera.seats.connected import NOTHING_SENT, Received, Seating, gone, next_turn, now_ms
from merknera.store.bots import Bot


class PolledSeat:
    """One seat of one game, held by a polling client."""

    def __init__(self, game_id: int, seat: Seat, bot: Bot, turn_limit: float) -> None:
        self.game_id = game_id
        self.seat = seat
        self.bot = bot
        self.turn_limit = turn_limit
        """Seconds the client has for each move."""
        self.seating = Seating(game_id)
        self.seen: Witnessed | None = None
        """The latest state the seat was shown."""
        self.opening: object = None
        """The game's first state (the runner's state object), once the seat was shown it."""
        self.moves: list[tuple[Seat | None, JSON]] = []
        """Every move since the first state, in order: the seat that made it (None for
        chance) and the move as the game writes it (a client's history of the game)."""
        self.version = 0
        """How many changes the seat saw: states shown, faults told, the end."""
        self._moved_at = -1
        """:attr:`version` when the client last moved (it has the move again only after a
        later state, or after its move was found faulty)."""
        self.final: JSONObject | None = None
        """The game's Complete params for the seat (``winner``, the final state), once it
        is over with or without a result; None while it goes on."""
        self.ended = False
        """Whether the game is over for the seat (it finished, or its runner stopped)."""
        self.error: str | None = None
        """The runner's message about the seat's last fault, if any."""
        self.left = asyncio.Event()
        """Set when the client gave the game up (its gateway let it go)."""
        self._changed = asyncio.Event()

    @property
    def to_move(self) -> bool:
        """Whether the seat has the move now (and the game goes on)."""
        return not self.ended and self.seating.to_move and self.version > self._moved_at

    def send(self, value: JSON, text: str, problem: str | None = None,
             kind: FaultKind = FaultKind.MALFORMED_REPLY) -> bool:
        """The client's move, for the runner (``value`` as the game reads moves), or, with
        ``problem``, a fault of the kind ``kind``.  False if the seat does not have the
        move (the client is told so by its gateway)."""
        if not self.to_move:
            return False
        self._moved_at = self.version
        self.seating.take(Received(text, value, problem, now_ms(), kind=kind),
                          lambda message: None)
        return True

    async def wait(self, after: int, time_limit: float) -> bool:
        """Wait until the seat has the move after a change later than version ``after``
        (a new state, or its move found faulty: :attr:`error`), or the game is over; False
        if neither came within ``time_limit`` seconds."""
        return await self._until(lambda: self.version > after and self.to_move, time_limit)

    async def changed(self, after: int, time_limit: float) -> bool:
        """Wait until a change later than version ``after``, or the end (an observer's next
        line); False if neither came within ``time_limit``."""
        return await self._until(lambda: self.version > after, time_limit)

    async def _until(self, ready: Callable[[], bool], time_limit: float) -> bool:
        """Wait until ``ready()`` or the end; False if neither came within ``time_limit``."""
        deadline = time.monotonic() + time_limit
        while not self.ended and not ready():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._changed.clear()
            try:
                async with asyncio.timeout(remaining):
                    await self._changed.wait()
            except TimeoutError:
                return False
        return True

    def show(self, seen: Witnessed) -> None:
        """The runner shows the seat a state."""
        view = seen.view
        if seen.mover is None and seen.move is None:
            self.opening = seen.state
            self.moves.clear()
        else:
            self.moves.append((seen.mover, seen.move))
        self.seen = seen
        self.seating.moved_on(view, seen.to_move, self.turn_limit, lambda message: None)
        self._bump()

    def faulted(self, message: str | None) -> None:
        """The runner found the client's move faulty (and asks it again, if the fault did
        not end the game)."""
        self.error = message
        self._moved_at = -1
        self._bump()

    def _bump(self) -> None:
        self.version += 1
        self._changed.set()

    def end(self, final: JSONObject | None = None) -> None:
        """The game is over for the seat: with its Complete params, or without (its runner
        stopped)."""
        if final is not None:
            self.final = final
        self.ended = True
        self.seating.finished = True
        self._bump()


class PolledTransport(Transport):
    """Every seat held by a polling client (guests of the gateways and people)."""

    ping_name = "a check that its client is in a game"
    witnesses = True

    def __init__(self) -> None:
        self._seats: dict[tuple[int, Seat], PolledSeat] = {}

    def hold(self, game_id: int, seat: Seat, bot: Bot, turn_limit: float) -> PolledSeat:
        """Hold a seat of a game about to start for a polling client."""
        held = self._seats[(game_id, seat)] = PolledSeat(game_id, seat, bot, turn_limit)
        return held

    def held(self, game_id: int, seat: Seat) -> PolledSeat | None:
        """The seat, while its game's runner has it."""
        return self._seats.get((game_id, seat))

    def _mine(self, bot: Bot, game_id: int) -> list[PolledSeat]:
        return [held for seat in range(_MAX_SEATS)
                if (held := self._seats.get((game_id, seat))) is not None
                and held.bot.id == bot.id]

    def describe(self, game: AnyGame, name: str) -> str:
        calls = game.calls
        return {calls.open: "the game's first state", calls.move: "a move",
                calls.complete: "the final state",
                calls.error: "the answer to a faulty move"}.get(name, name)

    def can_seat(self, bot: Bot) -> bool:
        return False  # a guest plays only the games its players start

    def holds(self, bot: Bot, game_id: int) -> bool:
        return bool(self._mine(bot, game_id))

    def departure(self, bot: Bot, game_id: int) -> asyncio.Event | None:
        mine = self._mine(bot, game_id)
        if mine:
            return mine[0].left
        left = asyncio.Event()  # a game under way that holds no client for it: it left
        left.set()
        return left

    def release(self, bot: Bot, game_id: int) -> None:
        for held in self._mine(bot, game_id):
            held.end()
            del self._seats[(game_id, held.seat)]

    async def witness(self, bot: Bot, game: AnyGame, seen: Witnessed) -> None:
        held = self._seats.get((seen.game_id, seen.seat))
        if held is not None:
            held.show(seen)

    async def ask(self, bot: Bot, game: AnyGame, call: SeatCall,
                  time_limit: float) -> CallResult:
        held = self._seats.get((call.game_id, call.seat if call.seat is not None else -1))
        if held is None or held.ended:
            return gone(bot.name)
        if call.name == game.calls.open:
            return CallResult(NOTHING_SENT)
        return await next_turn(held.seating, held.left, held.turn_limit, bot.name)

    async def tell(self, bot: Bot, game: AnyGame, call: SeatCall,
                   time_limit: float) -> CallResult:
        held = self._seats.get((call.game_id, call.seat if call.seat is not None else -1))
        if held is None:
            return gone(bot.name)
        if call.name == game.calls.error:
            message = call.params.get("message")
            held.faulted(message if isinstance(message, str) else None)
        elif call.name == game.calls.complete:
            held.end(dict(call.params))
        return CallResult(NOTHING_SENT)

    async def ping(self, bot: Bot) -> CallResult:
        if any(held.bot.id == bot.id and not held.ended for held in self._seats.values()):
            return CallResult(NOTHING_SENT)
        return CallResult(NOTHING_SENT, fault=Fault(
            FaultKind.UNREACHABLE, f"{bot.name} is in no game now (a guest plays only the "
                                   "games its players start)"))


_MAX_SEATS = 2
"""Seats of the games guests play (all are for two)."""

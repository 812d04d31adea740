"""Seats held by clients that send their moves as requests and are answered when they are
to move again: MebiPenny hexagons players (long polls), Kalaha boards, people in the
browser.  Wire-neutral: a gateway renders the states in its own wire.

The gateway holds a seat (:meth:`PolledHolder.hold`) before it starts the game's runner,
whose held session (:class:`~merknera.seats.held.HeldSession`) finds it there.  The session
shows the seat every state (:meth:`PolledHold.show`); a request of the client waits for the
state that gives its seat the move, or for the end (:meth:`PolledHold.wait`); the client's
move goes to the seat's :class:`~merknera.seats.turns.Turns` (:meth:`PolledHold.send`), from
which the session takes it, within the seat's turn limit.  A client that never moves loses
on that limit: nothing it does (or does not do) holds a game up for longer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from merknera.botclient import CallResult, Fault
from merknera.clock import now_ms
from merknera.games import JSON, AnyGame, JSONObject, Seat
from merknera.protocol.faults import FaultKind
from merknera.seats.base import Call, Moment, Sitting
from merknera.seats.held import Hold, Holder
from merknera.seats.turns import NOTHING_SENT, Received, Turns
from merknera.store.bots import Bot


class PolledHold(Hold):
    """One seat of one game, held by a polling client."""

    def __init__(self, game_id: int, seat: Seat, bot: Bot, turn_limit: float) -> None:
        self.game_id = game_id
        self.seat = seat
        self.bot = bot
        self._turn_limit = turn_limit
        """Seconds the client has for each move."""
        self.turns = Turns(game_id)
        self.seen: Moment | None = None
        """The latest state the seat was shown."""
        self.view: JSONObject | None = None
        """The seat's view of that state (the game's NextMove params for it)."""
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
        self.error: str | None = None
        """The runner's message about the seat's last fault, if any."""
        self._left = asyncio.Event()
        self._changed = asyncio.Event()

    @property
    def ended(self) -> bool:
        """Whether the game is over for the seat (it finished, or its runner stopped)."""
        return self.turns.finished

    @property
    def left(self) -> asyncio.Event:
        """Set when the client gave the game up (its gateway let it go)."""
        return self._left

    def turn_limit(self, time_limit: float) -> float:
        return self._turn_limit

    @property
    def to_move(self) -> bool:
        """Whether the seat has the move now (and the game goes on)."""
        return not self.ended and self.turns.to_move and self.version > self._moved_at

    def send(self, value: JSON, text: str, problem: str | None = None,
             kind: FaultKind = FaultKind.MALFORMED_REPLY) -> bool:
        """The client's move, for the runner (``value`` as the game reads moves), or, with
        ``problem``, a fault of the kind ``kind``.  False if the seat does not have the
        move (the client is told so by its gateway)."""
        if not self.to_move:
            return False
        self._moved_at = self.version
        self.turns.take(Received(text, value, problem, now_ms(), kind=kind),
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

    def show(self, moment: Moment) -> None:
        view = moment.view(self.seat)
        if moment.opening:
            self.opening = moment.state
            self.moves.clear()
        else:
            self.moves.append((moment.mover, moment.move))
        self.seen, self.view = moment, view
        self.turns.moved_on(view, moment.to_move == self.seat, self._turn_limit,
                            lambda message: None)
        self._bump()

    def faulted(self, error: Call) -> None:
        """The runner found the client's move faulty (and asks it again, if the fault did
        not end the game): its message is kept for the client (:attr:`error`)."""
        message = error.params.get("message")
        self.error = message if isinstance(message, str) else None
        self._moved_at = -1
        self._bump()

    def end(self, complete: Call) -> None:
        """The game is over for the seat: its Complete params are kept (:attr:`final`)."""
        self.finish(dict(complete.params))

    def _bump(self) -> None:
        self.version += 1
        self._changed.set()

    def finish(self, final: JSONObject | None = None) -> None:
        """The game is over for the seat: with its Complete params, or without (its runner
        stopped)."""
        if final is not None:
            self.final = final
        self.turns.finished = True
        self._bump()


class PolledHolder(Holder[PolledHold]):
    """Every seat held by a polling client (guests of the gateways and people)."""

    ping_name = "a check that its client is in a game"

    def __init__(self) -> None:
        self._holds: dict[tuple[int, Seat], PolledHold] = {}

    def hold(self, game_id: int, seat: Seat, bot: Bot, turn_limit: float) -> PolledHold:
        """Hold a seat of a game about to start for a polling client."""
        held = self._holds[(game_id, seat)] = PolledHold(game_id, seat, bot, turn_limit)
        return held

    def describe(self, game: AnyGame, name: str) -> str:
        calls = game.calls
        return {calls.open: "the game's first state", calls.move: "a move",
                calls.complete: "the final state",
                calls.error: "the answer to a faulty move"}.get(name, name)

    def take(self, sitting: Sitting) -> PolledHold | None:
        return self._holds.get((sitting.game_id, sitting.seat))

    async def claim(self, sitting: Sitting, time_limit: float) -> PolledHold | str:
        held = self.take(sitting)
        if held is None or held.ended:
            return f"{sitting.bot.name} disconnected"
        return held

    def let_go(self, hold: PolledHold) -> None:
        hold.finish()
        key = (hold.game_id, hold.seat)
        if self._holds.get(key) is hold:
            del self._holds[key]

    def free(self, bot: Bot) -> bool:
        return False  # a guest plays only the games its players start

    async def ping(self, bot: Bot) -> CallResult:
        if any(held.bot.id == bot.id and not held.ended for held in self._holds.values()):
            return CallResult(NOTHING_SENT)
        return CallResult(NOTHING_SENT, fault=Fault(
            FaultKind.UNREACHABLE, f"{bot.name} is in no game now (a guest plays only the "
                                   "games its players start)"))

"""A held client's turns, whatever its wire: the messages it sends during its game, kept
in order for the runner, and its next turn.

A client that holds a connection to the platform is not called for a move: it is shown
every state (:meth:`~merknera.seats.Session.show`), and what it sends while it has the move
is its turn.  What it sends out of turn is answered at once and counted as a fault at its
next turn; its clock runs from the last valid update, so invalid turns do not restart it.
Each held seat keeps its client's :class:`Turns`, from which its session takes the next
(:func:`next_turn`).
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from merknera import stalls
from merknera.botclient import CallResult, Fault
from merknera.clock import now_ms
from merknera.games import JSON, JSONObject
from merknera.protocol import strict_json
from merknera.protocol.excerpt import excerpt
from merknera.protocol.faults import FaultKind

NOTHING_SENT = b""
"""The move log's request of a held client's turn: it was sent nothing when asked
(its last state told it to move)."""


@dataclass
class Received:
    """One message from a client, as it came (a WebSocket frame, a request's body)."""

    text: str
    """Its text (a binary frame's is empty)."""
    value: JSON
    """The parsed JSON (None when :attr:`problem` says why there is none)."""
    problem: str | None
    """Why it is no turn at all: binary, or not JSON."""
    time_ms: int
    """When it came, in ms since the epoch (the ``time`` of its turn's echo)."""
    answered: bool = False
    """Whether the client was told already that it was invalid (sent out of turn)."""
    kind: FaultKind = FaultKind.MALFORMED_REPLY
    """The fault :attr:`problem` is (a gateway that judged the turn itself, as the
    MebiPenny server did, says :attr:`FaultKind.DISQUALIFIED`)."""

    @classmethod
    def text_frame(cls, text: str) -> Received:
        """A text frame: JSON, or a frame that is not."""
        stamp = now_ms()
        try:
            return cls(text, strict_json.loads(text), None, stamp)
        except strict_json.BadJSONError as exc:
            return cls(text, None, f"the message is not JSON: {exc}", stamp)

    @classmethod
    def binary_frame(cls, size: int) -> Received:
        """A binary frame (where messages are JSON text)."""
        return cls("", None, f"a binary frame of {size} bytes; turns are JSON text frames",
                   now_ms())

    @property
    def sent(self) -> JSONObject:
        """The keys of the message, for its turn's echo (none for a message that is not
        an object)."""
        return dict(self.value) if isinstance(self.value, dict) else {}


@dataclass
class Turns:
    """A held client's turns in the game it plays: what it was last shown, whether it is
    to move, until when, and what it sent."""

    game_id: int
    """The platform's id of the game."""
    view: JSONObject | None = None
    """The state it was last sent (as its wire shows it)."""
    to_move: bool = False
    """Whether that state has it to move."""
    deadline: float | None = None
    """When its turn runs out (``time.monotonic``): set when a state gives it the move, and
    not moved by invalid turns (the clock runs from the last valid update)."""
    inbox: collections.deque[Received] = field(default_factory=collections.deque)
    """Turns sent while it was to move, for the runner to judge in order."""
    early: collections.deque[Received] = field(default_factory=collections.deque)
    """Messages sent while it was not to move: answered invalid at once, and counted as a
    fault at its next turn."""
    judging: Received | None = None
    """The message the runner was last given (an Error is about it)."""
    finished: bool = False
    """Whether the game is over for the client (nothing it sends is a turn any more)."""
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a message came."""

    def take(self, message: Received, answer: Callable[[Received], None]) -> None:
        """A message came from the client.

        While the client is to move it is kept for the runner; otherwise ``answer`` tells
        the client at once that it was invalid, and it is kept to count as a fault at the
        client's next turn (as Battlebot counted messages out of turn).  Before the game's
        first state, and after its end, a message is no turn at all.
        """
        if self.finished or self.view is None:
            return
        if self.to_move:
            self.inbox.append(message)
        else:
            answer(message)
            message.answered = True
            self.early.append(message)
        self.arrived.set()

    def moved_on(self, view: JSONObject, to_move: bool, limit: float,
                 answer: Callable[[Received], None]) -> None:
        """The client was shown a new state (``to_move``: it has the move, with ``limit``
        seconds from now).  Turns it sent after the one just played came out of turn."""
        self.view = view
        self.to_move = to_move
        self.deadline = time.monotonic() + limit if to_move else None
        if not to_move:
            while self.inbox:
                message = self.inbox.popleft()
                answer(message)
                message.answered = True
                self.early.append(message)


async def next_turn(turns: Turns, closed: asyncio.Event, limit: float,
                    name: str) -> CallResult:
    """The client's next turn, for the runner: a message it sent out of turn (a fault,
    answered already), or the next it sends while to move, within the turn's deadline
    (``limit`` seconds, from the last valid update).  ``closed`` is set when the client's
    connection is gone; ``name`` is the bot's, for messages.
    """
    started = time.monotonic()
    turns.judging = None  # an Error is about this turn's message, if any
    if turns.deadline is None:
        turns.deadline = started + limit
    if turns.early:
        message = turns.judging = turns.early.popleft()
        return _fault(message, FaultKind.ILLEGAL_MOVE,
                      "sent a turn while it was not its turn: "
                      f"{excerpt(message.text or message.problem or '')}")
    due = stalls.Due(turns.deadline)  # when the next look is due
    while not turns.inbox:
        now = time.monotonic()
        due.at = max(due.at, turns.deadline)  # (a hexagons room's delay moves it on)
        if closed.is_set():
            return gone(name)
        if now >= due.at and due.look(now):
            return CallResult(NOTHING_SENT, fault=Fault(
                FaultKind.TIMEOUT, f"no valid turn within {limit:g} s of the last valid "
                                   "update (invalid turns do not restart the clock)"),
                              latency=now - started)
        remaining = due.at - now
        turns.arrived.clear()
        waits = [asyncio.ensure_future(turns.arrived.wait()),
                 asyncio.ensure_future(closed.wait())]
        try:
            await asyncio.wait(waits, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()
    message = turns.judging = turns.inbox.popleft()
    latency = time.monotonic() - started
    if message.problem is not None:
        return _fault(message, message.kind, message.problem, latency)
    return CallResult(NOTHING_SENT, result=message.value, reply=message.text.encode("utf-8"),
                      latency=latency)


def _fault(message: Received, kind: FaultKind, why: str, latency: float = 0.0) -> CallResult:
    return CallResult(NOTHING_SENT, fault=Fault(kind, why),
                      reply=message.text.encode("utf-8"), latency=latency)


def gone(name: str) -> CallResult:
    """The fault of a client whose connection is gone."""
    return CallResult(NOTHING_SENT, fault=Fault(FaultKind.UNREACHABLE, f"{name} disconnected"))

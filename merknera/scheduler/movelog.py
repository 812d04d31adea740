"""Writing a game's move log as it is played: rows queued, not awaited, checked later.

The runner queues the rows of each call and goes on: the next calls to a bot overlap the
commits, and a later write (or the finish) checks them.  Writes commit in order, so a crash
loses at most the newest rows, which a resumed game simply asks for again.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence

from merknera.botclient import CallResult
from merknera.events import EventBus, MovePlayed
from merknera.games import Seat
from merknera.scheduler.play import Faulted, Play, Played, Verdict
from merknera.store import Database, games

Entry = tuple[Seat, CallResult | None, Verdict]
"""A seat, the call it was asked (None when no call was made), and what it gave."""

IN_FLIGHT = 2
"""Writes of one game that may be uncommitted while it goes on.  With one, each move waited
for the one before it to commit, and under load a commit takes longer than a bot's answer:
the writer, not the bots, set the pace.  A game
finished elsewhere (or, on PostgreSQL, whose lease another node took) is noticed a move
later: its rows are refused all the same, and the move asked meanwhile is asked again by
whoever plays the game."""


class MoveLog:
    """One game's move log, written as the runner plays it."""

    def __init__(self, db: Database, events: EventBus, game_id: int, node: str) -> None:
        self._db = db
        self._node = node
        self._events = events
        self._game_id = game_id
        self._queued: deque[asyncio.Future[bool]] = deque()
        """The writes queued and not yet checked, oldest first."""

    async def append(self, play: Play, entries: Sequence[Entry]) -> bool:
        """Queue rows for these calls, written together (all or none); False if the game
        turned out to be finished (by a newer version of a bot, or an admin), or to be
        played by another node (this one lost its lease).

        :raises RuntimeError: past the game's bound on moves and faults (a bug).
        """
        if not await self._checked(keep=IN_FLIGHT - 1):
            return False
        rows, published = [], []
        for seat, reply, verdict in entries:
            play.seq += 1
            if play.seq > play.game.max_moves + play.seats * play.rules.max_strikes + 1:
                raise RuntimeError(f"game {self._game_id} exceeded its move bound")
            move = (play.game.move_to_wire(verdict.move) if isinstance(verdict, Played)
                    else None)
            fault = verdict.kind if isinstance(verdict, Faulted) else None
            rows.append(games.LoggedCall(
                play.seq, seat, move, fault,
                verdict.message if isinstance(verdict, Faulted) else None,
                request=None if reply is None else reply.request.decode("utf-8"),
                reply=None if reply is None or reply.reply is None
                else reply.reply.decode("utf-8", errors="replace"),
                latency_ms=None if reply is None else round(reply.latency * 1000, 3)))
            published.append(MovePlayed(
                self._game_id, play.seq, seat, move, fault,
                None if reply is None else reply.latency,
                None if reply is None else play.bots[seat].protocol,
                verdict.message if isinstance(verdict, Faulted) else None))
        queued = games.record_moves(self._db, self._game_id, rows, self._node)
        self._queued.append(queued)
        events = self._events

        def announce(done: asyncio.Future[bool]) -> None:
            # Once committed, so that a listener (a live page) that reads the move log when
            # it hears of a move finds it there.
            if not done.cancelled() and done.exception() is None and done.result():
                for event in published:
                    events.publish(event)

        queued.add_done_callback(announce)
        return True

    async def written(self) -> bool:
        """Whether every queued write went in (False: the game had been finished)."""
        return await self._checked(keep=0)

    async def _checked(self, keep: int) -> bool:
        """Whether the queued writes went in, waiting for all but the newest ``keep``."""
        queued = self._queued
        while queued and (len(queued) > keep or queued[0].done()):
            if not await queued.popleft():
                # The later ones are refused too (the game is over): nobody waits for them.
                for later in queued:
                    later.add_done_callback(_retrieve)
                queued.clear()
                return False
        return True


def _retrieve(done: asyncio.Future[bool]) -> None:
    """Mark an unchecked write's failure as seen (asyncio logs unretrieved ones)."""
    if not done.cancelled():
        done.exception()

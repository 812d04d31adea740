"""Writing a game's move log as it is played: rows queued, not awaited, checked later.

The runner queues the rows of each call and goes on: the next call to a bot overlaps the
commit, and the next write (or the finish) checks it.  Writes commit in order, so a crash
loses at most the newest rows, which a resumed game simply asks for again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from merknera.botclient import CallResult
from merknera.events import EventBus, MovePlayed
from merknera.games import Seat
from merknera.scheduler.play import Faulted, Play, Played, Verdict
from merknera.store import Database, games

Entry = tuple[Seat, CallResult | None, Verdict]
"""A seat, the call it was asked (None when no call was made), and what it gave."""


class MoveLog:
    """One game's move log, written as the runner plays it."""

    def __init__(self, db: Database, events: EventBus, game_id: int, node: str) -> None:
        self._db = db
        self._node = node
        self._events = events
        self._game_id = game_id
        self._last: asyncio.Future[bool] | None = None
        """The write queued last, not yet checked."""

    async def append(self, play: Play, entries: Sequence[Entry]) -> bool:
        """Queue rows for these calls, written together (all or none); False if the game
        turned out to be finished (by a newer version of a bot, or an admin), or to be
        played by another node (this one lost its lease).

        :raises RuntimeError: past the game's bound on moves and faults (a bug).
        """
        if not await self.written():
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
            published.append(MovePlayed(self._game_id, play.seq, seat, move, fault))
        self._last = games.record_moves(self._db, self._game_id, rows, self._node)
        events = self._events

        def announce(done: asyncio.Future[bool]) -> None:
            # Once committed, so that a listener (a live page) that reads the move log when
            # it hears of a move finds it there.
            if not done.cancelled() and done.exception() is None and done.result():
                for event in published:
                    events.publish(event)

        self._last.add_done_callback(announce)
        return True

    async def written(self) -> bool:
        """Whether the last queued write went in (False: the game had been finished)."""
        if self._last is None:
            return True
        written, self._last = await self._last, None
        return written

"""The platform's own stalls are not a bot's lateness.

A timeout forfeits a game (docs/bots/protocol.md section 3), so it must be the bot's.  The platform
looks for a pending reply when the reply's timer fires; if its event loop was busy then (a
long callback, a full collection, a machine that did not give it the CPU), the timer fires
late, and a reply that came in time may still sit unread in a socket buffer or a reader's
queue.  uvloop runs the timers that fell due before it polls for input again, so after a
stall in an I/O callback the timer would win there; a reader task that hands a message on
loses to it on either loop.  So a check that comes more than :data:`STALL` after it was
due is made again :data:`RECHECK` later, once the loop has read what arrived: at most
:data:`RECHECKS` times for one reply, so that a loop late at every turn still judges every
bot.
"""

from __future__ import annotations

STALL = 0.02
"""Seconds after it was due past which a check counts as held up by the platform (timers
otherwise fire within a millisecond or two)."""

RECHECK = 0.05
"""Seconds to the check made again: the loop reads what arrived, and a reader (a gateway's
socket task) hands it on, in a few turns."""

RECHECKS = 3
"""Checks made again for one reply, at most."""


class Due:
    """When a reply is due, and the looks made for it: a look that finds no reply is
    judged by the stall rule (:meth:`look`).  Times are on one clock, the caller's (the
    event loop's or ``time.monotonic``)."""

    __slots__ = ("_rechecks", "at")

    def __init__(self, at: float) -> None:
        self.at = at
        """When the reply is due, or the look made again after a stall."""
        self._rechecks = 0

    def look(self, now: float) -> bool:
        """A look for the reply at ``now`` found none: whether it is late.  It is not when
        the look came more than :data:`STALL` after :attr:`at` (the platform was held up)
        and fewer than :data:`RECHECKS` looks were made again: then :attr:`at` moves to
        :data:`RECHECK` from ``now``, when the caller looks again."""
        if now - self.at <= STALL or self._rechecks >= RECHECKS:
            return True
        self._rechecks += 1
        self.at = now + RECHECK
        return False

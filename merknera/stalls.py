"""The platform's own stalls are not a bot's lateness.

A timeout forfeits a game (PROTOCOL.md section 3), so it must be the bot's.  The platform
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


def recheck_at(due: float, now: float, made: int) -> float | None:
    """When to look again for a reply that had not come when checked at ``now`` (a check
    that was due at ``due``; ``made`` checks made again already), or None if the reply is
    late: the check was on time, or no more are made.  Times on one clock."""
    if now - due <= STALL or made >= RECHECKS:
        return None
    return now + RECHECK

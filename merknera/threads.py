"""The event loop's helper threads: the store's connections and the name lookups.

A helper is woken by the loop's thread (a batch of writes for the store, a name to look
up) and then needs the GIL, which the loop's thread holds.  Under Linux's default policy a
woken thread may preempt its waker at once, only to wait for that GIL, and the loop loses
the rest of its time slice; a helper marked as a batch thread waits for the next
scheduler tick instead.
"""

from __future__ import annotations

import contextlib
import os


def as_helper() -> None:
    """Mark the calling thread as one of the loop's helpers: ``SCHED_BATCH`` on Linux
    (same share of the CPU, but no preemption of a running thread when it wakes); nothing
    where the policy does not exist or may not be set."""
    policy = getattr(os, "SCHED_BATCH", None)
    if policy is None:
        return
    # A sandbox may forbid it: the default policy still works.
    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, policy, os.sched_param(0))  # 0: the calling thread


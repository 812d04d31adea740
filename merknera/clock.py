"""The wall clock as the platform stamps what happens."""

from __future__ import annotations

import time


def now_ms() -> int:
    """Whole milliseconds since the epoch (the wall clock: it may step back)."""
    return time.time_ns() // 1_000_000


def readable(stamp: str) -> str:
    """A stored timestamp (``2026-11-23T10:15:02.123Z``, always UTC) as people read it,
    with its zone: ``2026-11-23 10:15:02 UTC``."""
    return stamp.replace("T", " ")[:19] + " UTC"

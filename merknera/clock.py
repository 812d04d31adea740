"""The wall clock as the platform stamps what happens."""

from __future__ import annotations

import time


def now_ms() -> int:
    """Whole milliseconds since the epoch (the wall clock: it may step back)."""
    return time.time_ns() // 1_000_000

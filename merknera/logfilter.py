"""Repeated log lines, rate-limited: a flood of one error must not fill the disk.

An attacker who makes one thing fail thousands of times a second (accepting connections
with no descriptors left, say) would otherwise make the platform write a traceback for
each, megabytes a second.  :class:`RepeatFilter` lets the first few lines of each
kind through in every window and counts the rest, and the next line of that kind to pass
says how many were held back.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

BURST = 10
"""Lines of one kind let through per window."""
WINDOW = 60.0
"""Seconds of a window."""
MAX_KINDS = 10_000
"""Kinds remembered at most (a message template is a kind, so there are few)."""


@dataclass
class _Window:
    started: float
    passed: int = 0
    held: int = 0


class RepeatFilter(logging.Filter):
    """Lets :data:`BURST` records of one kind through per :data:`WINDOW` seconds.

    A kind is the logger, the level, the message template (before its arguments) and the
    exception's type: one line of code failing the same way, whatever the values.
    """

    def __init__(self, burst: int = BURST, window: float = WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._burst = burst
        self._window = window
        self._clock = clock
        self._kinds: dict[tuple[object, ...], _Window] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        # Known once per record: a note added below changes record.msg for the handlers
        # after this one.
        kind: tuple[object, ...] = getattr(record, "repeat_kind", None) or (
            record.name, record.levelno, str(record.msg),
            type(record.exc_info[1]).__name__ if record.exc_info else None)
        record.repeat_kind = kind
        now = self._clock()
        window = self._kinds.get(kind)
        note = ""
        if window is None or now - window.started >= self._window:
            if window is not None and window.held:
                note = (f" [{window.held} more like this were left out of the log in "
                        f"{self._window:g} s]")
            if len(self._kinds) >= MAX_KINDS:
                self._kinds.clear()
            window = self._kinds[kind] = _Window(now)
        if window.passed >= self._burst:
            window.held += 1
            return False
        window.passed += 1
        if window.passed == self._burst:
            note += f" [more like this in the next {self._window:g} s are left out of the log]"
        if note:
            # Arguments that do not fit the message: logging reports that itself.
            with contextlib.suppress(TypeError, ValueError):
                record.msg, record.args = record.getMessage() + note, None
        return True


def install(logger: logging.Logger | None = None) -> None:
    """Add a :class:`RepeatFilter` to every handler of ``logger`` (the root logger)."""
    target = logger or logging.getLogger()
    for handler in target.handlers:
        if not any(isinstance(f, RepeatFilter) for f in handler.filters):
            handler.addFilter(RepeatFilter())

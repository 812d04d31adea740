"""Repeated log lines are let through a few at a time, and the rest counted."""

from __future__ import annotations

import logging

from merknera.logfilter import RepeatFilter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(message: str, *args: object, name: str = "asyncio",
           error: BaseException | None = None) -> logging.LogRecord:
    exc_info = (type(error), error, None) if error is not None else None
    return logging.LogRecord(name, logging.ERROR, __file__, 1, message, args, exc_info)


def test_a_flood_of_one_kind_is_held_back_and_counted() -> None:
    clock = Clock()
    gate = RepeatFilter(burst=3, window=60.0, clock=clock)
    passed = [gate.filter(r) for r in (
        record("socket.accept() out of system resource", error=OSError(24, "Too many"))
        for _ in range(1000))]
    assert passed.count(True) == 3 and passed[:3] == [True, True, True]
    # Other kinds (another template, logger or exception) have their own allowance.
    assert gate.filter(record("game %d: the runner failed", 7, name="merknera.runner"))
    assert gate.filter(record("socket.accept() out of system resource",
                              error=MemoryError()))
    clock.now += 60.0
    after = record("socket.accept() out of system resource", error=OSError(24, "Too many"))
    assert gate.filter(after)
    assert "[997 more like this were left out of the log in 60 s]" in after.getMessage()


def test_the_last_line_let_through_says_the_rest_are_held_back() -> None:
    gate = RepeatFilter(burst=2, window=10.0, clock=Clock())
    first, second = record("could not ping bot %d", 1), record("could not ping bot %d", 2)
    assert gate.filter(first) and gate.filter(second)
    assert first.getMessage() == "could not ping bot 1"
    assert second.getMessage() == ("could not ping bot 2 [more like this in the next 10 s "
                                   "are left out of the log]")

"""Tasks started and forgotten (store writes, deliveries, hooks, a gateway's expiries):
held until each ends, since the event loop keeps only weak references to tasks and would
let one still running be collected, then waited for or cancelled together."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class TaskSet:
    """The tasks started here that have not ended yet."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(self, work: Coroutine[Any, Any, T], *, name: str | None = None) -> asyncio.Task[T]:
        """Run ``work`` as a task of its own, held until it ends."""
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def wait(self) -> None:
        """Wait until every task has ended, those started meanwhile too (whatever each
        raised)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def close(self) -> None:
        """Cancel every task still running, and wait for them to end."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

"""The tasks started and forgotten (merknera.tasks): held until each ends, waited for
together (those started meanwhile too), and cancelled together on close."""

from __future__ import annotations

import asyncio

from merknera.tasks import TaskSet


async def test_a_task_is_held_until_it_ends() -> None:
    tasks = TaskSet()
    go = asyncio.Event()
    task = tasks.spawn(go.wait(), name="waits")
    assert len(tasks) == 1 and task.get_name() == "waits"
    go.set()
    assert await task is True  # woken after the set's own done callback
    assert len(tasks) == 0


async def test_wait_covers_tasks_started_meanwhile_and_whatever_they_raised() -> None:
    tasks = TaskSet()
    done: list[str] = []

    async def second() -> None:
        done.append("second")

    async def first() -> None:
        tasks.spawn(second())
        raise RuntimeError("a failure is not the waiter's")

    tasks.spawn(first())
    await tasks.wait()
    assert done == ["second"] and len(tasks) == 0


async def test_close_cancels_what_still_runs_and_waits_for_it() -> None:
    tasks = TaskSet()
    cleaned: list[bool] = []
    started = [asyncio.Event() for _ in range(3)]

    async def forever(start: asyncio.Event) -> None:
        start.set()
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append(True)

    running = [tasks.spawn(forever(start)) for start in started]
    for start in started:
        await start.wait()
    await tasks.close()
    assert all(task.cancelled() for task in running) and cleaned == [True] * 3

"""The ``e2e`` fixture: the harness of :mod:`tests.e2e.harness`, with every process it
started stopped afterwards and, for a failed test, their logs printed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator
from pathlib import Path

import aiohttp
import pytest

from tests.e2e.harness import E2E, Processes

__all__ = ["E2E"]


_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Remember whether a test failed, so that its teardown can print the processes' logs."""
    report = yield
    if report.failed:
        item.stash[_FAILED] = True
    return report


@pytest.fixture
async def e2e(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[E2E]:
    """The harness; every process it started is stopped afterwards, whatever happened."""
    processes = Processes(tmp_path)
    timeout = aiohttp.ClientTimeout(total=10)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            yield E2E(tmp_path, processes, session, tmp_path / "merknera.db")
    finally:
        await processes.close()
        if request.node.stash.get(_FAILED, False):
            print(f"\n--- the e2e processes (files in {tmp_path}) ---\n{processes.report()}")

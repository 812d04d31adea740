"""The bot client's wire runs each of its tests on asyncio's loop and on uvloop (the loop
of merknera serve): their transports differ in what they raise and when they call back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import pytest
import uvloop


def pytest_asyncio_loop_factories(
        config: pytest.Config,
        item: pytest.Item) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}

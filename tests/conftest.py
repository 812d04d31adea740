"""Shared fixtures: a platform on a real SQLite file, served by a real aiohttp server."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_aiohttp import AiohttpClient

from merknera.app import Platform, build_app
from merknera.config import CallSettings, Config, GameRules, LivenessSettings, StoreSettings
from merknera.store import Database, users
from tests.support import Arena
from tests.support.postgres import Cluster, start_cluster

collect_ignore_glob = ["plugin_example/*"]
"""The worked example of a game plugin is a distribution of its own, whose tests run in
the virtual environment it is installed into (tests/e2e/test_e2e_plugin.py)."""

# check_golden's assertions show pytest's diff of the transcripts, as asserts in tests do.
pytest.register_assert_rewrite("tests.support.golden")


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster]:
    """One throwaway PostgreSQL cluster for the whole run (each test makes a database)."""
    cluster = start_cluster()
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store on each backend: a SQLite path, then a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    cluster: Cluster = request.getfixturevalue("postgres")
    return cluster.new_database()


@pytest.fixture
async def db(store_target: str) -> AsyncIterator[Database]:
    """The store at ``store_target``, opened (and migrated) for the test."""
    database = await Database.open(store_target)
    yield database
    await database.close()


STORE_VARIABLE = "MERKNERA_TEST_STORE"
"""``postgresql`` runs the platform's tests on the throwaway PostgreSQL, not SQLite."""


@pytest.fixture
def config(request: pytest.FixtureRequest, tmp_path: Path) -> Config:
    """Short timeouts so that faults are quick to provoke."""
    if os.environ.get(STORE_VARIABLE) == "postgresql":
        db = request.getfixturevalue("postgres").new_database()
    else:
        db = str(tmp_path / "merknera.db")
    return Config(
        store=StoreSettings(db=db),
        rules=GameRules(move_timeout=1.0),
        calls=CallSettings(ping_timeout=1.0, notify_timeout=1.0, connect_timeout=1.0),
        liveness=LivenessSettings(
            ping_interval=30.0,
            offline_retry_min=0.05,
            offline_retry_max=0.2,
            offline_grace=1.5,
        ),
    )


@pytest.fixture
async def arena(config: Config, aiohttp_client: AiohttpClient) -> AsyncIterator[Arena]:
    """The platform serving /rpc and the API, with one user ("alice") and her token."""
    platform = Platform(config)
    client = await aiohttp_client(build_app(config, platform))
    _, token = await users.create_user(platform.db, "alice")
    yield Arena(platform, client, token)


ArenaFactory = Callable[..., Awaitable[Arena]]


@pytest.fixture
def make_arena(config: Config, aiohttp_client: AiohttpClient) -> ArenaFactory:
    """Like ``arena``, with configuration changes: ``await make_arena(ladder=True)``."""
    async def make(**changes: Any) -> Arena:
        changed = config.replace(**changes)
        platform = Platform(changed)
        client = await aiohttp_client(build_app(changed, platform))
        _, token = await users.create_user(platform.db, "alice")
        return Arena(platform, client, token)

    return make

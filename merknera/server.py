"""Running the platform's HTTP server until a signal, on a port bound before start-up.

The socket is bound first so that ``port = 0`` works: the platform learns its real port
(and so its public URL) before it starts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import signal
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from merknera import heap
from merknera.app import Platform, build_app
from merknera.config import Config
from merknera.hosts import host_port
from merknera.store import node_lock
from merknera.store.postgres import redacted

log = logging.getLogger(__name__)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port`` 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(512)
    sock.setblocking(False)
    return sock


LISTENERS = ("battlebot_port", "hexagons_port", "kalaha_port")
"""The config keys of the gateways' ports (0: no listener)."""


@asynccontextmanager
async def running(config: Config) -> AsyncIterator[tuple[Config, Platform]]:
    """The platform serving HTTP; yields the config with its real ports, and the platform.

    :raises StoreError: when another process serves the same SQLite file.
    """
    with node_lock.serving(config.db):
        async with _running(config) as running_platform:
            yield running_platform


@asynccontextmanager
async def _running(config: Config) -> AsyncIterator[tuple[Config, Platform]]:
    sock = bind(config.host, config.port)
    gateway_socks = {key: bind(config.host, getattr(config, key))
                     for key in LISTENERS if getattr(config, key)}
    config = dataclasses.replace(config, port=sock.getsockname()[1], **{
        key: gateway_sock.getsockname()[1] for key, gateway_sock in gateway_socks.items()})
    platform = Platform(config)
    platform.battlebot.tls()  # before start-up: a bad certificate stops it at once
    runner = web.AppRunner(build_app(config, platform), access_log=None, handle_signals=False,
                           shutdown_timeout=2.0, **platform.guard.runner_options())
    gateways: list[web.AppRunner] = []
    try:
        await runner.setup()
        await platform.guard.site(runner, sock).start()
        # After the platform's start-up (the main application's), which the listeners
        # need; stopped before it.
        for key, (app, tls) in platform.listeners().items():
            gateway = web.AppRunner(app, access_log=None, handle_signals=False,
                                    shutdown_timeout=2.0, **platform.guard.runner_options())
            await gateway.setup()
            gateways.append(gateway)
            await platform.guard.site(gateway, gateway_socks[key], ssl_context=tls).start()
        yield config, platform
    finally:
        try:
            if gateways:
                await platform.stop_games()
            for gateway in gateways:
                await gateway.cleanup()
        finally:
            await runner.cleanup()
            sock.close()
            for gateway_sock in gateway_socks.values():
                gateway_sock.close()


def battlebot_url(config: Config) -> str:
    """The Battlebot listener's base URL (its clients are given its ``host:port``)."""
    scheme = "https" if config.battlebot_tls_cert else "http"
    return f"{scheme}://{host_port(config.host, config.battlebot_port)}"


async def wait_for_signal() -> None:
    """Return on SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def serve(config: Config) -> None:
    """Serve until SIGINT or SIGTERM; prints ``Merknera listening on <url>`` when ready."""
    async with running(config) as (live, _):
        heap.settle()
        print(f"Merknera listening on {live.base_url} (database {redacted(live.db)})",
              flush=True)
        if live.battlebot_port:
            print(f"Battlebot listener on {battlebot_url(live)}", flush=True)
        if live.hexagons_port:
            print(f"Hexagons listener on http://{host_port(live.host, live.hexagons_port)}",
                  flush=True)
        if live.kalaha_port:
            print(f"Kalaha listener on http://{host_port(live.host, live.kalaha_port)}"
                  "/api/boards", flush=True)
        await wait_for_signal()
        log.info("stopping")

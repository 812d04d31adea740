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

from merknera.app import Platform, build_app
from merknera.config import Config

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


@asynccontextmanager
async def running(config: Config) -> AsyncIterator[tuple[Config, Platform]]:
    """The platform serving HTTP; yields the config with its real port, and the platform."""
    sock = bind(config.host, config.port)
    gateway_sock = bind(config.host, config.battlebot_port) if config.battlebot_port else None
    config = dataclasses.replace(config, port=sock.getsockname()[1])
    if gateway_sock is not None:
        config = dataclasses.replace(config, battlebot_port=gateway_sock.getsockname()[1])
    platform = Platform(config)
    tls = platform.battlebot.tls()  # before start-up: a bad certificate stops it at once
    runner = web.AppRunner(build_app(config, platform), access_log=None, handle_signals=False,
                           shutdown_timeout=2.0, **platform.guard.runner_options())
    gateway: web.AppRunner | None = None
    try:
        await runner.setup()
        await platform.guard.site(runner, sock).start()
        if gateway_sock is not None:
            # After the platform's start-up (the main application's), which the listener
            # needs; stopped before it.
            gateway = web.AppRunner(platform.battlebot.app(), access_log=None,
                                    handle_signals=False, shutdown_timeout=2.0,
                                    **platform.guard.runner_options())
            await gateway.setup()
            await platform.guard.site(gateway, gateway_sock, ssl_context=tls).start()
        yield config, platform
    finally:
        try:
            if gateway is not None:
                await platform.stop_games()
                await gateway.cleanup()
        finally:
            await runner.cleanup()
            sock.close()
            if gateway_sock is not None:
                gateway_sock.close()


def battlebot_url(config: Config) -> str:
    """The Battlebot listener's base URL (its clients are given its ``host:port``)."""
    scheme = "https" if config.battlebot_tls_cert else "http"
    host = f"[{config.host}]" if ":" in config.host else config.host
    return f"{scheme}://{host}:{config.battlebot_port}"


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
        print(f"Merknera listening on {live.base_url} (database {live.db})", flush=True)
        if live.battlebot_port:
            print(f"Battlebot listener on {battlebot_url(live)}", flush=True)
        await wait_for_signal()
        log.info("stopping")

"""Running the platform's HTTP server until a signal, on a port bound before start-up.

The socket is bound first so that ``port = 0`` works: the platform learns its real port
(and so its public URL) before it starts.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from aiohttp import web

from merknera import heap
from merknera.app import Platform, build_app
from merknera.config import Config
from merknera.guard import GuardedListener
from merknera.hosts import host_port
from merknera.logformat import access_options
from merknera.store import node_lock
from merknera.store.db import redacted
from merknera.tls import server_context

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


MAIN_LISTENER = "main"
"""The name the main listener's connections are counted under (the gateways' are named by
their gateway: ``battlebot``, ``hexagons``, ``kalaha``)."""


def gateway_ports(config: Config) -> dict[str, int]:
    """The gateways' ports (0: no listener), by their settings' keys."""
    return {"battlebot_port": config.battlebot.port, "hexagons_port": config.hexagons.port,
            "kalaha_port": config.kalaha.port}


@asynccontextmanager
async def running(config: Config) -> AsyncIterator[tuple[Config, Platform]]:
    """The platform serving HTTP; yields the config with its real ports, and the platform.

    :raises StoreError: when another process serves the same SQLite file.
    """
    with node_lock.serving(config.store.db):
        async with _running(config) as running_platform:
            yield running_platform


@asynccontextmanager
async def _running(config: Config) -> AsyncIterator[tuple[Config, Platform]]:
    # First: a certificate that cannot be served stops the start at once.
    main_tls = None if config.listeners.tls is None else server_context(config.listeners.tls)
    own = config.battlebot_tls
    listener_tls = {"battlebot_port": main_tls if own is None or own == config.listeners.tls
                    else server_context(own)}
    sock = bind(config.listeners.host, config.listeners.port)
    gateway_socks = {key: bind(config.listeners.host, port)
                     for key, port in gateway_ports(config).items() if port}
    config = config.replace(port=sock.getsockname()[1], **{
        key: gateway_sock.getsockname()[1] for key, gateway_sock in gateway_socks.items()})
    platform = Platform(config)
    options = {**access_options(config.log), **platform.guard.runner_options()}
    runner = web.AppRunner(build_app(config, platform), handle_signals=False,
                           shutdown_timeout=2.0, **options)
    gateways: list[web.AppRunner] = []
    listeners: list[GuardedListener] = []
    try:
        await runner.setup()
        listeners.append(platform.guard.listener(runner, sock, main_tls, MAIN_LISTENER))
        await listeners[-1].start()
        # After the platform's start-up (the main application's), which the listeners
        # need; stopped before it.
        for key, app in platform.listeners().items():
            gateway = web.AppRunner(app, handle_signals=False, shutdown_timeout=2.0, **options)
            await gateway.setup()
            gateways.append(gateway)
            listeners.append(platform.guard.listener(
                gateway, gateway_socks[key], listener_tls.get(key, main_tls),
                key.removesuffix("_port")))
            await listeners[-1].start()
        yield config, platform
    finally:
        try:
            if gateways:
                await platform.stop_games()
            for gateway, listener in zip(gateways, listeners[1:], strict=False):
                listener.stop()
                await gateway.cleanup()
        finally:
            if listeners:
                listeners[0].stop()
            await runner.cleanup()
            sock.close()
            for gateway_sock in gateway_socks.values():
                gateway_sock.close()


def battlebot_url(config: Config) -> str:
    """The Battlebot listener's base URL (its clients are given its ``host:port``)."""
    scheme = "https" if config.battlebot_tls else "http"
    return f"{scheme}://{host_port(config.listeners.host, config.battlebot.port)}"


@contextmanager
def stop_signals() -> Iterator[asyncio.Event]:
    """An event that SIGINT or SIGTERM sets, from the start of the block to its end: a
    signal sent as soon as a line printed in the block is read is not lost."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        yield stop
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def serve(config: Config) -> None:
    """Serve until SIGINT or SIGTERM; prints ``Merknera listening on <url>`` when ready."""
    async with running(config) as (live, _):
        heap.settle()
        with stop_signals() as stop:
            _announce(live)
            await stop.wait()
        log.info("stopping")


def _announce(live: Config) -> None:
    """The lines ``merknera serve`` prints once it serves: its URLs and its database."""
    print(f"Merknera listening on {live.listeners.base_url} "
          f"(database {redacted(live.store.db)})", flush=True)
    if live.battlebot.port:
        print(f"Battlebot listener on {battlebot_url(live)}", flush=True)
    if live.hexagons.port:
        print(f"Hexagons listener on {live.listeners.url(live.hexagons.port)}", flush=True)
    if live.kalaha.port:
        print(f"Kalaha listener on {live.listeners.url(live.kalaha.port)}/api/boards",
              flush=True)

"""Registering a bot with the platform and running it from the command line.

:func:`register` calls ``RegistrationService.Register`` (retrying while the platform is not
up yet); :func:`run_bot` parses the common command line, starts the bot's HTTP server,
registers it and serves until SIGINT or SIGTERM; :func:`strategy_main` is the whole
``main()`` of a bot that plays one of several named strategies.  Like :mod:`merknera_bots.kit` it
imports nothing from ``merknera``: copy both files next to your bot if you like.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp
import jsonrpcclient
from aiohttp import web

from merknera_bots.kit import Bot

__all__ = ["RegisterResult", "RegistrationError", "Servable", "make_parser",
           "platform_rpc_url", "register", "run_bot", "strategy_main"]

logger = logging.getLogger(__name__)


# --- registration -----------------------------------------------------------------------


class RegistrationError(Exception):
    """Registration failed; the message says why (the platform's own words where it sent any)."""


@dataclass(frozen=True)
class RegisterResult:
    """The platform's answer to ``RegistrationService.Register``."""

    message: str
    """The greeting, e.g. ``Hello, <name> (version: <version>), good luck with Tic-Tac-Toe!``."""
    secret: str | None
    """The key of the platform's call signatures (None from a platform that sends none)."""


def platform_rpc_url(platform_url: str) -> str:
    """The platform's JSON-RPC URL: ``platform_url`` + ``/rpc`` unless it ends so already."""
    url = platform_url.rstrip("/")
    return url if url.endswith("/rpc") else url + "/rpc"


async def register(
    platform_url: str,
    *,
    token: str,
    botname: str,
    botversion: str,
    game: str,
    rpcendpoint: str,
    programminglanguage: str = "Python",
    website: str = "",
    description: str = "",
    retry_for: float = 10.0,
    protocol: str | None = None,
) -> RegisterResult:
    """Call ``RegistrationService.Register`` on the platform at ``platform_url``.

    ``protocol`` names how the platform should call the bot (e.g. ``"squelch-rest"``); it
    is sent only when given, and without it the platform speaks JSON-RPC.

    A platform that refuses connections is retried with back-off for up to ``retry_for``
    seconds, since bots and the platform are often started together.

    :raises RegistrationError: on an error reply (with the platform's message), a malformed
        reply, or a platform that cannot be reached.
    """
    url = platform_rpc_url(platform_url)
    params = {
        "token": token, "botname": botname, "botversion": botversion, "game": game,
        "rpcendpoint": rpcendpoint, "programminglanguage": programminglanguage,
        "website": website, "description": description,
    }
    if protocol is not None:
        params["protocol"] = protocol
    call = jsonrpcclient.request("RegistrationService.Register", params=params)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        status, body = await _post_with_retry(session, url, call, retry_for)
    return _read_register_reply(url, status, body, call["id"])


async def _post_with_retry(session: aiohttp.ClientSession, url: str, call: dict[str, Any],
                           retry_for: float) -> tuple[int, bytes]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + retry_for
    pause = 0.1
    while True:
        try:
            async with session.post(url, json=call) as response:
                status, body = response.status, await response.read()
                wait = _retry_after(response.headers.get("Retry-After"))
            # 429: too many registrations (or wrong tokens) for now; the platform says when
            # to try again, and we do if that is within retry_for.
            if status != 429 or wait is None or wait > deadline - loop.time():
                return status, body
            logger.info("the platform asks to register again in %g s; waiting", wait)
            await asyncio.sleep(wait)
        except aiohttp.ClientConnectorError as exc:
            left = deadline - loop.time()
            if left <= 0:
                raise RegistrationError(f"cannot reach the platform at {url}: {exc}") from exc
            logger.info("platform at %s not reachable yet (%s); retrying", url, exc)
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, 1.0)
        # A read timeout is also a ClientError subclass in aiohttp; either way we give up.
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise RegistrationError(f"registration call to {url} failed: {exc!r}") from exc


def _retry_after(header: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (None when absent or not whole seconds)."""
    if header is None or not header.isascii() or not header.strip().isdigit():
        return None
    return float(header.strip())


def _read_register_reply(url: str, status: int, body: bytes, call_id: Any) -> RegisterResult:
    snippet = body[:200].decode("utf-8", errors="replace")
    malformed = f"malformed reply from {url} (HTTP {status}): {snippet!r}"
    try:
        reply = json.loads(body)
    except (ValueError, RecursionError):
        raise RegistrationError(malformed) from None
    if not isinstance(reply, dict):
        raise RegistrationError(malformed)
    error = reply.get("error")
    # The 1.0 dialect's failure is {"result": null, "error": "<message>"}: jsonrpcclient.parse
    # would see "result" and call it a success (or raise TypeError on the string), so the
    # error member is read first.
    if isinstance(error, str):
        raise RegistrationError(error)
    if error is not None:
        reply = {k: v for k, v in reply.items() if k != "result"}
    # parse() raises KeyError/TypeError on a reply missing "id", "result" or "error", or with
    # an error that is not {"code", "message"}.
    try:
        response = jsonrpcclient.parse(reply)
    except (KeyError, TypeError):
        raise RegistrationError(malformed) from None
    if isinstance(response, jsonrpcclient.Error):
        data = f": {response.data}" if response.data not in (None, "") else ""
        raise RegistrationError(f"{response.message}{data}")
    if not isinstance(response, jsonrpcclient.Ok):
        raise RegistrationError(malformed)
    # parse() does not compare ids; a reply to some other call is no answer to ours.
    if response.id != call_id:
        raise RegistrationError(f"reply from {url} has id {response.id!r}, expected {call_id!r}")
    result = response.result
    if not isinstance(result, dict) or not isinstance(result.get("message"), str):
        raise RegistrationError(malformed)
    secret = result.get("secret")
    if secret is not None and (not isinstance(secret, str) or not secret):
        raise RegistrationError(malformed)
    return RegisterResult(message=result["message"], secret=secret)


# --- the command line -------------------------------------------------------------------


def make_parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with the options every bot has; add the bot's own to it.

    ``--platform URL`` (default http://127.0.0.1:8080), ``--token TOKEN``, ``--host HOST``
    (default 127.0.0.1), ``--port PORT`` (0 picks a free one), ``--name NAME``,
    ``--version VERSION`` (default 1.0.0) and ``--no-register`` (serve only).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--platform", default="http://127.0.0.1:8080", metavar="URL",
                        help="the platform's base URL (its JSON-RPC endpoint is URL/rpc)")
    parser.add_argument("--token", default="", help="your API token on the platform")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on; also the host in the registered endpoint")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free)")
    parser.add_argument("--name", default=None, help="the bot's name on the platform")
    parser.add_argument("--version", default="1.0.0", help="the bot's version")
    parser.add_argument("--no-register", action="store_true",
                        help="serve only; do not register with the platform")
    return parser


class Servable(Protocol):
    """What :func:`run_bot` serves: a :class:`~merknera_bots.kit.Bot`, or a bot speaking another
    protocol that likewise checks signatures once it has the secret."""

    secret: str | None
    """Set to the secret from the Register reply."""

    def make_app(self) -> web.Application:
        """The aiohttp application answering the platform's calls."""
        ...


def run_bot(bot: Servable, args: argparse.Namespace, *, game: str, default_name: str,
            description: str = "", website: str = "", protocol: str | None = None) -> int:
    """Serve ``bot``, register it as a player of ``game`` and serve until SIGINT/SIGTERM.

    ``args`` come from a :func:`make_parser` parser. Once the bot is registered (or
    listening, with ``--no-register``) one line ``READY <port> <name>`` goes to stdout.
    The endpoint registered is ``http://<host>:<port>/rpc``; with a ``protocol`` (see
    :func:`register`) it is the base URL ``http://<host>:<port>``, since such a protocol
    names its own paths.  Returns the exit code: 0 after a signal, 2 when registration fails.
    """
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    name: str = args.name or default_name
    if not args.no_register and not args.token:
        print("--token is required unless --no-register is given", file=sys.stderr)
        return 2
    return asyncio.run(_serve(bot, args, game=game, name=name, description=description,
                              website=website, protocol=protocol))


def strategy_main(
    argv: Sequence[str] | None,
    *,
    title: str,
    game: str,
    name_prefix: str,
    strategies: Mapping[str, str],
    default: str,
    make_bot: Callable[..., Bot],
    delay: bool = True,
    seed_help: str = "seed of the random strategy's generator",
) -> int:
    """The command line of a bot with named strategies: parse ``argv``, build the bot, run it.

    The parser is :func:`make_parser` (``title`` is its description) plus
    ``--strategy`` (choices: the keys of ``strategies``, in their order; default
    ``default``), ``--delay SECONDS`` (when ``delay``: wait this long before each move;
    default 0) and ``--seed N`` (help text ``seed_help``; default None).  The bot is
    ``make_bot(strategy, delay=..., seed=...)`` (``delay`` only when ``delay``), registered
    as a player of ``game`` named ``<name_prefix>-<strategy>`` unless ``--name`` is given,
    with ``strategies[strategy]`` as its description.  Returns :func:`run_bot`'s exit code.
    """
    parser = make_parser(title)
    parser.add_argument("--strategy", choices=tuple(strategies), default=default)
    if delay:
        parser.add_argument("--delay", type=float, default=0.0, metavar="SECONDS",
                            help="wait this long before answering each NextMove")
    parser.add_argument("--seed", type=int, default=None, help=seed_help)
    args = parser.parse_args(argv)
    options: dict[str, Any] = {"seed": args.seed}
    if delay:
        options["delay"] = args.delay
    bot = make_bot(args.strategy, **options)
    return run_bot(bot, args, game=game, default_name=f"{name_prefix}-{args.strategy}",
                   description=strategies[args.strategy])


def _endpoint(host: str, port: int, path: str = "/rpc") -> str:
    return f"http://[{host}]:{port}{path}" if ":" in host else f"http://{host}:{port}{path}"


async def _serve(bot: Servable, args: argparse.Namespace, *, game: str, name: str,
                 description: str, website: str, protocol: str | None) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    for signum in signals:
        loop.add_signal_handler(signum, stop.set)
    runner = web.AppRunner(bot.make_app(), access_log=None)
    await runner.setup()
    try:
        # Listen first, register second: the platform pings a bot and may start its games as
        # soon as it is registered (Merknera's own bot registered first and lost those pings).
        await web.TCPSite(runner, args.host, args.port).start()
        port = int(runner.addresses[0][1])
        if not args.no_register:
            registering = asyncio.create_task(register(
                args.platform, token=args.token, botname=name, botversion=args.version,
                game=game, website=website, description=description, protocol=protocol,
                rpcendpoint=_endpoint(args.host, port, "/rpc" if protocol is None else "")))
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait({registering, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if not registering.done():  # a signal while still trying to reach the platform
                registering.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await registering
                return 0
            try:
                result = registering.result()
            except RegistrationError as exc:
                print(f"registration failed: {exc}", file=sys.stderr)
                return 2
            bot.secret = result.secret
            logger.info("%s", result.message)
        print(f"READY {port} {name}", flush=True)
        await stop.wait()
        logger.info("stopping")
        return 0
    finally:
        await runner.cleanup()
        for signum in signals:
            loop.remove_signal_handler(signum)

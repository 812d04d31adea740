"""Registering a bot with the platform and running it from the command line.

A bot is reached one of two ways, with the same game code (:meth:`merknera_bots.kit.Bot.dispatch`)
either way:

- **over HTTP** (the default): the bot serves JSON-RPC on a port and :func:`register` calls
  ``RegistrationService.Register`` with that URL (retrying while the platform is not up
  yet); the platform then POSTs its calls there.
- **connected out** (``--connect``): for a bot the platform cannot reach (behind NAT, on a
  laptop), :class:`PlatformConnection` opens a WebSocket to the platform's ``/rpc/ws``,
  registers on it, answers the platform's calls over it and carries the bot's own calls
  (``Scrabble.Ready``); when the socket drops it connects and registers again.

:func:`run_bot` parses the common command line and runs the bot either way until SIGINT or
SIGTERM; :func:`strategy_main` is the whole ``main()`` of a bot that plays one of several
named strategies.  Like :mod:`merknera_bots.kit` it imports nothing from ``merknera``: copy
both files next to your bot if you like.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import enum
import itertools
import json
import logging
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import jsonrpcclient
from aiohttp import web

from merknera_bots.kit import Bot

__all__ = ["ConnectionLostError", "Dispatcher", "PlatformCallError", "PlatformConnection",
           "RegisterResult", "RegistrationError", "Servable", "make_parser",
           "platform_rpc_url", "platform_ws_url", "register", "run_bot", "strategy_main"]

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
    return _register_result(response.result, malformed)


def _register_result(result: Any, malformed: str) -> RegisterResult:
    """The Register call's ``result`` read, or RegistrationError(``malformed``)."""
    if not isinstance(result, dict) or not isinstance(result.get("message"), str):
        raise RegistrationError(malformed)
    secret = result.get("secret")
    if secret is not None and (not isinstance(secret, str) or not secret):
        raise RegistrationError(malformed)
    return RegisterResult(message=result["message"], secret=secret)


# --- connecting out ---------------------------------------------------------------------

REPLACED_CLOSE = 4000
"""The close code of a socket that a newer connection of the same bot replaced."""
REFUSED_CLOSE = 1008
"""The close code of a socket whose registration failed or never came (and, after a
registration, of one that sent too much)."""
_TRY_AGAIN_CODES = frozenset({-32008, -32603})
"""Register errors that are the platform's passing trouble, not the bot's: too many
registrations for now (rate limited), or an internal error (its store is down)."""
_IGNORED_REPLIES = (".Complete", ".Error")
"""The calls whose replies the platform ignores (``<G>.Complete``, ``<G>.Error``): on the
socket they are handled but not answered, as the protocol allows (a frame saved per game)."""
_HANDSHAKE_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=30)
_CLOSE_TIMEOUT = aiohttp.ClientWSTimeout(ws_receive=None, ws_close=5.0)


class _Ending(enum.Enum):
    """How one socket to the platform ended."""

    REPLACED = "a newer socket of the bot replaced it"
    DROPPED = "it closed after the bot registered on it"
    FAILED = "the bot did not register on it, or was asked to slow down"


class ConnectionLostError(ConnectionError):
    """The socket to the platform closed before the answer to a call came: the platform may
    or may not have taken the call."""


class PlatformCallError(Exception):
    """The platform answered one of the bot's calls with an error."""

    def __init__(self, code: int | None, message: str, data: Any = None) -> None:
        super().__init__(message if data in (None, "") else f"{message}: {data}")
        self.code = code
        """The JSON-RPC error code (None for an error without one)."""
        self.message = message
        self.data = data


@runtime_checkable
class Dispatcher(Protocol):
    """What a :class:`PlatformConnection` plays with: a :class:`~merknera_bots.kit.Bot`, or
    anything else that answers one JSON-RPC message."""

    async def dispatch(self, text: str) -> str | None:
        """The reply to the message ``text``, or None when it needs none."""
        ...


def platform_ws_url(platform_url: str) -> str:
    """The platform's WebSocket for bots that connect out: ``/rpc/ws`` under ``platform_url``
    (or after its ``/rpc``), ``ws://`` for ``http://`` and ``wss://`` for ``https://``."""
    parts = urlsplit(platform_url.strip())
    scheme = parts.scheme.lower()
    scheme = {"http": "ws", "https": "wss"}.get(scheme, scheme)
    path = parts.path.rstrip("/")
    if not path.endswith("/rpc/ws"):
        path += "/ws" if path.endswith("/rpc") else "/rpc/ws"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


def _result_of(response: dict[str, Any]) -> Any:
    """A JSON-RPC response's result, or PlatformCallError for its error (either dialect)."""
    error = response.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        raise PlatformCallError(code if isinstance(code, int) else None,
                                str(error.get("message", "error")), error.get("data"))
    if error is not None:
        raise PlatformCallError(None, str(error))
    if "result" not in response:
        raise PlatformCallError(None, f"malformed answer: {json.dumps(response)[:200]}")
    return response["result"]


class _Socket:
    """One WebSocket to the platform and the bot's calls on it that await their answers."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.close_reason = ""
        """The reason in the platform's close frame, once it has sent one."""
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}

    async def call(self, method: str, params: Mapping[str, Any]) -> Any:
        """Send a request and return the result of its answer.

        :raises PlatformCallError: for an error answer.
        :raises ConnectionLostError: when the socket closes first.
        """
        call_id = next(self._ids)
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[call_id] = answer
        request = {"jsonrpc": "2.0", "method": method, "params": dict(params), "id": call_id}
        try:
            await self.ws.send_str(json.dumps(request))
            response = await answer
        except ConnectionLostError:
            raise
        except (ConnectionError, aiohttp.ClientError) as exc:  # the send, on a closing socket
            raise ConnectionLostError(f"{method} was not sent: {exc}") from None
        finally:
            self._waiting.pop(call_id, None)
        return _result_of(response)

    def answer(self, response: dict[str, Any]) -> bool:
        """Hand ``response`` to the call awaiting it; False when no call has its id."""
        call_id = response.get("id")
        answer = self._waiting.pop(call_id, None) if isinstance(call_id, int) else None
        if answer is None:
            return False
        if not answer.done():
            answer.set_result(response)
        return True

    def lost(self) -> None:
        """The socket has closed: every call still awaiting an answer fails."""
        for answer in self._waiting.values():
            if not answer.done():
                answer.set_exception(ConnectionLostError(
                    f"the socket closed (code {self.ws.close_code}) before the answer came"))
        self._waiting.clear()


class PlatformConnection:
    """A bot's WebSocket to the platform (``/rpc/ws``, section 7 of the protocol), kept open.

    :meth:`run` connects, registers with ``registration`` (the params of
    ``RegistrationService.Register`` but ``rpcendpoint`` and ``protocol``, which a connected
    bot does not send) and then answers every call the platform sends on the socket with
    ``bot.dispatch``, each in a task of its own so that several games play at once, writing
    each reply as soon as it is ready (but those to ``<G>.Complete`` and ``<G>.Error``,
    which the platform ignores).  :meth:`call` sends the bot's own calls (such as
    ``Scrabble.Ready``) on the same socket.

    When the socket drops, or the platform cannot be reached, it connects and registers
    again (same name and version, so the bot's games go on), after a pause that starts at
    ``first_pause`` and doubles up to ``max_pause``.  The platform then sends again the
    calls left unanswered, with their ids, which the reply cache of
    :class:`~merknera_bots.kit.Bot` answers as before.  A reply finished after its socket
    closed is dropped: the call comes again on the new socket.  Calls carry no signatures: the
    bot opened the socket with its token.
    """

    def __init__(self, bot: Dispatcher, platform_url: str, registration: Mapping[str, str], *,
                 first_pause: float = 0.1, max_pause: float = 5.0, heartbeat: float = 30.0,
                 call_timeout: float = 30.0) -> None:
        self.bot = bot
        self.url = platform_ws_url(platform_url)
        self.registration = {key: value for key, value in registration.items()
                             if key not in ("rpcendpoint", "protocol")}
        self.first_pause = first_pause
        self.max_pause = max_pause
        self.heartbeat = heartbeat
        """Seconds between WebSocket pings, which find a connection that died silently."""
        self.call_timeout = call_timeout
        self._socket: _Socket | None = None
        self._registered = asyncio.Event()
        self._answering: set[asyncio.Task[None]] = set()

    @property
    def registered(self) -> bool:
        """Whether a registered socket is open now."""
        return self._registered.is_set()

    async def call(self, method: str, params: Mapping[str, Any]) -> Any:
        """Call ``method`` on the platform over the socket; returns the result.

        Waits for a registered socket if there is none at the moment (a reconnection under
        way); :attr:`call_timeout` bounds the wait and the call together.

        :raises PlatformCallError: when the platform answers with an error.
        :raises ConnectionLostError: when the socket closes before the answer: call again,
            on the next socket.
        :raises TimeoutError: when no registered socket or no answer came in time.
        """
        async with asyncio.timeout(self.call_timeout):
            while (socket := self._socket) is None:
                await self._registered.wait()
            return await socket.call(method, params)

    async def run(self, stop: asyncio.Event,
                  on_registered: Callable[[RegisterResult], None] | None = None) -> None:
        """Connect, register and answer the platform's calls until ``stop`` is set.

        ``on_registered`` is called with the platform's answer after every registration:
        the first and each one after a reconnection.  Returns when ``stop`` is set (the
        socket is closed and the calls being answered are cancelled), and also when the
        platform closes the socket with code 4000 because a newer connection of the same bot
        replaced it: the newer copy plays on, and this one reconnecting would only replace
        it in turn.

        :raises RegistrationError: when the platform refuses the registration (and closes
            the socket with code 1008), with its reason; not when it only asks to wait
            (too many registrations for now, or its store is down): that is tried again.
        """
        connecting = asyncio.create_task(self._keep_connected(on_registered))
        stopping = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait({connecting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            if not connecting.done():
                connecting.cancel()
            try:
                await connecting
            except asyncio.CancelledError:
                if not connecting.cancelled():
                    raise
            finally:
                for task in self._answering:
                    task.cancel()
                await asyncio.gather(*self._answering, return_exceptions=True)

    async def _keep_connected(self, on_registered: Callable[[RegisterResult], None] | None
                              ) -> None:
        pause = self.first_pause
        async with aiohttp.ClientSession(timeout=_HANDSHAKE_TIMEOUT) as session:
            while True:
                ending = await self._one_socket(session, on_registered)
                if ending is _Ending.REPLACED:
                    return
                if ending is _Ending.DROPPED:
                    pause = self.first_pause
                logger.info("connecting to %s again in %g s", self.url, pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, self.max_pause)

    async def _one_socket(self, session: aiohttp.ClientSession,
                          on_registered: Callable[[RegisterResult], None] | None) -> _Ending:
        """One socket, from its connection to its close."""
        try:
            ws = await session.ws_connect(self.url, heartbeat=self.heartbeat,
                                          timeout=_CLOSE_TIMEOUT)
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            logger.warning("cannot connect to %s: %s", self.url, exc or type(exc).__name__)
            return _Ending.FAILED
        socket = _Socket(ws)
        reading = asyncio.create_task(self._read(socket))
        try:
            result = await self._register(socket)
            if result is None:
                return _Ending.FAILED
            self._socket = socket
            self._registered.set()
            logger.info("registered on %s", self.url)
            if on_registered is not None:
                on_registered(result)
            await reading
            if ws.close_code == REPLACED_CLOSE:
                logger.warning("a newer connection of this bot replaced this one (%s); "
                               "stopping", socket.close_reason or "close code 4000")
                return _Ending.REPLACED
            logger.warning("the connection to %s closed (code %s%s)", self.url, ws.close_code,
                           f": {socket.close_reason}" if socket.close_reason else "")
            # 1008 after the registration is the platform's "slow down": no quick return.
            return _Ending.FAILED if ws.close_code == REFUSED_CLOSE else _Ending.DROPPED
        finally:
            if self._socket is socket:
                self._socket = None
                self._registered.clear()
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading
            await ws.close()

    async def _register(self, socket: _Socket) -> RegisterResult | None:
        """Register on ``socket``: the platform's answer, or None to try again on another.

        :raises RegistrationError: when the platform refuses for good.
        """
        try:
            async with asyncio.timeout(self.call_timeout):
                result = await socket.call("RegistrationService.Register", self.registration)
        except PlatformCallError as exc:
            if exc.code in _TRY_AGAIN_CODES:
                logger.warning("the platform cannot register the bot now (%s)", exc)
                return None
            raise RegistrationError(str(exc)) from None
        except (ConnectionLostError, TimeoutError) as exc:
            if socket.ws.close_code == REFUSED_CLOSE:
                raise RegistrationError(_refusal(socket)) from None
            logger.warning("registering on %s failed: %s", self.url,
                           exc or "no answer in time")
            return None
        malformed = f"malformed Register answer on {self.url}: {json.dumps(result)[:200]}"
        return _register_result(result, malformed)

    async def _read(self, socket: _Socket) -> None:
        """Take the platform's messages until the socket closes."""
        try:
            while True:
                message = await socket.ws.receive()
                if message.type is aiohttp.WSMsgType.TEXT:
                    self._take(socket, message.data)
                elif message.type is aiohttp.WSMsgType.BINARY:
                    logger.warning("ignored a binary frame from the platform")
                else:
                    if message.type is aiohttp.WSMsgType.CLOSE:
                        socket.close_reason = str(message.extra or "")
                    elif message.type is aiohttp.WSMsgType.ERROR:
                        logger.warning("the connection to %s failed: %r", self.url,
                                       message.data)
                    return
        finally:
            socket.lost()

    def _take(self, socket: _Socket, text: str) -> None:
        """One message: the answer to a call of ours, or a call to answer (in a task)."""
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            message = None  # Bot.dispatch answers with the parse error
        if (isinstance(message, dict) and "method" not in message
                and ("result" in message or "error" in message)):
            if not socket.answer(message):
                logger.warning("an answer to no call of this bot: %s", text[:200])
            return
        method = message.get("method") if isinstance(message, dict) else None
        ignored = isinstance(method, str) and method.endswith(_IGNORED_REPLIES)
        task = asyncio.create_task(self._answer(socket, text, send=not ignored))
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _answer(self, socket: _Socket, text: str, *, send: bool) -> None:
        try:
            reply = await self.bot.dispatch(text)
        except Exception:
            logger.exception("answering a call failed: %s", text[:200])
            return
        if reply is None or not send:
            return
        if socket.ws.closed:
            logger.info("the socket closed before a reply was ready; the platform sends "
                        "the call again")
            return
        try:
            await socket.ws.send_str(reply)
        except (ConnectionError, aiohttp.ClientError) as exc:
            logger.info("a reply was not sent (%s); the platform sends the call again", exc)


def _refusal(socket: _Socket) -> str:
    reason = socket.close_reason or "no reason given"
    return f"the platform closed the connection (code {REFUSED_CLOSE}): {reason}"


# --- the command line -------------------------------------------------------------------


def make_parser(description: str, *, connect: bool = True) -> argparse.ArgumentParser:
    """An argument parser with the options every bot has; add the bot's own to it.

    ``--platform URL`` (default http://127.0.0.1:8080), ``--token TOKEN``, ``--host HOST``
    (default 127.0.0.1), ``--port PORT`` (0 picks a free one), ``--name NAME``,
    ``--version VERSION`` (default 1.0.0), ``--no-register`` (serve only) and, unless
    ``connect`` is False, ``--connect``: connect out to the platform's WebSocket instead of
    serving HTTP (``--host`` and ``--port`` are then unused).  Pass ``connect=False`` for a
    bot the platform can only call over HTTP (one speaking another protocol).
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
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--no-register", action="store_true",
                     help="serve only; do not register with the platform")
    if connect:
        how.add_argument("--connect", action="store_true",
                         help="connect out to the platform (a WebSocket to URL/rpc/ws, wss:// "
                              "for an https:// URL) and play over it instead of serving HTTP: "
                              "for a bot the platform cannot reach; --host and --port are "
                              "unused")
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
            description: str = "", website: str = "", protocol: str | None = None,
            on_connection: Callable[[PlatformConnection], None] | None = None) -> int:
    """Run ``bot`` as a player of ``game`` until SIGINT/SIGTERM: served over HTTP and
    registered, or (``--connect``) connected out over a WebSocket.

    ``args`` come from a :func:`make_parser` parser.  Over HTTP the endpoint registered is
    ``http://<host>:<port>/rpc``; with a ``protocol`` (see :func:`register`) it is the base
    URL ``http://<host>:<port>``, since such a protocol names its own paths.  With
    ``--connect`` a :class:`PlatformConnection` carries the calls; ``on_connection`` is
    given it before it connects, for a bot that makes calls of its own on it
    (``Scrabble.Ready``).  Only a bot that speaks JSON-RPC (no ``protocol``) can connect.

    Once the bot is registered (or listening, with ``--no-register``) one line
    ``READY <port> <name>`` goes to stdout; a connected bot listens on no port and prints
    ``READY 0 <name>``, once, after its first registration.  Returns the exit code: 0 after
    a signal, and for a connected bot also when a newer connection of the same bot replaced
    its socket (it stops for the newer copy; a supervisor that restarts on failure would
    otherwise keep the two replacing each other); 2 when registration fails, or for
    ``--connect`` on a bot that cannot connect.
    """
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    name: str = args.name or default_name
    connect = bool(getattr(args, "connect", False))
    if connect and (protocol is not None or not isinstance(bot, Dispatcher)):
        print(f"--connect is only for bots that speak JSON-RPC; this one speaks "
              f"{protocol or 'another protocol'} and must be served over HTTP",
              file=sys.stderr)
        return 2
    if not args.no_register and not args.token:
        print("--token is required unless --no-register is given", file=sys.stderr)
        return 2
    if connect:
        assert isinstance(bot, Dispatcher)
        registration = {"token": args.token, "botname": name, "botversion": args.version,
                        "game": game, "programminglanguage": "Python", "website": website,
                        "description": description}
        return asyncio.run(_connect(bot, args.platform, registration, name=name,
                                    on_connection=on_connection))
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


async def _connect(bot: Dispatcher, platform: str, registration: Mapping[str, str], *,
                   name: str,
                   on_connection: Callable[[PlatformConnection], None] | None) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    for signum in signals:
        loop.add_signal_handler(signum, stop.set)
    connection = PlatformConnection(bot, platform, registration)
    if on_connection is not None:
        on_connection(connection)
    announced = False

    def registered(result: RegisterResult) -> None:
        nonlocal announced
        logger.info("%s", result.message)
        if not announced:
            print(f"READY 0 {name}", flush=True)
            announced = True

    try:
        await connection.run(stop, registered)
    except RegistrationError as exc:
        print(f"registration failed: {exc}", file=sys.stderr)
        return 2
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)
    logger.info("stopping")
    return 0


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

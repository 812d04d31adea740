"""A Battlebot game client for tests, run as its own process.

It speaks the two protocols of the seed system (dprgarner/battlebot-server and
battlebot-client-py, see the research notes part (a)):

* era A: REST registration ``POST /bots/<game>`` and a salted sha256 login (the server
  sends ``{"salt"}`` first, the client answers with ``sha256(pass_hash + salt)``);
  game states carry ``nextPlayer``, ``complete``, ``victor`` and ``reason``.
* era C: GraphQL registration (``registerBot``) and a plain password login sent by the
  client first; game states carry ``waitingFor`` and ``result``.

Every event is one JSON object on its own stdout line, so a test can follow the run.
Exit status: 0 when it ran as asked (win, loss or draw), 2 when registration failed,
3 when the login failed (any reply but ``"OK"``, or a close before one), 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import ssl
import sys
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit, urlunsplit

import aiohttp

WebSocket: TypeAlias = aiohttp.ClientWebSocketResponse[Literal[True]]

GAME_TYPES = {"noughtsandcrosses": "NOUGHTS_AND_CROSSES", "numberwang": "NUMBERWANG"}
BEHAVIOURS = ("normal", "invalid", "malformed", "binary", "slow", "disconnect", "silent",
              "nologin", "badlogin", "eager")
# Well-behaved players move once per turn: a second "your turn" before the turn has passed
# (say, an echo of the opponent's invalid turn) would otherwise draw an out-of-turn move.
# Comparing states would not do: numberwang can return to an earlier state (+2, then -2).
# The misbehaving ones do repeat themselves, on purpose.
ANSWER_ONCE = frozenset({"normal", "slow", "eager"})
REGISTER_MUTATION = (
    "mutation($gameType: GameType!, $name: ID!, $owner: String!) "
    "{ registerBot(gameType: $gameType, name: $name, owner: $owner) "
    "{ password bot { name owner gameType dateRegistered } } }")
CLOSE_GRACE = 2.0
"""Seconds to wait for the server to close after a final state or a failed login."""
CLOSED_TYPES = frozenset({aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSING,
                          aiohttp.WSMsgType.CLOSED})


class RegistrationError(Exception):
    """Registration did not give a secret (exit 2)."""


class LoginError(Exception):
    """The server did not accept the login (exit 3)."""


class SocketClosedError(Exception):
    """The server closed the WebSocket; the ``closed`` event is already printed."""


def emit(event: str, **fields: Any) -> None:
    """Print one event as a JSON line and flush, so a reading test sees it at once."""
    print(json.dumps({"event": event, **fields}), flush=True)


def websocket_url(base: str) -> str:
    """The WebSocket root matching an http(s) base: the server has no WS path filter."""
    parts = urlsplit(base)
    scheme = {"http": "ws", "https": "wss"}[parts.scheme]
    return urlunsplit((scheme, parts.netloc, "/", "", ""))


def registration_request(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The URL and JSON body of the era's registration call."""
    base = args.url.rstrip("/")
    if args.era == "a":
        return f"{base}/bots/{args.game}", {"bot_id": args.name, "owner": args.owner}
    variables = {"gameType": GAME_TYPES[args.game], "name": args.name, "owner": args.owner}
    return f"{base}/graphql", {"query": REGISTER_MUTATION, "variables": variables}


def secret_from(era: str, status: int, body: Any) -> str | None:
    """The pass_hash (era A, from a 201) or password (era C) in a registration reply."""
    if not isinstance(body, dict):
        return None
    if era == "a":
        secret = body.get("pass_hash") if status == 201 else None
    else:
        data = body.get("data")
        bot = data.get("registerBot") if isinstance(data, dict) else None
        secret = bot.get("password") if isinstance(bot, dict) and not body.get("errors") else None
    return secret if isinstance(secret, str) else None


async def register(session: aiohttp.ClientSession, args: argparse.Namespace,
                   tls: ssl.SSLContext | bool) -> str:
    """Register the bot and return its secret; raises RegistrationError otherwise."""
    url, payload = registration_request(args)
    async with session.post(url, json=payload, ssl=tls) as response:
        text = await response.text()
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text
    emit("registered", status=response.status, body=body)
    secret = secret_from(args.era, response.status, body)
    if secret is None:
        raise RegistrationError(f"registration failed with status {response.status}")
    return secret


async def next_message(ws: WebSocket) -> Any:
    """The next message, printed as received: parsed JSON, or the raw text if not JSON.
    Raises SocketClosedError when the server closes."""
    msg = await ws.receive()
    if msg.type in CLOSED_TYPES:
        emit("closed", code=ws.close_code, by="server")
        raise SocketClosedError
    if msg.type is aiohttp.WSMsgType.ERROR:
        raise RuntimeError(f"WebSocket error: {ws.exception()!r}")
    if msg.type is aiohttp.WSMsgType.BINARY:
        value: Any = f"<binary:{len(msg.data)} bytes>"
    else:
        try:
            value = json.loads(msg.data)
        except ValueError:
            value = msg.data
    emit("received", message=value)
    return value


async def send(ws: WebSocket, data: dict[str, Any] | str | bytes) -> None:
    """Send a JSON object, a raw text frame or a binary frame, and print it.
    A send that races the server's close is reported as ``unsent``, not as a crash: the
    close that follows is what the test is after."""
    shown: Any = data if isinstance(data, dict) else (
        "<binary>" if isinstance(data, bytes) else f"<text:{data}>")
    try:
        if isinstance(data, bytes):
            await ws.send_bytes(data)
        else:
            await ws.send_str(data if isinstance(data, str) else json.dumps(data))
    except (ConnectionError, aiohttp.ClientError) as exc:
        emit("unsent", message=shown, reason=str(exc))
        return
    emit("sent", message=shown)


async def close(ws: WebSocket) -> None:
    """Close from our side; the code reported is the one we send (1000)."""
    await ws.close()
    emit("closed", code=int(aiohttp.WSCloseCode.OK), by="client")


async def await_close(ws: WebSocket) -> None:
    """Read until the server closes, as it should after a final state or a failed login;
    close ourselves if it does not do so within CLOSE_GRACE."""
    try:
        async with asyncio.timeout(CLOSE_GRACE):
            while True:
                await next_message(ws)
    except SocketClosedError:
        return
    except TimeoutError:
        await close(ws)


def login_message(args: argparse.Namespace, secret: str, salt: str) -> dict[str, Any]:
    """The era's login; ``badlogin`` spoils the hash or password but nothing else."""
    wrong = args.behaviour == "badlogin"
    message: dict[str, Any]
    if args.era == "a":
        # The pass_hash comes first, then the salt (the server's code, not its README).
        pass_hash = "wrong" + secret if wrong else secret
        login_hash = hashlib.sha256((pass_hash + salt).encode()).hexdigest()
        message = {"bot_id": args.name, "game": args.game, "login_hash": login_hash}
    else:
        message = {"gameType": GAME_TYPES[args.game], "name": args.name,
                   "password": "wrong" + secret if wrong else secret}
    if args.contest:
        message["contest"] = args.contest
    return message


async def receive_salt(ws: WebSocket) -> str:
    """Era A: the server speaks first with ``{"salt": <hex>}``."""
    try:
        first = await next_message(ws)
    except SocketClosedError:
        raise RuntimeError("the server closed before sending a salt") from None
    if not isinstance(first, dict) or not isinstance(first.get("salt"), str):
        raise RuntimeError(f"expected a salt first, got {first!r}")
    return str(first["salt"])


async def authentication_reply(ws: WebSocket) -> dict[str, Any] | None:
    """The first message with an ``authentication`` key, or None if the server closes."""
    try:
        while True:
            message = await next_message(ws)
            if isinstance(message, dict) and "authentication" in message:
                return message
    except SocketClosedError:
        return None


async def log_in(ws: WebSocket, args: argparse.Namespace, secret: str) -> None:
    """Log in as the behaviour asks; raises LoginError unless the server says OK."""
    salt = await receive_salt(ws) if args.era == "a" else ""
    if args.behaviour != "nologin":
        await send(ws, login_message(args, secret, salt))
    reply = await authentication_reply(ws)
    if reply is None:
        raise LoginError("the server closed without accepting the login")
    if reply.get("authentication") != "OK":
        await await_close(ws)
        raise LoginError(f"login refused: {reply!r}")
    if args.behaviour in ("badlogin", "nologin"):
        raise RuntimeError("the server accepted a login it should have refused")


def is_final(era: str, state: dict[str, Any]) -> bool:
    """Era A ends on ``complete``, era C on a truthy ``result``."""
    return bool(state.get("complete") if era == "a" else state.get("result"))


def is_my_turn(era: str, state: dict[str, Any], name: str) -> bool:
    """Era A names one ``nextPlayer``; era C lists the bots it is ``waitingFor``."""
    if era == "a":
        return bool(state.get("nextPlayer") == name)
    waiting = state.get("waitingFor")
    return isinstance(waiting, list) and name in waiting


def report_result(era: str, state: dict[str, Any], name: str) -> None:
    """Print the final state's victor and reason; ``won`` is null for a draw."""
    source = state if era == "a" else state.get("result")
    result = source if isinstance(source, dict) else {}
    victor = result.get("victor")
    won = None if victor is None else victor == name
    emit("result", victor=victor, reason=result.get("reason"), won=won)


def my_mark(era: str, state: dict[str, Any], name: str) -> str:
    """Our mark from ``marks``; failing that, the first seat is X (both eras)."""
    marks = state.get("marks")
    if isinstance(marks, dict):
        for mark, owner in marks.items():
            if owner == name:
                return str(mark)
    seats = state.get("players" if era == "a" else "bots") or []
    return "X" if seats and seats[0] == name else "O"


def first_empty(board: Any) -> list[int]:
    """The first empty cell, row by row; [0, 0] if there is none (it will be refused)."""
    for row_index, row in enumerate(board if isinstance(board, list) else []):
        for col_index, cell in enumerate(row):
            if cell == "":
                return [row_index, col_index]
    return [0, 0]


def turn_for(args: argparse.Namespace, state: dict[str, Any], legal: bool) -> dict[str, Any]:
    """A legal turn, or an illegal one: an off-board space, or a number that is a word."""
    if args.game == "numberwang":
        return {"n": 2} if legal else {"n": "two"}
    space = first_empty(state.get("board")) if legal else [5, 5]
    return {"mark": my_mark(args.era, state, args.name), "space": space}


async def take_turn(ws: WebSocket, args: argparse.Namespace, state: dict[str, Any]) -> bool:
    """Act on our turn as the behaviour asks; False once we have hung up."""
    behaviour = args.behaviour
    if behaviour == "disconnect":
        await close(ws)
        return False
    if behaviour == "silent":
        return True
    if behaviour == "malformed":
        await send(ws, "not json")
    elif behaviour == "binary":
        await send(ws, b"\x00\x01binary")
    elif behaviour == "invalid":
        await send(ws, turn_for(args, state, legal=False))
    else:
        if behaviour == "slow":
            await asyncio.sleep(args.delay)
        turn = turn_for(args, state, legal=True)
        await send(ws, turn)
        if behaviour == "eager":
            # The copy arrives after our turn was taken, so it is out of turn.
            await send(ws, turn)
    return True


async def play_game(ws: WebSocket, args: argparse.Namespace) -> None:
    """Read updates until the final state (then wait for the close) or the server closes."""
    moved = False
    while True:
        try:
            update = await next_message(ws)
        except SocketClosedError:
            return
        state = update.get("state") if isinstance(update, dict) else None
        if not isinstance(state, dict):
            continue
        if is_final(args.era, state):
            report_result(args.era, state, args.name)
            await await_close(ws)
            return
        if not is_my_turn(args.era, state, args.name):
            moved = False
            continue
        if moved and args.behaviour in ANSWER_ONCE:
            continue
        moved = True
        if not await take_turn(ws, args, state):
            return


async def run(args: argparse.Namespace) -> None:
    """Register if asked, then connect, log in and play ``--games`` times."""
    tls: ssl.SSLContext | bool = (
        ssl.create_default_context(cafile=args.cafile) if args.cafile else True)
    async with aiohttp.ClientSession() as session:
        secret = await register(session, args, tls) if args.register else args.secret or ""
        for _ in range(args.games):
            async with session.ws_connect(websocket_url(args.url), ssl=tls) as ws:
                emit("connected")
                await log_in(ws, args, secret)
                if args.login_only:
                    await close(ws)
                    continue
                await play_game(ws, args)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line; see the module docstring for what the run prints."""
    parser = argparse.ArgumentParser(description="A Battlebot (era A or C) test client.")
    parser.add_argument("--url", required=True, help="http(s)://host:port of the listener")
    parser.add_argument("--era", choices=("a", "c"), required=True)
    parser.add_argument("--game", choices=tuple(GAME_TYPES), required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--owner", default="Anonymous")
    parser.add_argument("--register", action="store_true", help="register before playing")
    parser.add_argument("--secret", help="pass_hash (era A) or password (era C)")
    parser.add_argument("--contest")
    parser.add_argument("--games", type=int, default=1, help="games to play, reconnecting")
    parser.add_argument("--cafile", help="a CA certificate to trust for https/wss")
    parser.add_argument("--behaviour", choices=BEHAVIOURS, default="normal")
    parser.add_argument("--delay", type=float, default=5.0, help="seconds, for slow")
    parser.add_argument("--login-only", action="store_true", help="log in, then close")
    parser.add_argument("--timeout", type=float, default=60.0, help="overall limit, seconds")
    args = parser.parse_args(argv)
    if urlsplit(args.url).scheme not in ("http", "https"):
        parser.error("--url must start with http:// or https://")
    # Only the refused logins can do without a real secret.
    if not args.register and args.secret is None and args.behaviour not in ("nologin",
                                                                             "badlogin"):
        parser.error("give --register or --secret")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the client within ``--timeout`` and map the outcome to the exit status."""
    args = parse_args(argv)
    try:
        asyncio.run(asyncio.wait_for(run(args), args.timeout))
        return 0
    except RegistrationError as exc:
        status, message = 2, str(exc)
    except LoginError as exc:
        status, message = 3, str(exc)
    except TimeoutError as exc:
        status, message = 1, str(exc) or f"timed out after {args.timeout} s"
    except Exception as exc:
        status, message = 1, f"{type(exc).__name__}: {exc}"
    emit("error", message=message)
    print(message, file=sys.stderr, flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())

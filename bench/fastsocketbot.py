"""Instantly-answering tic-tac-toe bots that connect out, for benchmarks:
``python bench/fastsocketbot.py WS_URL TOKEN N [--prefix fast] [--parallel 1]``.

The counterpart of bench/fastbot.py for bots that connect out (docs/bots/protocol.md
section 7): N bots in one process, each on a WebSocket of its own to the platform's
``/rpc/ws``.  Each answers NextMove with the first empty cell, Status.Ping with ``{"ping":
"OK"}`` and every other call with a null result, at once, as fastbot.py does over HTTP.

It is driven by lines on stdin, so that a bench can start its clock after Python has
started: it prints ``ready`` once it can connect; ``go`` then opens the N sockets,
``--parallel`` at a time, registers a bot named ``<prefix><number>`` on each and prints
``registered <ok> <refused>`` (a refusal's reason goes to stderr); ``stats`` prints
``stats <calls> <pings> <open> <closed>`` (calls answered, Status.Ping among them, sockets
open, sockets closed and by which close codes, as ``code:count`` after the figures); at the
end of stdin it closes every socket and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
from collections import Counter
from typing import Any

import aiohttp

REGISTER = "RegistrationService.Register"
IGNORED = (".Complete", ".Error")
"""The calls whose replies the platform ignores (and the protocol lets a bot omit)."""


def raise_open_files_limit() -> None:
    """Raise the soft open-files limit to the hard limit: one descriptor per socket."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Fleet:
    """The bots' sockets and what they have been asked."""

    def __init__(self, url: str, token: str, prefix: str, version: str, game: str,
                 all_replies: bool) -> None:
        self.url = url
        self.token = token
        self.prefix = prefix
        self.version = version
        self.game = game
        self.all_replies = all_replies
        self.calls = 0
        self.pings = 0
        self.open = 0
        self.close_codes: Counter[int | None] = Counter()
        self.readers: set[asyncio.Task[None]] = set()
        self.sockets: list[aiohttp.ClientWebSocketResponse] = []

    async def register(self, session: aiohttp.ClientSession, number: int) -> str | None:
        """Open a socket and register bot ``number`` on it; None, or why it was refused."""
        ws = await session.ws_connect(self.url, autoping=True, max_msg_size=0)
        await ws.send_str(json.dumps({
            "jsonrpc": "2.0", "id": 0, "method": REGISTER,
            "params": {"token": self.token, "botname": f"{self.prefix}{number}",
                       "botversion": self.version, "game": self.game,
                       "programminglanguage": "Python"}}))
        frame = await ws.receive(timeout=30)
        reply: dict[str, Any] = json.loads(frame.data) if frame.type is aiohttp.WSMsgType.TEXT \
            else {"error": f"{frame.type.name} {frame.extra}"}
        if "result" not in reply:
            await ws.close()
            return str(reply.get("error"))
        self.open += 1
        self.sockets.append(ws)
        reader = asyncio.create_task(self.answer(ws))
        self.readers.add(reader)
        reader.add_done_callback(self.readers.discard)
        return None

    async def register_all(self, session: aiohttp.ClientSession, count: int,
                           parallel: int) -> list[str]:
        """Register bots 0 to ``count`` - 1, ``parallel`` at a time; why any was refused."""
        numbers = iter(range(count))
        refusals: list[str] = []

        async def registrar() -> None:
            for number in numbers:
                refused = await self.register(session, number)
                if refused is not None:
                    refusals.append(refused)

        await asyncio.gather(*(registrar() for _ in range(parallel)))
        return refusals

    async def answer(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        """Answer every call on the socket at once, until it closes."""
        try:
            async for frame in ws:
                if frame.type is not aiohttp.WSMsgType.TEXT:
                    break
                call = json.loads(frame.data)
                method = call.get("method")
                if method is None:
                    continue
                self.calls += 1
                result: object = None
                if method.endswith(".NextMove"):
                    result = {"position": call["params"]["gamestate"].index("")}
                elif method == "Status.Ping":
                    self.pings += 1
                    result = {"ping": "OK"}
                elif not self.all_replies and method.endswith(IGNORED):
                    continue
                await ws.send_str(json.dumps({"jsonrpc": "2.0", "result": result,
                                              "id": call["id"]}))
        except (ConnectionError, RuntimeError):
            pass
        finally:
            self.open -= 1
            self.close_codes[ws.close_code] += 1

    def stats(self) -> str:
        codes = " ".join(f"{code}:{count}" for code, count in sorted(
            self.close_codes.items(), key=lambda item: item[0] or 0))
        closed = sum(self.close_codes.values())
        return f"stats {self.calls} {self.pings} {self.open} {closed} {codes}".rstrip()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the platform's /rpc/ws, e.g. ws://127.0.0.1:8080/rpc/ws")
    parser.add_argument("token", help="the owner's token")
    parser.add_argument("count", type=int, help="bots, one socket each")
    parser.add_argument("--prefix", default="fast", help="the bots' names: prefix + number")
    parser.add_argument("--version", default="1", help="the bots' version")
    parser.add_argument("--game", default="TICTACTOE")
    parser.add_argument("--parallel", type=int, default=1,
                        help="registrations under way at once")
    parser.add_argument("--replies", choices=("all", "needed"), default="all",
                        help="reply to every call, or not to Complete and Error")
    args = parser.parse_args()
    raise_open_files_limit()
    fleet = Fleet(args.url, args.token, args.prefix, args.version, args.game,
                  args.replies == "all")
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        print("ready", flush=True)
        while line := (await stdin.readline()).decode().strip():
            if line == "go":
                refusals = await fleet.register_all(session, args.count, args.parallel)
                for refused in refusals[:5]:
                    print(f"refused: {refused}", file=sys.stderr)
                print(f"registered {args.count - len(refusals)} {len(refusals)}", flush=True)
            elif line == "stats":
                print(fleet.stats(), flush=True)
        for ws in fleet.sockets:
            await ws.close()
        await asyncio.gather(*fleet.readers, return_exceptions=True)


if __name__ == "__main__":
    asyncio.run(main())

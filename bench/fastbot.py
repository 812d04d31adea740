"""Instantly-answering tic-tac-toe bots for benchmarks: ``python bench/fastbot.py N``.

Serves N bots on N free loopback ports in one process and prints their ports on one line.
Each answers NextMove with the first empty cell and everything else with a null result.
"""

from __future__ import annotations

import asyncio
import json
import sys

from aiohttp import web

from merknera.server import bind


async def handle(request: web.Request) -> web.Response:
    call = json.loads(await request.read())
    result: object = None
    if call["method"].endswith(".NextMove"):
        result = {"position": call["params"]["gamestate"].index("")}
    elif call["method"] == "Status.Ping":
        result = {"ping": "OK"}
    return web.Response(body=json.dumps({"jsonrpc": "2.0", "result": result, "id": call["id"]}),
                        content_type="application/json")


async def main(count: int) -> None:
    ports = []
    runners = []
    for _ in range(count):
        app = web.Application()
        app.router.add_post("/rpc", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        sock = bind("127.0.0.1", 0)
        await web.SockSite(runner, sock).start()
        ports.append(sock.getsockname()[1])
        runners.append(runner)
    print(" ".join(map(str, ports)), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 4))

"""How many pairs and seconds does a duel need to decide, for a clear and for an equal pair
of versions?

The real platform (in this process, a SQLite store on a temporary file) and tic-tac-toe bots
served over HTTP on loopback, answering at once: for each setup a fresh platform, a current
version and a candidate of one bot registered (the candidate with ``"candidate": true``),
and a duel asked for over ``POST /api/duels``; the script waits for the duel to end and
prints its result, the pairs it played, the seconds from the request to its end, and the
LLR with its bounds.  The setups:

* **clear**: a perfect candidate against a random baseline;
* **equal**: a perfect candidate against a perfect baseline (every pair a draw);
* **erratic**: a random candidate against a random baseline (equal, but noisy);

each with the hypotheses of the duel defaults (elo0 0, elo1 5) and with wider ones (0, 50).
The figures depend on the random players' draws (seeded, but the games' order follows the
event loop) and on this machine's speed; the pairs more than the seconds.

    .venv/bin/python bench/duel.py [--max-pairs 2000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from merknera.app import Platform, build_app
from merknera.config import Config, LivenessSettings, LogSettings, SchedulingSettings, StoreSettings
from merknera.store import users
from merknera_bots.tictactoe import choose_perfect, choose_random

SETUPS = {"clear": ("perfect", "random"), "equal": ("perfect", "perfect"),
          "erratic": ("random", "random")}
"""(candidate, baseline) strategies."""
TERMS = ((0.0, 5.0), (0.0, 50.0))


def bot_app(strategy: str, seed: int) -> web.Application:
    """A tic-tac-toe bot answering at once with ``strategy``."""
    chooser = random.Random(seed)

    async def handle(request: web.Request) -> web.Response:
        call = await request.json()
        params = call.get("params") or {}
        result: Any = {"ping": "OK"}
        if call["method"].endswith(".NextMove"):
            board, mark = params["gamestate"], params["mark"]
            result = {"position": choose_perfect(board, mark) if strategy == "perfect"
                      else choose_random(board, mark, chooser)}
        return web.json_response({"jsonrpc": "2.0", "result": result, "id": call["id"]})

    app = web.Application()
    app.router.add_post("/rpc", handle)
    return app


async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}/rpc"


async def one_duel(setup: str, elo0: float, elo1: float, max_pairs: int,
                   concurrency: int) -> dict[str, Any]:
    candidate, baseline = SETUPS[setup]
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(store=StoreSettings(db=str(Path(tmp) / "duel.db")),
                        scheduling=SchedulingSettings(concurrency=concurrency, trial_share=1.0),
                        liveness=LivenessSettings(offline_retry_min=0.05),
                        log=LogSettings(level="WARNING"))
        platform = Platform(config)
        runner = web.AppRunner(build_app(config, platform), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        base = f"http://127.0.0.1:{runner.addresses[0][1]}"
        bots = [await serve(bot_app(strategy, seed))
                for seed, strategy in enumerate((baseline, candidate))]
        try:
            _, token = await users.create_user(platform.db, "author")
            async with aiohttp.ClientSession() as http:
                for version, (_, url), flag in (("1", bots[0], False), ("2", bots[1], True)):
                    params: dict[str, Any] = {"token": token, "botname": "duellist",
                                              "botversion": version, "game": "TICTACTOE",
                                              "rpcendpoint": url}
                    if flag:
                        params["candidate"] = True
                    async with http.post(f"{base}/rpc", json={
                            "jsonrpc": "2.0", "id": 1, "method": "RegistrationService.Register",
                            "params": params}) as answer:
                        assert "result" in await answer.json()
                started = time.perf_counter()
                async with http.post(f"{base}/api/duels", headers={
                        "Authorization": f"Bearer {token}"}, json={
                        "bot": "duellist", "candidate": "2", "elo0": elo0, "elo1": elo1,
                        "max_pairs": max_pairs}) as answer:
                    duel = await answer.json()
                while True:
                    async with http.get(f"{base}/api/duels/{duel['id']}") as answer:
                        found = await answer.json()
                    if found["status"] != "running":
                        break
                    await asyncio.sleep(0.1)
                seconds = time.perf_counter() - started
        finally:
            for bot_runner, _ in bots:
                await bot_runner.cleanup()
            await runner.cleanup()
    return {"setup": setup, "elo0": elo0, "elo1": elo1, "result": found["result"],
            "pairs": found["pairs"], "seconds": round(seconds, 1), "llr": found["llr"],
            "bounds": found["bounds"], "pentanomial": found["pentanomial"],
            "elo": found["elo"], "elo_ci95": found["elo_ci95"]}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-pairs", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--setups", nargs="*", default=list(SETUPS), choices=list(SETUPS))
    args = parser.parse_args()
    print(f"{'setup':8} {'elo0':>5} {'elo1':>5} {'result':>7} {'pairs':>6} {'seconds':>8} "
          f"{'llr':>8}  bounds           pentanomial          elo (95%)")
    for elo0, elo1 in TERMS:
        for setup in args.setups:
            row = await one_duel(setup, elo0, elo1, args.max_pairs, args.concurrency)
            print(f"{row['setup']:8} {row['elo0']:5g} {row['elo1']:5g} "
                  f"{row['result'] or '-':>7} {row['pairs']:6} {row['seconds']:8.1f} "
                  f"{row['llr']:8.3f}  {row['bounds']!s:16} {row['pentanomial']!s:20} "
                  f"{row['elo']:.0f} ({row['elo_ci95'][0]:.0f} to {row['elo_ci95'][1]:.0f})",
                  flush=True)


if __name__ == "__main__":
    asyncio.run(main())

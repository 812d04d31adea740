"""``python -m merknera_bots.noughtsandcrosses`` and ``python -m merknera_bots.numberwang`` as
real processes: the common options, the READY line, a NextMove over HTTP, and a clean stop on
SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

import aiohttp
import pytest

from tests.support.bot_process import PATIENCE, bot_process, ready_line

NOUGHTS_STATE = {"players": ["me", "you"], "nextPlayer": "you", "complete": False,
                 "board": [["X", "", ""], ["", "", ""], ["", "", ""]],
                 "marks": {"X": "me", "O": "you"}}
WANG_STATE = {"players": ["me", "you"], "nextPlayer": "me", "complete": False,
              "board": {"n": 0.5}}


@pytest.mark.parametrize(("module", "args", "method", "state", "name", "result"), [
    ("merknera_bots.noughtsandcrosses", ["--strategy", "perfect"], "NoughtsAndCrosses.NextMove",
     NOUGHTS_STATE, "noughtsandcrosses-perfect", {"mark": "O", "space": [1, 1]}),
    ("merknera_bots.numberwang", ["--strategy", "good", "--name", "wang", "--version", "2.0"],
     "Numberwang.NextMove", WANG_STATE, "wang", {"n": 10}),
])
async def test_serve_only_answers_a_move_and_stops(module: str, args: list[str], method: str,
                                                   state: dict[str, Any], name: str,
                                                   result: dict[str, Any]) -> None:
    async with bot_process(module, "--no-register", "--port", "0", "--seed", "1",
                           *args) as process:
        word, port, ready_name = await ready_line(process)
        assert (word, ready_name) == ("READY", name)
        call = {"jsonrpc": "2.0", "method": method, "id": 1,
                "params": {"gameid": 1, "state": state}}
        async with aiohttp.ClientSession() as session, session.post(
                f"http://127.0.0.1:{port}/rpc", json=call) as response:
            assert response.status == 200
            reply = json.loads(await response.text())
        assert reply["result"] == result
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), PATIENCE) == 0

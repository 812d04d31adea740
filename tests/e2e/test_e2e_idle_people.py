"""People who think for minutes hold no place in play: with one place in all
(``concurrency`` 1), a Kalaha board where a person plays a bot and does not move keeps
nothing else waiting; two tic-tac-toe bots registered meanwhile play their games."""

from __future__ import annotations

from typing import Any

from tests.e2e.harness import E2E
from tests.support import free_port


async def test_a_person_thinking_holds_no_place_in_play(e2e: E2E) -> None:
    port = free_port()
    await e2e.start_platform(None, kalaha_port=str(port), concurrency="1",
                             person_turn_limit="300")
    token = await e2e.add_user("carol")
    await e2e.start_bot("good", "Sower", token, module="bots.kalaha")
    sower = next(b["id"] for b in (await e2e.get("/api/bots?game=KALAHA"))["bots"]
                 if b["name"] == "Sower")
    boards = f"http://127.0.0.1:{port}/api/boards"
    async with e2e.session.post(boards, json={"opponent": sower,
                                              "name": "Thinker"}) as response:
        assert response.status == 201, await response.text()
        board = await response.json()

    async def person_to_move() -> tuple[Any, str]:
        async with e2e.session.get(f"{boards}/{board['boardId']}") as answer:
            state = await answer.json()
        running = [g for g in await e2e.games() if g["status"] == "RUNNING"]
        return (state if running and state["nextPlayer"] == "ONE" else None), str(running)

    await e2e.wait_until("the person's game running, the person to move", person_to_move)
    await e2e.start_bots(token, [("perfect", "Alpha", 0.0), ("random", "Beta", 0.0)])

    async def tictactoe_finished() -> tuple[list[dict[str, Any]] | None, str]:
        games = [g for g in await e2e.games() if g["game"] == "TICTACTOE"]
        done = [g for g in games if g["status"] == "FINISHED"]
        return (done if len(games) == 2 and len(done) == 2 else None), str(games)

    finished = await e2e.wait_until("both tic-tac-toe games finished", tictactoe_finished)
    assert all(g["reason"] == "NORMAL" for g in finished), finished
    kalaha_games = [g for g in await e2e.games() if g["game"] == "KALAHA"]
    assert [g["status"] for g in kalaha_games] == ["RUNNING"], kalaha_games

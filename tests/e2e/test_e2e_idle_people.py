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


async def test_boards_people_leave_idle_keep_no_bot_out_of_the_ladder(e2e: E2E) -> None:
    port = free_port()
    # One game at a time for the ladder, one ladder game per bot: before people's games
    # stopped counting, one idle board against Sower left the ladder no room and Sower busy.
    await e2e.start_platform(None, kalaha_port=str(port), concurrency="1", ladder="true",
                             ladder_interval="0.2", max_games_per_bot="1",
                             person_turn_limit="300")
    token = await e2e.add_user("dora")
    await e2e.start_bot("good", "Sower", token, module="bots.kalaha")
    sower = next(b["id"] for b in (await e2e.get("/api/bots?game=KALAHA"))["bots"]
                 if b["name"] == "Sower")
    boards = f"http://127.0.0.1:{port}/api/boards"
    for body in ({"opponent": sower}, {}, {}):  # against Sower, and two hot-seat boards
        async with e2e.session.post(boards, json=body) as response:
            assert response.status == 201, await response.text()
    await e2e.start_bot("random", "Reaper", token, module="bots.kalaha")

    async def ladder_games() -> tuple[int | None, str]:
        done = e2e.read_db("SELECT COUNT(*) FROM games WHERE origin = 'LADDER' AND "
                           "status = 'FINISHED'")[0][0]
        return (done if done >= 2 else None), f"{done} ladder games finished"

    await e2e.wait_until("two ladder games of Sower and Reaper", ladder_games)
    people = e2e.read_db("SELECT status FROM games WHERE handle IS NOT NULL")
    assert [row[0] for row in people] == ["RUNNING"] * 3

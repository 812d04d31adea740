"""People who think for minutes hold no place in play: with one place in all
(``concurrency`` 1), a Kalaha board where a person plays a bot and does not move keeps
nothing else waiting; two tic-tac-toe bots registered meanwhile play their games."""

from __future__ import annotations

from typing import Any

from tests.e2e.harness import E2E
from tests.support.kalaha import kalaha_bot, start_kalaha


async def test_a_person_thinking_holds_no_place_in_play(e2e: E2E) -> None:
    boards = await start_kalaha(e2e, person_turn_limit="300", concurrency="1")
    token = await e2e.add_user("carol")
    sower = await kalaha_bot(e2e, token, "Sower")
    board = await boards.create({"opponent": sower, "name": "Thinker"})

    async def person_to_move() -> tuple[Any, str]:
        state = await boards.view(board["boardId"])
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
    # One game at a time for the ladder, one ladder game per bot: before people's games
    # stopped counting, one idle board against Sower left the ladder no room and Sower busy.
    boards = await start_kalaha(e2e, person_turn_limit="300", concurrency="1",
                                ladder="true", ladder_interval="0.2", max_games_per_bot="1")
    token = await e2e.add_user("dora")
    sower = await kalaha_bot(e2e, token, "Sower")
    for body in ({"opponent": sower}, None, None):  # against Sower, and two hot-seat boards
        await boards.create(body)
    await kalaha_bot(e2e, token, "Reaper", "random")

    async def ladder_games() -> tuple[int | None, str]:
        done = e2e.read_db("SELECT COUNT(*) FROM games WHERE origin = 'LADDER' AND "
                           "status = 'FINISHED'")[0][0]
        return (done if done >= 2 else None), f"{done} ladder games finished"

    await e2e.wait_until("two ladder games of Sower and Reaper", ladder_games)
    people = e2e.read_db("SELECT status FROM games WHERE handle IS NOT NULL")
    assert [row[0] for row in people] == ["RUNNING"] * 3

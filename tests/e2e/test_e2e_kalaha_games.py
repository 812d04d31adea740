"""The Kalaha board API end to end, its games: a board is a platform game (listed, handled
by its UUID, unrated while the anonymous guest holds a seat), a person plays the reference
Kalaha bot through PUTs, a person who stops moving loses on time, and a finished board is
rebuilt from the store after a restart.  States are checked against the rules' copy in
``tests/support/kalaha.py``, move by move.
"""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import pytest

from tests.e2e.harness import ADMIN_TOKEN, E2E
from tests.support.kalaha import (
    GAME,
    PLAYERS,
    Position,
    game_of,
    kalaha_bot,
    refusal,
    sow,
    start_kalaha,
)

UNKNOWN = str(uuid.UUID(int=0x1234))
"""A UUID no board has."""


async def test_a_hot_seat_game_to_the_end_is_an_unrated_platform_game(e2e: E2E) -> None:
    boards = await start_kalaha(e2e, person_turn_limit="60")
    board = (await boards.create())["boardId"]
    rng = random.Random(2026)
    position, state = Position(), await boards.view(board)
    played: list[dict[str, Any]] = []
    extra_turns = captures = 0
    while not position.over:
        assert len(played) < 500, "the game does not end"
        pit = rng.choice(position.legal())
        player = PLAYERS[position.next]
        sowing = sow(position, pit)
        extra_turns += sowing.extra_turn
        captures += sowing.captured
        position = sowing.after
        state = await boards.play(board, pit, player)
        assert state == position.state(board), (len(played), pit, player, state)
        played.append({"pitIndex": pit, "player": player})
    # The game shows the rules' corners: extra turns and captures.
    assert extra_turns and captures, (extra_turns, captures)
    assert state["gameOver"] is True
    stores = (state["rowOne"]["kalahaStones"], state["rowTwo"]["kalahaStones"])
    assert sum(stores) == 72
    assert state["winner"] == (None if stores[0] == stores[1]
                               else "ONE" if stores[0] > stores[1] else "TWO"), state
    assert await boards.view(board) == state
    # Game over comes before an empty pit (every pit is empty now).
    refusal(await boards.put(board, 0, "ONE"), 400, "Game is over", f"/api/boards/{board}")

    # The platform's game: stored with the board's UUID as its handle, the anonymous guest
    # in both seats.
    stored = game_of(e2e, board)
    assert stored["game"] == GAME, stored
    game_id = stored["id"]

    async def finished() -> tuple[dict[str, Any] | None, str]:
        game = await e2e.game(game_id)
        return (game if game["status"] == "FINISHED" else None), game["status"]

    game = await e2e.wait_until("the board's game to be finished", finished)
    assert game["reason"] == "NORMAL", game
    assert game_of(e2e, board)["rated"] == 0  # the anonymous guest's games rate nobody
    listed = await e2e.get(f"/api/games?game={GAME}")
    assert [g["id"] for g in listed["games"]] == [game_id], listed
    seats = sorted(game["seats"], key=lambda s: s["seat"])
    assert [s["name"] for s in seats] == ["anonymous", "anonymous"], seats
    assert seats[0]["bot_id"] == seats[1]["bot_id"], seats
    winner = state["winner"]
    expected = (["DRAW", "DRAW"] if winner is None else
                ["WIN" if PLAYERS[seat] == winner else "LOSS" for seat in (0, 1)])
    assert [s["result"] for s in seats] == expected, (seats, winner)
    assert game["outcome"] == ("DRAW" if winner is None else "WIN"), game
    assert [m["move"] for m in game["moves"]] == played
    assert [m["seat"] for m in game["moves"]] == [PLAYERS.index(m["player"]) for m in played]
    assert game["final_state"] == {
        "nextPlayer": PLAYERS[position.next],
        "rowOne": {"pits": list(position.rows[0]), "kalahaStones": position.stores[0]},
        "rowTwo": {"pits": list(position.rows[1]), "kalahaStones": position.stores[1]}}

    guest = await e2e.get(f"/api/bots/{seats[0]['bot_id']}")
    assert (guest["name"], guest["protocol"], guest["owner"], guest["game"]) == (
        "anonymous", "guest", "(guests)", GAME), guest
    assert guest["rating"]["rated_games"] == 0 and guest["rating_history"] == [], guest
    assert e2e.read_db("SELECT * FROM ratings") == []  # nobody's rating changed
    leaders = await e2e.get(f"/api/leaderboard?game={GAME}")
    assert "anonymous" not in [row["name"] for row in leaders["bots"]], leaders

    # A board left half-played when the platform stops; then a restart.
    half = (await boards.create())["boardId"]
    half_state = await boards.moves(half, [(0, 1)])
    assert e2e.platform is not None
    assert await e2e.processes.stop(e2e.platform.child) == 0
    again = await start_kalaha(e2e, person_turn_limit="60")

    # The finished board, rebuilt from the store.
    assert await again.view(board) == state
    refusal(await again.put(board, 0, "ONE"), 400, "Game is over", f"/api/boards/{board}")
    # The half-played one ends without a result: the restarted platform's runner, resuming
    # it, finds its players gone (a moment after the restart, under load).
    async def ended() -> tuple[dict[str, Any] | None, str]:
        seen = await again.view(half)
        return (seen if seen["gameOver"] else None), f"{seen}"

    shown = await e2e.wait_until("the half-played board to end", ended)
    assert shown == {**half_state, "gameOver": True, "winner": None}, shown
    refusal(await again.put(half, 0, "TWO"), 400, "Game is over", f"/api/boards/{half}")
    aborted = game_of(e2e, half)
    assert (aborted["status"], aborted["outcome"], aborted["reason"]) == (
        "FINISHED", "NO_RESULT", "ABORTED"), aborted
    refusal(await again.call("GET", f"/api/boards/{UNKNOWN}"), 404, "Board not found",
            f"/api/boards/{UNKNOWN}")


# --- people against the reference bot -------------------------------------------------------


async def test_a_named_person_plays_the_reference_bot_to_the_end(e2e: E2E) -> None:
    token = await e2e.add_user("alice")
    boards = await start_kalaha(e2e, person_turn_limit="60")
    bot_id = await kalaha_bot(e2e, token, "kalaha-good")
    # The first board made under the name binds it to the secret given with it.
    first = await boards.create({"opponent": bot_id, "name": "Petra", "secret": "petra secret"})
    board = first["boardId"]
    rng = random.Random(5)
    shown = [first]  # every state the person was given, in order
    while not shown[-1]["gameOver"]:
        assert len(shown) < 500, "the game does not end"
        position = Position.of(shown[-1])
        assert position.next == 0, shown[-1]
        state = await boards.play(board, rng.choice(position.legal()), "ONE")
        # The answer waits for the bot: ONE is to move again, or the game is over.
        assert state["nextPlayer"] == "ONE" or state["gameOver"], state
        if not state["gameOver"]:
            assert await boards.view(board) == state
        shown.append(state)
    final = shown[-1]
    stores = (final["rowOne"]["kalahaStones"], final["rowTwo"]["kalahaStones"])
    assert final["winner"] == (None if stores[0] == stores[1]
                               else "ONE" if stores[0] > stores[1] else "TWO"), final

    # The move log replays, by the rules, through exactly the states the person was shown.
    game_id = game_of(e2e, board)["id"]

    async def finished() -> tuple[dict[str, Any] | None, str]:
        game = await e2e.game(game_id)
        return (game if game["status"] == "FINISHED" else None), game["status"]

    game = await e2e.wait_until("the game to be finished", finished)
    # The board's id lets its holder move for the person: no bot's log (its owner reads
    # it) names it.
    logged = e2e.read_db("SELECT message FROM bot_log WHERE game_id = ?", (game_id,))
    assert logged and not [row[0] for row in logged if board in row[0]], logged
    assert game["reason"] == "NORMAL", game
    assert game_of(e2e, board)["rated"] == 1  # a named person's game is rated
    seats = sorted(game["seats"], key=lambda s: s["seat"])
    assert [(s["name"], s["bot_id"] == bot_id) for s in seats] == [
        ("Petra", False), ("kalaha-good", True)], seats
    position, waiting = Position(), list(shown)
    for move in game["moves"]:
        assert move["fault"] is None, move
        assert move["seat"] == position.next, (move, position)
        # The person's moves name the player; the bot's reply need not.
        assert move["move"].get("player", PLAYERS[move["seat"]]) == PLAYERS[move["seat"]], move
        assert ("player" in move["move"]) == (move["seat"] == 0), move
        if move["seat"] == 0:
            assert waiting and waiting.pop(0) == position.state(board), (move, position)
        position = sow(position, move["move"]["pitIndex"]).after
    assert waiting == [final] and position.state(board) == final
    assert any(m["seat"] == 1 for m in game["moves"]), "the bot never moved"

    # Named, the person is rated and ranked with the bot.
    async def ranked() -> tuple[dict[str, Any] | None, str]:
        rows = (await e2e.get(f"/api/leaderboard?game={GAME}"))["bots"]
        names = {row["name"]: row for row in rows}
        done = "Petra" in names and names["kalaha-good"]["rating"]["rated_games"] == 1
        return (names if done else None), str(sorted(names))

    leaders = await e2e.wait_until("Petra on the leaderboard", ranked)
    petra = leaders["Petra"]
    assert (petra["protocol"], petra["owner"], petra["rating"]["rated_games"]) == (
        "guest", "(guests)", 1), petra
    record = {"ONE": "won", "TWO": "lost", None: "drawn"}[final["winner"]]
    assert petra[record] == 1 and petra["played"] == 1, petra
    assert "anonymous" not in leaders

    # The same name plays as the same guest, with its secret (here after the name), and
    # not without it.
    taken = await boards.call("POST", "/api/boards", json.dumps(
        {"opponent": bot_id, "name": "Petra"}).encode())
    assert taken.status == 409 and "is kept by the player who first played under it" in \
        taken.body["message"], taken
    second = await boards.create({"opponent": bot_id, "name": "Petra#petra secret"})
    rows = e2e.read_db("SELECT seats.bot_id FROM seats JOIN games ON games.id = seats.game_id "
                       "WHERE games.handle = ? AND seats.seat = 0", (second["boardId"],))
    assert [row[0] for row in rows] == [seats[0]["bot_id"]]


async def test_opponents_that_cannot_play_are_refused(e2e: E2E) -> None:
    token = await e2e.add_user("alice")
    boards = await start_kalaha(e2e, person_turn_limit="60", ping_interval="1")
    kalaha_id = await kalaha_bot(e2e, token, "kalaha-one", "random")
    await e2e.start_bot("random", "noughts", token)
    ttt = [b for b in (await e2e.get("/api/bots?game=TICTACTOE"))["bots"]
           if b["name"] == "noughts"]
    assert len(ttt) == 1 and ttt[0]["status"] == "ONLINE", ttt
    ttt_id = ttt[0]["id"]

    def offline(bot: int) -> str:
        return f"Bot {bot} is not an online Kalaha bot with room for another game"

    # Malformed: 400; a bot or a name that cannot be had now: 409; a string that is no
    # name: 422 (the extension's statuses; the original's routes keep their 400s).
    cases: list[tuple[str, bytes, int, str, bool]] = [
        ("unknown bot", json.dumps({"opponent": 999_999}).encode(), 409, offline(999_999),
         False),
        ("another game's bot", json.dumps({"opponent": ttt_id, "name": "Petra"}).encode(),
         409, offline(ttt_id), False),
        ("not an id", b'{"opponent": "kalaha-one"}', 400, "opponent must be a bot's id", True),
        ("a boolean", b'{"opponent": true}', 400, "opponent must be a bot's id", True),
        ("a fraction", b'{"opponent": 1.5}', 400, "opponent must be a bot's id", True),
        # JSON Schema's integer, as the document says: a whole number written 999999.0
        ("a whole float", b'{"opponent": 999999.0}', 409, offline(999_999), False),
        ("an empty name", json.dumps({"opponent": kalaha_id, "name": " "}).encode(), 400,
         "name must be a non-empty string", True),
        ("anonymous by name", json.dumps({"opponent": kalaha_id, "name": "Anonymous"}).encode(),
         409, 'Invalid name: the name "anonymous" is kept', True),
        ("a name of another owner", json.dumps({"opponent": kalaha_id,
                                                "name": "kalaha-one"}).encode(),
         409, 'Invalid name: the name "kalaha-one" belongs to a bot of alice', True),
        ("a look-alike of it", json.dumps({"opponent": kalaha_id,
                                           "name": "Kalaha-One"}).encode(),
         409, 'Invalid name: the name "Kalaha-One" is too like "kalaha-one"', True),
        ("scripts mixed", json.dumps({"opponent": kalaha_id, "name": "P\u0430ul"}).encode(),
         422, "Invalid name: The bot name", True),
        ("unreadable", b"{nope", 400, "JSON parse error: ", True),
    ]
    for name, body, status, message, prefix in cases:
        answer = await boards.call("POST", "/api/boards", body)
        assert answer.status == status, (name, answer)
        refusal(answer, status, message, "/api/boards", prefix=prefix)
    assert e2e.read_db("SELECT COUNT(*) FROM games")[0][0] == 0  # no game was made

    # The bot goes away: once the platform knows it is offline, it is refused too.
    bot = next(b for b in e2e.bots if b.name == "kalaha-one")
    assert await e2e.processes.stop(bot.child) == 0

    async def gone() -> tuple[str | None, str]:
        status = (await e2e.get(f"/api/bots/{kalaha_id}"))["status"]
        return (status if status == "OFFLINE" else None), status

    await e2e.wait_until("the bot to be offline", gone)
    answer = await boards.call("POST", "/api/boards", json.dumps({"opponent": kalaha_id}).encode())
    refusal(answer, 409, offline(kalaha_id), "/api/boards")
    assert e2e.read_db("SELECT COUNT(*) FROM games")[0][0] == 0


@pytest.mark.parametrize("opponent", ["bot", "hot seat"])
async def test_a_person_who_stops_moving_loses_on_time(e2e: E2E, opponent: str) -> None:
    token = await e2e.add_user("alice")
    boards = await start_kalaha(e2e, person_turn_limit="1")
    bot_id = await kalaha_bot(e2e, token, "kalaha-good") if opponent == "bot" else None
    first = await boards.create(None if bot_id is None else {"opponent": bot_id})
    board = first["boardId"]
    if bot_id is not None:
        # One move, answered once the bot has moved; then the person stops.
        last = await boards.play(board, 2, "ONE")
        assert last["nextPlayer"] == "ONE" and not last["gameOver"], last
    else:
        last = first

    async def over() -> tuple[dict[str, Any] | None, str]:
        state = await boards.view(board)
        return (state if state["gameOver"] else None), json.dumps(state)

    state = await e2e.wait_until("the board to be lost on time", over)
    # The board as it stood, over, ONE (to move) the loser.
    assert state == {**last, "gameOver": True, "winner": "TWO"}, state
    refusal(await boards.put(board, 0, "ONE"), 400, "Game is over", f"/api/boards/{board}")

    async def stored() -> tuple[dict[str, Any] | None, str]:
        game = game_of(e2e, board)
        return (game if game["status"] == "FINISHED" else None), str(game)

    game = await e2e.wait_until("the game to be finished", stored)
    assert (game["outcome"], game["reason"], game["rated"]) == ("WIN", "TIMEOUT", 0), game
    results = [(row["seat"], row["result"]) for row in e2e.read_db(
        "SELECT seat, result FROM seats WHERE game_id = ? ORDER BY seat", (game["id"],))]
    assert results == [(0, "LOSS"), (1, "WIN")], results
    # Anonymous: nobody's rating changed, the bot's included.
    assert e2e.read_db("SELECT * FROM ratings") == []


async def test_a_board_whose_bot_is_disabled_ends_without_a_winner(e2e: E2E) -> None:
    token = await e2e.add_user("alice")
    boards = await start_kalaha(e2e, person_turn_limit="60")
    bot_id = await kalaha_bot(e2e, token, "kalaha-good")
    board = (await boards.create({"opponent": bot_id, "name": "Petra#petra secret"}))["boardId"]
    last = await boards.play(board, 2, "ONE")
    assert last["nextPlayer"] == "ONE" and not last["gameOver"], last
    async with e2e.session.post(f"{e2e.url}/api/admin/bots/{bot_id}/disable",
                                json={"reason": "a test"},
                                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
        assert response.status == 200, await response.text()

    async def stored() -> tuple[dict[str, Any] | None, str]:
        game = game_of(e2e, board)
        return (game if game["status"] == "FINISHED" else None), str(game)

    game = await e2e.wait_until("the game to end", stored)
    assert game["outcome"] == "NO_RESULT", game
    # Nobody won: the board says so, in memory as from the store.
    assert await boards.view(board) == {**last, "gameOver": True, "winner": None}
    refusal(await boards.put(board, 0, "ONE"), 400, "Game is over", f"/api/boards/{board}")

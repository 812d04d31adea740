"""People play bots: the play API (``/api/play``) over HTTP and the play page (``/play``) in
headless Chromium, against a real ``merknera serve`` with its Kalaha listener and the
reference tic-tac-toe and Kalaha bots as real processes.

Every game a person plays must be a platform game like any other: stored with its moves,
listed under ``/api/games`` with the person's guest, rated unless the person is
anonymous, and shown on ``/games/<id>``.  A faulty move is refused before it reaches the
game, so a person's games hold no faults.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Page, expect
from pytest_aiohttp import AiohttpServer

from merknera.app import Platform, build_app
from merknera.config import Config, StoreSettings
from merknera.web.play import token_handle
from tests.e2e.harness import E2E, Processes
from tests.support import free_port, until
from tests.web.conftest import Watched

TTT_BOT = "perfect-ttt"
KALAHA_BOT = "good-kalaha"
TURN_LIMIT = 120
"""Seconds a person has a move here (a guard against a stuck test, not a measure)."""


@dataclass
class Served:
    """The platform, its Kalaha listener, and the ids of its two reference bots."""

    e2e: E2E
    session: aiohttp.ClientSession
    kalaha: str
    ttt: int
    kalaha_bot: int

    def at(self, path: str) -> str:
        return self.e2e.url + path

    async def call(self, method: str, path: str, body: Any = None, *,
                   raw: bytes | None = None) -> tuple[int, Any]:
        """A request to the main site: its status and its JSON body."""
        data = raw if raw is not None else None if body is None else json.dumps(body)
        headers = {"Content-Type": "application/json"} if data is not None else {}
        async with self.session.request(method, self.at(path), data=data,
                                        headers=headers) as response:
            text = await response.text()
            return response.status, json.loads(text) if text else None

    async def start(self, body: dict[str, Any]) -> dict[str, Any]:
        status, game = await self.call("POST", "/api/play", body)
        assert status == 201, game
        assert isinstance(game, dict)
        return game

    async def move(self, token: str, move: Any) -> tuple[int, Any]:
        return await self.call("POST", f"/api/play/{token}/moves", {"move": move})


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    """The platform (``merknera serve`` with a Kalaha listener) and a perfect tic-tac-toe
    bot and a good Kalaha bot, as processes stopped when the test ends."""
    processes = Processes(tmp_path)
    timeout = aiohttp.ClientTimeout(total=90)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            e2e = E2E(tmp_path, processes, session, tmp_path / "merknera.db")
            token = await e2e.add_user("owner")
            kalaha_port = free_port()
            await e2e.start_platform(kalaha_port=str(kalaha_port),
                                     person_turn_limit=str(TURN_LIMIT),
                                     max_open_games_per_client="3")
            await asyncio.gather(
                e2e.start_bot("perfect", TTT_BOT, token),
                e2e.start_bot("good", KALAHA_BOT, token, module="merknera_bots.kalaha"))
            ids = {bot["name"]: bot["id"] for bot in (await e2e.get("/api/bots"))["bots"]}
            yield Served(e2e, session, f"http://127.0.0.1:{kalaha_port}", ids[TTT_BOT],
                         ids[KALAHA_BOT])
    finally:
        await processes.close()


async def play_out(served: Served, game: dict[str, Any]) -> dict[str, Any]:
    """Play the first legal move each turn until the game is over; every answer is the
    person's turn again (with one move more of each side) or the end."""
    token = game["token"]
    for _ in range(200):
        if game["over"]:
            return game
        assert game["your_turn"] and game["legal"], game
        before = len(game["moves"])
        status, game = await served.move(token, game["legal"][0])
        assert status == 200, game
        assert len(game["moves"]) > before, game
        assert game["moves"][before]["seat"] == game["seat"], game
    raise AssertionError(f"the game did not end: {game}")


# -- the API ----------------------------------------------------------------------------------


async def test_an_anonymous_person_plays_tictactoe_second_unrated(served: Served) -> None:
    status, listed = await served.call("GET", "/api/play/opponents?game=TICTACTOE")
    assert status == 200
    assert [bot["id"] for bot in listed["bots"]] == [served.ttt]
    status, listed = await served.call("GET", "/api/play/opponents?game=KALAHA")
    assert [bot["id"] for bot in listed["bots"]] == [served.kalaha_bot]

    game = await served.start({"game": "TICTACTOE", "opponent": served.ttt, "seat": 1})
    token = game["token"]
    assert str(uuid.UUID(token)) == token
    assert game["seat"] == 1 and game["your_turn"] and not game["over"]
    assert [p["name"] for p in game["players"]] == [TTT_BOT, "anonymous"]
    assert game["rated"] is False
    # The bot (X) moved first; the person is shown what a bot in seat 1 would be.
    assert [m["seat"] for m in game["moves"]] == [0]
    assert game["moves"][0]["text"].startswith("X at ")
    assert game["view"]["mark"] == "O"
    assert game["view"]["gamestate"].count("X") == 1
    taken = game["view"]["gamestate"].index("X")
    assert {"position": taken} not in game["legal"] and len(game["legal"]) == 8

    # Faulty moves are refused with what was wrong, and never reach the game.
    # No move of the game: 422; a move the position forbids: 409.
    for move, code, message in [
        ({"position": 9}, 422, 'not a move of Tic-Tac-Toe: "position" must be between 0 and 8'),
        ("four", 422, "not a move of Tic-Tac-Toe: expected an object"),
        ({"position": True}, 422, 'not a move of Tic-Tac-Toe: "position" must be an integer'),
        ({"position": taken}, 409, f"an illegal move: position {taken} is already taken by X"),
    ]:
        status, refused = await served.move(token, move)
        assert (status, refused) == (code, {"error": refused["error"]}), refused
        assert refused["error"].startswith(message), refused
    status, refused = await served.call("POST", f"/api/play/{token}/moves", {"pos": 1})
    assert status == 400 and refused["error"].startswith('the body must be {"move"')
    status, refused = await served.call("POST", f"/api/play/{token}/moves", raw=b"[1")
    assert status == 400 and refused["error"].startswith(
        "the body must be a JSON object, and is not JSON: ")
    status, refused = await served.call("POST", f"/api/play/{token}/moves",
                                        raw=b'{"move": "' + b"x" * 5000 + b'"}')
    assert status == 413, refused
    status, refused = await served.call("POST", f"/api/play/{uuid.uuid4()}/moves",
                                        {"move": {"position": 0}})
    assert (status, refused) == (404, {"error": "no game is played with that token"})
    status, seen = await served.call("GET", f"/api/play/{token}")
    assert status == 200 and seen["moves"] == game["moves"] and seen["your_turn"]

    final = await play_out(served, game)
    assert final["outcome"] in ("lost", "draw"), final  # the perfect bot never loses
    assert final["reason"] == "NORMAL" and final["detail"]
    status, again = await served.move(token, final["legal"][0] if final["legal"] else
                                      {"position": 0})
    assert (status, again) == (409, {"error": "the game is over"})
    status, seen = await served.call("GET", f"/api/play/{token}?wait=1")
    assert status == 200 and seen["over"] and seen["outcome"] == final["outcome"]

    # The game is a platform game: listed with the guest, stored with every move, unrated.
    game_id = final["game_id"]
    guest_id = final["players"][1]["bot_id"]
    listed = (await served.e2e.get(f"/api/games?bot={guest_id}"))["games"]
    assert [g["id"] for g in listed] == [game_id]
    assert [s["name"] for s in listed[0]["seats"]] == [TTT_BOT, "anonymous"]
    stored = await served.e2e.game(game_id)
    assert [(m["seat"], m["move"], m["fault"]) for m in stored["moves"]] == [
        (m["seat"], m["move"], None) for m in final["moves"]]
    board = [""] * 9
    for logged in stored["moves"]:
        board[logged["move"]["position"]] = "XO"[logged["seat"]]
    assert board == stored["final_state"] == final["board"]
    assert stored["seats"][1]["result"] == {"lost": "LOSS", "draw": "DRAW"}[final["outcome"]]
    assert stored["rated"] is False
    status, public = await served.call("GET", f"/api/games/{game_id}")
    assert status == 200 and public["id"] == game_id
    for shown in (stored, public):  # the token is the person's alone
        assert token not in json.dumps(shown) and token_handle(token) not in json.dumps(shown)
    bot = await served.e2e.get(f"/api/bots/{served.ttt}")
    assert bot["rating"]["rated_games"] == 0


async def test_a_named_person_plays_first_and_is_rated(served: Served) -> None:
    game = await served.start({"game": "TICTACTOE", "opponent": served.ttt, "name": "ada"})
    assert game["seat"] == 0 and game["your_turn"] and game["moves"] == []
    assert game["view"] == {"mark": "X", "gamestate": [""] * 9}
    assert game["rated"] is True
    final = await play_out(served, game)
    assert final["outcome"] in ("lost", "draw")
    guest = (await served.e2e.get(f"/api/bots/{final['players'][0]['bot_id']}"))
    assert (guest["name"], guest["protocol"]) == ("ada", "guest")
    assert [g["id"] for g in guest["games"]] == [final["game_id"]]
    stored = await served.e2e.game(final["game_id"])
    assert stored["rated"] is True and stored["status"] == "FINISHED"
    assert [s["name"] for s in stored["seats"]] == ["ada", TTT_BOT]


    async def rated_once(bot_id: int) -> bool:  # by the rater's next pass (about 20 ms)
        bot = await served.e2e.get(f"/api/bots/{bot_id}")
        return bool(bot["rating"]["rated_games"] == 1)

    await until(lambda: rated_once(served.ttt))
    assert await rated_once(final["players"][0]["bot_id"])

    # After a restart the game is read from the store: over, as it ended.
    e2e = served.e2e
    assert e2e.platform is not None
    assert await e2e.processes.stop(e2e.platform.child) == 0
    await e2e.start_platform(kalaha_port=str(free_port()))
    status, seen = await served.call("GET", f"/api/play/{game['token']}")
    assert status == 200, seen
    assert (seen["game_id"], seen["seat"], seen["over"], seen["your_turn"]) == (
        final["game_id"], 0, True, False)
    assert (seen["outcome"], seen["board"]) == (final["outcome"], final["board"])
    assert [p["name"] for p in seen["players"]] == ["ada", TTT_BOT]
    status, refused = await served.move(game["token"], {"position": 8})
    assert (status, refused) == (409, {"error": "the game is over"})


async def test_kalaha_through_the_play_api(served: Served) -> None:
    game = await served.start({"game": "KALAHA", "opponent": served.kalaha_bot})
    assert game["view"]["player"] == "ONE" and game["your_turn"]
    assert game["legal"] == [{"pitIndex": pit} for pit in range(6)]
    status, refused = await served.move(game["token"], {"pitIndex": 6})
    assert status == 422 and refused["error"].startswith("not a move of Kalaha")
    final = await play_out(served, game)
    texts = [m["text"] for m in final["moves"]]
    stones = game["view"]["rowOne"]["pits"][0]["stones"]
    assert texts[0] == f"ONE sows pit 0 ({stones} stones)", texts
    assert any(text.startswith("TWO sows pit") for text in texts), texts
    assert final["outcome"] in ("won", "lost", "draw")
    stored = await served.e2e.game(final["game_id"])
    assert stored["status"] == "FINISHED" and len(stored["moves"]) == len(final["moves"])


async def test_what_the_play_api_refuses(served: Served) -> None:
    refusals: list[tuple[Any, int, str]] = [
        ({"game": "SCRABBLE", "opponent": served.ttt}, 400, "game must be one of"),
        ({"opponent": served.ttt}, 400, "game must be one of"),
        ({"game": "TICTACTOE"}, 400, "opponent must be a bot's id"),
        ({"game": "TICTACTOE", "opponent": "1"}, 400, "opponent must be a bot's id"),
        ({"game": "TICTACTOE", "opponent": served.ttt, "seat": 2}, 400, "seat must be 0"),
        ({"game": "TICTACTOE", "opponent": served.ttt, "seat": 0.5}, 400, "seat must be 0"),
        ({"game": "TICTACTOE", "opponent": served.ttt, "name": None}, 400, "name must be"),
        ({"game": "TICTACTOE", "opponent": served.ttt, "name": "P\u0430ul"}, 422,
         "that name cannot be used: The bot name"),
        ({"game": "TICTACTOE", "opponent": served.ttt, "name": " "}, 400, "name must be"),
        ({"game": "TICTACTOE", "opponent": served.ttt, "name": "Anonymous"}, 409,
         'that name cannot be used now: the name "anonymous" is kept'),
        ({"game": "TICTACTOE", "opponent": served.ttt, "name": TTT_BOT}, 409,
         f'that name cannot be used now: the name "{TTT_BOT}" belongs to a bot of owner'),
        ({"game": "TICTACTOE", "opponent": served.kalaha_bot}, 409,
         f"bot {served.kalaha_bot} is not an online Tic-Tac-Toe bot"),
        ({"game": "TICTACTOE", "opponent": 999999}, 409, "bot 999999 is not an online"),
        ([1, 2], 400, "the body must be a JSON object"),
    ]
    for body, status, message in refusals:
        got, refused = await served.call("POST", "/api/play", body)
        assert got == status and refused["error"].startswith(message), (body, refused)
    status, refused = await served.call("GET", "/api/play/opponents?game=HEXAGONS")
    assert (status, refused["error"]) == (
        400, '"game" must be one of TICTACTOE, KALAHA, got "HEXAGONS"')
    for path in ("/api/play/not-a-token", f"/api/play/{uuid.uuid4()}",
                 f"/api/play/kalaha/{uuid.uuid4()}"):
        status, refused = await served.call("GET", path)
        assert status == 404, (path, refused)
    # One address keeps at most max_open_games_per_client (3) games open.
    for _ in range(3):
        await served.start({"game": "TICTACTOE", "opponent": served.ttt})
    status, refused = await served.call("POST", "/api/play",
                                        {"game": "TICTACTOE", "opponent": served.ttt})
    assert status == 429 and "holds 3 games open already" in refused["error"], refused


# -- the page ---------------------------------------------------------------------------------


async def play_in_page(page: Page, clicks: int) -> None:
    """Click the first playable cell or pit on each of the person's turns until the game
    ends (at most ``clicks`` moves)."""
    for _ in range(clicks):
        await page.wait_for_function(
            "() => document.getElementById('play-board').dataset.yourTurn === 'true'"
            " || !document.getElementById('play-end').hidden")
        if await page.locator("#play-end").is_visible():
            return
        playable = page.locator("#play-board .is-playable")
        await playable.first.click()
    raise AssertionError("the game did not end")


async def check_the_end(served: Served, page: Watched, name: str, mnemonic: str) -> int:
    """The page shows the result and links the game's page, which loads; returns its id."""
    play = page.page
    await expect(play.locator("#play-end")).to_be_visible()
    outcome = await play.locator("#play").get_attribute("data-outcome")
    words = {"won": "You won!", "lost": "You lost.", "draw": "A draw."}
    assert outcome in words, outcome
    await expect(play.locator("#play-result")).to_contain_text(words[outcome])
    href = await play.locator("#play-link").get_attribute("href")
    assert href is not None and href.startswith("/games/")
    game_id = int(href.removeprefix("/games/"))
    listed = (await served.e2e.get(f"/api/games?game={mnemonic}"))["games"]
    mine = next(g for g in listed if g["id"] == game_id)
    assert mine["status"] == "FINISHED" and name in [s["name"] for s in mine["seats"]]
    result = next(s["result"] for s in mine["seats"] if s["name"] == name)
    assert {"WIN": "won", "LOSS": "lost", "DRAW": "draw"}[result] == outcome
    await play.locator("#play-link").click()
    await expect(play).to_have_url(served.at(href))
    await expect(play.locator("h1")).to_contain_text(f"#{game_id}")
    await expect(play.locator("table.players")).to_contain_text(name)
    where = "played on a Kalaha board" if mnemonic == "KALAHA" else "played by a person"
    await expect(play.locator("main")).to_contain_text(where)
    await expect(play.locator("#position")).not_to_have_text("0 / 0")
    return game_id


async def test_a_person_plays_tictactoe_in_the_browser(served: Served, page: Watched) -> None:
    play = page.page
    await play.goto(served.at("/"))
    await play.get_by_role("link", name="Play a bot").click()
    await expect(play.locator("h1")).to_have_text("Play a bot")
    await expect(play.locator('input[name="game"]')).to_have_count(2)  # and Kalaha
    await expect(play.locator("#play-opponent option")).to_have_count(1)
    await expect(play.locator("#play-opponent option")).to_contain_text(TTT_BOT)
    await play.fill("#play-name", "grace")
    await page.shot("play-form")
    await play.click("#play-start")
    await expect(play.locator("#play-game")).to_be_visible()
    await expect(play.locator("#play-status")).to_contain_text("Your turn")
    await expect(play.locator("#play-board .mb-cell")).to_have_count(9)
    await expect(play.locator("#play-board .is-playable")).to_have_count(9)
    await page.shot("play-tictactoe-start")
    await play_in_page(play, 5)
    moves = play.locator("#play-moves li")
    assert await moves.count() >= 5  # X made at least three moves, O at least two
    await expect(moves.first).to_contain_text("X at")
    await expect(moves.nth(1)).to_contain_text(TTT_BOT)
    await page.shot("play-tictactoe-end")
    await check_the_end(served, page, "grace", "TICTACTOE")
    await page.shot("play-tictactoe-game-page")


async def test_a_person_plays_kalaha_in_the_browser(served: Served, page: Watched) -> None:
    play = page.page
    await play.goto(served.at("/play"))
    await play.check('input[name="game"][value="KALAHA"]')
    await expect(play.locator("#play-seat-field")).to_be_hidden()
    await expect(play.locator("#play-opponent option")).to_have_text([f"{KALAHA_BOT} 1.0.0 "
                                                                      "(by owner)"])
    await play.click("#play-start")
    await expect(play.locator("#play-board .mb-kal-pit")).to_have_count(12)
    await expect(play.locator("#play-board .is-playable")).to_have_count(6)
    await expect(play.locator("#play-status")).to_contain_text("Your turn")
    await page.shot("play-kalaha-start")
    await play_in_page(play, 100)
    await expect(play.locator("#play-moves li").first).to_contain_text("ONE sows pit")
    await expect(play.locator("#play-moves")).to_contain_text("TWO sows pit")
    await page.shot("play-kalaha-end")
    await check_the_end(served, page, "anonymous", "KALAHA")


# -- without a Kalaha listener -----------------------------------------------------------------


async def test_without_a_kalaha_listener_the_page_offers_tictactoe_only(
        tmp_path: Path, aiohttp_server: AiohttpServer) -> None:
    config = Config(store=StoreSettings(db=str(tmp_path / "merknera.db")))
    server = await aiohttp_server(build_app(config, Platform(config)))
    async with aiohttp.ClientSession() as session:
        async with session.get(server.make_url("/play")) as response:
            assert response.status == 200
            text = await response.text()
            policy = response.headers["Content-Security-Policy"]
        async with session.get(server.make_url("/api/play/opponents?game=TICTACTOE")) as listed:
            assert (listed.status, await listed.json()) == (
                200, {"game": "TICTACTOE", "bots": []})
    assert 'value="TICTACTOE"' in text and 'value="KALAHA"' not in text
    assert 'data-kalaha=""' in text
    assert "connect-src 'self';" in policy


async def test_the_page_may_call_the_kalaha_listener(served: Served) -> None:
    async with served.session.get(served.at("/play")) as response:
        text = await response.text()
        policy = response.headers["Content-Security-Policy"]
    assert f'data-kalaha="{served.kalaha}"' in text
    assert f"connect-src 'self' {served.kalaha};" in policy
    assert "script-src 'self';" in policy

"""What clients without accounts may take at the hexagons and Kalaha listeners: a
``/match`` client that left is never paired, an address makes new player names at the
registrations' pace, and a request over its address's share of open games makes nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json

import aiohttp

from tests.e2e.harness import E2E
from tests.support.hexagons import start_listener
from tests.support.kalaha import kalaha_bot, start_kalaha


async def test_a_match_client_that_left_is_not_paired(e2e: E2E) -> None:
    url = await start_listener(e2e, hexagons_match_wait="600")
    # A client asks for a match and goes away before it is answered.
    reader, writer = await asyncio.open_connection("127.0.0.1", int(url.rsplit(":", 1)[1]))
    writer.write(b"GET /match HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(0.5):
            await reader.read(1)
            raise AssertionError("a lone client was answered")
    writer.close()
    # Closed here before the next client connects: the listener reads the end of this
    # connection before it can read the next one's request.
    await writer.wait_closed()

    async def match() -> str:
        async with aiohttp.ClientSession() as session, session.get(f"{url}/match") as answer:
            assert answer.status == 201, await answer.text()
            return answer.headers["Location"]

    first = asyncio.ensure_future(match())
    await asyncio.sleep(0.5)
    assert not first.done(), "paired with the client that left"
    second = await match()
    assert await first == second


async def test_an_address_makes_new_names_at_the_registrations_pace(e2e: E2E) -> None:
    boards = await start_kalaha(e2e, person_turn_limit="60", registration_burst="2",
                                registration_interval="600")
    token = await e2e.add_user("erin")
    sower = await kalaha_bot(e2e, token, "Sower")
    for name in ("Ann", "Ben"):
        await boards.create({"opponent": sower, "name": f"{name}#erin secret"})
    answer = await boards.call("POST", "/api/boards",
                               json.dumps({"opponent": sower, "name": "Cid"}).encode())
    assert answer.status == 429, answer
    assert answer.body["error"] == "Too Many Requests", answer.body
    assert "as many new player names as it may" in answer.body["message"], answer.body
    assert int(answer.headers["Retry-After"]) > 0
    # A name the address made already plays again; none was made for the refusal.
    await boards.create({"opponent": sower, "name": "Ann", "secret": "erin secret"})
    guests = e2e.read_db("SELECT name FROM bots WHERE protocol = 'guest' ORDER BY id")
    assert [row[0] for row in guests] == ["Ann", "Ben"]


async def test_a_board_over_the_addresss_share_makes_nothing(e2e: E2E) -> None:
    boards = await start_kalaha(e2e, person_turn_limit="60", max_open_games_per_client="2")
    token = await e2e.add_user("fay")
    sower = await kalaha_bot(e2e, token, "Sower")
    await boards.create({})
    await boards.create({"opponent": sower, "name": "Gus"})
    answer = await boards.call("POST", "/api/boards",
                               json.dumps({"opponent": sower, "name": "Hal"}).encode())
    assert answer.status == 429, answer
    assert answer.body["error"] == "Too Many Requests", answer.body
    assert "holds 2 games open already" in answer.body["message"], answer.body
    assert answer.headers["Retry-After"] == "5"
    assert e2e.read_db("SELECT 1 FROM bots WHERE name = 'Hal'") == []
    assert e2e.read_db("SELECT COUNT(*) FROM games WHERE game = 'KALAHA'")[0][0] == 2

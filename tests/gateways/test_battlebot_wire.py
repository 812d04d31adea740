"""Battlebot's wire, table by table: logins of both protocols, the GraphQL era's state
shape, turn echoes, and the salted login hash."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest

from merknera.games import JSONObject
from merknera.gateways.battlebot import wire
from merknera.gateways.battlebot.listener import round_trip
from merknera.gateways.battlebot.records import Standing, ranked
from merknera.gateways.battlebot.wire import Era, LoginError
from merknera.protocol.signing import same_secret

SALTED: JSONObject = {"bot_id": "Ann", "game": "noughtsandcrosses", "login_hash": "ab" * 32}
GRAPHQL: JSONObject = {"name": "Bob", "gameType": "NUMBERWANG", "password": "pw"}


@pytest.mark.parametrize(("message", "era", "expected"), [
    (SALTED, Era.SALT, ("Ann", "NOUGHTSANDCROSSES", "ab" * 32, None)),
    ({**SALTED, "contest": "cup"}, Era.SALT, ("Ann", "NOUGHTSANDCROSSES", "ab" * 32, "cup")),
    ({**SALTED, "contest": ""}, Era.SALT, ("Ann", "NOUGHTSANDCROSSES", "ab" * 32, None)),
    (GRAPHQL, Era.GRAPHQL, ("Bob", "NUMBERWANG", "pw", None)),
    ({**GRAPHQL, "gameType": "NOUGHTS_AND_CROSSES"}, Era.GRAPHQL,
     ("Bob", "NOUGHTSANDCROSSES", "pw", None)),
])
def test_a_login_is_read(message: JSONObject, era: Era,
                         expected: tuple[str, str, str, str | None]) -> None:
    login = wire.read_login(message, era)
    assert (login.name, login.game.mnemonic, login.credential, login.contest) == expected


@pytest.mark.parametrize(("message", "era", "why"), [
    ([1], Era.SALT, "a login is a JSON object, not [1]"),
    (GRAPHQL, Era.SALT, "unknown: 'gameType', 'name', 'password'"),
    (SALTED, Era.GRAPHQL, "unknown: 'bot_id', 'game', 'login_hash'"),
    ({**SALTED, "bot_id": 7}, Era.SALT, 'the login\'s "bot_id" must be a non-empty string'),
    ({**SALTED, "bot_id": ""}, Era.SALT, 'the login\'s "bot_id" must be a non-empty string'),
    ({**SALTED, "login_hash": None}, Era.SALT, '"login_hash" must be a non-empty string'),
    ({**SALTED, "bot_id": "x" * 201}, Era.SALT, "longer than 200 characters"),
    ({**SALTED, "contest": 5}, Era.SALT, '"contest" must be a string'),
    # Game names are the era's own, exactly as its server matched them.
    ({**SALTED, "game": "NOUGHTSANDCROSSES"}, Era.SALT, "there is no game"),
    ({**SALTED, "game": "NUMBERWANG"}, Era.SALT, "there is no game"),
    ({**GRAPHQL, "gameType": "numberwang"}, Era.GRAPHQL, "there is no game"),
    ({**GRAPHQL, "gameType": "BUMBLEBOTS"}, Era.GRAPHQL, "there is no game"),
])
def test_a_bad_login_is_refused_with_the_reason(message: Any, era: Era, why: str) -> None:
    with pytest.raises(LoginError) as caught:
        wire.read_login(message, era)
    assert why in str(caught.value)


def test_the_login_replies_drop_an_empty_contest() -> None:
    assert wire.read_login(SALTED, Era.SALT).reply() == {
        "authentication": "OK", "bot_id": "Ann", "game": "noughtsandcrosses"}
    assert wire.read_login({**GRAPHQL, "contest": "cup"}, Era.GRAPHQL).reply() == {
        "authentication": "OK", "gameType": "NUMBERWANG", "name": "Bob", "contest": "cup"}


def test_the_login_hash_puts_the_pass_hash_first() -> None:
    pass_hash, salt = "e3b0c442" * 8, "20f4868d" * 8
    assert wire.login_hash(pass_hash, salt) == hashlib.sha256(
        (pass_hash + salt).encode()).hexdigest()
    assert wire.login_hash(pass_hash, salt) != wire.login_hash(salt, pass_hash)


GOING: JSONObject = {"players": ["A", "B"], "nextPlayer": "B", "complete": False,
                     "board": {"n": 3}}
DONE: JSONObject = {"players": ["A", "B"], "nextPlayer": "A", "complete": True, "board": {"n": 11},
                    "victor": "A", "reason": "complete"}


@pytest.mark.parametrize(("view", "graphql_state"), [
    (GOING, {"board": {"n": 3}, "bots": ["A", "B"], "waitingFor": ["B"], "result": None}),
    (DONE, {"board": {"n": 11}, "bots": ["A", "B"], "waitingFor": [],
            "result": {"victor": "A", "reason": "complete"}}),
    ({**DONE, "victor": None, "reason": "maxTurns"},
     {"board": {"n": 11}, "bots": ["A", "B"], "waitingFor": [],
      "result": {"victor": None, "reason": "maxTurns"}}),
])
def test_each_era_gets_its_own_state_shape(view: JSONObject,
                                            graphql_state: JSONObject) -> None:
    assert wire.state_message(Era.SALT, view) is view
    assert wire.state_message(Era.GRAPHQL, view) == graphql_state


def test_a_turn_echo_overwrites_the_name_and_time_the_client_sent() -> None:
    sent: JSONObject = {"n": 2, "player": "Mallory", "name": "Mallory", "time": 0,
                        "valid": False}
    assert wire.turn_echo(Era.SALT, sent, "A", 123, valid=True) == {
        "n": 2, "player": "A", "name": "Mallory", "time": 123, "valid": True}
    assert wire.turn_echo(Era.GRAPHQL, sent, "A", 123, valid=False, error="why") == {
        "n": 2, "player": "Mallory", "name": "A", "time": 123, "valid": False, "error": "why"}
    assert sent["player"] == "Mallory"  # the client's message is not changed


def test_an_update_carries_the_turn_only_when_there_is_one() -> None:
    assert wire.update(Era.SALT, GOING) == {"state": GOING}
    turn: JSONObject = {"n": 2}
    assert json.loads(json.dumps(wire.update(Era.SALT, GOING, turn))) == {
        "state": GOING, "turn": {"n": 2}}


def test_credentials_are_compared_whole() -> None:
    assert same_secret("abc", "abc")
    assert not same_secret("abc", "abd")
    assert not same_secret("ab", "abc")


@pytest.mark.parametrize(("lines", "order"), [
    # score first (3 a win, 1 a draw)...
    ([Standing("a", wins=1), Standing("b", draws=4)], ["b", "a"]),
    # ...then more wins (3 points each way)...
    ([Standing("a", draws=3), Standing("b", wins=1, losses=2)], ["b", "a"]),
    # ...then fewer losses...
    ([Standing("a", wins=1, losses=3), Standing("b", wins=1, losses=1)], ["b", "a"]),
    # ...then the name, so that the table is the same at every read.
    ([Standing("b", wins=2), Standing("a", wins=2)], ["a", "b"]),
])
def test_a_contest_table_ranks_by_score_then_wins_then_losses(
        lines: list[Standing], order: list[str]) -> None:
    assert [line.bot_id for line in ranked(lines)] == order
    assert Standing("x", wins=2, draws=1, losses=5).score == 7


async def test_the_round_trip_of_a_tcp_connection_is_read_from_the_kernel() -> None:
    accepted: asyncio.Future[asyncio.BaseTransport] = asyncio.get_running_loop().create_future()

    class Keep(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            accepted.set_result(transport)

    server = await asyncio.get_running_loop().create_server(Keep, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        measured = round_trip(await accepted)
        # In seconds (the kernel keeps microseconds): a loopback round trip is far below 1.
        assert measured is not None and 0 <= measured < 1.0
        assert round_trip(None) is None
    finally:
        writer.close()
        (await accepted).close()
        server.close()
        await server.wait_closed()

"""Query parameters (merknera.web.query): what a handler reads is what the document says,
an empty value included."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp.test_utils import make_mocked_request

from merknera.web.query import MAX_ID, BadQueryError, ChoiceParam, IntParam
from tests.conftest import ArenaFactory

LIMIT = IntParam("limit", "At most this many", high=500, default=50)
AFTER = IntParam("after", "After this", low=0)
NEEDED = IntParam("a", "A bot id", required=True)
STATES = ChoiceParam("states", "How", ("delta", "full"), default="delta")
GAME = ChoiceParam("game", "The game", ("KALAHA", "TICTACTOE"), required=True)


def read(param: IntParam | ChoiceParam, query: str) -> object:
    return param.read(make_mocked_request("GET", f"/api/x{query}"))


@pytest.mark.parametrize(("param", "query", "value"), [
    (LIMIT, "", 50),
    (LIMIT, "?limit=1", 1),
    (LIMIT, "?limit=500", 500),
    (LIMIT, "?limit=7&limit=9", 7),
    (AFTER, "?after=0", 0),
    (AFTER, "", None),
    (AFTER, f"?after={MAX_ID}", MAX_ID),
    (NEEDED, "?a=12", 12),
    (STATES, "", "delta"),
    (STATES, "?states=full", "full"),
    (GAME, "?game=KALAHA", "KALAHA"),
])
def test_a_usable_value_is_read(param: IntParam | ChoiceParam, query: str,
                                value: object) -> None:
    assert read(param, query) == value


@pytest.mark.parametrize(("param", "query", "says"), [
    (LIMIT, "?limit=", '"limit" must be an integer, got ""'),
    (LIMIT, "?limit=0", '"limit" must be between 1 and 500, got 0'),
    (LIMIT, "?limit=501", '"limit" must be between 1 and 500, got 501'),
    (LIMIT, "?limit=%2B5", '"limit" must be an integer, got "+5"'),
    (LIMIT, "?limit=5_0", '"limit" must be an integer, got "5_0"'),
    (LIMIT, "?limit=%205", '"limit" must be an integer, got " 5"'),
    (LIMIT, "?limit=%EF%BC%95", '"limit" must be an integer, got "５"'),
    (AFTER, "?after=-1", '"after" must be between 0 and 999999999999999999, got -1'),
    (AFTER, f"?after={MAX_ID + 1}", '"after" must be an integer, got "1000000000000000000"'),
    (NEEDED, "", '"a" is required'),
    (STATES, "?states=", '"states" must be one of delta, full, got ""'),
    (STATES, "?states=FULL", '"states" must be one of delta, full, got "FULL"'),
    (GAME, "", '"game" is required, one of KALAHA, TICTACTOE'),
])
def test_an_unusable_value_is_refused_saying_why(param: IntParam | ChoiceParam, query: str,
                                                 says: str) -> None:
    with pytest.raises(BadQueryError) as refused:
        read(param, query)
    assert refused.value.status == 400
    assert json.loads(refused.value.text or "") == {"error": says}


def test_the_document_states_the_same_bounds_and_choices() -> None:
    assert LIMIT.parameter() == {
        "name": "limit", "in": "query", "required": False, "description": "At most this many",
        "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}}
    assert NEEDED.parameter()["required"] is True
    assert GAME.parameter()["schema"] == {"type": "string", "enum": ["KALAHA", "TICTACTOE"]}
    assert STATES.parameter()["schema"]["default"] == "delta"


async def test_a_value_quoted_back_is_ascii_json_whatever_bytes_came(
        make_arena: ArenaFactory) -> None:
    """aiohttp decodes a header's odd bytes to lone surrogates; an error quoting one back
    was a 500 (UTF-8 cannot carry it) until error bodies became ASCII JSON."""
    arena = await make_arena()
    reader, writer = await asyncio.open_connection(arena.client.host, arena.client.port)
    writer.write(b"GET /api/games/1/live HTTP/1.1\r\nHost: x\r\n"
                 b"Last-Event-ID: \xc2\x84\xff\r\nConnection: close\r\n\r\n")
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split()[1] == b"400", answer
    assert body.isascii(), body
    assert json.loads(body)["error"].startswith(
        "the Last-Event-ID header must be a move number, got "), body

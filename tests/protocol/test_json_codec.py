"""The platform's JSON codec for calls to bots and their replies
(merknera.protocol.jsonrpc.dumps and loads): orjson first, and for every value or body
orjson would write or read otherwise, the strict json encoder and decoder, so the bytes
sent, the values read and the reasons for refusals are json's."""

from __future__ import annotations

import json

import pytest

from merknera.games.base import JSON
from merknera.protocol import jsonrpc


def test_dumps_is_compact_utf8_and_refuses_nan() -> None:
    assert jsonrpc.dumps({"a": [1, "é"]}) == '{"a":[1,"é"]}'.encode()
    with pytest.raises(ValueError):
        jsonrpc.dumps({"a": float("nan")})
    with pytest.raises(ValueError):  # orjson writes NaN as null: a null beside it too
        jsonrpc.dumps({"a": None, "b": [float("inf")]})


STRICT_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@pytest.mark.parametrize("value", [
    {"jsonrpc": "2.0", "method": "TicTacToe.NextMove",
     "params": {"gameid": 1, "mark": "X", "gamestate": ["X", "", "O"]}, "id": 7},
    {"a": None, "b": [True, False, 0, -1, 1.5, -0.0, 1e16, 0.1]},
    {"text": "\x00\x1f\n\t\"\\/é\u2028😀"},
    {"big": 2 ** 70, "negative": -(2 ** 63) - 1},
    {1: "a key that is not a string"},
    (1, [2, (3,)]),
], ids=["a call", "constants and floats", "escapes", "integers past 64 bits", "int key",
        "tuples"])
def test_dumps_gives_the_bytes_of_the_strict_encoder(value: JSON) -> None:
    assert jsonrpc.dumps(value) == STRICT_ENCODER.encode(value).encode()


@pytest.mark.parametrize("body", [
    b'{"jsonrpc":"2.0","id":1,"result":{"position":4}}',
    b'12345678901234567890',
    b'{"id":1,"result":[-9223372036854775809, 18446744073709551616]}',
    b'{"a":1.5e300,"b":"\\ud83d\\ude00","c":-0,"d":-0.0,"e":"\\u0000"}',
    b'{"a":1,"a":2}',
    '{"text":"é 😀"}'.encode(),
    '{"text":"é"}',
], ids=["a reply", "a long integer", "integers past 64 bits", "numbers and escapes",
        "a key twice", "UTF-8", "text"])
def test_loads_reads_a_body_as_the_strict_decoder_does(body: bytes | str) -> None:
    value = jsonrpc.loads(body)
    # repr, not ==: 12345678901234567890 read as a float would equal nothing here anyway,
    # but -0 against -0.0 and 1 against 1.0 compare equal.
    assert repr(value) == repr(json.loads(body))

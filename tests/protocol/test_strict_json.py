"""The one strict reader of untrusted JSON, and the writer (merknera.protocol.strict_json):
orjson first, and for every value or body orjson would write or read otherwise, json's
strict encoder and decoder, so the bytes sent, the values read and the reasons for
refusals are json's; and the same refusals for every body, frame and reply."""

from __future__ import annotations

import json

import pytest

from merknera.games.base import JSON
from merknera.protocol import strict_json
from merknera.protocol.strict_json import MAX_DEPTH, BadJSONError


def test_dumps_is_compact_utf8_and_refuses_nan() -> None:
    assert strict_json.dumps({"a": [1, "é"]}) == '{"a":[1,"é"]}'.encode()
    with pytest.raises(ValueError):
        strict_json.dumps({"a": float("nan")})
    with pytest.raises(ValueError):  # orjson writes NaN as null: a null beside it too
        strict_json.dumps({"a": None, "b": [float("inf")]})


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
    assert strict_json.dumps(value) == STRICT_ENCODER.encode(value).encode()


@pytest.mark.parametrize("body", [
    b'{"jsonrpc":"2.0","id":1,"result":{"position":4}}',
    b'12345678901234567890',
    b'{"id":1,"result":[-9223372036854775809, 18446744073709551616]}',
    b'{"a":1.5e300,"b":"\\ud83d\\ude00","c":-0,"d":-0.0,"e":"\\u0000"}',
    b'{"url":"http://bot:8080/rpc","nested":{"a":{"b":":"}}}',
    b'{"A":1,"a":2}',
    '{"text":"é 😀"}'.encode(),
    '{"text":"é"}',
    b"[" * MAX_DEPTH + b"]" * MAX_DEPTH,
    b"[" * (MAX_DEPTH - 1) + b'1, "x", {"k": null}' + b"]" * (MAX_DEPTH - 1),
    b'{"a": "\\u003a", "b": ":", "c": "\\\\u003a"}',
    b"[" + b"[[]]," * 5000 + b"0]",
], ids=["a reply", "a long integer", "integers past 64 bits", "numbers and escapes",
        "colons in strings", "names that differ in case", "UTF-8", "text", "deepest",
        "deepest, with values inside", "escaped colons", "many arrays, none deep"])
def test_loads_reads_a_body_as_the_strict_decoder_does(body: bytes | str) -> None:
    value = strict_json.loads(body)
    # repr, not ==: 12345678901234567890 read as a float would equal nothing here anyway,
    # but -0 against -0.0 and 1 against 1.0 compare equal.
    assert repr(value) == repr(json.loads(body))


@pytest.mark.parametrize(("body", "why"), [
    (b"\xff{}", "it is not UTF-8 (invalid start byte at byte 0)"),
    (b"{'a': 1}", "Expecting property name enclosed in double quotes"),
    (b'{"a": NaN}', "NaN is not valid JSON"),
    (b'[-Infinity]', "-Infinity is not valid JSON"),
    (b'{"id": 1e400}', "the number 1e400 is too large for a double"),
    (b'[-2.5E+999]', "the number -2.5E+999 is too large for a double"),
    (b"[1" + b"0" * 400 + b"]", "the number 1000000000000000000000000000000000000000..."),
    (b'{"x\\ud800": 1}', "it holds an unpaired UTF-16 surrogate escape"),
    (b'["\\udfff"]', "it holds an unpaired UTF-16 surrogate escape"),
    (b'{"a": 1, "a": 2}', 'the member name "a" is given twice in an object'),
    (b'{"m": {"b": [], "b": {}}}', 'the member name "b" is given twice in an object'),
    (b'{"a": 1, "\\u0061": 2}', 'the member name "a" is given twice in an object'),
    (b'{"a": ":", "a": "\\u003a"}', 'the member name "a" is given twice in an object'),
    (b'{"k": 12345678901234567890, "k": 1}', 'the member name "k" is given twice'),
    (b'{"a": 1} {"b": 2}', "Extra data"),
    (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),
     f"it is nested too deeply (more than {MAX_DEPTH} levels)"),
    (b"[" * (MAX_DEPTH + 1) + b"1" + b"]" * (MAX_DEPTH + 1),
     f"it is nested too deeply (more than {MAX_DEPTH} levels)"),
    (b'[' * (MAX_DEPTH + 1) + b'12345678901234567890' + b']' * (MAX_DEPTH + 1),
     f"it is nested too deeply (more than {MAX_DEPTH} levels)"),
    (b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
     f"it is nested too deeply (more than {MAX_DEPTH} levels)"),
    (b'{"n": 1' + b"0" * 5000 + b"}", "Exceeds the limit"),
], ids=["not UTF-8", "single quotes", "NaN", "-Infinity", "1e400", "-2.5E+999",
        "an integer past a double", "a lone high surrogate in a name", "a lone low surrogate",
        "a name twice", "a name twice inside", "a name twice, once escaped",
        "a name twice, and an escaped colon", "a name twice beside a long integer",
        "two values", "one level too deep", "one level too deep around a number",
        "one level too deep around a long integer", "far too deep", "5,000 digits"])
def test_loads_refuses_with_the_reason(body: bytes, why: str) -> None:
    with pytest.raises(BadJSONError) as refused:
        strict_json.loads(body)
    assert str(refused.value).startswith(why), refused.value
    # The same refusal for the body as text (a WebSocket frame).
    if body.isascii():
        with pytest.raises(BadJSONError) as again:
            strict_json.loads(body.decode())
        assert str(again.value) == str(refused.value)


def test_text_with_a_lone_surrogate_is_refused() -> None:
    # No listener hands such text on (aiohttp refuses a frame that is not UTF-8), but the
    # reader promises the refusal for text as for bytes.
    with pytest.raises(BadJSONError, match="the text holds an unpaired UTF-16 surrogate"):
        strict_json.loads('["\ud800"]')

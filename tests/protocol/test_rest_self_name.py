"""The name a Squelchbot REST bot gives itself in ``GET /bot/info``
(:func:`merknera.seats.squelch_rest.self_name`): kept as the spec allows it, cut to its 20
characters, and refused (None) when it is not shown text a page may carry."""

from __future__ import annotations

import json

import pytest

from merknera.seats.squelch_rest import SELF_NAME_CHARS, self_name


def info(name: object) -> bytes:
    """A ``/bot/info`` body ``{"name": name}``."""
    return json.dumps({"name": name}).encode()


CASES: list[tuple[str, bytes, str | None]] = [
    # (what, the reply body, the name kept)
    ("a plain name", info("somebot v1.0"), "somebot v1.0"),
    ("letters beyond ASCII", info("Schäfer-Bot ☃"), "Schäfer-Bot ☃"),
    ("exactly 20 characters", info("x" * 20), "x" * 20),
    ("cut to 20 characters", info("somebot v1.0 (recording)"), "somebot v1.0 (record"),
    ("cut, then the space the cut ends on stripped", info("nineteen characters z"),
     "nineteen characters"),
    ("spaces stripped before the cut", info("   " + "b" * 30), "b" * 20),
    ("surrounding spaces stripped", info("  padded  "), "padded"),
    ("inner spaces kept", info("two  words"), "two  words"),
    ("other keys ignored", json.dumps({"version": "1", "name": "v"}).encode(), "v"),
    ("a control character", info("bad\x07name"), None),
    ("a tab", info("tab\tname"), None),
    ("a newline", info("two\nlines"), None),
    ("a C1 control character", info("bad\x9bname"), None),
    ("a right-to-left override (U+202E)", info("\u202eeman"), None),
    ("a zero-width space (U+200B)", info("zero\u200bwidth"), None),
    ("a zero-width joiner (U+200D)", info("join\u200ded"), None),
    ("only spaces", info("     "), None),
    ("an empty name", info(""), None),
    ("a number", info(42), None),
    ("a boolean", info(True), None),
    ("null", info(None), None),
    ("a list", info(["somebot"]), None),
    ("an object", info({"name": "somebot"}), None),
    ("no name", b"{}", None),
    ("another key only", b'{"nom": "somebot"}', None),
    ("not JSON", b"somebot v1.0", None),
    ("an empty body", b"", None),
    ("truncated JSON", b'{"name": "some', None),
    ("not UTF-8", b'{"name": "\xff"}', None),
    ("a JSON string", b'"somebot"', None),
    ("a JSON list", b'[{"name": "somebot"}]', None),
    ("JSON null", b"null", None),
]


@pytest.mark.parametrize(("reply", "expected"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_self_name(reply: bytes, expected: str | None) -> None:
    assert self_name(reply) == expected


def test_the_cut_is_the_spec_s_twenty_characters() -> None:
    assert SELF_NAME_CHARS == 20
    kept = self_name(info("y" * 100))
    assert kept is not None and len(kept) == SELF_NAME_CHARS

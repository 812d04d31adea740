"""Messages cleared of where a bot lives (what migration 006 does to stored ones)."""

from __future__ import annotations

import pytest

from merknera.protocol.excerpt import excerpt, without_addresses


@pytest.mark.parametrize(("stored", "cleared"), [
    ("cannot call http://[::1]:80/x: ClientConnectorError: Cannot connect to host [::1]:80 "
     "ssl:default [Connect call failed ('::1', 80, 0, 0)]",
     "cannot call the endpoint: ClientConnectorError: Cannot connect to host [Connect call "
     "failed]"),
    ("cannot connect to http://bot.example:8001/x: bot.example resolves only to addresses "
     "outside the allowed networks",
     "cannot connect to the endpoint: the endpoint resolves only to addresses outside the "
     "allowed networks"),
    ("8.8.8.8 is outside the networks this platform calls",
     "an address is outside the networks this platform calls"),
    ('the endpoint "http://x.example/z" must start with http:// or https://',
     'the endpoint "the endpoint" must start with http:// or https://'),
    # Messages of the rules are left as they are.
    ("the cross word OT (down from I8) is not in the dictionary",
     "the cross word OT (down from I8) is not in the dictionary"),
    ("position 9 is not on the board (0-8)", "position 9 is not on the board (0-8)"),
])
def test_stored_messages_lose_their_endpoints(stored: str, cleared: str) -> None:
    assert without_addresses(stored) == cleared


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("short", 10, "short"), ("exactly 10", 10, "exactly 10"), ("a bit longer", 10, "a bit l..."),
])
def test_excerpts(text: str, limit: int, expected: str) -> None:
    assert excerpt(text, limit) == expected

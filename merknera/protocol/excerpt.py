"""How much of what a bot sent may be quoted where anybody can read it, and messages
cleared of where a bot lives."""

from __future__ import annotations

import re

from merknera.games.wire import cut

EXCERPT = 120
"""Characters of a bot's own text (a reply, an error message) quoted in a fault message
or shown to others than the bot's owner."""

STORED_MESSAGE = 400
"""Characters of a message stored before fault messages were bounded that are kept."""

_ADDRESS_PATTERNS = (
    (re.compile(r"""https?://[^\s"'<>]+?(?=[:,;.)]?(?:[\s"'<>]|$))"""), "the endpoint"),
    # Python's socket addresses: Connect call failed ('10.0.0.7', 8001).  Each pattern
    # starts only at the start of a run (the lookbehinds), or a long run of spaces or of
    # other characters would be scanned again from each of its characters.
    (re.compile(r"(?<!\s)\s*\(\s*'[0-9A-Fa-f:.%\w]*'\s*,\s*\d+(?:\s*,\s*\d+)*\s*\)"), ""),
    # aiohttp's: Cannot connect to host bot.example:8001 ssl:default
    (re.compile(r"(Cannot connect to host) \S+( ssl:\S+)?"), r"\1"),
    (re.compile(r"(?<!\S)\S+ (resolves only to addresses outside)"), r"the endpoint \1"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "an address"),
)


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """``text`` shortened to at most ``limit`` characters, with "..." if it was cut."""
    return cut(text, limit)


def without_addresses(text: str | None) -> str | None:
    """A message as fault messages are written now: no URL, host or address of an
    endpoint, and not longer than :data:`STORED_MESSAGE` (messages stored earlier quoted
    endpoints and whole error replies; migration 006 passes them through this)."""
    if text is None:
        return None
    text = text[:4 * STORED_MESSAGE]  # what could be kept, and room for what is taken out
    for pattern, replacement in _ADDRESS_PATTERNS:
        text = pattern.sub(replacement, text)
    return excerpt(text, STORED_MESSAGE)

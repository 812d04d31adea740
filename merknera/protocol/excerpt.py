"""How much of what a bot sent may be quoted where anybody can read it."""

from __future__ import annotations

EXCERPT = 120
"""Characters of a bot's own text (a reply, an error message) quoted in a fault message
or shown to others than the bot's owner."""


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """``text`` shortened to at most ``limit`` characters, with "..." if it was cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."

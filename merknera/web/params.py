"""Reading ids, numbers and tokens from requests, for the API and the pages alike."""

from __future__ import annotations

from aiohttp import web

MAX_DIGITS = 18
"""Ids and numbers longer than this are no ids (SQLite's integers end at 19 digits)."""


def whole_number(raw: str) -> int | None:
    """``raw`` as a number when it is 1 to :data:`MAX_DIGITS` ASCII digits, else None.

    ``str.isdigit`` alone accepts digits ``int`` cannot read (``"²"``) and other scripts'
    digits (``"１"``), so ASCII is required first.
    """
    if raw.isascii() and raw.isdigit() and len(raw) <= MAX_DIGITS:
        return int(raw)
    return None


def bearer_token(request: web.BaseRequest) -> str:
    """The token of an ``Authorization: Bearer <token>`` header ("" without one)."""
    header = request.headers.get("Authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else ""

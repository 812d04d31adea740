"""Reading ids, numbers, tokens, JSON bodies and the encodings accepted from requests, for
the API and the pages alike."""

from __future__ import annotations

from aiohttp import web

from merknera.games import JSON, JSONObject
from merknera.guard import GUARD_KEY, BodyError
from merknera.protocol import strict_json

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


def accepts_gzip(request: web.BaseRequest) -> bool:
    """Whether the request's ``Accept-Encoding`` accepts gzip (named, or ``*``, without
    ``q=0``)."""
    for item in request.headers.get("Accept-Encoding", "").lower().split(","):
        coding, _, parameter = item.partition(";")
        if coding.strip() in ("gzip", "x-gzip", "*"):
            name, _, quality = parameter.partition("=")
            if name.strip() != "q":
                return True
            try:
                return float(quality) > 0
            except ValueError:
                return False
    return False


def bearer_token(request: web.BaseRequest) -> str:
    """The token of an ``Authorization: Bearer <token>`` header ("" without one)."""
    header = request.headers.get("Authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else ""


def json_integer(value: object) -> int | None:
    """``value`` (from a JSON body) as an integer when JSON Schema calls it one, else None.

    JSON Schema's ``integer`` is a number with no fraction, so ``3.0`` is one (and the
    OpenAPI document's schemas let it through); ``true`` is not, though Python's ``bool`` is
    an ``int``.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


class BodyRefusedError(Exception):
    """A request body that is not a JSON object of at most the size allowed: the HTTP
    status to answer and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def json_object(request: web.Request, limit: int) -> JSONObject:
    """The request's body, at most ``limit`` bytes within the guard's time, read by the
    strict JSON reader, as a JSON object.

    :raises BodyRefusedError: saying what is wrong with it.
    """
    try:
        raw = await request.app[GUARD_KEY].read_body(request, limit)
    except BodyError as exc:
        raise BodyRefusedError(exc.status, exc.message) from None
    try:
        value: JSON = strict_json.loads(raw)
    except strict_json.BadJSONError as exc:
        raise BodyRefusedError(
            400, f"the body must be a JSON object, and is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise BodyRefusedError(400, "the body must be a JSON object")
    return value

"""The one reader of JSON from outside the platform, and its writer of JSON.

Every untrusted body, frame and reply (bot replies, ``/rpc``, each gateway's bodies and
frames, the play API, the admin API) is read by :func:`loads`, so every listener refuses the
same things with the same words:

* bytes that are not UTF-8, and text that is not JSON (trailing data, single quotes...);
* ``NaN``, ``Infinity`` and numbers too large for a double (``1e400``): JSON has no
  non-finite numbers, and nothing the platform writes back could say them;
* a lone UTF-16 surrogate, escaped (``"\\ud800"``) or in text: Python reads it into a
  string that cannot be encoded again, so every message, log line and row quoting it
  would fail;
* an object with a member name twice: readers disagree on which member counts (keys that
  differ only in case are the games' and the JSON-RPC reader's to refuse, where their
  protocols match keys regardless of case);
* arrays and objects nested deeper than :data:`MAX_DEPTH`, which no message of any
  protocol here needs and which would make any recursive walk of the value (the
  encoder's among them) fail.

A refusal's message is the reason alone (``"NaN is not valid JSON"``), for the caller to
say what could not be read: ``f"the body is not JSON: {exc}"``.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Final

import orjson

from merknera.games.base import JSON

MAX_DEPTH: Final = 64
"""Arrays and objects nested in one another, at most (the deepest message of any protocol
here, a hexagons Game object, has 4)."""


class BadJSONError(ValueError):
    """Input that is not JSON the platform reads; the message says why, for the sender."""


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
_ESCAPED_COLON = re.compile(rb"(?<!\\)(?:\\\\)*\\u003[aA]")
"""A colon escaped in a string (after any escaped backslashes, which are no escape)."""
_ORJSON_DEPTH = 1024
"""How deep orjson reads arrays and objects nested in one another (its documented limit:
deeper is a JSONDecodeError)."""
_DEEPER = b"[" * (_ORJSON_DEPTH - MAX_DEPTH)
_SHALLOWER = b"]" * (_ORJSON_DEPTH - MAX_DEPTH)
_ORJSON_STRICT = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""What json refuses to encode, orjson refuses too (it would encode these natively)."""


def _refuse_constant(name: str) -> JSON:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is too large for a double")
    return value


def _integer(text: str) -> int:
    value = int(text)
    if abs(value) > sys.float_info.max:
        raise ValueError(f"the number {text[:40]}... is too large for a double")
    return value


def _unique_members(pairs: list[tuple[str, JSON]]) -> dict[str, JSON]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise ValueError(f"the member name {json.dumps(name)[:60]} is given twice "
                                 "in an object")
            seen.add(name)
    return found


# Made once: json.loads and json.dumps with options build a new decoder or encoder per
# call, a measurable share of a move's round trip.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite,
                            parse_int=_integer)
_PAIRS_DECODER = json.JSONDecoder(object_pairs_hook=_unique_members)
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def loads(body: bytes | str) -> JSON:
    """Read untrusted JSON strictly (see the module's docstring for what is refused).

    :raises BadJSONError: with the reason, for anything refused.
    """
    if isinstance(body, str):
        try:
            body = body.encode("utf-8")
        except UnicodeEncodeError:
            raise BadJSONError("the text holds an unpaired UTF-16 surrogate") from None
    # Every step in C, whatever the body's shape.  orjson reads it, several times faster
    # than json, and refuses all that json below refuses and a little more (a lone
    # surrogate escape, a number too big for a double); json reads the bodies orjson
    # refuses, for the reason, and those with integers of 19 digits or more, which orjson
    # would read as floats.  Neither tells a member name given twice: such a body's value
    # has a member fewer, so written again it has a colon fewer than the body (counting
    # each colon escaped as \u003a in it, which is written as a colon); only then is it
    # read again to name the member.  Depth is checked where it could be too deep.
    value = _json_decoded(body) if _LONG_DIGITS.search(body) else _orjson_decoded(body)
    if body.count(b"[") + body.count(b"{") > MAX_DEPTH:
        _check_depth(body)
    colons = body.count(b":")
    if b"\\u003" in body:
        colons += len(_ESCAPED_COLON.findall(body))
    if _written(value).count(b":") != colons:
        _check_names(body)
    return value


def _written(value: JSON) -> bytes:
    try:
        written: bytes = orjson.dumps(value, option=_ORJSON_STRICT)
    except TypeError:  # an integer past 64 bits, read by json
        return _ENCODER.encode(value).encode("utf-8")
    return written


def _orjson_decoded(body: bytes) -> JSON:
    try:
        value: JSON = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _json_decoded(body)
    return value


def _json_decoded(body: bytes) -> JSON:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadJSONError(f"it is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        value: JSON = _DECODER.decode(text)
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:
        raise BadJSONError(str(exc)) from None
    # JSON may escape a lone UTF-16 surrogate ("\\udc00"); Python decodes it into a str
    # that cannot be encoded again, so it would break every message, log line and row
    # quoting it.
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise BadJSONError("it holds an unpaired UTF-16 surrogate escape") from None
    return value


def _check_depth(body: bytes) -> None:
    """:raises BadJSONError: if the JSON ``body`` (read already, and refused by neither
    reader) nests arrays and objects deeper than :data:`MAX_DEPTH`: inside enough arrays to
    make :data:`_ORJSON_DEPTH` with it, orjson refuses it then, and only then."""
    try:
        orjson.loads(_DEEPER + body + _SHALLOWER)
    except orjson.JSONDecodeError:
        raise _too_deep() from None


def _check_names(body: bytes) -> None:
    """:raises BadJSONError: naming a member name the JSON ``body`` gives twice in an
    object, if it does."""
    try:
        _PAIRS_DECODER.decode(body.decode("utf-8"))
    except ValueError as exc:
        raise BadJSONError(str(exc)) from None


def _too_deep() -> BadJSONError:
    return BadJSONError(f"it is nested too deeply (more than {MAX_DEPTH} levels)")


def dumps(value: JSON) -> bytes:
    """Encode JSON compactly as UTF-8 (no NaN: such a value is a platform bug)."""
    # orjson first, as in loads: the same bytes as the encoder below for every value the
    # platform sends (floats aside, whose exponents it writes 1e-7 where json writes 1e-07).
    # It writes NaN and Infinity as null and refuses what the encoder below turns into
    # JSON (integers past 64 bits, keys that are not strings): a body with a null in it,
    # or refused, is encoded again below, which refuses NaN as before.
    try:
        encoded: bytes = orjson.dumps(value, option=_ORJSON_STRICT)
    except TypeError:
        pass
    else:
        if b"null" not in encoded:
            return encoded
    return _ENCODER.encode(value).encode("utf-8")

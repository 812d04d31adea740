"""Small helpers every game's wire view shares: keys matched regardless of case, and values
quoted briefly in error messages.

The protocols Merknera speaks match a reply's keys case-insensitively (the Go servers'
``encoding/json`` did), so ``{"Position": 4}`` is ``{"position": 4}``.  That makes
``{"Take": "1", "take": "2"}`` one key given twice with two values.  Rather than pick one
of them by an order the bot's JSON library chose, every game refuses such an object as
malformed (:class:`~merknera.games.base.InvalidMoveError`), whichever key it is, even one
the game would ignore: :func:`lowered` and :func:`member` both apply this rule.
"""

from __future__ import annotations

from collections.abc import Mapping

from merknera.games.base import JSON, InvalidMoveError

QUOTE = 80
"""Characters of a value that an error message quotes (see :func:`shorten`)."""

_ELLIPSIS = "..."


def shorten(value: object, limit: int = QUOTE) -> str:
    """``repr(value)``, cut to at most ``limit`` characters ending in ``"..."`` if too long.

    Error messages quote what a bot sent; a bot may send megabytes.

    :raises ValueError: if ``limit`` cannot hold the ``"..."``.
    """
    return cut(repr(value), limit)


def cut(text: str, limit: int) -> str:
    """``text``, cut to at most ``limit`` characters ending in ``"..."`` if too long (the one
    place messages are shortened: :func:`shorten` and the protocol's excerpts use it).

    :raises ValueError: if ``limit`` cannot hold the ``"..."``.
    """
    if limit < len(_ELLIPSIS):
        raise ValueError(f"limit must be at least {len(_ELLIPSIS)}, got {limit}")
    return text if len(text) <= limit else text[: limit - len(_ELLIPSIS)] + _ELLIPSIS


def lowered(obj: Mapping[str, JSON], where: str = "the reply") -> dict[str, JSON]:
    """``obj`` with its keys lower-cased (values and their order kept).

    ``where`` names the object in the error, e.g. ``"playtiles[0]"``.

    :raises InvalidMoveError: if two keys differ only in case (see the module docstring).
    """
    fields: dict[str, JSON] = {}
    for key, value in obj.items():
        lower = key.lower()
        if lower in fields:
            raise InvalidMoveError(f'{where} has the key "{lower}" twice (in different cases)')
        fields[lower] = value
    return fields


def member(obj: Mapping[str, JSON], name: str, where: str = "the reply") -> JSON | None:
    """The value of ``obj``'s member ``name``, matched regardless of case; ``None`` if there is
    no such key (a JSON ``null`` reads the same: use :func:`lowered` to tell them apart).

    :raises InvalidMoveError: if two keys of ``obj`` differ only in case, as :func:`lowered`.
    """
    return lowered(obj, where).get(name.lower())

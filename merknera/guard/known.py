"""Tokens found good lately: a short memory that spares a store read per request."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class KnownTokens(Generic[T]):
    """What a lookup found for a token, kept ``seconds`` seconds, for at most ``size``
    tokens (the oldest go first).

    Only a finding is kept, never a miss: a wrong token is looked up every time, and
    counted by :class:`merknera.guard.AuthThrottle`.  The memory is a shortcut, not the
    authority: its user checks the token again where it matters (in its write transaction)
    and calls :meth:`forget` when that check refuses it.  Keys are the tokens' SHA-256, so
    the memory holds no token itself.
    """

    def __init__(self, seconds: float, size: int = 1024,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if seconds <= 0 or size < 1:
            raise ValueError("seconds must be greater than 0 and size at least 1")
        self._seconds = seconds
        self._size = size
        self._clock = clock
        self._found: dict[str, tuple[float, T]] = {}

    def get(self, token: str) -> T | None:
        """What was found for ``token`` less than ``seconds`` ago, or None."""
        key = _key(token)
        entry = self._found.get(key)
        if entry is None:
            return None
        until, value = entry
        if self._clock() >= until:
            del self._found[key]
            return None
        return value

    def remember(self, token: str, value: T) -> None:
        """Keep ``value`` as what ``token`` stands for, from now."""
        key = _key(token)
        self._found.pop(key, None)  # to the back of the line
        while len(self._found) >= self._size:
            del self._found[next(iter(self._found))]
        self._found[key] = (self._clock() + self._seconds, value)

    def forget(self, token: str) -> None:
        """Drop ``token``: its next use is looked up again."""
        self._found.pop(_key(token), None)


def _key(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()

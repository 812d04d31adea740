"""Token buckets by key (how often a client may send a request or a wrong token, a user
register), and the wrong-token throttle built on them."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from merknera.refused import Limit, Refusals, retry_after_header

T = TypeVar("T")

MAX_KEYS = 100_000
"""Buckets kept at most; beyond, full ones are forgotten first (they hold no debt)."""


class RateLimitedError(Exception):
    """Too many attempts: try again after :attr:`retry_after` seconds."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after

    @property
    def retry_after_header(self) -> str:
        """The ``Retry-After`` value (:func:`~merknera.refused.retry_after_header`)."""
        return retry_after_header(self.retry_after)


@dataclass
class _Bucket:
    tokens: float
    at: float


class Buckets:
    """``burst`` attempts in a row per key, then one more every ``interval`` seconds."""

    def __init__(self, burst: int, interval: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if burst < 1 or interval <= 0:
            raise ValueError("burst must be at least 1 and interval greater than 0")
        self.burst = burst
        self.interval = interval
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def wait(self, key: str) -> float:
        """Seconds until ``key`` may make an attempt (0.0: now)."""
        bucket = self._refilled(key)
        return 0.0 if bucket is None or bucket.tokens >= 1 else (1 - bucket.tokens) * self.interval

    def take(self, key: str) -> float:
        """Make an attempt if ``key`` may: returns 0.0 when it was taken, else the seconds
        until it may."""
        waited = self.wait(key)
        if waited == 0.0:
            self.spend(key)
        return waited

    def refund(self, key: str) -> None:
        """Give back an attempt taken (:meth:`take`) that turned out not to count."""
        bucket = self._refilled(key)
        if bucket is not None:
            bucket.tokens = min(float(self.burst), bucket.tokens + 1)

    def spend(self, key: str) -> None:
        """Count an attempt (a failure) against ``key``, whether or not it had one left."""
        bucket = self._refilled(key)
        if bucket is None:
            self._make_room()
            bucket = self._buckets[key] = _Bucket(float(self.burst), self._clock())
        bucket.tokens = max(0.0, bucket.tokens - 1)

    def _refilled(self, key: str) -> _Bucket | None:
        bucket = self._buckets.get(key)
        if bucket is not None:
            now = self._clock()
            bucket.tokens = min(float(self.burst),
                                bucket.tokens + (now - bucket.at) / self.interval)
            bucket.at = now
        return bucket

    def _make_room(self) -> None:
        """Forget full buckets, then the oldest, until an eighth of the places is free: a
        pass over every key at most once every ``MAX_KEYS // 8`` new keys, not at each."""
        if len(self._buckets) < MAX_KEYS:
            return
        for key in list(self._buckets):
            if self._refilled(key) is not None and self._buckets[key].tokens >= self.burst:
                del self._buckets[key]
        while len(self._buckets) > MAX_KEYS - MAX_KEYS // 8:
            del self._buckets[next(iter(self._buckets))]  # the oldest


class AuthThrottle:
    """Slows down a client that sends wrong tokens: ``burst`` of them in a row, then one
    more every ``interval`` seconds.

    A client's attempts with a token are tried one after another (:meth:`attempt`), so
    that attempts sent side by side cannot all slip through before the first has failed;
    right tokens cost nothing.  While a client must wait, its requests with a token are
    refused unread: it learns nothing from trying; each such refusal is counted in
    ``refusals``.
    """

    def __init__(self, burst: int, interval: float, refusals: Refusals | None = None) -> None:
        self._failures = Buckets(burst, interval)
        self._refusals = Refusals() if refusals is None else refusals
        self._turns: dict[str, asyncio.Lock] = {}
        self._waiting: Counter[str] = Counter()

    @contextlib.asynccontextmanager
    async def attempt(self, client: str) -> AsyncIterator[None]:
        """One attempt of ``client`` with a token: the block checks the token, and calls
        :meth:`failed` if it is wrong.

        :raises RateLimitedError: on entry, if ``client`` must wait before trying again.
        """
        turn = self._turns.setdefault(client, asyncio.Lock())
        self._waiting[client] += 1
        try:
            async with turn:
                wait = self._failures.wait(client)
                if wait > 0:
                    self._refusals.count(Limit.WRONG_TOKENS)
                    raise RateLimitedError(
                        "too many wrong tokens from your address; try again in "
                        f"{max(1, round(wait))} s", wait)
                yield
        finally:
            self._waiting[client] -= 1
            if self._waiting[client] <= 0:
                del self._waiting[client]
                del self._turns[client]

    def failed(self, client: str) -> None:
        """``client`` sent a wrong token."""
        self._failures.spend(client)

    async def verify(self, client: str, token: str,
                     lookup: Callable[[str], Awaitable[T | None]]) -> T | None:
        """What ``lookup`` finds for ``client``'s ``token`` (None, counted as a failure,
        if nothing).

        :raises RateLimitedError: if ``client`` must wait before trying again.
        """
        async with self.attempt(client):
            found = await lookup(token)
            if found is None:
                self.failed(client)
            return found

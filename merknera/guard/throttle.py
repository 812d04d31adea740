"""Token buckets by key: how often a client may send a wrong token, a user register."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

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
        """The ``Retry-After`` value: whole seconds, at least 1."""
        return str(max(1, math.ceil(self.retry_after)))


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
        if len(self._buckets) < MAX_KEYS:
            return
        for key in list(self._buckets):
            if self._refilled(key) is not None and self._buckets[key].tokens >= self.burst:
                del self._buckets[key]
        while len(self._buckets) >= MAX_KEYS:
            del self._buckets[next(iter(self._buckets))]  # the oldest

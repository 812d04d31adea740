"""A bounded cache: the entries most recently used, within a count, a total size and an age.

The platform's caches (replays and their frames, the gateways' games and views, the bot
client's URLs) are each one of these.  Each bound is optional; an entry beyond one goes,
the least recently used first.  Not thread-safe: a cache shared by threads is used under
its owner's lock.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Cache(Generic[K, V]):
    """Entries by key, the least recently used (put or got) first to go.

    ``most``: entries kept at most.  ``budget``: the total of ``size`` over the entries
    kept at most; sizes are measured afresh whenever the bounds are checked, so a value may
    grow while kept.  ``ttl``: seconds of ``clock`` after which an entry goes, however
    often it was got meanwhile.  ``held``: values that never go while it holds for them
    (the cache may then be over its bounds).
    """

    def __init__(self, most: float = float("inf"), *, budget: float = float("inf"),
                 size: Callable[[V], int] | None = None, ttl: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 held: Callable[[V], bool] | None = None) -> None:
        if most < 1 or budget < 0 or (ttl is not None and ttl <= 0):
            raise ValueError(f"a cache keeps one entry at least, within a budget of 0 or "
                             f"more, for some time: got most={most}, budget={budget}, "
                             f"ttl={ttl}")
        if budget != float("inf") and size is None:
            raise ValueError("a cache with a budget needs the size of its values")
        self.most = most
        self.budget = budget
        self._size = size
        self._ttl = ttl
        self._clock = clock
        self._held = held
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._put_at: OrderedDict[K, float] = OrderedDict()
        """When each entry was put, the earliest first (kept only with a ``ttl``)."""

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` has an entry (asking does not count as using it)."""
        return key in self._entries

    def values(self) -> Iterator[V]:
        """The values kept, the least recently used first."""
        return iter(list(self._entries.values()))

    @property
    def size(self) -> int:
        """The total ``size`` of the values kept, measured now (0 without ``size``)."""
        measure = self._size
        return 0 if measure is None else sum(measure(value) for value in self._entries.values())

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recently used), or None if it has none or it
        has expired."""
        if key not in self._entries:
            return None
        if self._ttl is not None and self._clock() - self._put_at[key] >= self._ttl:
            return None
        self._entries.move_to_end(key)
        return self._entries[key]

    def put(self, key: K, value: V) -> list[tuple[K, V]]:
        """Keep ``value`` as ``key``'s (replacing any), the most recently used; then let
        go of what is beyond the bounds (:meth:`fit`), which is returned."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        if self._ttl is not None:
            self._put_at.pop(key, None)
            self._put_at[key] = self._clock()
        return self.fit()

    def pop(self, key: K) -> V | None:
        """Forget ``key``'s entry; its value, or None if it had none."""
        self._put_at.pop(key, None)
        return self._entries.pop(key, None)

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()
        self._put_at.clear()

    def fit(self) -> list[tuple[K, V]]:
        """Let go of the entries that expired, then of the least recently used while the
        cache is beyond ``most`` or ``budget`` (but those held); the entries let go, in
        that order."""
        dropped: list[tuple[K, V]] = []
        held = self._held
        if self._ttl is not None:
            oldest = self._clock() - self._ttl
            for key, put_at in list(self._put_at.items()):
                if put_at > oldest:
                    break
                if held is None or not held(self._entries[key]):
                    dropped.append((key, self._drop(key)))
        measure = self._size
        sizes = {} if measure is None or self.budget == float("inf") else {
            key: measure(value) for key, value in self._entries.items()}
        total = sum(sizes.values())
        for key, value in list(self._entries.items()):
            if len(self._entries) <= self.most and total <= self.budget:
                break
            if held is None or not held(value):
                self._drop(key)
                dropped.append((key, value))
                total -= sizes.get(key, 0)
        return dropped

    def _drop(self, key: K) -> V:
        self._put_at.pop(key, None)
        return self._entries.pop(key)

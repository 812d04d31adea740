"""The platform's one bounded cache (merknera.cache): the least recently used go first,
beyond a count, a budget of sizes measured afresh, or an age; held values stay."""

from __future__ import annotations

import pytest

from merknera.cache import Cache


def test_the_least_recently_used_goes_beyond_the_count() -> None:
    cache: Cache[str, int] = Cache(2)
    assert cache.put("a", 1) == [] and cache.put("b", 2) == []
    assert cache.get("a") == 1  # now the most recently used
    assert cache.put("c", 3) == [("b", 2)]
    assert "b" not in cache and cache.get("b") is None
    assert cache.put("a", 10) == []  # replaced, and used
    assert cache.put("d", 4) == [("c", 3)]
    assert list(cache.values()) == [10, 4] and len(cache) == 2


def test_asking_whether_a_key_is_there_does_not_use_it() -> None:
    cache: Cache[str, int] = Cache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert "a" in cache
    assert cache.put("c", 3) == [("a", 1)]


def test_sizes_are_measured_afresh_against_the_budget() -> None:
    cache: Cache[str, list[int]] = Cache(budget=5, size=len)
    grows = [1, 2]
    cache.put("grows", grows)
    cache.put("small", [1])
    assert cache.size == 3
    grows.extend([3, 4, 5])
    assert cache.size == 6
    assert cache.fit() == [("grows", grows)]
    assert cache.size == 1


def test_held_values_stay_and_the_next_goes_instead() -> None:
    followed: set[str] = {"a"}
    cache: Cache[str, str] = Cache(2, held=lambda value: value in followed)
    cache.put("a", "a")
    cache.put("b", "b")
    assert cache.put("c", "c") == [("b", "b")]
    followed |= {"c"}
    assert cache.put("d", "d") == [("d", "d")]  # only itself was free to go
    assert len(cache) == 2
    followed.clear()
    assert cache.put("e", "e") == [("a", "a")]
    assert list(cache.values()) == ["c", "e"]


def test_entries_expire_their_ttl_after_they_were_put_however_used() -> None:
    now = [0.0]
    cache: Cache[str, int] = Cache(10, ttl=5.0, clock=lambda: now[0])
    cache.put("a", 1)
    now[0] = 3.0
    cache.put("b", 2)
    assert cache.get("a") == 1  # used, but not put again
    now[0] = 5.0
    assert cache.get("a") is None
    assert cache.fit() == [("a", 1)]
    assert cache.get("b") == 2
    cache.put("b", 20)  # put again: its age starts over
    now[0] = 9.0
    assert cache.fit() == [] and cache.get("b") == 20


def test_pop_and_clear_forget() -> None:
    cache: Cache[str, int] = Cache(3, ttl=1.0, clock=lambda: 0.0)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.pop("a") == 1 and cache.pop("a") is None
    cache.clear()
    assert len(cache) == 0 and cache.fit() == []


@pytest.mark.parametrize("bounds", [{"most": 0}, {"budget": -1, "size": len}, {"ttl": 0.0},
                                    {"budget": 10}])
def test_bounds_that_keep_nothing_or_cannot_be_measured_are_refused(
        bounds: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="cache"):
        Cache(**bounds)  # type: ignore[arg-type]

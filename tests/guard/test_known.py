"""The memory of tokens found good lately, on a clock the test moves."""

from __future__ import annotations

import pytest

from merknera.guard.known import KnownTokens


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("elapsed", "found"), [
    (0.0, "alice"),
    (29.9, "alice"),
    (30.0, None),   # kept for 30 s, not a moment longer
    (400.0, None),
])
def test_a_token_is_kept_for_its_seconds(elapsed: float, found: str | None) -> None:
    clock = Clock()
    known: KnownTokens[str] = KnownTokens(30.0, clock=clock)
    known.remember("token-a", "alice")
    clock.now += elapsed
    assert known.get("token-a") == found
    assert known.get("token-b") is None


def test_the_oldest_token_goes_first_when_the_memory_is_full() -> None:
    clock = Clock()
    known: KnownTokens[str] = KnownTokens(30.0, size=2, clock=clock)
    known.remember("a", "alice")
    known.remember("b", "bob")
    known.remember("a", "alice")  # remembered again: now the newest
    known.remember("c", "carol")
    assert [known.get(token) for token in "abc"] == ["alice", None, "carol"]


def test_a_forgotten_or_expired_token_is_gone_and_a_new_finding_counts_from_now() -> None:
    clock = Clock()
    known: KnownTokens[str] = KnownTokens(30.0, clock=clock)
    known.remember("a", "alice")
    known.forget("a")
    known.forget("never-seen")
    assert known.get("a") is None
    known.remember("a", "alice")
    clock.now += 20.0
    known.remember("a", "alice, renamed")
    clock.now += 20.0
    assert known.get("a") == "alice, renamed"


def test_the_memory_holds_no_token_itself() -> None:
    known: KnownTokens[str] = KnownTokens(30.0)
    known.remember("s3cret-token", "alice")
    assert "s3cret-token" not in repr(vars(known))


@pytest.mark.parametrize(("seconds", "size"), [(0.0, 10), (-1.0, 10), (30.0, 0)])
def test_a_memory_needs_time_and_room(seconds: float, size: int) -> None:
    with pytest.raises(ValueError, match="seconds must be greater than 0"):
        KnownTokens[str](seconds, size)

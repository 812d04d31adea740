"""Token buckets and the wrong-token throttle, on a clock the test moves."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from merknera.guard import AuthThrottle, RateLimitedError
from merknera.guard.throttle import Buckets


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("burst", "interval", "takes", "elapsed", "expected_wait"), [
    (3, 2.0, 3, 0.0, 2.0),    # the burst used up: one more in a whole interval
    (3, 2.0, 2, 0.0, 0.0),    # one left
    (3, 2.0, 3, 0.5, 1.5),    # a quarter of a token back
    (3, 2.0, 3, 2.0, 0.0),    # a whole token back
    (1, 10.0, 1, 9.0, 1.0),
])
def test_a_bucket_allows_its_burst_then_one_per_interval(
        burst: int, interval: float, takes: int, elapsed: float, expected_wait: float) -> None:
    clock = Clock()
    buckets = Buckets(burst, interval, clock)
    assert [buckets.take("a") for _ in range(takes)] == [0.0] * takes
    clock.now += elapsed
    assert buckets.wait("a") == pytest.approx(expected_wait)
    assert buckets.wait("b") == 0.0  # other keys are untouched


def test_a_refused_take_takes_nothing_and_refills_no_further_than_the_burst() -> None:
    clock = Clock()
    buckets = Buckets(2, 1.0, clock)
    buckets.take("a")
    buckets.take("a")
    assert buckets.take("a") == pytest.approx(1.0)
    clock.now += 0.5
    assert buckets.take("a") == pytest.approx(0.5)  # the refusal did not cost a token
    clock.now += 100.0
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, pytest.approx(1.0)]


def test_spending_counts_even_without_tokens_left() -> None:
    clock = Clock()
    buckets = Buckets(1, 4.0, clock)
    buckets.spend("a")
    buckets.spend("a")  # floored at nothing left: the wait is one interval, not two
    assert buckets.wait("a") == pytest.approx(4.0)


async def test_the_throttle_refuses_a_client_after_its_burst_of_wrong_tokens() -> None:
    throttle = AuthThrottle(burst=2, interval=30.0)
    for _ in range(5):
        async with throttle.attempt("10.0.0.1"):
            pass  # right tokens cost nothing
    for _ in range(2):
        async with throttle.attempt("10.0.0.1"):
            throttle.failed("10.0.0.1")
    with pytest.raises(RateLimitedError, match="too many wrong tokens") as refused:
        async with throttle.attempt("10.0.0.1"):
            pass
    assert refused.value.retry_after_header == "30"
    async with throttle.attempt("10.0.0.2"):
        pass  # another client is not slowed down


async def test_attempts_sent_side_by_side_are_tried_one_after_another() -> None:
    throttle = AuthThrottle(burst=3, interval=30.0)
    checked = 0

    async def guess() -> None:
        nonlocal checked
        with contextlib.suppress(RateLimitedError):
            async with throttle.attempt("10.0.0.1"):
                checked += 1
                await asyncio.sleep(0.001)  # looking the token up
                throttle.failed("10.0.0.1")

    await asyncio.gather(*(guess() for _ in range(50)))
    assert checked == 3


@pytest.mark.parametrize(("seconds", "header"), [(0.01, "1"), (1.0, "1"), (1.2, "2"),
                                                  (59.9, "60")])
def test_retry_after_is_whole_seconds_rounded_up(seconds: float, header: str) -> None:
    assert RateLimitedError("wait", seconds).retry_after_header == header

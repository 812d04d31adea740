"""Sharing the open-files limit out between calls to bots and client connections."""

from __future__ import annotations

import resource

import pytest

from merknera.guard.limits import FLOOR, RESERVE, plan, raise_open_files_limit


@pytest.mark.parametrize(("limit", "outbound", "inbound", "expected"), [
    (1_048_576, 256, 4096, (256, 4096)),        # room for everything asked
    (1024, 256, 4096, (256, 320)),              # (1024 - 128 - 256) / 2 clients
    (512, 256, 4096, (128, 128)),               # bots get a third, clients half the rest
    (128, 256, 4096, (FLOOR, FLOOR)),           # nothing left but the floor
])
def test_the_budget_fits_the_limit(limit: int, outbound: int, inbound: int,
                                   expected: tuple[int, int]) -> None:
    budget = plan(limit, outbound, inbound)
    assert (budget.outbound, budget.inbound) == expected
    if limit > 4 * RESERVE:
        # Every client may hold a second descriptor (an asset file being sent).
        assert budget.outbound + 2 * budget.inbound + RESERVE <= limit


def test_the_soft_limit_is_raised_to_the_hard_one() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowered = min(soft, 256) if hard == resource.RLIM_INFINITY else min(soft, hard, 256)
    resource.setrlimit(resource.RLIMIT_NOFILE, (lowered, hard))
    try:
        raised = raise_open_files_limit()
        now_soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert raised == now_soft
        assert now_soft == hard or hard == resource.RLIM_INFINITY
        assert now_soft > lowered or lowered == hard
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

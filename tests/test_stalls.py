"""When a check for a reply is made again (merknera.stalls): only after a check the
platform itself held up, and only so many times."""

from __future__ import annotations

import pytest

from merknera.stalls import RECHECK, RECHECKS, STALL, recheck_at


@pytest.mark.parametrize(("due", "now", "made", "again"), [
    (10.0, 10.0, 0, None),  # on time: the reply is late
    (10.0, 10.0 + STALL, 0, None),  # within the slack of a timer
    (10.0, 10.0 + STALL + 0.001, 0, 10.0 + STALL + 0.001 + RECHECK),
    (10.0, 12.5, 0, 12.5 + RECHECK),  # a long stall: looked at again soon after
    (10.0, 12.5, RECHECKS - 1, 12.5 + RECHECK),
    (10.0, 12.5, RECHECKS, None),  # late at every look: judged all the same
])
def test_a_check_is_made_again_only_after_the_platforms_own_stall(
        due: float, now: float, made: int, again: float | None) -> None:
    assert recheck_at(due, now, made) == again

"""When a look for a reply is made again (merknera.stalls): only after a look the
platform itself held up, and only so many times."""

from __future__ import annotations

import pytest

from merknera.stalls import RECHECK, RECHECKS, STALL, Due


@pytest.mark.parametrize(("due", "now", "made", "again"), [
    (10.0, 10.0, 0, None),  # on time: the reply is late
    (10.0, 10.0 + STALL, 0, None),  # within the slack of a timer
    (10.0, 10.0 + STALL + 0.001, 0, 10.0 + STALL + 0.001 + RECHECK),
    (10.0, 12.5, 0, 12.5 + RECHECK),  # a long stall: looked at again soon after
    (10.0, 12.5, RECHECKS - 1, 12.5 + RECHECK),
    (10.0, 12.5, RECHECKS, None),  # late at every look: judged all the same
])
def test_a_look_is_made_again_only_after_the_platforms_own_stall(
        due: float, now: float, made: int, again: float | None) -> None:
    reply = Due(due)
    for _ in range(made):  # looks made again already, each after a stall
        assert not reply.look(reply.at + 1.0)
        reply.at = due
    late = reply.look(now)
    assert late == (again is None)
    assert reply.at == (due if again is None else again)


def test_a_reply_late_at_every_look_is_judged_after_so_many_looks() -> None:
    reply = Due(10.0)
    looks = 0
    while not reply.look(reply.at + 1.0):  # the platform holds every look up by 1 s
        looks += 1
    assert looks == RECHECKS

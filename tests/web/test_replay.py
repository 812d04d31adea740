"""Pieces of the replay that need no platform."""

from __future__ import annotations

from merknera.protocol.faults import FaultKind
from merknera.web.replay import FAULTS, EncodedReplay, ReplayCache, fault_summary


def test_every_fault_kind_has_words_for_a_running_game() -> None:
    assert set(FAULTS) == {kind.value for kind in FaultKind}
    assert fault_summary("ILLEGAL_MOVE") == ("an illegal move (the details show once the game "
                                             "is over)")


def test_the_cache_keeps_the_latest_used_within_its_budget() -> None:
    cache = ReplayCache(budget=100)
    sized = EncodedReplay(b"x" * 30, b"y" * 10)  # 40 bytes
    cache.put(1, sized)
    cache.put(2, sized)
    assert cache.get(1) is sized  # 1 is now the latest used
    cache.put(3, sized)  # 120 bytes: the least recently used (2) goes
    assert cache.get(2) is None and cache.get(1) is sized and cache.get(3) is sized
    cache.put(4, EncodedReplay(b"z" * 200, b""))  # larger than the budget: not kept
    assert cache.get(4) is None and cache.get(3) is sized

"""The golden playthrough of every registered game (``tests/support/golden.py``): it matches its
golden file, it is deterministic, and the file's recorded moves replay to the same
transcript, so the golden game is a real game."""

from __future__ import annotations

import pytest

from merknera.games import REGISTRY
from tests.support.golden import check_golden, golden_game, playthrough, recorded_moves, replayed

GAMES = sorted(REGISTRY)


@pytest.mark.parametrize("mnemonic", GAMES)
def test_the_playthrough_matches_the_golden_file(mnemonic: str) -> None:
    golden = golden_game(mnemonic)
    check_golden(golden.path, playthrough(golden).transcript)


@pytest.mark.parametrize("mnemonic", GAMES)
def test_playthroughs_are_deterministic(mnemonic: str) -> None:
    golden = golden_game(mnemonic)
    first = playthrough(golden).transcript
    assert playthrough(golden).transcript == first
    other = playthrough(golden.with_seed(golden.seed + 1)).transcript
    assert recorded_moves(other) != recorded_moves(first)


@pytest.mark.parametrize("mnemonic", GAMES)
def test_the_golden_game_is_a_real_game(mnemonic: str) -> None:
    """The moves the golden file records, read back with ``parse_logged`` and played with
    ``apply`` from the same seed, give every recorded state, call and the outcome."""
    golden = golden_game(mnemonic)
    text = golden.path.read_text(encoding="utf-8")
    assert recorded_moves(text), "the golden file records no move"
    assert replayed(golden, text).transcript == text

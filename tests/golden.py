"""Golden files: transcripts kept under ``tests/golden/`` and compared with a fresh run.

A test builds its transcript (ending in :func:`outcome_lines`) and hands it to
:func:`check_golden`.  Run the tests with
``MERKNERA_REGENERATE_GOLDEN=1`` to rewrite the files after a deliberate change, then
review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

from merknera.games.base import Outcome

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
"""Where the golden files live (``tests/golden``)."""
REGENERATE = "MERKNERA_REGENERATE_GOLDEN"
"""The environment variable that, set to ``1``, makes :func:`check_golden` rewrite files."""


def check_golden(path: Path, text: str) -> None:
    """Assert that the golden file ``path`` holds exactly ``text``.

    With ``MERKNERA_REGENERATE_GOLDEN=1`` in the environment, write ``text`` to ``path``
    instead (creating its directory) and pass.
    """
    if os.environ.get(REGENERATE) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"{path} is missing; run with {REGENERATE}=1"
    assert text == path.read_text(encoding="utf-8"), (
        f"this run's transcript differs from {path}; if the change is deliberate, "
        f"run with {REGENERATE}=1 and review the diff")


def outcome_lines(outcome: Outcome | None) -> list[str]:
    """The end of a transcript: a blank line, then the termination, ranks and detail of the
    ``outcome`` of a finished game (which must be ranked)."""
    assert outcome is not None and outcome.ranks is not None
    return [
        "",
        f"termination: {outcome.termination.value}",
        f"ranks: {' '.join(map(str, outcome.ranks))}",
        f"detail: {outcome.detail}",
    ]

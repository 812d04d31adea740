"""Golden playthroughs of Battlebot's two games (as OpenSpiel's playthrough files).

``tests/golden/noughtsandcrosses/seed-1.txt`` and ``tests/golden/numberwang/seed-1.txt`` are
transcripts of games in which each seat picks uniformly among ``legal_moves`` with
``random.Random(1)`` (for Numberwang the listed sample of turns).  Every ply records the
NextMove view the mover was sent, the legal moves, the reply and the state after it; the
end records the outcome and the final state of Complete.  A change of the rules, the views
or the wire format shows up as a diff.  To accept a deliberate change, run the tests with
``MERKNERA_REGENERATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from merknera.games.battlebot import NoughtsAndCrosses, Numberwang
from tests.golden import GOLDEN_DIR, check_golden, outcome_lines

GAMES: dict[str, Any] = {"noughtsandcrosses": NoughtsAndCrosses(), "numberwang": Numberwang()}
PLAYERS = ("first", "second")


def golden_file(name: str) -> Path:
    return GOLDEN_DIR / name / "seed-1.txt"


def playthrough(game: Any, seed: int) -> str:
    """The transcript of a uniformly random game played with ``random.Random(seed)``."""
    rng = random.Random(seed)
    state = game.new(game.default_settings, PLAYERS, rng)
    lines = [
        f"game: {game.mnemonic} ({game.name}), seats: 2, seed: {seed}",
        f"settings: {json.dumps(dict(game.default_settings))}",
        "policy: uniform over legal_moves",
    ]
    ply = 0
    while (seat := game.to_move(state)) is not None:
        ply += 1
        legal = list(game.legal_moves(state, seat))
        move = rng.choice(legal)
        lines += [
            "",
            f"ply {ply}: seat {seat} ({PLAYERS[seat]})",
            f"NextMove: {json.dumps(game.next_move_params(state, seat))}",
            f"legal: {' '.join(json.dumps(game.move_to_wire(m)) for m in legal)}",
            f"move: {json.dumps(game.move_to_wire(move))}  "
            f"({game.describe_move(state, seat, move)})",
        ]
        state = game.apply(state, seat, move)
        lines.append(f"state: {json.dumps(game.state_to_json(state))}")
    lines += [
        *outcome_lines(game.outcome(state)),
        f"Complete: {json.dumps(game.complete_params(state, 0))}",
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(GAMES))
def test_seed_1_playthrough_matches_the_golden_file(name: str) -> None:
    check_golden(golden_file(name), playthrough(GAMES[name], 1))


@pytest.mark.parametrize("name", sorted(GAMES))
def test_playthroughs_are_deterministic(name: str) -> None:
    game = GAMES[name]
    assert playthrough(game, 1) == playthrough(game, 1)
    assert playthrough(game, 1) != playthrough(game, 2)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_golden_game_is_a_real_game(name: str) -> None:
    """Replay the recorded replies through parse_move and apply; check every record."""
    game = GAMES[name]
    text = golden_file(name).read_text(encoding="utf-8")
    state = game.new(game.default_settings, PLAYERS, random.Random(1))
    plies = [block for block in text.split("\n\n") if block.startswith("ply ")]
    assert plies, "the golden file records no move"
    for block in plies:
        head, view, _legal, move_line, after = block.splitlines()
        seat = int(head.split()[3])
        assert game.to_move(state) == seat
        assert json.loads(view.removeprefix("NextMove: ")) == game.next_move_params(state, seat)
        wire = json.loads(move_line.removeprefix("move: ").split("  (")[0])
        state = game.apply(state, seat, game.parse_move(wire))
        recorded = json.loads(after.removeprefix("state: "))
        assert recorded == game.state_to_json(state)
        assert game.state_from_json(recorded) == state
    assert game.to_move(state) is None
    outcome = game.outcome(state)
    assert outcome is not None
    assert f"detail: {outcome.detail}\n" in text

"""A golden playthrough of Kalaha (as OpenSpiel's playthrough files).

``tests/golden/kalaha/seed-2.txt`` is the transcript of a game in which the seat to move
picks uniformly among ``legal_moves`` with ``random.Random(2)``.  A change of the rules, of
the order of the legal moves or of the wire format shows up as a diff against it.  To accept
a deliberate change, run the test with ``MERKNERA_REGENERATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import itertools
import json
import random

from merknera.games.kalaha import PLAYERS, Board, Kalaha
from tests.golden import GOLDEN_DIR, check_golden, outcome_lines

GAME = Kalaha()
SEED = 2
GOLDEN = GOLDEN_DIR / "kalaha" / f"seed-{SEED}.txt"


def playthrough(seed: int) -> str:
    """The transcript of a uniformly random game played with ``random.Random(seed)``."""
    rng = random.Random(seed)
    state = GAME.new(GAME.default_settings, ("north", "south"), rng)
    lines = [
        f"game: {GAME.mnemonic} ({GAME.name}), seats: 2, seed: {seed}",
        "policy: uniform over legal_moves",
        "board: TWO's pits 5-0 on top, stores TWO left and ONE right, ONE's pits 0-5 below",
        "",
        "start:",
        state.render(),
    ]
    ply = 0
    while (seat := GAME.to_move(state)) is not None:
        ply += 1
        legal = list(GAME.legal_moves(state, seat))
        move = rng.choice(legal)
        lines += [
            "",
            f"ply {ply}: seat {seat} ({PLAYERS[seat]})",
            f"legal: {' '.join(str(m.pit) for m in legal)}",
            f"move: {json.dumps(GAME.move_to_wire(move))}  "
            f"({GAME.describe_move(state, seat, move)})",
        ]
        state = GAME.apply(state, seat, move)
        lines.append(state.render())
    lines += [
        *outcome_lines(GAME.outcome(state)),
        f"gamestate: {json.dumps(GAME.state_to_json(state))}",
        f"complete (seat 0): {json.dumps(GAME.complete_params(state, 0))}",
    ]
    return "\n".join(lines) + "\n"


def test_seed_2_playthrough_matches_the_golden_file() -> None:
    check_golden(GOLDEN, playthrough(SEED))


def test_playthroughs_are_deterministic() -> None:
    assert playthrough(SEED) == playthrough(SEED)
    assert playthrough(SEED) != playthrough(SEED + 1)


def test_the_golden_game_is_a_real_game() -> None:
    """Replay the moves recorded in the golden file and check every recorded board."""
    text = GOLDEN.read_text(encoding="utf-8")
    state = Board()
    plies = [block for block in text.split("\n\n") if block.startswith("ply ")]
    assert len(plies) > 10, "the golden file records too few moves"
    seats: list[int] = []
    for number, block in enumerate(plies, start=1):
        head, legal, move_line, *board = block.splitlines()
        seat = int(head.split()[3])
        assert seat == GAME.to_move(state), f"ply {number}: the wrong seat moved"
        seats.append(seat)
        assert legal == "legal: " + " ".join(str(m.pit) for m in GAME.legal_moves(state, seat))
        wire = json.loads(move_line.removeprefix("move: ").split("  (")[0])
        state = GAME.apply(state, seat, GAME.parse_move(wire))
        assert "\n".join(board) == state.render()
    assert GAME.to_move(state) is None
    # The game shows an extra turn (a seat moving twice in a row).
    assert any(a == b for a, b in itertools.pairwise(seats))
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert f"detail: {outcome.detail}" in text

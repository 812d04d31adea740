"""A golden playthrough of Hexagons on the 5x4 board (as OpenSpiel's playthrough files).

``tests/golden/hexagons/seed-3-5x4.txt`` is the transcript of a game in which each seat
picks uniformly among ``legal_moves`` with ``random.Random(3)``; the board is drawn after
every move (``.`` a point, ``0``/``1`` a hexagon claimed by that seat, ``---``, ``/`` and
``\\`` the lines).  A change of the rules, of the order of the legal moves or of the wire
format shows up as a diff against it.  To accept a deliberate change, run the test with
``MERKNERA_REGENERATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import itertools
import json
import random

from merknera.games.hexagons import Hexagons, HexagonsState, Line, render
from tests.golden import GOLDEN_DIR, check_golden, outcome_lines

GAME = Hexagons()
PLAYERS = ("amy", "bob")
SETTINGS = {"rows": 5, "cols": 4}
GOLDEN = GOLDEN_DIR / "hexagons" / "seed-3-5x4.txt"


def _text(line: Line) -> str:
    (r1, c1), (r2, c2) = line
    return f"{r1},{c1}-{r2},{c2}"


def _scores(state: HexagonsState) -> str:
    return ", ".join(f"{name} {score}" for name, score in zip(state.players, state.scores,
                                                                strict=True))


def playthrough(seed: int) -> str:
    """The transcript of a uniformly random game played with ``random.Random(seed)``."""
    rng = random.Random(seed)
    state = GAME.new(SETTINGS, PLAYERS, rng)
    lines = [
        f"game: {GAME.mnemonic} ({GAME.name}), seats: 2, seed: {seed}, "
        f"board: {state.rows}x{state.cols}",
        "policy: uniform over legal_moves",
        "",
        "start:",
        render(state),
    ]
    ply = 0
    while (seat := GAME.to_move(state)) is not None:
        ply += 1
        legal = list(GAME.legal_moves(state, seat))
        move = rng.choice(legal)
        lines += [
            "",
            f"ply {ply}: seat {seat} ({state.players[seat]})",
            f"legal ({len(legal)}): {' '.join(map(_text, legal))}",
            f"move: {json.dumps(GAME.move_to_wire(move))}  "
            f"({GAME.describe_move(state, seat, move)})",
        ]
        state = GAME.apply(state, seat, move)
        lines += [render(state), f"scores: {_scores(state)}"]
    lines += [
        *outcome_lines(GAME.outcome(state)),
        f"state: {json.dumps(GAME.state_to_json(state))}",
    ]
    return "\n".join(lines) + "\n"


def test_seed_3_playthrough_matches_the_golden_file() -> None:
    check_golden(GOLDEN, playthrough(3))


def test_playthroughs_are_deterministic() -> None:
    assert playthrough(3) == playthrough(3)
    assert playthrough(3) != playthrough(4)


def test_the_golden_game_is_a_real_game() -> None:
    """Replay the moves recorded in the golden file and check the boards drawn there."""
    text = GOLDEN.read_text(encoding="utf-8")
    state = GAME.new(SETTINGS, PLAYERS, random.Random(0))
    rows = text.splitlines()
    # A ply is its head, the legal moves, the move, the board (which may hold blank lines)
    # and the scores.
    starts = [i for i, row in enumerate(rows) if row.startswith("ply ")]
    assert starts, "the golden file records no move"
    seats = []
    for start in starts:
        end = next(i for i in range(start, len(rows)) if rows[i].startswith("scores: "))
        head, legal, move_line, *board, scores = rows[start:end + 1]
        seat = int(head.split()[3])
        seats.append(seat)
        assert GAME.to_move(state) == seat
        assert legal.split(": ", 1)[1].split() == [
            _text(line) for line in GAME.legal_moves(state, seat)]
        wire = json.loads(move_line.removeprefix("move: ").split("  (")[0])
        state = GAME.apply(state, seat, GAME.parse_move(wire))
        assert "\n".join(board) == render(state)
        assert scores == f"scores: {_scores(state)}"
    assert GAME.to_move(state) is None
    # The game is worth keeping: it has a claim, and a claimer moving again after it.
    assert state.hexagons
    assert any(a == b for a, b in itertools.pairwise(seats))
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert f"detail: {outcome.detail}" in text
    assert f"state: {json.dumps(GAME.state_to_json(state))}" in text

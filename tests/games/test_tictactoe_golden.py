"""A golden playthrough of tic-tac-toe (as OpenSpiel's playthrough files) and random play.

``tests/golden/tictactoe/seed-7.txt`` is the transcript of a game in which each seat picks
uniformly among ``legal_moves`` with ``random.Random(7)``.  A change of the rules, of the
order of the legal moves or of the wire format shows up as a diff against it.  To accept
a deliberate change, run the test with ``MERKNERA_REGENERATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import random

from merknera.games.base import IllegalMoveError, Termination
from merknera.games.tictactoe import MARKS, Board, TicTacToe
from tests.golden import GOLDEN_DIR, check_golden, outcome_lines

GAME = TicTacToe()
PLAYERS = ("crosses", "noughts")
GOLDEN = GOLDEN_DIR / "tictactoe" / "seed-7.txt"


def playthrough(seed: int) -> str:
    """The transcript of a uniformly random game played with ``random.Random(seed)``."""
    rng = random.Random(seed)
    state = GAME.new(GAME.default_settings, PLAYERS, rng)
    lines = [
        f"game: {GAME.mnemonic} ({GAME.name}), seats: 2, seed: {seed}",
        "policy: uniform over legal_moves",
        "",
        "start:",
        state.render(),
    ]
    ply = 0
    while (seat := GAME.to_move(state)) is not None:
        ply += 1
        legal = list(GAME.legal_moves(state, seat))
        move = rng.choice(legal)
        wire = json.dumps(GAME.move_to_wire(move))
        lines += [
            "",
            f"ply {ply}: seat {seat} ({MARKS[seat]})",
            f"legal: {' '.join(map(str, legal))}",
            f"move: {wire}  ({GAME.describe_move(state, seat, move)})",
        ]
        state = GAME.apply(state, seat, move)
        lines.append(state.render())
    lines += [
        *outcome_lines(GAME.outcome(state)),
        f"gamestate: {json.dumps(GAME.state_to_json(state))}",
    ]
    return "\n".join(lines) + "\n"


def test_seed_7_playthrough_matches_the_golden_file() -> None:
    check_golden(GOLDEN, playthrough(7))


def test_playthroughs_are_deterministic() -> None:
    assert playthrough(7) == playthrough(7)
    assert playthrough(7) != playthrough(8)


def test_random_games_end_within_max_moves_with_an_outcome() -> None:
    endings: set[str] = set()
    for seed in range(200):
        rng = random.Random(seed)
        state = GAME.new({}, PLAYERS, rng)
        plies = 0
        while (seat := GAME.to_move(state)) is not None:
            legal = GAME.legal_moves(state, seat)
            assert legal, f"seed {seed}: no legal move for the seat to move"
            assert list(legal) == sorted(legal)
            assert GAME.legal_moves(state, 1 - seat) == ()
            # A taken square is always refused.
            taken = next((i for i, cell in enumerate(state.cells) if cell), None)
            if taken is not None:
                try:
                    GAME.apply(state, seat, taken)
                except IllegalMoveError:
                    pass
                else:
                    raise AssertionError(f"seed {seed}: {taken} was taken but accepted")
            assert GAME.outcome(state) is None
            state = GAME.apply(state, seat, rng.choice(list(legal)))
            assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(state)))) == state
            plies += 1
            assert plies <= GAME.max_moves, f"seed {seed}: more than {GAME.max_moves} moves"
        outcome = GAME.outcome(state)
        assert outcome is not None, f"seed {seed}: the game ended without an outcome"
        assert outcome.termination is Termination.NORMAL
        assert plies == state.filled >= 5
        line = state.winning_line()
        if line is None:
            assert state.filled == 9
            assert outcome.ranks == (0, 0)
            endings.add("draw")
        else:
            winner = MARKS.index(state.cells[line[0]])
            assert outcome.winners == (winner,)
            # The winner made the last move: play stops at the first line.
            assert (plies - 1) % 2 == winner
            endings.add(MARKS[winner])
    # Two hundred random games see every kind of ending.
    assert endings == {"X", "O", "draw"}


def test_the_golden_game_is_a_real_game() -> None:
    """Replay the moves recorded in the golden file and check the recorded boards."""
    text = GOLDEN.read_text(encoding="utf-8")
    state = Board()
    blocks = text.split("\n\n")
    plies = [block for block in blocks if block.startswith("ply ")]
    assert plies, "the golden file records no move"
    for block in plies:
        head, _legal, move_line, *board = block.splitlines()
        seat = int(head.split()[3])
        wire = json.loads(move_line.removeprefix("move: ").split("  (")[0])
        state = GAME.apply(state, seat, GAME.parse_move(wire))
        assert "\n".join(board) == state.render()
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert f"detail: {outcome.detail}" in text

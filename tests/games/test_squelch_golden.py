"""A golden playthrough of a Squelch match (as OpenSpiel's playthrough files).

``tests/golden/squelch/seed-5.txt`` is the transcript of a two-seat match of two games, the
dice drawn with ``random.Random(5)`` as the runner draws them.  alice plays the Go arena's
``localbot`` (the first option; stay once the turn is worth more than 300; in the final round
roll on until ahead); bob picks uniformly among ``legal_moves`` with ``random.Random(50)``.
Every call a bot would get is written down: MatchStart, the announcements, NextMove params and
MatchEnd.  A change of the rules, the option order or the wire format shows up as a diff.  To
accept a deliberate change, run the test with ``MERKNERA_REGENERATE_GOLDEN=1`` and review it.

The transcript is written by ``step``, as the runner plays; the replay of the file checks
that ``apply`` and ``announcements`` say the same, move by move.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

from merknera.games.base import CHANCE, Announcement, SeatResult, Step, Termination
from merknera.games.squelch import Choice, Squelch, SquelchState, render
from tests.golden import GOLDEN_DIR, check_golden, outcome_lines

GAME = Squelch()
PLAYERS = ("alice", "bob")
SETTINGS = {**GAME.default_settings, "gameCount": 2}
SEED = 5
GOLDEN = GOLDEN_DIR / "squelch" / f"seed-{SEED}.txt"


def localbot(state: SquelchState) -> Choice:
    """The Go arena's baseline: options[0]; stay over 300, or in the final round once ahead."""
    turn = state.turn
    assert turn is not None
    option = turn.options[0]
    total = turn.points + option.points
    if state.final_round is not None:
        best = max(points for seat, points in enumerate(state.scores) if seat != turn.seat)
        return Choice(option.id, state.scores[turn.seat] + total > best)
    return Choice(option.id, total > 300)


def _calls(notes: Sequence[Announcement]) -> list[str]:
    return [f"  -> {PLAYERS[n.seat]} {GAME.calls.prefix}.{n.call} {json.dumps(n.params)}"
            for n in notes]


def playthrough(seed: int) -> str:
    rng, chooser = random.Random(seed), random.Random(seed * 10)
    state = GAME.new(SETTINGS, PLAYERS, rng)
    lines = [
        f"game: {GAME.mnemonic} ({GAME.name}), seats: 2, seed: {seed}",
        f"settings: {json.dumps(SETTINGS)}",
        "policy: alice takes the first option, stays over 300 (final round: once ahead); "
        "bob is uniform over legal_moves",
        "",
        "start:",
        *(f"  -> {name} {GAME.calls.prefix}.{GAME.calls.open} "
          f"{json.dumps(GAME.new_game_params(state, seat))}" for seat, name in enumerate(PLAYERS)),
        *_calls(GAME.opening_announcements(state)),
        render(state),
    ]
    step = 0
    while (seat := GAME.to_move(state)) is not None:
        step += 1
        lines.append("")
        if seat == CHANCE:
            move: Choice | str = GAME.sample_chance(state, rng)
            lines.append(f"move {step}: chance")
        else:
            params = GAME.next_move_params(state, seat)
            options = params["options"]
            assert isinstance(options, list)
            lines.append(f"move {step}: seat {seat} ({PLAYERS[seat]}) NextMove "
                         f"{json.dumps({k: v for k, v in params.items() if k != 'options'})}")
            lines += [f"  option {json.dumps(option)}" for option in options]
            move = localbot(state) if seat == 0 else chooser.choice(
                list(GAME.legal_moves(state, seat)))
        lines.append(f"  {json.dumps(GAME.move_to_wire(move))}  "
                     f"({GAME.describe_move(state, seat, move)})")
        played = GAME.step(state, seat, move)
        lines += _calls(played.announcements)
        state = played.state
        lines.append(render(state))
    outcome = GAME.outcome(state)
    assert outcome is not None
    lines += [
        *outcome_lines(outcome),
        *(f"  -> {name} {GAME.calls.prefix}.{GAME.calls.complete} " + json.dumps(
            {"winner": outcome.result_for(seat) is SeatResult.WIN,
             **GAME.complete_params(state, seat)}) for seat, name in enumerate(PLAYERS)),
        f"state: {json.dumps(GAME.state_to_json(state))}",
    ]
    return "\n".join(lines) + "\n"


def test_seed_5_playthrough_matches_the_golden_file() -> None:
    check_golden(GOLDEN, playthrough(SEED))


def test_playthroughs_are_deterministic() -> None:
    assert playthrough(SEED) == playthrough(SEED)
    assert playthrough(SEED) != playthrough(SEED + 1)


def test_the_golden_match_is_a_real_match() -> None:
    """Replay the moves written in the golden file and check every state line after them."""
    text = GOLDEN.read_text(encoding="utf-8")
    blocks = [block.splitlines() for block in text.split("\n\n")]
    state = GAME.new(SETTINGS, PLAYERS, random.Random(0))
    assert blocks[1][-1] == render(state)
    kinds: set[str] = set()
    moves = [block for block in blocks if block[0].startswith("move ")]
    for block in moves:
        head = block[0].split()
        seat = CHANCE if head[2] == "chance" else int(head[3])
        wire = next(line for line in block if line.startswith("  {"))
        stored = json.loads(wire.strip().split("  (")[0])
        move = GAME.parse_chance(stored) if seat == CHANCE else GAME.parse_move(stored)
        after = GAME.apply(state, seat, move)
        calls = [line for line in block if line.startswith("  -> ")]
        assert calls == _calls(GAME.announcements(state, seat, move, after))
        assert GAME.step(state, seat, move) == Step(after, tuple(
            GAME.announcements(state, seat, move, after)))
        kinds.update(line.split()[2] for line in calls)
        state = after
        assert block[-1] == render(state)
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.termination is Termination.NORMAL
    assert f"detail: {outcome.detail}" in text
    # The match shows every kind of call and a final round.
    assert kinds == {"Squelch.GameStart", "Squelch.TurnStart", "Squelch.Squelch",
                     "Squelch.GameEnd"}
    assert '"isFinalRound": true' in text

"""Golden files: one seeded game of every registered game, kept as a transcript under
``tests/golden/<game>/`` and compared with a fresh run (as OpenSpiel's playthrough files).

A :class:`GoldenGame` says which game is recorded: the game, its seed, players, settings and
the policy each seat plays by.  :func:`playthrough` plays it and writes its transcript;
:func:`replayed` replays the moves a golden file records, as the platform replays a move
log, and writes the transcript again.  A change of the rules, of the order of the legal
moves, of the calls or of the wire format shows up as a diff.  Run the tests with
``MERKNERA_REGENERATE_GOLDEN=1`` to rewrite the files after a deliberate change, then
review the diff.

Every transcript has one format.  The header::

    game: <MNEMONIC> (<name>)
    seats: <count> (<players>)
    seed: <the game's random.Random>
    settings: <JSON>
    policy: <how each seat chooses>; choices from random.Random(<the policies' seed>)

then ``start:`` with the calls that open the game (``-> seat 0 (alice) <Prefix>.<call>
<params>``, the game's own params without the ids the platform adds) and the state; then
per ply ``ply <n>: seat <s> (<player>)`` (or ``ply <n>: chance``), the legal moves
(``legal (<count>): <wire> ...``, only the first few when there are many), ``move:
<wire JSON>``, ``describe: <describe_move>``, the calls the move causes, and the state after
it; at the end the outcome, the final state's JSON and each seat's Complete params.  A state
is written as the game draws it where the game has a text renderer, else as its JSON.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from merknera.games import CHANCE, JSON, REGISTRY, Announcement, AnyGame, Outcome, Seat, Step
from merknera.games.hexagons import render as render_hexagons
from merknera.games.scrabble import Scrabble
from merknera.games.scrabble import render as render_scrabble_board
from merknera.games.squelch import Choice, SquelchState
from merknera.games.squelch import render as render_squelch
from tests.support import configured
from tests.support.scrabble import best_play

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden"
"""Where the golden files live (``tests/golden``)."""
REGENERATE = "MERKNERA_REGENERATE_GOLDEN"
"""The environment variable that, set to ``1``, makes :func:`check_golden` rewrite files."""
FEW = 10
"""Up to this many legal moves are written out in full; of more, the count and the first
:data:`FIRST`."""
FIRST = 5


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
    """The end of a transcript: a blank line, then the termination, ranks, detail and (for
    games that keep a score) scores of the ``outcome`` of a finished game (which must be
    ranked)."""
    assert outcome is not None and outcome.ranks is not None
    lines = [
        "",
        f"termination: {outcome.termination.value}",
        f"ranks: {' '.join(map(str, outcome.ranks))}",
        f"detail: {outcome.detail}",
    ]
    if outcome.scores is not None:
        lines.append(f"scores: {' '.join(map(str, outcome.scores))}")
    return lines


# -- what a golden game is --------------------------------------------------------------------

Choose = Callable[[AnyGame, Any, Seat, random.Random], Any]
"""A policy's choice: (the game, the state, the seat to move, the policies' random) -> a
move."""
Render = Callable[[AnyGame, Any], str]
"""A game's text drawing of a state."""


@dataclass(frozen=True)
class Policy:
    """How a seat chooses its moves, and how the transcript says so."""

    description: str
    choose: Choose


def _uniform(game: AnyGame, state: Any, seat: Seat, chooser: random.Random) -> Any:
    return chooser.choice(list(game.legal_moves(state, seat)))


def _localbot(game: AnyGame, state: SquelchState, seat: Seat, chooser: random.Random) -> Choice:
    """The Go arena's Squelch baseline: options[0]; stay over 300, or in the final round
    once ahead."""
    turn = state.turn
    assert turn is not None
    option = turn.options[0]
    total = turn.points + option.points
    if state.final_round is not None:
        best = max(points for other, points in enumerate(state.scores) if other != turn.seat)
        return Choice(option.id, state.scores[turn.seat] + total > best)
    return Choice(option.id, total > 300)


def _best_play(game: AnyGame, state: Any, seat: Seat, chooser: random.Random) -> Any:
    assert isinstance(game, Scrabble)
    return best_play(game, state, seat)


UNIFORM = Policy("uniform over legal_moves", _uniform)
LOCALBOT = Policy("the Go arena's localbot (the first option; stay once the turn is worth more "
                  "than 300; in the final round roll on until ahead)", _localbot)
BEST_PLAY = Policy("the best-scoring one-word play through one tile, else EXCHANGE all, "
                   "else PASS", _best_play)


def _same_seed(seed: int) -> int:
    return seed


@dataclass(frozen=True)
class GoldenGame:
    """One recorded game: which game, how it is set up, and how each seat plays."""

    mnemonic: str
    seed: int
    """The seed of the game's own :class:`random.Random` (its start and its chance moves),
    as the runner owns it."""
    players: tuple[str, ...]
    file: str
    """The golden file's name (without ``.txt``) in ``tests/golden/<game>/``."""
    settings: Mapping[str, JSON] = field(default_factory=dict)
    """Settings over the game's defaults."""
    policies: tuple[Policy, ...] = (UNIFORM,)
    """One policy per seat, or one for every seat."""
    chooser_seed: Callable[[int], int] = _same_seed
    """The seed of the policies' :class:`random.Random`, from :attr:`seed`."""
    render: Render | None = None
    """The game's text drawing of a state, where it has one (else states are written as
    their JSON)."""

    @property
    def game(self) -> AnyGame:
        """The registered game, with its asset files when it has any."""
        return configured(self.mnemonic)

    @property
    def path(self) -> Path:
        return GOLDEN_DIR / self.mnemonic.lower() / f"{self.file}.txt"

    def all_settings(self) -> dict[str, JSON]:
        """The game's default settings with :attr:`settings` over them."""
        return {**self.game.default_settings, **self.settings}

    def policy(self, seat: Seat) -> Policy:
        return self.policies[seat % len(self.policies)]

    def with_seed(self, seed: int) -> GoldenGame:
        """The same game played from another seed (its choices follow the seed)."""
        return replace(self, seed=seed)


def _scrabble_board(game: AnyGame, state: Any) -> str:
    assert isinstance(game, Scrabble)
    return render_scrabble_board(state.board, game.layout.cols)


GOLDEN_GAMES: dict[str, GoldenGame] = {golden.mnemonic: golden for golden in (
    GoldenGame("TICTACTOE", 7, ("crosses", "noughts"), "seed-7",
               render=lambda game, state: state.render()),
    GoldenGame("KALAHA", 2, ("north", "south"), "seed-2",
               render=lambda game, state: state.render()),
    GoldenGame("HEXAGONS", 3, ("amy", "bob"), "seed-3-5x4", {"rows": 5, "cols": 4},
               render=lambda game, state: render_hexagons(state)),
    GoldenGame("SQUELCH", 5, ("alice", "bob"), "seed-5", {"gameCount": 2},
               policies=(LOCALBOT, UNIFORM), chooser_seed=lambda seed: seed * 10,
               render=lambda game, state: render_squelch(state)),
    GoldenGame("SCRABBLE", 11, ("alice", "bob"), "seed-11-two-players",
               policies=(BEST_PLAY,), render=_scrabble_board),
    GoldenGame("NOUGHTSANDCROSSES", 1, ("first", "second"), "seed-1"),
    GoldenGame("NUMBERWANG", 1, ("first", "second"), "seed-1"),
)}
"""The golden game of each game that has a chosen one."""


def golden_game(mnemonic: str) -> GoldenGame:
    """The golden game of the registered game ``mnemonic``: its entry in
    :data:`GOLDEN_GAMES`, else seed 1 at the fewest seats, every seat uniform."""
    if mnemonic in GOLDEN_GAMES:
        return GOLDEN_GAMES[mnemonic]
    seats = REGISTRY[mnemonic].min_seats
    return GoldenGame(mnemonic, 1, tuple(f"player-{seat}" for seat in range(seats)), "seed-1")


# -- playing and writing ----------------------------------------------------------------------

@dataclass(frozen=True)
class Ply:
    """One move of a golden game."""

    seat: Seat
    """The seat that moved, or CHANCE."""
    move: Any
    after: Any
    """The state after the move."""
    announcements: tuple[Announcement, ...]
    """The calls the move caused."""


@dataclass(frozen=True)
class Played:
    """A golden game played through: its transcript, its start and its moves."""

    transcript: str
    start: Any
    plies: tuple[Ply, ...]

    @property
    def final(self) -> Any:
        """The state at the end."""
        return self.plies[-1].after if self.plies else self.start


NextMove = Callable[[Any, Seat], Any]
"""(the state, the seat to move or CHANCE) -> the move."""
Advance = Callable[[Any, Seat, Any], Step[Any]]
"""(the state, the seat, the move) -> the state after it and the calls it causes."""


def playthrough(golden: GoldenGame) -> Played:
    """Play ``golden`` as the runner plays: chance drawn from the game's random, each seat's
    moves chosen by its policy, each move played with ``step``."""
    game = golden.game
    rng = random.Random(golden.seed)
    chooser = random.Random(golden.chooser_seed(golden.seed))

    def next_move(state: Any, seat: Seat) -> Any:
        if seat == CHANCE:
            return game.sample_chance(state, rng)
        return golden.policy(seat).choose(game, state, seat, chooser)

    return _play(golden, rng, next_move, game.step)


def replayed(golden: GoldenGame, text: str | None = None) -> Played:
    """Replay the moves recorded in ``text`` (the golden file's, by default) as the platform
    replays a move log: the same seed, each move read back with ``parse_logged`` and played
    with ``apply``, the calls it causes from ``announcements``.

    Asserts that each recorded mover is the seat to move and that the game ends with the
    last recorded move.
    """
    game = golden.game
    log = iter(recorded_moves(golden.path.read_text(encoding="utf-8") if text is None
                              else text))

    def next_move(state: Any, seat: Seat) -> Any:
        recorded = next(log, None)
        assert recorded is not None, "the game goes on after the last recorded move"
        mover, wire = recorded
        assert mover == seat, f"seat {mover} is recorded to move where seat {seat} is to"
        return game.parse_logged(seat, wire)

    def advance(state: Any, seat: Seat, move: Any) -> Step[Any]:
        after = game.apply(state, seat, move)
        return Step(after, tuple(game.announcements(state, seat, move, after)))

    played = _play(golden, random.Random(golden.seed), next_move, advance)
    assert next(log, None) is None, "moves are recorded after the end of the game"
    return played


def _play(golden: GoldenGame, rng: random.Random, next_move: NextMove,
          advance: Advance) -> Played:
    game = golden.game
    players = golden.players
    state = start = game.new(golden.all_settings(), players, rng)

    def who(seat: Seat) -> str:
        return f"seat {seat} ({players[seat]})"

    def calls(announcements: Sequence[Announcement]) -> list[str]:
        return [f"-> {who(n.seat)} {game.calls.method(n.call)} {json.dumps(n.params)}"
                for n in announcements]

    def drawn(state: Any) -> str:
        if golden.render is None:
            return json.dumps(game.state_to_json(state))
        return golden.render(game, state)

    policies = [golden.policy(seat).description for seat in range(len(players))]
    policy = (f"every seat {policies[0]}" if len(set(policies)) == 1 else
              "; ".join(f"{who(seat)} {text}" for seat, text in enumerate(policies)))
    lines = [
        f"game: {game.mnemonic} ({game.name})",
        f"seats: {len(players)} ({', '.join(players)})",
        f"seed: {golden.seed}",
        f"settings: {json.dumps(golden.all_settings())}",
        f"policy: {policy}; choices from random.Random({golden.chooser_seed(golden.seed)})",
        "",
        "start:",
        *(f"-> {who(seat)} {game.calls.method(game.calls.open)} "
          f"{json.dumps(game.new_game_params(state, seat))}" for seat in range(len(players))),
        *calls(game.opening_announcements(state)),
        drawn(state),
    ]
    plies: list[Ply] = []
    while (seat := game.to_move(state)) is not None:
        move = next_move(state, seat)
        lines += ["", f"ply {len(plies) + 1}: {'chance' if seat == CHANCE else who(seat)}"]
        if seat != CHANCE:
            lines.append(legal_line(game, game.legal_moves(state, seat)))
        lines += [f"move: {json.dumps(game.move_to_wire(move))}",
                  f"describe: {game.describe_move(state, seat, move)}"]
        step = advance(state, seat, move)
        plies.append(Ply(seat, move, step.state, step.announcements))
        state = step.state
        lines += [*calls(step.announcements), drawn(state)]
    lines += [
        *outcome_lines(game.outcome(state)),
        f"state: {json.dumps(game.state_to_json(state))}",
        *(f"-> {who(seat)} {game.calls.method(game.calls.complete)} "
          f"{json.dumps(game.complete_params(state, seat))}" for seat in range(len(players))),
    ]
    return Played("\n".join(lines) + "\n", start, tuple(plies))


def legal_line(game: AnyGame, legal: Sequence[Any]) -> str:
    """The legal moves' wire forms: all of them when there are :data:`FEW`, else the
    first :data:`FIRST`."""
    wires = [json.dumps(game.move_to_wire(move)) for move in legal]
    if len(wires) <= FEW:
        return f"legal ({len(wires)}): {' '.join(wires)}"
    return f"legal ({len(wires)}), the first {FIRST}: {' '.join(wires[:FIRST])} ..."


# -- reading ----------------------------------------------------------------------------------

_PLY = re.compile(r"ply \d+: (?:chance|seat (\d+) \(.*\))")


def recorded_moves(text: str) -> list[tuple[Seat, JSON]]:
    """The move log a transcript records: each mover (or CHANCE) and its move's wire form."""
    return list(_moves(text.splitlines()))


def _moves(lines: Sequence[str]) -> Iterator[tuple[Seat, JSON]]:
    mover: Seat | None = None
    for line in lines:
        if (ply := _PLY.fullmatch(line)) is not None:
            mover = CHANCE if ply[1] is None else int(ply[1])
        elif line.startswith("move: "):
            assert mover is not None, f"a move without its ply: {line}"
            yield mover, json.loads(line.removeprefix("move: "))
            mover = None


@cache
def golden_played(mnemonic: str) -> Played:
    """The golden file of ``mnemonic`` replayed (:func:`replayed`), for the rules tests that
    check what its game shows."""
    return replayed(golden_game(mnemonic))

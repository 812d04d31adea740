"""Seeded playthroughs of every registered game as the replay reads them (a move log with
faulty replies in it, and the view after each row), for the replay's tests in Python and
in the browser."""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jsonpatch
import pytest

from merknera.games import CHANCE, JSON, REGISTRY, AnyGame
from merknera.store.db import Row
from merknera.store.games import GameStatus
from merknera.store.results import ReplayStart
from merknera.web import replay
from merknera.web.replay import GameHeader, Replayer, States
from tests.support import configured
from tests.support.golden import golden_game, recorded_moves

SEED = 5
FAULT_EVERY = 9
"""A playthrough's first row and every 9th after it are faulty replies (which change no
state), when a bot is to move then."""


def move_log(entries: Sequence[tuple[int, JSON, str | None]]) -> list[Row]:
    """Rows as the store's ``move_log`` reads them: ``(seat, move, fault)`` each."""
    with contextlib.closing(sqlite3.connect(":memory:")) as conn:
        conn.row_factory = sqlite3.Row
        conn.execute("CREATE TABLE moves (seq INTEGER, seat INTEGER, move TEXT, "
                     "latency_ms REAL, fault TEXT, fault_detail TEXT, created_at TEXT)")
        conn.executemany("INSERT INTO moves VALUES (?, ?, ?, ?, ?, ?, ?)", [
            (seq, seat, None if fault else json.dumps(move), None if seat == CHANCE else 1.5,
             fault, fault and f"the reply was {fault.lower()} (what the bot holds: QZX)",
             f"2026-01-01T00:00:{seq % 60:02d}.000Z")
            for seq, (seat, move, fault) in enumerate(entries, 1)])
        return list(conn.execute("SELECT * FROM moves ORDER BY seq"))


@dataclass
class Playthrough:
    """A game's header, its move log, and the views after each row (0: the start)."""

    header: GameHeader
    rows: list[Row]
    views: list[Any]


def header_of(game: AnyGame, players: tuple[str, ...], seed: int, reveal: bool,
              settings: dict[str, Any] | None = None) -> GameHeader:
    status = GameStatus.FINISHED if reveal else GameStatus.RUNNING
    return GameHeader(ReplayStart(1, game.mnemonic, status, seed, settings or {}, players),
                      game)


def playthrough(mnemonic: str, seats: int, reveal: bool, seed: int = SEED,
                moves: list[JSON] | None = None) -> Playthrough:
    """A seeded game (uniformly random moves unless ``moves`` are given, chance drawn from the
    game's RNG as the runner draws it) with faulty replies (:data:`FAULT_EVERY`)."""
    game = configured(mnemonic)
    players = tuple(f"player {seat}" for seat in range(seats))
    rng, chooser = random.Random(seed), random.Random(seed + 1)
    state = game.new(game.default_settings, list(players), rng)
    entries: list[tuple[int, JSON, str | None]] = []
    views = [game.spectator_view(state, reveal)]
    given = iter(moves or ())
    while (seat := game.to_move(state)) is not None:
        if len(entries) % FAULT_EVERY == 0 and seat != CHANCE:
            entries.append((seat, None, "ILLEGAL_MOVE"))
            views.append(views[-1])
            continue
        if seat == CHANCE:
            move = game.sample_chance(state, rng)
        elif moves is not None:
            move = game.parse_move(next(given))
        else:
            move = chooser.choice(list(game.legal_moves(state, seat)))
        state = game.apply(state, seat, move)
        entries.append((seat, game.move_to_wire(move), None))
        views.append(game.spectator_view(state, reveal))
    return Playthrough(header_of(game, players, seed, reveal), move_log(entries), views)


def golden_scrabble(reveal: bool) -> Playthrough:
    """The golden Scrabble game (real words on the board, where random games only pass
    and exchange)."""
    golden = golden_game("SCRABBLE")
    moves = [wire for _, wire in recorded_moves(golden.path.read_text(encoding="utf-8"))]
    return playthrough("SCRABBLE", len(golden.players), reveal, seed=golden.seed, moves=moves)


def text(value: Any) -> str:
    """JSON text, key order kept: what a page would draw from."""
    return json.dumps(value, ensure_ascii=False)


def rebuilt(start: Any, frames: list[dict[str, Any]]) -> list[Any]:
    """The state after each frame, from its whole state or its patch."""
    states, state = [start], start
    for frame in frames:
        assert ("state" in frame) != ("patch" in frame), frame
        state = frame["state"] if "state" in frame else jsonpatch.apply_patch(state, frame["patch"])
        states.append(state)
    return states


def tables() -> list[tuple[str, int]]:
    return [(mnemonic, seats) for mnemonic, game in sorted(REGISTRY.items())
            for seats in sorted({game.min_seats, game.max_seats})]


def made(header: GameHeader, rows: Sequence[Row], reveal: bool,
         states: States) -> tuple[dict[str, Any], list[Any], str | None]:
    """The start, the frames and the error one Replayer makes of ``rows`` at once, in the
    form of ``states``: every state whole when every frame is a keyframe."""
    with pytest.MonkeyPatch.context() as patched:
        if states is States.FULL:
            patched.setattr(replay, "KEYFRAME_EVERY", 1)
        replayer = Replayer(header, reveal)
        start = {**replayer.start(), "states": states.value}
        frames = replayer.frames(list(rows))
    return start, frames, replayer.error


def whole_replay(header: GameHeader, rows: Sequence[Row], states: States) -> Any:
    """A whole replay as one Replayer makes it at once, decoded: what a shared log's cut
    must equal."""
    start, frames, error = made(header, rows, header.start.status is GameStatus.FINISHED,
                                states)
    return json.loads(json.dumps({"id": header.start.id, "status": header.start.status.value,
                                  **start, "frames": frames, "error": error}))


def resumed(header: GameHeader, rows: Sequence[Row], after: int, states: States,
            reveal: bool) -> list[Any]:
    """The frames a live stream resumed after row ``after`` sends, as a Replayer made
    them: the first with its state whole (its client may have nothing before it), then
    those of the whole replay."""
    whole = made(header, rows, reveal, States.FULL)[1]
    return [*whole[after:after + 1], *made(header, rows, reveal, states)[1][after + 1:]]


def streamed(header: GameHeader, rows: Sequence[Row], after: int, states: States) -> Any:
    """The frames a live stream resumed after row ``after`` sends (:func:`resumed`) while
    the game runs, decoded."""
    return json.loads(json.dumps(resumed(header, rows, after, states, reveal=False)))

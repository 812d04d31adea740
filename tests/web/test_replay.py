"""Pieces of the replay that need no platform: faults' words, the cache, and the frames of
every registered game, whose keyframes and patches must rebuild exactly the views that
every state whole would have shown (as JSON text, key order included), in a whole replay
and in a live stream resumed anywhere."""

from __future__ import annotations

import gzip
import json
import random
from typing import Any

import pytest

from merknera.protocol.faults import FaultKind
from merknera.web import replay
from merknera.web.replay import (
    FAULTS,
    KEYFRAME_EVERY,
    EncodedReplay,
    ReplayCache,
    Replayer,
    States,
    fault_summary,
)
from merknera.work import Deadline
from tests.support import configured
from tests.web.replay_support import (
    golden_scrabble,
    header_of,
    made,
    move_log,
    playthrough,
    rebuilt,
    resumed,
    tables,
    text,
)


def test_every_fault_kind_has_words_for_a_running_game() -> None:
    assert set(FAULTS) == {kind.value for kind in FaultKind}
    assert fault_summary("ILLEGAL_MOVE") == ("an illegal move (the details show once the game "
                                             "is over)")


def test_the_cache_keeps_the_latest_used_within_its_budget() -> None:
    cache = ReplayCache(budget=100)
    sized = EncodedReplay(b"x" * 30, b"y" * 10)  # 40 bytes
    cache.put((1, States.DELTA), sized)
    cache.put((2, States.DELTA), sized)
    assert cache.get((1, States.DELTA)) is sized  # 1 is now the latest used
    assert cache.get((1, States.FULL)) is None  # each form is kept on its own
    cache.put((3, States.DELTA), sized)  # 120 bytes: the least recently used (2) goes
    assert cache.get((2, States.DELTA)) is None
    assert cache.get((1, States.DELTA)) is sized and cache.get((3, States.DELTA)) is sized
    cache.put((4, States.DELTA), EncodedReplay(b"z" * 200, b""))  # over the budget: not kept
    assert cache.get((4, States.DELTA)) is None and cache.get((3, States.DELTA)) is sized


# -- the frames -------------------------------------------------------------------------


@pytest.mark.parametrize("every", [7, KEYFRAME_EVERY])
@pytest.mark.parametrize("reveal", [True, False])
@pytest.mark.parametrize(("mnemonic", "seats"), tables())
def test_keyframes_and_patches_rebuild_every_view(
        mnemonic: str, seats: int, reveal: bool, every: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "KEYFRAME_EVERY", every)
    played = playthrough(mnemonic, seats, reveal)
    replayer = Replayer(played.header, reveal)
    start = replayer.start()
    frames = replayer.frames(played.rows)
    assert replayer.error is None and start["states"] == "delta"
    assert len(frames) == len(played.rows) == len(played.views) - 1
    states = rebuilt(start["state"], frames)
    for number, (state, view) in enumerate(zip(states, played.views, strict=True)):
        assert text(state) == text(view), (mnemonic, number)
    keyframes = [number for number, frame in enumerate(frames, 1) if "state" in frame]
    assert keyframes == list(range(every, len(frames) + 1, every))
    for frame in frames:
        if frame["fault"] is not None and "patch" in frame:
            assert frame["patch"] == [], frame  # a faulty reply changes nothing
    # A fault's details name what the bot holds: shown once the game is over, not before.
    assert ("QZX" in text(frames)) is reveal
    assert any(frame.get("patch") for frame in frames), "no move changed the view"


@pytest.mark.parametrize("reveal", [True, False])
def test_the_golden_scrabble_game_patches_its_board_racks_and_bag(reveal: bool) -> None:
    played = golden_scrabble(reveal)
    replayer = Replayer(played.header, reveal)
    start = replayer.start()
    frames: list[Any] = replayer.frames(played.rows)
    assert replayer.error is None
    for number, (state, view) in enumerate(zip(rebuilt(start["state"], frames), played.views,
                                               strict=True)):
        assert text(state) == text(view), number
    paths = {op["path"].split("/")[1] for frame in frames for op in frame.get("patch", [])}
    assert "board" in paths and "scores" in paths
    assert ("racks" in paths) is reveal  # hidden while the game runs, so never patched


@pytest.mark.parametrize(("mnemonic", "seats"), tables())
def test_full_states_give_every_frame_its_view(mnemonic: str, seats: int) -> None:
    played = playthrough(mnemonic, seats, reveal=True)
    log = replay.FrameLog(played.header, reveal=True)
    log.extend(played.rows)
    full = json.loads(log.full(played.header.start.status).plain)
    start, frames = full, full["frames"]
    assert start["states"] == "full"
    assert all("patch" not in frame for frame in frames)
    assert [text(start["state"])] + [text(frame["state"]) for frame in frames] == [
        text(view) for view in played.views]


def test_a_move_that_no_longer_replays_stops_the_frames_and_says_where() -> None:
    played = playthrough("TICTACTOE", 2, reveal=True)
    rows = move_log([(0, {"position": 4}, None), (1, {"position": 4}, None),
                     (0, {"position": 0}, None)])  # 4 twice
    replayer = Replayer(played.header, reveal=True)
    replayer.start()
    frames = replayer.frames(rows)
    assert len(frames) == 1
    assert replayer.error is not None
    assert replayer.error.startswith("move 2 does not replay under the current rules")


def test_a_25x25_hexagons_game_of_1481_moves_is_a_small_replay() -> None:
    """The issue's game (bench/replay.py builds it the same way): sizes, not times."""
    game = configured("HEXAGONS")
    settings: dict[str, Any] = {"rows": 25, "cols": 25}
    state = game.new(settings, ["Honeycomb", "Hexed"], random.Random(7))
    chooser, entries = random.Random(7 + 1000), []
    while (seat := game.to_move(state)) is not None:
        move = chooser.choice(list(game.legal_moves(state, seat)))
        state = game.apply(state, seat, move)
        entries.append((seat, game.move_to_wire(move), None))
    assert len(entries) == 1481
    header = header_of(game, ("Honeycomb", "Hexed"), 7, True, settings)
    small = replay.encode(header, move_log(entries))
    full = replay.encode(header, move_log(entries), States.FULL)
    assert len(small.gzipped) < 200_000 and len(small.plain) < 1_000_000
    assert len(full.plain) > 15 * len(small.plain)  # what every state whole costs
    body = json.loads(small.plain)
    assert sum("state" in frame for frame in body["frames"]) == 1481 // KEYFRAME_EVERY
    last = rebuilt(body["state"], body["frames"])[-1]
    assert last == game.spectator_view(state, True)


@pytest.mark.parametrize("body", [
    {"text": "naïve ☃ \u2028 \"quoted\"", "latency_ms": 12.345, "fault": None, "seq": 3},
    {"state": {"big": 2**70}},  # past 64 bits: orjson refuses it, json encodes it
], ids=["common", "huge-integer"])
def test_a_replay_is_encoded_as_compact_utf8_json(body: dict[str, Any]) -> None:
    expected = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert replay._dumps(body) == expected


# -- the frame log: built once, extended, cut into replays and streams -------------------


def _replay_body(header: replay.GameHeader, rows: list[Any], states: States) -> bytes:
    """A whole replay as one Replayer makes it, in one piece: what a log must cut."""
    start, frames, error = made(header, rows, header.start.status.value == "FINISHED", states)
    return replay._dumps({"id": header.start.id, "status": header.start.status.value,
                          **start, "frames": frames, "error": error})


@pytest.mark.parametrize("reveal", [True, False])
@pytest.mark.parametrize(("mnemonic", "seats"), tables())
def test_a_log_extended_in_pieces_cuts_the_same_replays_and_streams(
        mnemonic: str, seats: int, reveal: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "KEYFRAME_EVERY", 7)
    played = playthrough(mnemonic, seats, reveal)
    header, rows = played.header, played.rows
    log = replay.FrameLog(header, reveal)
    # A deadline already passed stops the log after its first row; a piece at a time
    # then, rows applied twice applied once.
    assert log.extend(rows, Deadline(0.0)) is False and log.seq == 1
    for at in range(0, len(rows), 5):
        assert log.extend(rows[max(0, at - 2):at + 5])
    assert (log.count, log.seq, log.error) == (len(rows), len(rows), None)
    status = header.start.status
    assert log.encoded(status).plain == _replay_body(header, rows, States.DELTA)
    assert gzip.decompress(log.encoded(status).gzipped) == log.encoded(status).plain
    assert log.full(status).plain == _replay_body(header, rows, States.FULL)
    # A stream's first frame, wherever it starts, is whole, as a Replayer made it; the
    # frames after it are the log's.
    for cut in sorted(cut for cut in {0, 1, 6, 7, 8, len(rows) - 1} if cut < len(rows)):
        sent = [replay._dumps(frame) for frame in resumed(header, rows, cut, States.DELTA,
                                                          reveal)]
        assert log.after(cut) == cut
        assert [log.whole(cut), *log.frames[cut + 1:]] == sent, cut


def test_a_log_that_stops_at_a_move_says_where_and_takes_no_more_frames() -> None:
    played = playthrough("TICTACTOE", 2, reveal=True)
    rows = move_log([(0, {"position": 4}, None), (1, {"position": 4}, None),
                     (0, {"position": 0}, None)])
    log = replay.FrameLog(played.header, reveal=True)
    assert log.extend(rows)
    assert log.count == 1 and log.seq == 3
    assert log.error is not None and log.error.startswith("move 2 does not replay")
    assert json.loads(log.encoded(played.header.start.status).plain)["error"] == log.error

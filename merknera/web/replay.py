"""A stored game as a viewer sees it, move by move: the frames of a replay.

A frame is one row of the move log (an accepted move, a chance move, or a faulty reply)
together with the state after it, as :meth:`Game.spectator_view` shows it.  The states are
computed here by applying the stored moves to the game's starting state, so that a page
needs no rules of its own.  A :class:`FrameLog` keeps a game's frames encoded, made once
and extended as the game goes on: whole replays and live streams are cut from it.

A frame carries its state in one of two ways: whole (``state``), or as the JSON Patch
(RFC 6902, :mod:`merknera.web.jsonpatch`) that turns the previous frame's state into it
(``patch``; ``[]`` after a faulty reply, which changes nothing).  Whole states would make
a replay grow with moves times state: a 25x25 Hexagons game of 1,481 moves was 17 MB of
JSON and took over a second to build.  So by default (:attr:`States.DELTA`) every
:data:`KEYFRAME_EVERY`-th frame is a *keyframe* with its whole state and the others are
patches: any frame's state is the nearest keyframe at or before it (or the start) with at
most :data:`KEYFRAME_EVERY` - 1 patches applied.  The patches are computed from the views
themselves, so every game gets them without code of its own.  :attr:`States.FULL` gives
every frame its whole state, for API users who would rather not apply patches.

While a game runs its frames hide what a player could not know (``reveal=False``): the
spectator view hides racks and bags, and each move is the public one (which tiles a Scrabble
exchange returned is secret).  Once the game is over, everything shows.
"""

from __future__ import annotations

import bisect
import enum
import gzip
import json
import logging
import random
import threading
from dataclasses import dataclass
from typing import Any

import orjson

from merknera.cache import Cache
from merknera.games import JSON, AnyGame, JSONObject, MoveError
from merknera.store import results
from merknera.store.db import Connection, Row
from merknera.store.games import GameStatus
from merknera.web import jsonpatch
from merknera.work import UNLIMITED, Deadline

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GameHeader:
    """What a replay starts from: the stored game's seed, settings and players, and the
    rules it is played by."""

    start: results.ReplayStart
    game: AnyGame


class NotHostedError(LookupError):
    """The stored game is of a game this platform does not host (any more)."""


def load_header(conn: Connection, game_id: int,
                games: dict[str, AnyGame]) -> GameHeader | None:
    """A game's header from the store; None if there is no such game.

    :raises NotHostedError: if its game is not hosted here.
    """
    found = results.replay_start(conn, game_id)
    if found is None:
        return None
    if found.game not in games:
        raise NotHostedError(f"game {game_id} is a game of {found.game}, which is not "
                             "hosted here, so it cannot be replayed")
    return GameHeader(found, games[found.game])


FAULTS = {"TIMEOUT": "no reply in time", "UNREACHABLE": "could not be reached",
          "HTTP_STATUS": "an HTTP status other than 200", "MALFORMED_REPLY": "a malformed reply",
          "RPC_ERROR": "a JSON-RPC error", "INVALID_MOVE": "not a move",
          "ILLEGAL_MOVE": "an illegal move", "NOT_READY": "not ready in time",
          "DISQUALIFIED": "a move that disqualified its player"}
"""What a fault was, in words, for a running game (whose fault details may name what the
bot holds: "the tile Q is not in your rack IIVBOLA")."""


def fault_summary(fault: str) -> str:
    """A fault without its details, as a running game shows it."""
    return f"{FAULTS.get(fault, fault.lower())} (the details show once the game is over)"


class States(enum.Enum):
    """How a replay's frames carry their states (``?states=`` of the API)."""

    DELTA = "delta"
    """Keyframes every :data:`KEYFRAME_EVERY` frames, patches in between."""
    FULL = "full"
    """Every frame with its whole state."""


KEYFRAME_EVERY = 100
"""Frame n (counted from 1, over the game's whole move log) is a keyframe when n is a
multiple of this.  Rebuilding a frame then takes at most 99 patches, under a millisecond in
a browser on the largest board; keyframes closer together made the 25x25 game's replay
larger as JSON (every 50: 0.78 MB, not 0.61; about as large gzipped) and slower to build,
for no visible gain."""


class Replayer:
    """Applies a game's stored moves one by one and makes a frame of each.

    A game that cannot be set up or replayed under the current rules (its stored settings
    or a move no longer valid) stops the replay: :attr:`error` says where and why, and later
    rows make no frames.
    """

    def __init__(self, header: GameHeader, reveal: bool) -> None:
        self.header = header
        self.reveal = reveal
        self.seq = 0
        """The last row applied."""
        self.count = 0
        """How many rows have been applied (the number of the last frame)."""
        self.error: str | None = None
        game, start = header.game, header.start
        self._state: Any = None
        self._view: JSON = None
        self._shown = False
        """Whether :attr:`_view` is the state the last frame (or the start) showed, which
        the next frame's patch starts from."""
        try:
            self._state = game.new({**game.default_settings, **start.settings},
                                   list(start.players), random.Random(start.seed))
        except (ValueError, TypeError, KeyError) as exc:
            self._fail(f"the game cannot be set up again from its stored settings: {exc}")

    def start(self) -> JSONObject:
        """What a viewer needs before the first frame: the game, its players, the setup
        facts, the form of the frames (:attr:`States.DELTA`), and the starting state
        (whole)."""
        game = self.header.game
        if self._state is not None:
            self._view, self._shown = game.spectator_view(self._state, self.reveal), True
        return {"game": game.mnemonic, "name": game.name,
                "players": list(self.header.start.players),
                "setup": game.spectator_setup(), "reveal": self.reveal,
                "states": States.DELTA.value, "state": self._view}

    def frames(self, rows: list[Row]) -> list[JSONObject]:
        """A frame for each row (in order, each after :attr:`seq`).  The first frame made
        without :meth:`start` is a keyframe: the patch of a frame starts from the frame
        before it, which the viewer then does not have."""
        made = []
        for row in rows:
            frame = self._row(row)
            if frame is not None:
                made.append(frame)
        return made

    def _row(self, row: Row) -> JSONObject | None:
        if self.error is not None:
            return None
        frame = None
        try:
            frame = self._frame(row)
        except (MoveError, ValueError, TypeError, KeyError) as exc:
            self._fail(f"move {row['seq']} does not replay under the current rules: {exc}")
        self.seq = row["seq"]
        return frame

    def _fail(self, why: str) -> None:
        self.error = why
        log.warning("game %d: %s", self.header.start.id, why)

    def _frame(self, row: Row) -> JSONObject:
        game, seat = self.header.game, row["seat"]
        fault, detail = row["fault"], row["fault_detail"]
        if fault is not None:
            self.count += 1
            if not self.reveal:
                detail = fault_summary(fault)
            return self._with_state(self._made(row, None, detail or fault, detail),
                                    changed=False)
        wire: JSON = json.loads(row["move"])
        move = game.parse_logged(seat, wire)
        # Raises IllegalMoveError (a MoveError) for a stored move the rules now refuse.
        after = game.apply(self._state, seat, move)
        text = game.describe_move(self._state, seat, move)
        self._state = after
        self.count += 1
        if not self.reveal:
            wire = game.public_move(wire)
        return self._with_state(self._made(row, wire, text, detail), changed=True)

    @staticmethod
    def _made(row: Row, move: JSON, text: str, detail: str | None) -> JSONObject:
        return {"seq": row["seq"], "seat": row["seat"], "latency_ms": row["latency_ms"],
                "fault": row["fault"], "fault_detail": detail, "at": row["created_at"],
                "move": move, "text": text}

    def _with_state(self, frame: JSONObject, changed: bool) -> JSONObject:
        """The frame with its state: whole (``state``) on a keyframe, else the patch from
        the previous frame's (``patch``)."""
        keyframe = not self._shown or self.count % KEYFRAME_EVERY == 0
        if not changed and not keyframe:
            frame["patch"] = []
            return frame
        view = (self.header.game.spectator_view(self._state, self.reveal)
                if changed or not self._shown else self._view)
        if keyframe:
            frame["state"] = view
        else:
            frame["patch"] = jsonpatch.diff(self._view, view)
        self._view, self._shown = view, True
        return frame


@dataclass(frozen=True)
class EncodedReplay:
    """A replay as the API sends it: JSON, plain and gzipped."""

    plain: bytes
    gzipped: bytes

    @property
    def size(self) -> int:
        """Bytes held."""
        return len(self.plain) + len(self.gzipped)

    @staticmethod
    def of(plain: bytes) -> EncodedReplay:
        """``plain`` and its gzip (CPU work for a long replay: off the event loop)."""
        return EncodedReplay(plain, gzip.compress(plain, compresslevel=6))


class FrameLog:
    """One game's frames as one kind of viewer sees them (``reveal``), each encoded once,
    and extended with the rows stored since: every replay and live stream of the game
    (in either form of :class:`States`) is cut from it.

    The frames are those of :attr:`States.DELTA` after :meth:`Replayer.start`; a frame's
    whole state, for :attr:`States.FULL` and for the first frame of a live stream, is its
    nearest keyframe's (or the starting state) with the patches after it applied.

    One caller at a time extends it (:meth:`extend`, :meth:`seal`: under
    :attr:`merknera.web.replays.Shared.lock`); meanwhile any thread may cut what it holds
    (:meth:`whole`, :meth:`encoded`, :meth:`full`), from the frames there were when the cut
    began: a frame, once made, never changes.
    """

    def __init__(self, header: GameHeader, reveal: bool) -> None:
        self.header = header
        self.reveal = reveal
        self._replayer: Replayer | None = Replayer(header, reveal)
        self.start = self._replayer.start()
        """What the replay starts from (:meth:`Replayer.start`)."""
        self.frames: list[bytes] = []
        """Each frame as compact JSON (:data:`States.DELTA`'s form)."""
        self.seqs: list[int] = []
        """The row (move number) of each frame."""
        self.seq = 0
        """The last row applied."""
        self.error: str | None = self._replayer.error
        """Why the frames stopped early (a move that no longer replays), else None."""
        self.complete = False
        """Every row of the finished game is applied: the log never changes again."""
        self.frame_bytes = 0
        """Bytes of the encoded frames."""
        self._start_bytes = len(_dumps(self.start))
        self._cache = threading.Lock()
        """Held while the cuts' caches below change (cuts run on any thread)."""
        self._views: Cache[int, JSON] = Cache(VIEWS_KEPT)
        self._wholes: Cache[int, bytes] = Cache(WHOLES_KEPT)
        self._wholes_bytes = 0
        self._encoded: tuple[int, str, EncodedReplay] | None = None

    @property
    def count(self) -> int:
        """Frames made so far."""
        return len(self.seqs)

    @property
    def size(self) -> int:
        """Bytes held, as allocated: the frames (each an exact copy, with what each costs
        the lists that hold it), the whole states kept at hand, the replay kept."""
        encoded = self._encoded
        return (self._start_bytes + self.frame_bytes + self.count * FRAME_OVERHEAD
                + self._wholes_bytes + (0 if encoded is None else encoded[2].size))

    def extend(self, rows: list[Row], deadline: Deadline = UNLIMITED) -> bool:
        """Apply ``rows`` (those after :attr:`seq`, in order) and make their frames; False
        if ``deadline`` passed before the last (the rows applied so far, one at least,
        stay applied)."""
        replayer = self._replayer
        assert replayer is not None, "a complete log takes no more rows"
        for number, row in enumerate(rows, 1):
            if row["seq"] <= self.seq:
                continue
            if number > 1 and deadline.passed():
                return False
            for frame in replayer.frames([row]):
                encoded = _dumps(frame)
                self.frames.append(encoded)  # before its row: a cut reads up to count
                self.seqs.append(row["seq"])
                self.frame_bytes += len(encoded)
            # Rows after one that no longer replays make no frames: they count as read.
            self.seq, self.error = row["seq"], replayer.error
        return True

    def seal(self) -> None:
        """Mark the log complete (its game is finished and every row applied) and let go
        of what only extending it needed."""
        self.complete = True
        self._replayer = None
        with self._cache:
            self._views.clear()

    def after(self, seq: int) -> int:
        """The index of the first frame of a row after ``seq``."""
        return bisect.bisect_right(self.seqs, seq)

    def whole(self, index: int) -> bytes:
        """Frame ``index`` with its whole state (a keyframe as it is; else its patch
        applied to the state before it)."""
        with self._cache:
            found = self._wholes.get(index)
            if found is not None:
                return found
        frame = _loads(self.frames[index])
        if "patch" not in frame:
            return self.frames[index]
        del frame["patch"]
        frame["state"] = self._view(index)
        encoded = _dumps(frame)
        with self._cache:
            replaced = self._wholes.pop(index) or b""
            dropped = self._wholes.put(index, encoded)
            self._wholes_bytes += (len(encoded) - len(replaced)
                                   - sum(len(value) for _, value in dropped))
        return encoded

    def _view(self, index: int) -> JSON:
        """The state after frame ``index`` (-1: the starting state)."""
        patches: list[jsonpatch.Patch] = []
        at = index
        while True:
            if at < 0:
                view = self.start["state"]
                break
            with self._cache:
                found = self._views.get(at)
                known = found is not None or at in self._views
            if known:
                view = found
                break
            frame = _loads(self.frames[at])
            if "state" in frame:
                view = frame["state"]
                break
            patches.append(frame["patch"])
            at -= 1
        for patch in reversed(patches):
            view = jsonpatch.apply(view, patch)
        with self._cache:
            self._views.put(index, view)
        return view

    def encoded(self, status: GameStatus, deadline: Deadline = UNLIMITED) -> EncodedReplay:
        """The whole replay in :attr:`States.DELTA`'s form, as the game stands now
        (``status``): the one last made while no frame came since, else made (and kept).

        :raises TimeLimitError: when ``deadline`` has passed before it is made.
        """
        found = self.kept(status)
        if found is not None:
            return found
        deadline.check()
        count, error = self.count, self.error
        encoded = EncodedReplay.of(self._document(status, States.DELTA, self.frames[:count],
                                                  error))
        with self._cache:
            self._encoded = (count, status.value, encoded)
        return encoded

    def kept(self, status: GameStatus) -> EncodedReplay | None:
        """:meth:`encoded`'s replay if it is made already for the frames there are now."""
        kept = self._encoded
        return kept[2] if kept is not None and kept[:2] == (self.count, status.value) else None

    def full(self, status: GameStatus, deadline: Deadline = UNLIMITED) -> EncodedReplay:
        """The whole replay in :attr:`States.FULL`'s form (every frame's state whole), of
        the frames there are now.

        :raises TimeLimitError: when ``deadline`` passes first.
        """
        count, error = self.count, self.error
        view = self.start["state"]
        wholes = []
        for encoded in self.frames[:count]:
            deadline.check()
            frame = _loads(encoded)
            if "patch" in frame:
                view = jsonpatch.apply(view, frame.pop("patch"))
                frame["state"] = view
                encoded = _dumps(frame)
            else:
                view = frame["state"]
            wholes.append(encoded)
        return EncodedReplay.of(self._document(status, States.FULL, wholes, error))

    def _document(self, status: GameStatus, states: States, frames: list[bytes],
                  error: str | None) -> bytes:
        """The replay's JSON around ``frames``, as one copy (a long game's is megabytes,
        copied while holding the GIL)."""
        body: JSONObject = {"id": self.header.start.id, "status": status.value,
                            **self.start, "states": states.value}
        pieces = [_dumps(body)[:-1] + b',"frames":[']
        for index, frame in enumerate(frames):
            if index:
                pieces.append(b",")
            pieces.append(frame)
        pieces.append(b'],"error":' + _dumps(error) + b"}")
        return b"".join(pieces)


FRAME_OVERHEAD = 80
"""Bytes a frame costs beyond its JSON: its bytes object's header, its move number, and
their places in the log's lists."""
VIEWS_KEPT = 2
"""States a log keeps at hand (the latest asked for): a live stream whose frames are whole
asks for each frame's, one after the other, and each follows from the one before."""
WHOLES_KEPT = 16
"""Frames with their whole states a log keeps at hand, for the streams that follow it."""


def encode(header: GameHeader, rows: list[Row],
           states: States = States.DELTA) -> EncodedReplay:
    """The whole replay of a game, encoded (CPU work: run it off the event loop)."""
    status = header.start.status
    log = FrameLog(header, reveal=status is GameStatus.FINISHED)
    log.extend(rows)
    return log.full(status) if states is States.FULL else log.encoded(status)


def _dumps(body: JSON) -> bytes:
    """Compact UTF-8 JSON: orjson's, a fraction of json's time on a long game's replay, the
    same document; json's for what orjson refuses (an integer past 64 bits in some game's
    view)."""
    try:
        # A copy of orjson's bytes: its buffer has room to spare (kilobytes for a frame of a
        # few hundred bytes), which a frame kept for the game's life would hold on to.
        return bytes(memoryview(orjson.dumps(body)))
    except TypeError:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _loads(encoded: bytes) -> Any:
    """A frame :func:`_dumps` encoded (json's reader for what orjson's refuses)."""
    try:
        return orjson.loads(encoded)
    except orjson.JSONDecodeError:
        return json.loads(encoded)


ReplayKey = tuple[int, States]
"""A game's id and the form of its replay."""


class ReplayCache:
    """Finished games' encoded replays (they never change), in each form asked for, the most
    recently used first, up to ``budget`` bytes."""

    def __init__(self, budget: int = 64 * 1024 * 1024) -> None:
        self._held: Cache[ReplayKey, EncodedReplay] = Cache(
            budget=budget, size=lambda replay: replay.size)

    @property
    def budget(self) -> float:
        """Bytes the replays are kept within."""
        return self._held.budget

    def get(self, key: ReplayKey) -> EncodedReplay | None:
        """A cached replay, or None."""
        return self._held.get(key)

    def put(self, key: ReplayKey, replay: EncodedReplay) -> None:
        """Keep a finished game's replay, forgetting the least recently used beyond the
        budget (a replay larger than the whole budget is not kept)."""
        if replay.size > self.budget or key in self._held:
            return
        self._held.put(key, replay)

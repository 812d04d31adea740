"""A stored game as a viewer sees it, move by move: the frames of a replay.

A frame is one row of the move log (an accepted move, a chance move, or a faulty reply)
together with the state after it, as :meth:`Game.spectator_view` shows it.  The states are
computed here by applying the stored moves to the game's starting state, so that a page
needs no rules of its own; the same :class:`Replayer` serves a whole replay and a live
game's new moves.

While a game runs its frames hide what a player could not know (``reveal=False``): the
spectator view hides racks and bags, and each move is the public one (which tiles a Scrabble
exchange returned is secret).  Once the game is over, everything shows.
"""

from __future__ import annotations

import gzip
import json
import logging
import random
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from merknera.games import JSON, AnyGame, JSONObject, MoveError
from merknera.store import results
from merknera.store.db import Connection, Row
from merknera.store.games import GameStatus

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
        self.error: str | None = None
        game, start = header.game, header.start
        self._state: Any = None
        try:
            self._state = game.new({**game.default_settings, **start.settings},
                                   list(start.players), random.Random(start.seed))
        except (ValueError, TypeError, KeyError) as exc:
            self._fail(f"the game cannot be set up again from its stored settings: {exc}")

    def start(self) -> JSONObject:
        """What a viewer needs before the first frame: the game, its players, the setup
        facts, and the starting state."""
        game = self.header.game
        return {"game": game.mnemonic, "name": game.name,
                "players": list(self.header.start.players),
                "setup": game.spectator_setup(), "reveal": self.reveal,
                "state": None if self._state is None
                else game.spectator_view(self._state, self.reveal)}

    def frames(self, rows: list[Row]) -> list[JSONObject]:
        """A frame for each row (in order, each after :attr:`seq`)."""
        made = []
        for row in rows:
            if self.error is not None:
                break
            try:
                made.append(self._frame(row))
            except (MoveError, ValueError, TypeError, KeyError) as exc:
                self._fail(f"move {row['seq']} does not replay under the current rules: {exc}")
            self.seq = row["seq"]
        return made

    def _fail(self, why: str) -> None:
        self.error = why
        log.warning("game %d: %s", self.header.start.id, why)

    def _frame(self, row: Row) -> JSONObject:
        game, seat = self.header.game, row["seat"]
        fault, detail = row["fault"], row["fault_detail"]
        if fault is not None and not self.reveal:
            detail = fault_summary(fault)
        frame: JSONObject = {
            "seq": row["seq"], "seat": seat, "latency_ms": row["latency_ms"],
            "fault": fault, "fault_detail": detail, "at": row["created_at"]}
        if fault is not None:
            frame.update(move=None, text=detail or fault, state=None)
            return frame
        wire: JSON = json.loads(row["move"])
        move = game.parse_logged(seat, wire)
        # Raises IllegalMoveError (a MoveError) for a stored move the rules now refuse.
        after = game.apply(self._state, seat, move)
        text = game.describe_move(self._state, seat, move)
        self._state = after
        if not self.reveal:
            wire = game.public_move(wire)
        frame.update(move=wire, text=text, state=game.spectator_view(after, self.reveal))
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


def encode(header: GameHeader, rows: list[Row]) -> EncodedReplay:
    """The whole replay of a game, encoded (CPU work: run it off the event loop)."""
    replayer = Replayer(header, reveal=header.start.status is GameStatus.FINISHED)
    body = {"id": header.start.id, "status": header.start.status.value, **replayer.start(),
            "frames": replayer.frames(rows), "error": replayer.error}
    plain = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return EncodedReplay(plain, gzip.compress(plain, compresslevel=6))


class ReplayCache:
    """Finished games' encoded replays (they never change), the most recently used first,
    up to ``budget`` bytes."""

    def __init__(self, budget: int = 64 * 1024 * 1024) -> None:
        self.budget = budget
        self._held: OrderedDict[int, EncodedReplay] = OrderedDict()
        self._size = 0

    def get(self, game_id: int) -> EncodedReplay | None:
        """A cached replay, or None."""
        found = self._held.get(game_id)
        if found is not None:
            self._held.move_to_end(game_id)
        return found

    def put(self, game_id: int, replay: EncodedReplay) -> None:
        """Keep a finished game's replay, forgetting the least recently used beyond the
        budget (a replay larger than the whole budget is not kept)."""
        if replay.size > self.budget or game_id in self._held:
            return
        self._held[game_id] = replay
        self._size += replay.size
        while self._size > self.budget:
            _, dropped = self._held.popitem(last=False)
            self._size -= dropped.size

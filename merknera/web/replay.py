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

import json
import logging
import random
import sqlite3
from dataclasses import dataclass
from typing import Any

from merknera.games import JSON, AnyGame, JSONObject, MoveError
from merknera.store import results

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GameHeader:
    """What a replay starts from: the stored game's seed, settings and players, and the
    rules it is played by."""

    start: results.ReplayStart
    game: AnyGame


def load_header(conn: sqlite3.Connection, game_id: int,
                games: dict[str, AnyGame]) -> GameHeader | None:
    """A game's header from the store (None if there is no such game or its game is not
    hosted any more)."""
    found = results.replay_start(conn, game_id)
    if found is None or found.game not in games:
        return None
    return GameHeader(found, games[found.game])


class Replayer:
    """Applies a game's stored moves one by one and makes a frame of each.

    A move log that no longer replays (a rule changed since it was stored) stops the
    replay: :attr:`error` says where and why, and later rows make no frames.
    """

    def __init__(self, header: GameHeader, reveal: bool) -> None:
        self.header = header
        self.reveal = reveal
        game, start = header.game, header.start
        self._state: Any = game.new({**game.default_settings, **start.settings},
                                    list(start.players), random.Random(start.seed))
        self.seq = 0
        """The last row applied."""
        self.error: str | None = None

    def start(self) -> JSONObject:
        """What a viewer needs before the first frame: the game, its players, the setup
        facts, and the starting state."""
        game = self.header.game
        return {"game": game.mnemonic, "name": game.name,
                "players": list(self.header.start.players),
                "setup": game.spectator_setup(), "reveal": self.reveal,
                "state": game.spectator_view(self._state, self.reveal)}

    def frames(self, rows: list[sqlite3.Row]) -> list[JSONObject]:
        """A frame for each row (in order, each after :attr:`seq`)."""
        made = []
        for row in rows:
            if self.error is not None:
                break
            self.seq = row["seq"]
            try:
                made.append(self._frame(row))
            except (MoveError, ValueError, TypeError, KeyError) as exc:
                self.error = (f"move {row['seq']} does not replay under the current rules: "
                              f"{exc}")
                log.warning("game %d: %s", self.header.start.id, self.error)
        return made

    def _frame(self, row: sqlite3.Row) -> JSONObject:
        game, seat = self.header.game, row["seat"]
        frame: JSONObject = {
            "seq": row["seq"], "seat": seat, "latency_ms": row["latency_ms"],
            "fault": row["fault"], "fault_detail": row["fault_detail"],
            "at": row["created_at"]}
        if row["fault"] is not None:
            frame.update(move=None, text=row["fault_detail"] or row["fault"], state=None)
            return frame
        wire: JSON = json.loads(row["move"])
        move = game.parse_move(wire)
        # Raises IllegalMoveError (a MoveError) for a stored move the rules now refuse.
        after = game.apply(self._state, seat, move)
        text = game.describe_move(self._state, seat, move)
        self._state = after
        if not self.reveal:
            wire = game.public_move(wire)
        frame.update(move=wire, text=text, state=game.spectator_view(after, self.reveal))
        return frame

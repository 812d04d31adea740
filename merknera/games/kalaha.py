"""Kalaha (six pits of six stones), exactly as the seed's server plays it.

The rules are those of ``Anna87/kalaha`` (``research/seed-systems.md`` d.2), except that equal
stores are a draw (the seed gave a tie to TWO).  Seat 0 is player ``ONE`` and moves first;
seat 1 is ``TWO``.  Each row has six pits, indexed 0-5 from its owner's left, and a store
(the *kalaha*) to the right of pit 5.  Pit ``i`` of one row is opposite pit ``5 - i`` of the
other, as the seed's UI draws it::

        TWO   5   4   3   2   1   0
    store TWO                       store ONE
        ONE   0   1   2   3   4   5

* A move picks up every stone of a non-empty own pit and sows them one by one, counter-
  clockwise: the own pits after it, the own store, the opponent's pits 0-5, never the
  opponent's store, then the own pits from 0 again.  With 13 or more stones the lap passes
  the emptied starting pit, which receives stones like any other.
* Last stone in the own store: the mover moves again (this can repeat).
* Last stone in an own pit that was empty: that stone and all stones of the opposite pit go
  to the own store, even when the opposite pit is empty (then just the one stone).
* After any move, when either row is empty each row's stones go to that row's own store and
  the game is over; the more stones in the store wins, equal stores are a draw.

**The move bound.**  The rules guarantee termination, so there is no move limit.  Call a move
*scoring* when it puts a stone into a store: it reaches the own store (every move of at
least ``6 - i`` stones from pit ``i``) or it captures.  Stores never lose stones and hold at
most 72, so a game has at most 72 scoring moves, and its last move is one of them: a move
that scores nothing moves stones rightwards within the mover's own row, touches nothing
else, and leaves both rows as non-empty as they were.  So before each scoring move, each
row makes a chain of such quiet moves on its own.  In a chain pit ``j`` can be played again
only after a move from a pit left of it refilled it, so it is played at most ``2 ** j``
times (pit 5 never: one stone from it scores), at most 31 moves a row; an exhaustive search
of one row (:func:`longest_quiet_chain`, run by the tests) finds the longest chain is 16.
Hence a game has at most ``72 * (1 + 2 * 16) = 2376`` moves (random games take about 60).

On the wire (docs/bots/protocol.md section 4) a seat sees the seed's BoardState plus its own
``player``; the reply is ``{"pitIndex": 0-5}``.  See :meth:`Kalaha.parse_move` and
:meth:`Kalaha.complete_params` for the details decided here.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from merknera.games.base import (
    JSON,
    Calls,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    JSONObject,
    Outcome,
    Seat,
)
from merknera.games.wire import lowered, shorten

PLAYERS = ("ONE", "TWO")
"""The seed's player names, by seat."""
PITS = 6
STONES = 6
"""Stones in each pit at the start."""
TOTAL = 2 * PITS * STONES
LOOP = 2 * PITS + 1
"""Positions a sowing visits per lap: own pits, own store, the opponent's pits."""
STORE = PITS
"""The own store's position in a sowing's lap (own pits are 0-5, the opponent's 7-12)."""
LONGEST_QUIET_CHAIN = 16
"""The most non-scoring moves one row can make in a row (see :func:`longest_quiet_chain`)."""
MAX_MOVES = TOTAL * (1 + 2 * LONGEST_QUIET_CHAIN)

Row = tuple[int, ...]


@dataclass(frozen=True)
class Board:
    """A Kalaha position: both rows of pits, both stores, and the player to move.

    ``rows[0]`` is ONE's row and ``rows[1]`` TWO's, each indexed 0-5 from its owner's left.
    The game is over when a row is empty, and then both are: the last move swept them.
    After the last move ``next_seat`` is the seat that made it, as the seed leaves it.
    """

    rows: tuple[Row, Row] = ((STONES,) * PITS, (STONES,) * PITS)
    stores: tuple[int, int] = (0, 0)
    next_seat: Seat = 0

    def __post_init__(self) -> None:
        shapes = (self.rows, *self.rows, self.stores)
        if (any(type(part) is not tuple for part in shapes) or len(self.rows) != 2
                or any(len(row) != PITS for row in self.rows) or len(self.stores) != 2
                or any(type(n) is not int or n < 0
                       for n in (*self.rows[0], *self.rows[1], *self.stores))):
            raise ValueError(f"not a Kalaha board: {self.rows!r}, stores {self.stores!r}")
        if type(self.next_seat) is not int or self.next_seat not in (0, 1):
            raise ValueError(f"not a Kalaha player: {self.next_seat!r}")
        if any(self.rows[0]) != any(self.rows[1]):
            raise ValueError(f"impossible board: one row is empty, the other unswept: "
                             f"{self.rows!r}")

    @property
    def over(self) -> bool:
        """Whether the game has ended (both rows are empty)."""
        return not any(self.rows[0])

    def sow(self, pit: int) -> Board:
        """The board after the player to move sows ``pit`` (non-empty, game not over)."""
        mover = self.next_seat
        # One lap from the mover's point of view: own pits 0-5, own store, opponent's pits.
        lap = [*self.rows[mover], self.stores[mover], *self.rows[1 - mover]]
        stones, lap[pit] = lap[pit], 0
        position = pit
        for _ in range(stones):
            position = (position + 1) % LOOP
            lap[position] += 1
        if position < STORE and lap[position] == 1:
            opposite = STORE + 1 + (PITS - 1 - position)
            lap[STORE] += 1 + lap[opposite]
            lap[position] = lap[opposite] = 0
        own, store, theirs = tuple(lap[:STORE]), lap[STORE], tuple(lap[STORE + 1:])
        stores = [0, 0]
        stores[mover], stores[1 - mover] = store, self.stores[1 - mover]
        rows: list[Row] = [(), ()]
        rows[mover], rows[1 - mover] = own, theirs
        if not any(own) or not any(theirs):
            # The end: each side keeps its own remaining stones.
            stores = [stores[seat] + sum(rows[seat]) for seat in (0, 1)]
            rows = [(0,) * PITS, (0,) * PITS]
            after = mover
        else:
            after = mover if position == STORE else 1 - mover
        return Board((rows[0], rows[1]), (stores[0], stores[1]), after)

    def winner(self) -> Seat | None:
        """The seat with more stones in its store once the game is over, else ``None``."""
        if not self.over or self.stores[0] == self.stores[1]:
            return None
        return 0 if self.stores[0] > self.stores[1] else 1

    def render(self) -> str:
        """Three text lines as the seed's UI draws the board: TWO's pits 5-0 on top, the
        stores (TWO's left, ONE's right), ONE's pits 0-5 below."""
        top = "".join(f"{n:4d}" for n in reversed(self.rows[1]))
        bottom = "".join(f"{n:4d}" for n in self.rows[0])
        middle = f"{self.stores[1]:4d}{'':{4 * PITS}}{self.stores[0]:4d}"
        return f"    {top}\n{middle}\n    {bottom}"


@dataclass(frozen=True)
class Sow:
    """A move: the pit to sow, and the player the reply named (if it named one)."""

    pit: int
    player: Seat | None = None


def parse_sow(reply: JSON) -> Sow:
    """Read ``{"pitIndex": 0-5}`` (optionally with ``"player": "ONE" | "TWO"``) as a move.

    Keys are matched case-insensitively, as every param of this protocol (one given twice in
    different cases is invalid, see :mod:`merknera.games.wire`).  ``pitIndex`` must
    be a JSON integer: the seed's Jackson also took the string ``"0"``, but a string (or a
    boolean, or 2.0) is refused here, as tic-tac-toe refuses them.  ``"player": null`` counts
    as no player; other keys are ignored.

    :raises InvalidMoveError: for anything else, with what was wrong.
    """
    if not isinstance(reply, dict):
        raise InvalidMoveError(f'expected an object {{"pitIndex": 0-5}}, got {shorten(reply)}')
    keys = lowered(reply)
    if "pitindex" not in keys:
        raise InvalidMoveError(f'the reply has no "pitIndex": {shorten(reply)}')
    pit = keys["pitindex"]
    if isinstance(pit, bool) or not isinstance(pit, int):
        raise InvalidMoveError(f'"pitIndex" must be an integer 0-5, got {shorten(pit)}')
    if not 0 <= pit < PITS:
        raise InvalidMoveError(f'"pitIndex" must be between 0 and 5, got {pit}')
    player = keys.get("player")
    if player is None:
        return Sow(pit)
    if player not in PLAYERS:
        raise InvalidMoveError(f'"player" must be "ONE" or "TWO", got {shorten(player)}')
    return Sow(pit, PLAYERS.index(str(player)))


class Kalaha(Game[Board, Sow]):
    """The seed's Kalaha: two seats, ONE first, six pits of six stones, equal stores draw."""

    mnemonic = "KALAHA"
    name = "Kalaha"
    calls = Calls("Kalaha")
    max_moves = MAX_MOVES

    def new(self, settings: Mapping[str, JSON], players: Sequence[str],
            rng: random.Random) -> Board:
        if len(players) != 2:
            raise ValueError(f"Kalaha is for 2 players, not {len(players)}")
        return Board()

    def to_move(self, state: Board) -> Seat | None:
        return None if state.over else state.next_seat

    def legal_moves(self, state: Board, seat: Seat) -> Sequence[Sow]:
        if self.to_move(state) != seat:
            return ()
        return tuple(Sow(pit) for pit, stones in enumerate(state.rows[seat]) if stones)

    def apply(self, state: Board, seat: Seat, move: Sow) -> Board:
        # The seed checks "game over" first, then the pit; the turn is checked before the pit
        # here, so that a seat out of turn hears about the turn, not about someone's pit.
        if state.over:
            raise IllegalMoveError(f"the game is over; pit {move.pit} cannot be played")
        if seat != state.next_seat:
            raise IllegalMoveError(f"it is {PLAYERS[state.next_seat]}'s turn, "
                                   f"not {PLAYERS[seat]}'s")
        if move.player is not None and move.player != seat:
            raise IllegalMoveError(f'the reply says "player": "{PLAYERS[move.player]}", '
                                   f"but this is {PLAYERS[seat]}'s move")
        if not 0 <= move.pit < PITS:
            raise IllegalMoveError(f"pit {move.pit} is not on the board (0-5)")
        if not state.rows[seat][move.pit]:
            raise IllegalMoveError(f"pit {move.pit} is empty")
        return state.sow(move.pit)

    def outcome(self, state: Board) -> Outcome | None:
        if not state.over:
            return None
        detail = f"ONE {state.stores[0]} - TWO {state.stores[1]}"
        scores = (float(state.stores[0]), float(state.stores[1]))
        winner = state.winner()
        if winner is None:
            return Outcome.draw(2, detail, scores)
        return Outcome.win(winner, 2, detail, scores)

    def standings(self, state: Board) -> tuple[float, ...] | None:
        return (float(state.stores[0]), float(state.stores[1]))

    # -- values <-> JSON -------------------------------------------------------------------

    def state_to_json(self, state: Board) -> JSON:
        return {
            "nextPlayer": PLAYERS[state.next_seat],
            "rowOne": {"pits": list(state.rows[0]), "kalahaStones": state.stores[0]},
            "rowTwo": {"pits": list(state.rows[1]), "kalahaStones": state.stores[1]},
        }

    def state_from_json(self, data: JSON) -> Board:
        if (not isinstance(data, dict) or set(data) != {"nextPlayer", "rowOne", "rowTwo"}
                or data["nextPlayer"] not in PLAYERS):
            raise ValueError(f"not a Kalaha state: {shorten(data)}")
        rows: list[Row] = []
        stores: list[int] = []
        for key in ("rowOne", "rowTwo"):
            row = data[key]
            if (not isinstance(row, dict) or set(row) != {"pits", "kalahaStones"}
                    or not isinstance(row["pits"], list)
                    or not isinstance(row["kalahaStones"], int)
                    or not all(isinstance(n, int) for n in row["pits"])):
                raise ValueError(f"not a Kalaha row: {shorten(row)}")
            rows.append(tuple(n for n in row["pits"] if isinstance(n, int)))
            stores.append(row["kalahaStones"])
        return Board((rows[0], rows[1]), (stores[0], stores[1]),
                     PLAYERS.index(str(data["nextPlayer"])))

    def move_to_wire(self, move: Sow) -> JSON:
        if move.player is None:
            return {"pitIndex": move.pit}
        return {"pitIndex": move.pit, "player": PLAYERS[move.player]}

    def parse_move(self, reply: JSON) -> Sow:
        return parse_sow(reply)

    # -- the wire view ----------------------------------------------------------------------

    def next_move_params(self, state: Board, seat: Seat) -> JSONObject:
        """``player`` plus the seed's BoardState.

        ``boardId`` is kept, as ``null``, so that the shape is exactly the seed's (its own
        fixtures hold ``"boardId": null``); the platform's id of the game is ``gameid``.
        """
        winner = state.winner()
        return {"player": PLAYERS[seat], **self._board_state(state),
                "gameOver": state.over,
                "winner": None if winner is None else PLAYERS[winner]}

    def complete_params(self, state: Board, seat: Seat,
                        outcome: Outcome | None = None) -> JSONObject:
        """``player`` plus the final board, with ``gameOver`` true.

        The seed's own ``winner`` (``"ONE"``/``"TWO"``) is left out: in ``Complete`` the
        key ``winner`` is the protocol's boolean (docs/bots/protocol.md: true only for the
        recipient that won), which the runner sets and which must not be overwritten.  It
        also covers forfeits, where the board alone would name nobody.  On a forfeit the
        board is shown as it stood.
        """
        return {"player": PLAYERS[seat], **self._board_state(state), "gameOver": True}

    @staticmethod
    def _board_state(state: Board) -> JSONObject:
        return {
            "boardId": None,
            "nextPlayer": PLAYERS[state.next_seat],
            "rowOne": _row_details(state.rows[0], state.stores[0]),
            "rowTwo": _row_details(state.rows[1], state.stores[1]),
        }

    def describe_move(self, state: Board, seat: Seat, move: Sow) -> str:
        stones = state.rows[seat][move.pit] if 0 <= move.pit < PITS else 0
        return f"{PLAYERS[seat]} sows pit {move.pit} ({stones} stone{'' if stones == 1 else 's'})"


def _row_details(pits: Row, store: int) -> JSONObject:
    return {"pits": [{"stones": n} for n in pits], "kalahaStones": store}


# -- the move bound ------------------------------------------------------------------------


def longest_quiet_chain() -> int:
    """The most non-scoring moves one row can make in a row, by exhaustive search.

    A non-scoring move sows ``n <= 5 - i`` stones from pit ``i`` onto pits ``i+1 .. i+n``
    of the same row, the last of which was not empty (else it captures).
    A pit holding ``6 - j`` stones or more can never be played without scoring and only
    gains stones, so every such count is the same to the search; the row is searched with
    pit ``j`` capped at ``6 - j`` (pit 5 at 1: empty or not).
    """
    caps = tuple(PITS - j for j in range(PITS))

    @functools.cache
    def longest(row: Row) -> int:
        best = 0
        for i in range(PITS - 1):
            n = row[i]
            if 1 <= n <= PITS - 1 - i and row[i + n]:
                after = list(row)
                after[i] = 0
                for j in range(i + 1, i + n + 1):
                    after[j] = min(after[j] + 1, caps[j])
                best = max(best, 1 + longest(tuple(after)))
        return best

    return max(longest(row) for row in itertools.product(*(range(c + 1) for c in caps)))

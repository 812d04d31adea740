"""The MebiPenny 2011 hexagons server's wire (``research/seed-systems.md`` part (c)): the
requests its clients send, read with the original's refusals, and the Game Deltas and
``application/x-multi-json`` lines it answers with.  Pure: no I/O.

The Game object itself is the platform game's (:meth:`merknera.games.hexagons.Hexagons.
game_object`); this module adds what the server's side of it needs: a player disqualified
shows ``"score": "disqualified"``, a game waiting for its players is ``"initiating"``, and a
client that saw a snapshot gets only what changed since (:func:`delta`); :class:`Shown`
builds and encodes each of these once for all the clients of a game.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from merknera.cache import Cache
from merknera.games import JSON, JSONObject
from merknera.games.hexagons import MAX_SIZE, MIN_SIZE, Line, Point, line_between, move_to_wire
from merknera.names import Claim, ClaimFieldError, Unnamed, read_claim
from merknera.protocol import strict_json

INITIATING, IN_PLAY, COMPLETED = "initiating", "in play", "completed"
"""A game's ``state``: waiting for its players, being played, over."""
DISQUALIFIED = "disqualified"
"""The ``score`` of a disqualified player."""


class RequestRefusedError(ValueError):
    """A request the server refuses with 403 and the original's words."""


def new_game_id() -> str:
    """A game's id: the first 8 hex digits of a random UUID, as the original made them."""
    return uuid.uuid4().hex[:8]


# -- requests -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class NewGame:
    """``POST /`` read: the board's size."""

    rows: int
    cols: int


def read_new_game(body: bytes) -> NewGame:
    """Read ``{"rows": R, "cols": C}`` (other keys are ignored, as the original did).

    ``rows`` must be odd (the original's one check) and both from 3 to 25 (the platform's
    boards).  :raises RequestRefusedError: ``invalid game data: <why>``.
    """
    value = _json(body, "invalid game data")
    if not isinstance(value, dict):
        raise RequestRefusedError("invalid game data: expected {\"rows\", \"cols\"}")
    size: list[int] = []
    for key in ("rows", "cols"):
        number = value.get(key)
        if isinstance(number, bool) or not isinstance(number, int):
            raise RequestRefusedError(f"invalid game data: {key} must be an integer")
        if not MIN_SIZE <= number <= MAX_SIZE:
            raise RequestRefusedError(
                f"invalid game data: {key} must be from {MIN_SIZE} to {MAX_SIZE}")
        size.append(number)
    if size[0] % 2 == 0:
        raise RequestRefusedError("invalid game data: rows must be odd")
    return NewGame(*size)


def read_player(body: bytes) -> Claim:
    """Read a join's ``{"name": ...}``, and the platform's optional ``"secret"`` (the
    name's, :func:`merknera.gateways.guests.guest`; a client that sends only the name may
    give it as ``name#secret``).

    :raises RequestRefusedError: ``invalid player data`` for anything but a non-empty name
        and a string secret, if any.
    """
    value = _json(body, "invalid player data")
    try:
        claim = read_claim(value if isinstance(value, dict) else {}, Unnamed.REFUSED)
    except ClaimFieldError:
        raise RequestRefusedError("invalid player data") from None
    assert claim.name is not None
    return Claim(claim.name.strip(), claim.secret)


def read_line(body: bytes) -> Line:
    """Read a move: ``[{"row": r, "col": c}, {"row": r2, "col": c2}]``, endpoints in
    either order (the line comes back sorted row-major).

    :raises RequestRefusedError: ``invalid line data`` for anything else.
    """
    value = _json(body, "invalid line data")
    if not isinstance(value, list) or len(value) != 2:
        raise RequestRefusedError("invalid line data")
    ends: list[Point] = []
    for end in value:
        row = end.get("row") if isinstance(end, dict) else None
        col = end.get("col") if isinstance(end, dict) else None
        if any(isinstance(n, bool) or not isinstance(n, int) for n in (row, col)):
            raise RequestRefusedError("invalid line data")
        assert isinstance(row, int) and isinstance(col, int)
        ends.append(Point(row, col))
    return line_between(ends[0], ends[1])


def line_request(line: Line) -> JSON:
    """A line as the platform game reads a move (``{"line": [...]}``)."""
    return move_to_wire(line)


def _json(body: bytes, refusal: str) -> JSON:
    try:
        value: JSON = strict_json.loads(body)
    except strict_json.BadJSONError:
        raise RequestRefusedError(refusal) from None
    return value


# -- answers ------------------------------------------------------------------------------------

def disqualify(game: JSONObject, names: frozenset[str]) -> JSONObject:
    """The Game object with the named players' scores shown as ``"disqualified"`` wherever
    a player appears (``players``, and the owners of lines and hexagons)."""
    if not names:
        return game

    def player(value: JSON) -> JSON:
        if isinstance(value, dict) and value.get("name") in names:
            return {**value, "score": DISQUALIFIED}
        return value

    shown = dict(game)
    for key in ("lines", "hexagons"):
        items = game.get(key)
        if isinstance(items, list):
            shown[key] = [{**item, "owner": player(item.get("owner"))}
                          if isinstance(item, dict) else item for item in items]
    players = game.get("players")
    if isinstance(players, list):
        shown["players"] = [player(p) for p in players]
    return shown


@dataclass(frozen=True)
class Snapshot:
    """What a client was last shown of a game: how many lines and hexagons, and each
    player's score (the lists only grow, in the order drawn and claimed)."""

    lines: int
    hexagons: int
    scores: tuple[tuple[str, JSON], ...]


def snapshot(game: JSONObject) -> Snapshot:
    """The snapshot of a Game object."""
    lines, hexagons, players = game.get("lines"), game.get("hexagons"), game.get("players")
    scores = tuple((str(p.get("name")), p.get("score")) for p in players
                   if isinstance(p, dict)) if isinstance(players, list) else ()
    return Snapshot(len(lines) if isinstance(lines, list) else 0,
                    len(hexagons) if isinstance(hexagons, list) else 0, scores)


def delta(game: JSONObject, since: Snapshot) -> JSONObject:
    """The Game Delta since ``since``: the Game object's keys but ``rows`` and ``cols``,
    ``lines`` and ``hexagons`` only those added since, ``players`` only those whose score
    changed."""
    before = dict(since.scores)
    lines, hexagons, players = game.get("lines"), game.get("hexagons"), game.get("players")
    return {
        "lines": lines[since.lines:] if isinstance(lines, list) else [],
        "hexagons": hexagons[since.hexagons:] if isinstance(hexagons, list) else [],
        "players": [p for p in players if isinstance(p, dict)
                    and before.get(str(p.get("name")), object()) != p.get("score")]
        if isinstance(players, list) else [],
        "state": game.get("state"),
    }


MULTI_JSON = "application/x-multi-json"
"""The observers' stream: one JSON document a line."""


def read_wrapper(body: bytes) -> str | None:
    """An observer's optional ``{"wrapper": "...%s..."}`` (an empty body: no wrapper).

    :raises RequestRefusedError: ``invalid observer data`` for a wrapper that is not a
        string with exactly one ``%s``.
    """
    if not body.strip():
        return None
    value = _json(body, "invalid observer data")
    wrapper = value.get("wrapper") if isinstance(value, dict) else None
    if wrapper is None and isinstance(value, dict):
        return None
    if not isinstance(wrapper, str) or wrapper.count("%s") != 1:
        raise RequestRefusedError("invalid observer data")
    return wrapper


def _wrapped(text: str, wrapper: str | None) -> bytes:
    """``text`` (JSON on one line) as a line of a stream, put into ``wrapper`` if given."""
    if wrapper is not None:
        # The JSON has no raw CR or LF: those of the wrapper are all there are to replace.
        text = wrapper.replace("\r", " ").replace("\n", " ").replace("%s", text)
    return (text + "\n").encode("utf-8")


class Encoded:
    """A document the server sends, with its text in each form it is sent in, each made
    once however many clients it goes to.  Shared: nobody may change the document."""

    def __init__(self, document: JSONObject) -> None:
        self.document = document
        self._body: str | None = None
        self._text: str | None = None
        self._line: bytes | None = None

    @property
    def body(self) -> str:
        """The document as an answer's body, as :func:`aiohttp.web.json_response` writes
        it."""
        if self._body is None:
            self._body = json.dumps(self.document)
        return self._body

    def line(self, wrapper: str | None = None) -> bytes:
        """The document as a line of an observer's stream: on one line (a newline in it
        would end the line early, so there is none), put into ``wrapper`` at ``%s`` if
        given; the same bytes for every observer without a wrapper, and with one, only the
        wrapping is done per observer."""
        if self._text is None:
            # json.dumps writes no raw newline.
            self._text = json.dumps(self.document, separators=(",", ":"))
        if wrapper is not None:
            return _wrapped(self._text, wrapper)
        if self._line is None:
            self._line = _wrapped(self._text, None)
        return self._line


DELTAS_KEPT = 16
"""Game Deltas kept per :class:`Shown`, for the snapshots most recently asked about."""


class Shown:
    """A game's Game object at one moment, with its snapshot and the Game Deltas since the
    snapshots its clients were shown before, each built and encoded once however many
    clients ask (observers mostly share one snapshot: the game's previous moment).
    Shared: nobody may change the documents."""

    def __init__(self, game: JSONObject) -> None:
        self.game = Encoded(game)
        self.snapshot = snapshot(game)
        self._deltas: Cache[Snapshot, Encoded] = Cache(DELTAS_KEPT)

    @property
    def state(self) -> JSON:
        """The Game's ``state``."""
        return self.game.document.get("state")

    def delta(self, since: Snapshot) -> Encoded:
        """The Game Delta since ``since`` (:func:`delta`)."""
        found = self._deltas.get(since)
        if found is None:
            found = Encoded(delta(self.game.document, since))
            self._deltas.put(since, found)
        return found

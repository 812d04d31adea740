"""Battlebot's wire, both of its protocols: the games' names, logins, and the messages a
client is sent (``research/seed-systems.md`` part (a)).  Pure: no I/O.

The platform's Battlebot games (:mod:`merknera.games.battlebot`) own the state's shape,
which is the salted-login era's (``players``, ``nextPlayer``, ``complete``, ``victor``,
``reason``); :func:`state_message` turns it into the GraphQL era's (``bots``,
``waitingFor``, ``result``) for clients of that era, as its server sent it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from merknera.games import JSON, JSONObject
from merknera.games.wire import shorten
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.signing import sha256_hex


class Era(enum.Enum):
    """Which of Battlebot's protocols a client speaks."""

    SALT = BotProtocol.BATTLEBOT_SALT
    """2017-06: ``POST /bots/<game>``; the server sends a salt, the client a login hash."""
    GRAPHQL = BotProtocol.BATTLEBOT_GRAPHQL
    """2017-08: GraphQL ``registerBot``; the client sends its name and password first."""

    @property
    def protocol(self) -> BotProtocol:
        """The platform's protocol of the era's bots."""
        return self.value


@dataclass(frozen=True)
class BattlebotGame:
    """One of Battlebot's games, by each of its names."""

    mnemonic: str
    """The platform's name (``NOUGHTSANDCROSSES``)."""
    path_name: str
    """The salted-login era's name, in its paths and logins (``noughtsandcrosses``)."""
    game_type: str
    """The GraphQL era's ``GameType`` (``NOUGHTS_AND_CROSSES``)."""

    def name_in(self, era: Era) -> str:
        """The game's name as a client of ``era`` writes it."""
        return self.path_name if era is Era.SALT else self.game_type


GAMES = (BattlebotGame("NOUGHTSANDCROSSES", "noughtsandcrosses", "NOUGHTS_AND_CROSSES"),
         BattlebotGame("NUMBERWANG", "numberwang", "NUMBERWANG"))
"""The games Battlebot's clients can play here."""


def game_named(name: str, era: Era) -> BattlebotGame | None:
    """The game a client of ``era`` names so (exactly, as Battlebot's server matched it)."""
    return next((game for game in GAMES if game.name_in(era) == name), None)


# -- credentials ------------------------------------------------------------------------------

def login_hash(pass_hash: str, salt: str) -> str:
    """What a salted-login client sends: sha256 hex of the pass_hash, then the salt
    (research a.4: both the client's and the server's code put the pass_hash first)."""
    return sha256_hex(pass_hash + salt)


# -- logins -----------------------------------------------------------------------------------

class LoginError(ValueError):
    """A login message that cannot be read, with a message for the client."""


@dataclass(frozen=True)
class Login:
    """A client's login message, read."""

    era: Era
    name: str
    """``bot_id`` (salted login) or ``name`` (GraphQL era)."""
    game: BattlebotGame
    credential: str
    """``login_hash`` (salted login) or ``password`` (GraphQL era)."""
    contest: str | None = None

    def reply(self) -> JSONObject:
        """The message that says the login succeeded (empty keys dropped, as Battlebot
        dropped them: no ``contest`` without a contest)."""
        reply: JSONObject = {"authentication": "OK"}
        if self.era is Era.SALT:
            reply.update({"bot_id": self.name, "game": self.game.path_name})
        else:
            reply.update({"gameType": self.game.game_type, "name": self.name})
        if self.contest:
            reply["contest"] = self.contest
        return reply


_LOGIN_KEYS = {Era.SALT: ("bot_id", "game", "login_hash"),
               Era.GRAPHQL: ("name", "gameType", "password")}

LONGEST_FIELD = 200
"""The longest name, game, credential or contest a login may carry."""

FAILED: JSONObject = {"authentication": "failed"}
"""Battlebot's answer to every failed login, after which it closes the socket."""


def read_login(message: JSON, era: Era) -> Login:
    """Read a login message of ``era``.

    :raises LoginError: for anything but an object with exactly the era's keys (and an
        optional ``contest``), each a non-empty string, and a game of the era.
    """
    if not isinstance(message, dict):
        raise LoginError(f"a login is a JSON object, not {shorten(message)}")
    keys = _LOGIN_KEYS[era]
    unknown = sorted(set(message) - {*keys, "contest"})
    if unknown:
        raise LoginError(f"a login has only the keys {', '.join(keys)} and contest; "
                         f"unknown: {', '.join(repr(key) for key in unknown[:5])}")
    values: list[str] = []
    for key in keys:
        value = message.get(key)
        if not isinstance(value, str) or not value:
            raise LoginError(f'the login\'s "{key}" must be a non-empty string, '
                             f"not {shorten(value)}")
        if len(value) > LONGEST_FIELD:
            raise LoginError(f'the login\'s "{key}" is longer than {LONGEST_FIELD} characters')
        values.append(value)
    contest = message.get("contest")
    if contest is not None and (not isinstance(contest, str) or len(contest) > LONGEST_FIELD):
        raise LoginError(f'"contest" must be a string of at most {LONGEST_FIELD} characters, '
                         f"not {shorten(contest)}")
    name, game_name, credential = values
    game = game_named(game_name, era)
    if game is None:
        known = ", ".join(g.name_in(era) for g in GAMES)
        raise LoginError(f"there is no game {shorten(game_name)} (there are {known})")
    return Login(era, name, game, credential, contest or None)


# -- game messages ------------------------------------------------------------------------------

def state_message(era: Era, view: JSONObject) -> JSONObject:
    """The state a client of ``era`` is sent, from the game's view (the salted-login
    era's shape, see :mod:`merknera.games.battlebot`).

    The GraphQL era's server sent ``bots`` for ``players``, ``waitingFor`` (the names that
    may move now) for ``nextPlayer``, and ``result`` (``null`` while the game goes on,
    then ``{victor, reason}``) for ``complete``, ``victor`` and ``reason``.
    """
    if era is Era.SALT:
        return view
    state: JSONObject = {key: value for key, value in view.items()
                         if key not in ("players", "nextPlayer", "complete", "victor", "reason")}
    state["bots"] = view.get("players")
    done = bool(view.get("complete"))
    state["waitingFor"] = [] if done else [view.get("nextPlayer")]
    state["result"] = ({"victor": view.get("victor"), "reason": view.get("reason")}
                       if done else None)
    return state


def is_to_move(view: JSONObject, name: str) -> bool:
    """Whether the view (salted-login shape) has ``name`` to move."""
    return not view.get("complete") and view.get("nextPlayer") == name


def is_complete(view: JSONObject) -> bool:
    """Whether the view (salted-login shape) is a finished game's."""
    return bool(view.get("complete"))


def turn_echo(era: Era, sent: JSONObject, name: str, time_ms: int, *, valid: bool,
              error: str | None = None) -> JSONObject:
    """The ``turn`` of an update: the keys the mover sent, then its name (``player``, or
    ``name`` in the GraphQL era) and the time its turn came (ms since the epoch), which
    overwrite any such keys it sent, then ``valid``.  An invalid turn also says why in
    ``error`` (the platform's addition: Battlebot said only ``valid: false``)."""
    turn: JSONObject = dict(sent)
    turn["player" if era is Era.SALT else "name"] = name
    turn["time"] = time_ms
    turn["valid"] = valid
    if error is not None:
        turn["error"] = error
    return turn


def update(era: Era, view: JSONObject, turn: JSONObject | None = None) -> JSONObject:
    """A whole update: the state, and the turn that led to it, if one did."""
    message: JSONObject = {"state": state_message(era, view)}
    if turn is not None:
        message["turn"] = turn
    return message

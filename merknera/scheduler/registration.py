"""``RegistrationService.Register``: validate, store the bot, schedule its round robin.

Everything a registration changes is written in one transaction, so a failed registration
stores nothing.  The messages are Merknera's (docs/bots/protocol.md section 2).
"""

from __future__ import annotations

import dataclasses
import math
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from merknera.endpoints import EndpointRefusedError, check_endpoint
from merknera.games import (
    JSON,
    AnyGame,
    JSONObject,
    Outcome,
    Termination,
    UnknownGameError,
    get_game,
)
from merknera.guard import AuthThrottle, Caller, RateLimitedError
from merknera.guard.known import KnownTokens
from merknera.guard.throttle import Buckets
from merknera.names import (
    BotName,
    NameRefusedError,
    check_bot_name,
    check_length,
    check_text,
    is_anonymous_name,
)
from merknera.protocol import jsonrpc, strict_json
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.excerpt import excerpt
from merknera.protocol.signing import new_secret
from merknera.refused import Limit, Refusals
from merknera.scheduler.core import Scheduler
from merknera.scheduler.roundrobin import registration_groups
from merknera.store import bots, games, logs, now, users
from merknera.store.bots import Bot, BotMetadata, BotStatus
from merknera.store.db import Connection

T = TypeVar("T")

IN_PROCESS = Caller(None)
"""The caller of a registration made by the platform's own process (benches, tests)."""

KNOWN_TOKEN_SECONDS = 30.0
"""How long a token found good spares the registrations that follow it their read of the
token (the transaction checks it again all the same)."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# (param, required, longest accepted: None for the bot name, whose rules are the names')
_FIELDS: tuple[tuple[str, bool, int | None], ...] = (
    ("token", True, 200),
    ("botname", True, None),
    ("botversion", True, 100),
    ("game", True, 50),
    ("rpcendpoint", True, 2000),
    ("programminglanguage", False, 100),
    ("website", False, 500),
    ("description", False, 2000),
    ("protocol", False, 50),
)


class RegistrationError(Exception):
    """A refused registration: a JSON-RPC error code and the message for the bot."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class RegistrationRequest:
    """The params of ``RegistrationService.Register``, checked for shape."""

    token: str
    botname: str
    botversion: str
    game: str
    rpcendpoint: str
    programminglanguage: str = ""
    website: str = ""
    description: str = ""
    protocol: BotProtocol = BotProtocol.JSONRPC
    """How the platform is to call the bot (``rpcendpoint`` is a base URL for REST)."""
    candidate: bool = False
    """A version on trial: it supersedes no version and plays only challenges and duels
    (docs/bots/protocol.md section 8)."""

    @classmethod
    def from_params(cls, params: JSONObject, *, socket: bool = False) -> RegistrationRequest:
        """Read the (lower-cased) params; ``socket``: of a registration on a bot's socket
        to ``/rpc/ws``, which has no ``rpcendpoint`` and speaks
        :attr:`BotProtocol.JSONRPC_SOCKET`.

        :raises RegistrationError: ``INVALID_PARAMS`` naming the param and what was wrong.
        """
        if socket:
            for name in ("rpcendpoint", "protocol"):
                if params.get(name) is not None:
                    raise RegistrationError(
                        jsonrpc.INVALID_PARAMS,
                        "A bot registering on its socket to /rpc/ws is called on that "
                        f'socket: send no "{name}"')
            params = {**params, "protocol": BotProtocol.JSONRPC_SOCKET.value}
        values: dict[str, str] = {}
        for name, required, longest in _FIELDS:
            if socket and name == "rpcendpoint":
                values[name] = ""
                continue
            value = params.get(name)
            if value is None:
                if required:
                    raise RegistrationError(jsonrpc.INVALID_PARAMS,
                                            f'The param "{name}" is required')
                value = ""
            if not isinstance(value, str):
                raise RegistrationError(
                    jsonrpc.INVALID_PARAMS,
                    f'The param "{name}" must be a string, got '
                    f'{excerpt(strict_json.dumps(value).decode(), 60)!r}')
            value = value.strip()
            if required and not value:
                raise RegistrationError(jsonrpc.INVALID_PARAMS, f'The param "{name}" is empty')
            if longest is None:
                value = _checked(lambda text: check_length(text, "bot name"), value)
            elif len(value) > longest:
                raise RegistrationError(jsonrpc.INVALID_PARAMS,
                                        f'The param "{name}" is longer than {longest} characters')
            # A new bot name and version get the finer checks of merknera.names (_register).
            if name in ("game", "token") and _CONTROL.search(value):
                raise RegistrationError(jsonrpc.INVALID_PARAMS,
                                        f'The param "{name}" contains control characters')
            values[name] = value
        protocol = values.pop("protocol") or BotProtocol.JSONRPC.value
        try:
            spoken = BotProtocol(protocol.lower())
        except ValueError:
            known = ", ".join(f'"{p.value}"' for p in BotProtocol)
            raise RegistrationError(
                jsonrpc.INVALID_PARAMS,
                f'The param "protocol" must be one of {known}, not {protocol[:50]!r}') from None
        if spoken is BotProtocol.JSONRPC_SOCKET and not socket:
            raise RegistrationError(
                jsonrpc.INVALID_PARAMS,
                f'A bot of protocol "{spoken.value}" registers on the WebSocket it opens '
                "to /rpc/ws, not here (docs/bots/protocol.md section 7)")
        if spoken.connects:
            raise RegistrationError(
                jsonrpc.INVALID_PARAMS,
                f'A bot of protocol "{spoken.value}" connects to the platform and registers '
                "at its Battlebot listener, not here (see the README)")
        candidate = params.get("candidate", False)
        if not isinstance(candidate, bool):
            raise RegistrationError(
                jsonrpc.INVALID_PARAMS,
                f'The param "candidate" must be true or false, got '
                f'{excerpt(strict_json.dumps(candidate).decode(), 60)!r}')
        return cls(**values, protocol=spoken, candidate=candidate)


@dataclass(frozen=True)
class Enrolment:
    """A registration that was made."""

    bot: Bot
    """The bot as registered."""
    reply: JSONObject
    """``RegistrationService.Register``'s result: ``{"message", "secret"}``."""


@dataclass(frozen=True)
class _Registered:
    """What a registration's transaction did."""

    bot: Bot
    message: str
    new_games: list[int]
    superseded_games: list[int]
    retired: list[int]
    created: bool = True
    """Whether a version was made (not the same version registered again)."""


class Registrar:
    """Registers bots and schedules their games."""

    def __init__(self, scheduler: Scheduler, auth: AuthThrottle, refusals: Refusals) -> None:
        self._scheduler = scheduler
        self._arena = scheduler.arena
        self._auth = auth
        self._refusals = refusals
        accounts = scheduler.arena.config.accounts
        self._registrations = Buckets(accounts.registration_burst, accounts.registration_interval)
        # An author registering a fleet sends one token again and again: its read, on a
        # reader thread, would be a good share of each registration while games are
        # played, and a registration holds up the next of a script that registers bots
        # one after another.
        self._known_tokens: KnownTokens[users.User] = KnownTokens(KNOWN_TOKEN_SECONDS)

    async def register(self, request: RegistrationRequest,
                       caller: Caller = IN_PROCESS) -> JSONObject:
        """Register a bot; returns ``{"message", "secret"}``.

        :raises RegistrationError: with Merknera's message for each refusal.
        :raises RateLimitedError: when the caller has sent too many wrong tokens, or the
            user has registered too often.
        """
        return (await self.enrol(request, caller)).reply

    async def enrol(self, request: RegistrationRequest,
                    caller: Caller = IN_PROCESS, *, round_robin: bool = True) -> Enrolment:
        """:meth:`register`, and the bot as registered; without ``round_robin``, a new
        version plays no games of the registration's round robin (a platform that
        schedules its games itself: ``merknera try``'s).

        :raises RegistrationError: as :meth:`register`.
        :raises RateLimitedError: as :meth:`register`.
        """
        arena = self._arena
        try:
            game = get_game(request.game)
        except UnknownGameError:
            raise RegistrationError(jsonrpc.UNKNOWN_GAME,
                                    f'Game "{request.game}" is not known') from None
        if not request.protocol.carries(game.mnemonic):
            carried = ", ".join(sorted(request.protocol.games or ()))
            raise RegistrationError(
                jsonrpc.INVALID_PARAMS,
                f'A bot of protocol "{request.protocol.value}" can play only {carried}, '
                f"not {game.mnemonic}")
        # The token is checked before the endpoint, so that a stranger learns nothing about
        # the networks this platform calls; the transaction checks it again.
        user = await self._auth.verify(caller.client, request.token, self._user_of)
        if user is None:
            raise _unknown_token(request.token)
        if user.suspended:
            raise _suspended(user)
        # Only registrations that make a version count: registering a version again (a bot
        # that connects out reconnecting, an endpoint that moved) schedules nothing.
        key = str(user.id)
        wait = self._registrations.take(key)
        taken = wait <= 0
        if not taken and not await arena.db.read(lambda conn: _registered(conn, request)):
            self._refusals.count(Limit.REGISTRATIONS)
            accounts = arena.config.accounts
            raise RateLimitedError(
                f'User "{user.name}" has made {accounts.registration_burst} registrations in '
                f"quick succession; after that one more is allowed every "
                f"{accounts.registration_interval:g} s: try again in {math.ceil(wait)} s", wait)
        try:
            if request.protocol is not BotProtocol.JSONRPC_SOCKET:
                await check_endpoint(request.rpcendpoint, arena.config.calls.networks)
        except EndpointRefusedError as exc:
            raise RegistrationError(jsonrpc.ENDPOINT_REFUSED,
                                    f"The rpcendpoint was refused: {exc}") from None
        if request.protocol.base_url and ("?" in request.rpcendpoint
                                          or "#" in request.rpcendpoint):
            # The API's paths go after the base URL: a query or a fragment would swallow them.
            raise RegistrationError(
                jsonrpc.ENDPOINT_REFUSED,
                f'The rpcendpoint of a "{request.protocol.value}" bot is its base URL, '
                "without a query (?...) or a fragment (#...)")
        secret, stamp = new_secret(), now()
        settings = arena.new_game_settings(game.mnemonic)
        limit = arena.config.accounts.max_bots_per_user
        try:
            done = await arena.db.transaction(
                lambda conn: _register(conn, request, game, secret, stamp, settings, limit,
                                       round_robin))
        except RegistrationError as exc:
            # After any refusal the token is read afresh: it may have been revoked, or its
            # user suspended, since it was read.
            self._known_tokens.forget(request.token)
            if exc.code == jsonrpc.UNKNOWN_TOKEN:
                self._auth.failed(caller.client)
            raise
        if taken and not done.created:
            self._registrations.refund(key)
        await self._settle(done)
        return Enrolment(done.bot, {"message": done.message, "secret": done.bot.secret})

    async def make_current(self, bot: Bot) -> Bot:
        """A candidate version becomes its name's current version (a duel's promotion):
        the others are superseded and its registration round robin begins; the version
        as it is now."""
        settings = self._arena.new_game_settings(bot.game)
        done = await self._arena.db.transaction(
            lambda conn: make_current_in(conn, bot, settings))
        await self._settle(done)
        return done.bot

    async def _settle(self, done: _Registered) -> None:
        """What a registration's transaction did, told to the presence and the scheduler."""
        self._arena.presence.retired(done.retired)
        self._arena.presence.registered(done.bot)
        await self._scheduler.cancel(done.superseded_games)
        self._scheduler.submit(done.new_games)

    async def _user_of(self, token: str) -> users.User | None:
        """The user of ``token``: from the tokens found good lately, else read."""
        user = self._known_tokens.get(token)
        if user is None:
            user = await users.find_user_by_token(self._arena.db, token)
            if user is not None and not user.suspended:
                # A suspension is kept from nobody: a suspended user is read every time.
                self._known_tokens.remember(token, user)
        return user


def _registered(conn: Connection, request: RegistrationRequest) -> bool:
    """Whether the request registers a version of its name again (a candidate registered
    without ``candidate`` is made current: that counts as a new version)."""
    return any(bot.version == request.botversion and not (bot.candidate and not request.candidate)
               for bot in bots.by_name(conn, request.botname))


def _unknown_token(token: str) -> RegistrationError:
    return RegistrationError(
        jsonrpc.UNKNOWN_TOKEN,
        f'User with Token "{token}" is not currently registered with Merknera')


def _suspended(user: users.User) -> RegistrationError:
    return RegistrationError(
        jsonrpc.NOT_ALLOWED,
        f'User "{user.name}" is suspended by an admin ({user.suspended_reason}); '
        "no bot of theirs may register")


REGISTRATION_LOCK = 0x6D726B67  # "mrkg"
"""The advisory lock that puts the registrations of every node in a line."""


def _register(conn: Connection, request: RegistrationRequest, game: AnyGame,
              secret: str, stamp: str, settings: dict[str, JSON],
              max_names: int, round_robin: bool) -> _Registered:
    """The registration's one transaction (on the store's writer thread)."""
    # Nodes on one PostgreSQL database register at the same time: one registration at a
    # time (a lock held to the end of the transaction), so that the checks below (the
    # name's owner, look-alike names, the owner's names) and the round robin see every
    # registration before them, as on SQLite's one writer.
    conn.dialect.serialize(conn, REGISTRATION_LOCK)
    user = users.user_for_token(conn, request.token)
    if user is None:
        raise _unknown_token(request.token)
    if user.suspended:
        raise _suspended(user)
    name, version = request.botname, request.botversion
    meta = BotMetadata(request.rpcendpoint, request.programminglanguage, request.website,
                       request.description, request.protocol)
    existing = bots.by_name(conn, name)
    if existing and existing[0].user_id != user.id:
        raise RegistrationError(
            jsonrpc.NAME_TAKEN,
            f'The bot name "{name}" has already been used by another user. '
            "All bot names must be unique, please use another name.")
    if not existing:
        # Names registered before these rules keep working; new ones must pass them.
        _check_new_name(conn, _checked(check_bot_name, name), user, max_names)
    same = next((b for b in existing if b.version == version), None)
    if same is not None and same.candidate and not request.candidate:
        return _make_current(conn, _reregister(conn, same, request, meta), game, stamp,
                             settings, round_robin=round_robin)
    if same is not None and request.candidate and not same.candidate:
        raise RegistrationError(
            jsonrpc.NOT_ALLOWED,
            f'"{name}" (version: {version}) is a current version already; a candidate is a '
            "new version")
    if same is not None:
        bot = _reregister(conn, same, request, meta)
        return _Registered(bot, (
            f'Hello, {name}. The version "{version}" of your bot is already registered. '
            "RPC Endpoint, Programming Language, Website and Description have been "
            "updated. No new games will be scheduled but your bot will be marked as "
            "online and if there are any outstanding games they will be continued."),
            [], [], [], created=False)
    _checked(lambda text: check_text(text, "bot version"), version)
    _refuse_if_banned(name, existing, "no new version of it may be registered")
    bot = bots.insert(conn, name=name, version=version, game=game.mnemonic, user_id=user.id,
                      meta=meta, secret=secret, candidate=request.candidate)
    if request.candidate:
        logs.add(conn, bot.id, f"Registered {name} (version: {version}) as a candidate")
        current = next((b.version for b in existing if not b.candidate
                        and b.status is not BotStatus.SUPERSEDED), None)
        kept = f"; version {current} stays current" if current is not None else ""
        return _Registered(bot, (
            f"Hello, {name} (version: {version}), candidate for {game.name}: it plays only "
            f"challenges and duels{kept}"), [], [], [])
    logs.add(conn, bot.id, f"Registered {name} (version: {version})")
    done = _make_current(conn, bot, game, stamp, settings, fresh=True,
                         round_robin=round_robin)
    message = (f"Hello, {name} (version: {version}), good luck with {game.name}!"
               if not existing else
               f"A new version of your bot has been registered as {name} "
               f"(version: {version}), good luck with {game.name}!")
    return dataclasses.replace(done, message=message)


def make_current_in(conn: Connection, bot: Bot, settings: dict[str, JSON]) -> _Registered:
    """A candidate version becomes its name's current version (a duel's promotion), inside
    a write transaction: :func:`_make_current`."""
    conn.dialect.serialize(conn, REGISTRATION_LOCK)
    return _make_current(conn, bot, get_game(bot.game), now(), settings)


def _make_current(conn: Connection, bot: Bot, game: AnyGame, stamp: str,
                  settings: dict[str, JSON], *, fresh: bool = False,
                  round_robin: bool = True) -> _Registered:
    """``bot`` (just inserted, ``fresh``, or a candidate) becomes its name's current
    version: the other versions but candidates are superseded and their unfinished games
    end without a result, and its registration round robin is scheduled."""
    name, version = bot.name, bot.version
    others = [b for b in bots.by_name(conn, name) if b.id != bot.id]
    # A candidate made current must not be a way around an admin's decision either.
    _refuse_if_banned(name, others, "no other version of it may be made current")
    retired = [b.id for b in others if b.status is not BotStatus.SUPERSEDED and not b.candidate]
    superseded_games = bots.supersede(conn, name, keep=bot.id) if others else []
    ended = Outcome.no_result(Termination.SUPERSEDED,
                              f'a new version of "{name}" ({version}) was registered'
                              if fresh else f'version {version} of "{name}" was made current')
    for game_id in superseded_games:
        lines = [(bot_id, f"Game ended without a result (gameId: {game_id}): {ended.detail}")
                 for bot_id in games.seated(conn, game_id)]
        games.finish_in(conn, game_id, ended, None, lines, stamp)
    for old in retired:
        logs.add(conn, old, f"Superseded by version {version}")
    if not fresh:
        bots.make_current(conn, bot.id)
        logs.add(conn, bot.id, f"Made current: {name} (version: {version})")
        bot = dataclasses.replace(bot, candidate=False)
    new_games = (_schedule_round_robin(conn, bot, game.max_seats, settings)
                 if round_robin else [])
    return _Registered(bot, (f"Hello, {name}. The candidate version {version} is now the "
                             f"current version, good luck with {game.name}!"),
                       new_games, superseded_games, retired)


def _refuse_if_banned(name: str, versions: list[Bot], refused: str) -> None:
    """Refuse (``refused`` says what) while an admin has disabled one of the ``versions``
    of ``name``: another version must not be a way around an admin's decision."""
    banned = next((b for b in versions if b.status is BotStatus.DISABLED
                   and b.disabled_by == "ADMIN"), None)
    if banned is not None:
        raise RegistrationError(
            jsonrpc.NOT_ALLOWED,
            f'"{name}" was disabled by an admin ({banned.disabled_reason}); {refused} '
            "until an admin enables it")


def _checked(check: Callable[[str], T], text: str) -> T:
    """``check(text)``, its refusal as an invalid param."""
    try:
        return check(text)
    except NameRefusedError as exc:
        raise RegistrationError(jsonrpc.INVALID_PARAMS, str(exc)) from None


def _check_new_name(conn: Connection, name: BotName, user: users.User,
                    max_names: int) -> None:
    """Refuse a new name that looks like a name in use, or one name too many."""
    if is_anonymous_name(name):
        raise RegistrationError(jsonrpc.NOT_ALLOWED, f'The bot name "{name.text}" is kept for '
                                "people who play without a name; choose another name")
    alike = bots.look_alikes(conn, name)
    theirs = next((b for b in alike if b.user_id != user.id), None)
    if theirs is not None:
        raise RegistrationError(
            jsonrpc.NAME_TAKEN,
            f'The bot name "{name.text}" is too like "{theirs.name}", which another user '
            "has. All bot names must be unique, please use another name.")
    if alike:
        raise RegistrationError(
            jsonrpc.NOT_ALLOWED,
            f'The bot name "{name.text}" is too like your bot "{alike[0].name}"; register '
            "a new version of that one, or choose a name that does not look like it")
    if bots.names_of(conn, user.id) >= max_names:
        raise RegistrationError(
            jsonrpc.NOT_ALLOWED,
            f'User "{user.name}" has registered {max_names} bot names, as many as a user '
            "may; register new versions of those")


def _reregister(conn: Connection, same: Bot, request: RegistrationRequest,
                meta: BotMetadata) -> Bot:
    if same.status is BotStatus.SUPERSEDED:
        raise RegistrationError(
            jsonrpc.NOT_ALLOWED,
            f'Version "{same.version}" of "{same.name}" has been superseded by a newer '
            "version; register a new version instead")
    if same.status is BotStatus.DISABLED and same.disabled_by == "ADMIN":
        raise RegistrationError(
            jsonrpc.NOT_ALLOWED,
            f'"{same.name}" (version: {same.version}) was disabled by an admin '
            f"({same.disabled_reason}); ask them to enable it")
    if same.game != request.game:
        raise RegistrationError(
            jsonrpc.NOT_ALLOWED,
            f'"{same.name}" (version: {same.version}) is registered for {same.game}, '
            f"not {request.game}; register a new version to change its game")
    if same.protocol is not request.protocol:
        # Its unfinished games would go on over the other wire, whose opening calls the
        # bot never had.
        raise RegistrationError(
            jsonrpc.NOT_ALLOWED,
            f'"{same.name}" (version: {same.version}) speaks protocol '
            f'"{same.protocol.value}", not "{request.protocol.value}"; register a new '
            "version to change its protocol")
    bot = bots.update_registration(conn, same.id, meta)
    where = f"endpoint {meta.endpoint}" if meta.endpoint else "on its socket to /rpc/ws"
    logs.add(conn, bot.id, f"Registered again: {where}")
    return bot


def _schedule_round_robin(conn: Connection, newcomer: Bot, max_seats: int,
                          settings: dict[str, JSON]) -> list[int]:
    # The stored status is read inside the transaction (one registration at a time, on
    # every node: see _register), so two bots registering at the same moment see each
    # other.  It means "answered a running node": see Presence.start.
    opponents = {b.id: b for b in bots.opponents(conn, newcomer.game, newcomer.name)}
    names = {**{b.id: b.name for b in opponents.values()}, newcomer.id: newcomer.name}
    seatings = registration_groups(newcomer.id, list(opponents), max_seats)
    created = games.create_many(
        conn, newcomer.game, [(secrets.randbits(63), seating) for seating in seatings], settings)
    logs.add_many(conn, [
        (bot_id, f"Scheduled game with {', '.join(names[o] for o in seating if o != bot_id)}. "
                 f"You are player {_ORDINALS[seat]} (gameId: {game_id})", game_id)
        for game_id, seating in zip(created, seatings, strict=True)
        for seat, bot_id in enumerate(seating)])
    return created


_ORDINALS = ("one", "two", "three", "four", "five", "six", "seven", "eight")

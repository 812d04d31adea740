"""``RegistrationService.Register``: validate, store the bot, schedule its round robin.

Everything a registration changes is written in one transaction, so a failed registration
stores nothing.  The messages are Merknera's (PROTOCOL.md section 2).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

import aiosqlite

from merknera.endpoints import EndpointRefusedError, check_endpoint
from merknera.games import JSONObject, UnknownGameError, get_game
from merknera.protocol import jsonrpc
from merknera.protocol.signing import new_secret
from merknera.scheduler.core import Scheduler
from merknera.scheduler.roundrobin import registration_pairings
from merknera.store import bots, games, logs, users
from merknera.store.bots import Bot, BotMetadata, BotStatus

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# (param, required, longest accepted)
_FIELDS: tuple[tuple[str, bool, int], ...] = (
    ("token", True, 200),
    ("botname", True, 100),
    ("botversion", True, 100),
    ("game", True, 50),
    ("rpcendpoint", True, 2000),
    ("programminglanguage", False, 100),
    ("website", False, 500),
    ("description", False, 2000),
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

    @classmethod
    def from_params(cls, params: JSONObject) -> RegistrationRequest:
        """Read the (lower-cased) params.

        :raises RegistrationError: ``INVALID_PARAMS`` naming the param and what was wrong.
        """
        values: dict[str, str] = {}
        for name, required, longest in _FIELDS:
            value = params.get(name)
            if value is None:
                if required:
                    raise RegistrationError(jsonrpc.INVALID_PARAMS,
                                            f'The param "{name}" is required')
                value = ""
            if not isinstance(value, str):
                raise RegistrationError(
                    jsonrpc.INVALID_PARAMS,
                    f'The param "{name}" must be a string, got {jsonrpc.dumps(value)[:60]!r}')
            value = value.strip()
            if required and not value:
                raise RegistrationError(jsonrpc.INVALID_PARAMS, f'The param "{name}" is empty')
            if len(value) > longest:
                raise RegistrationError(jsonrpc.INVALID_PARAMS,
                                        f'The param "{name}" is longer than {longest} characters')
            if name in ("botname", "botversion", "game", "token") and _CONTROL.search(value):
                raise RegistrationError(jsonrpc.INVALID_PARAMS,
                                        f'The param "{name}" contains control characters')
            values[name] = value
        return cls(**values)


class Registrar:
    """Registers bots and schedules their games."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self._arena = scheduler.arena

    async def register(self, request: RegistrationRequest) -> JSONObject:
        """Register a bot; returns ``{"message", "secret"}``.

        :raises RegistrationError: with Merknera's message for each refusal.
        """
        arena = self._arena
        try:
            game = get_game(request.game)
        except UnknownGameError:
            raise RegistrationError(jsonrpc.UNKNOWN_GAME,
                                    f'Game "{request.game}" is not known') from None
        unknown_token = RegistrationError(
            jsonrpc.UNKNOWN_TOKEN,
            f'User with Token "{request.token}" is not currently registered with Merknera')
        # The token is checked before the endpoint, so that a stranger learns nothing about
        # the networks this platform calls; it is checked again inside the transaction.
        if await users.find_user_by_token(arena.db, request.token) is None:
            raise unknown_token
        try:
            await check_endpoint(request.rpcendpoint, arena.config.networks)
        except EndpointRefusedError as exc:
            raise RegistrationError(jsonrpc.ENDPOINT_REFUSED,
                                    f"The rpcendpoint was refused: {exc}") from None
        meta = BotMetadata(request.rpcendpoint, request.programminglanguage, request.website,
                           request.description)
        name, version = request.botname, request.botversion
        new_games: list[int] = []
        superseded_games: list[int] = []
        retired: list[int] = []
        async with arena.db.write() as conn:
            user = await users.user_for_token(conn, request.token)
            if user is None:
                raise unknown_token
            existing = await bots.by_name(conn, name)
            if existing and existing[0].user_id != user.id:
                raise RegistrationError(
                    jsonrpc.NAME_TAKEN,
                    f'The bot name "{name}" has already been used by another user. '
                    "All bot names must be unique, please use another name.")
            same = next((b for b in existing if b.version == version), None)
            if same is not None:
                bot = await self._reregister(conn, same, request, meta)
                message = (
                    f'Hello, {name}. The version "{version}" of your bot is already registered. '
                    "RPC Endpoint, Programming Language, Website and Description have been "
                    "updated. No new games will be scheduled but your bot will be marked as "
                    "online and if there are any outstanding games they will be continued.")
            else:
                if existing:
                    retired = [b.id for b in existing if b.status is not BotStatus.SUPERSEDED]
                    superseded_games = await bots.supersede(conn, name)
                    for old in existing:
                        if old.id in retired:
                            await logs.add(conn, old.id,
                                           f"Superseded by version {version}; "
                                           f"{len(superseded_games)} unfinished games ended "
                                           "without a result")
                bot = await bots.insert(conn, name=name, version=version, game=game.mnemonic,
                                        user_id=user.id, meta=meta, secret=new_secret())
                await logs.add(conn, bot.id, f"Registered {name} (version: {version})")
                new_games = await self._schedule_round_robin(conn, bot)
                message = (
                    f"Hello, {name} (version: {version}), good luck with {game.name}!"
                    if not existing else
                    f"A new version of your bot has been registered as {name} "
                    f"(version: {version}), good luck with {game.name}!")
        arena.presence.retired(retired)
        arena.presence.registered(bot)
        await self._scheduler.cancel(superseded_games)
        self._scheduler.submit(new_games)
        return {"message": message, "secret": bot.secret}

    async def _reregister(self, conn: aiosqlite.Connection, same: Bot,
                          request: RegistrationRequest, meta: BotMetadata) -> Bot:
        if same.status is BotStatus.SUPERSEDED:
            raise RegistrationError(
                jsonrpc.NOT_ALLOWED,
                f'Version "{same.version}" of "{same.name}" has been superseded by a newer '
                "version; register a new version instead")
        if same.game != request.game:
            raise RegistrationError(
                jsonrpc.NOT_ALLOWED,
                f'"{same.name}" (version: {same.version}) is registered for {same.game}, '
                f"not {request.game}; register a new version to change its game")
        bot = await bots.update_registration(conn, same.id, meta)
        await logs.add(conn, bot.id, f"Registered again: endpoint {meta.endpoint}")
        return bot

    async def _schedule_round_robin(self, conn: aiosqlite.Connection,
                                    newcomer: Bot) -> list[int]:
        opponents = {b.id: b for b in await bots.opponents(conn, newcomer.game, newcomer.name)}
        created = []
        names = {**{b.id: b.name for b in opponents.values()}, newcomer.id: newcomer.name}
        for seating in registration_pairings(newcomer.id, list(opponents)):
            game_id = await games.create(conn, newcomer.game, secrets.randbits(63), seating)
            created.append(game_id)
            for seat, bot_id in enumerate(seating):
                other = names[seating[1 - seat]]
                await logs.add(conn, bot_id, f"Scheduled game with {other}. You are player "
                                             f"{'one' if seat == 0 else 'two'} (gameId: {game_id})",
                               game_id)
        return created

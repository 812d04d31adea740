"""Battlebot bots' registration and login: platform bots with a Battlebot credential.

A Battlebot bot is a platform bot (one namespace with every other bot) of protocol
``battlebot-salt`` or ``battlebot-graphql``, version ``"1"`` (Battlebot had no versions: a
name is registered once), with no endpoint.  Its owner is a platform user without tokens,
made at the first registration that names it, in a namespace of its own: the owner
``alice`` is the user ``alice (Battlebot)``, so that an anonymous registration never takes
the name of an account somebody makes later (a Battlebot registration carries no proof of
who sends it).  Battlebot's own answers give the owner as it was sent.

How the credentials are kept (neither is ever shown again, by any API or page):

* **salted login**: the client proves it knows ``pass_hash`` by sending
  ``sha256(pass_hash + salt)`` for a salt it is sent; checking that needs ``pass_hash``
  itself, so it is kept as it is, in the bot's ``secret`` (as a JSON-RPC bot's signing
  secret is kept), and compared with a hash made for each login;
* **GraphQL era**: the client sends its password, so only its SHA-256 is kept (it is 256
  random bits: nothing for a slow password hash to protect), and a login's is compared.

Both comparisons take constant time (:func:`~merknera.protocol.signing.same_secret`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from merknera.gateways.battlebot import wire
from merknera.gateways.battlebot.wire import BattlebotGame, Era, Login
from merknera.names import NameRefusedError, check_bot_name, check_name, is_anonymous_name
from merknera.protocol.signing import same_secret, sha256_hex
from merknera.scheduler.arena import Arena
from merknera.store import Database, bots, logs, now, users
from merknera.store.bots import Bot, BotMetadata, BotStatus
from merknera.store.db import Connection

VERSION = "1"
"""The version of every Battlebot bot (its protocol has none)."""
OWNER_SUFFIX = " (Battlebot)"
"""What sets a Battlebot owner's user name apart from accounts' names."""


def shown_owner(user_name: str) -> str:
    """The owner as Battlebot's answers give it: the name sent at registration."""
    return user_name.removesuffix(OWNER_SUFFIX)


class RegistrationRefusedError(ValueError):
    """A registration that was refused, with Battlebot's message (or the platform's, where
    Battlebot had none)."""


@dataclass(frozen=True)
class Registered:
    """A new Battlebot bot, and its credential, shown only now."""

    bot: Bot
    credential: str
    """``pass_hash`` (salted login) or ``password`` (GraphQL era)."""


async def register(arena: Arena, era: Era, game: BattlebotGame, name: str,
                   owner: str) -> Registered:
    """Register a Battlebot bot (offline until it connects).

    :raises RegistrationRefusedError: with the reason.
    """
    salted = era is Era.SALT
    if not name:
        raise RegistrationRefusedError("No ID set" if salted else "A name is required")
    if not owner:
        raise RegistrationRefusedError("No owner set" if salted else "An owner is required")
    try:
        checked = check_bot_name(name)
        check_name(owner, "owner name")
    except NameRefusedError as exc:
        raise RegistrationRefusedError(str(exc)) from None
    if is_anonymous_name(checked):
        raise RegistrationRefusedError(f'The name "{name}" is kept for people who play without '
                                       "a name")
    credential = secrets.token_hex(32)
    kept = credential if era is Era.SALT else sha256_hex(credential)
    limit = arena.config.accounts.max_bots_per_user

    def work(conn: Connection) -> Bot:
        if bots.by_name(conn, name):
            raise RegistrationRefusedError("Bot already registered with that name")
        alike = bots.look_alikes(conn, checked)
        if alike:
            raise RegistrationRefusedError(f'The name "{name}" is too like "{alike[0].name}", '
                                      "which is registered already; choose another")
        user_id = _owner(conn, owner, limit)
        bot = bots.insert(conn, name=name, version=VERSION, game=game.mnemonic,
                          user_id=user_id, meta=BotMetadata("", protocol=era.protocol),
                          secret=kept, status=BotStatus.OFFLINE)
        logs.add(conn, bot.id, f"Registered {name} for {game.path_name} over Battlebot's "
                               f"{'salted-login' if era is Era.SALT else 'GraphQL'} protocol; "
                               "it plays when it connects")
        return bot

    bot = await arena.db.transaction(work)
    arena.presence.restored(bot)
    return Registered(bot, credential)


def _owner(conn: Connection, owner: str, limit: int) -> int:
    """The id of the tokenless user of the owner ``owner``, made if there is none."""
    user = users.by_name(conn, owner + OWNER_SUFFIX)
    if user is None:
        return users.insert_user(conn, owner + OWNER_SUFFIX, now())
    if users.has_tokens(conn, user.id):
        # An account was made with the name (by an admin, who may name users anything).
        raise RegistrationRefusedError(
            f'The owner "{owner}" is an account of this platform, whose bots register with '
            "its token; choose another owner name")
    if user.suspended:
        raise RegistrationRefusedError(f'The owner "{owner}" is suspended by an admin '
                                  f"({user.suspended_reason})")
    if bots.names_of(conn, user.id) >= limit:
        raise RegistrationRefusedError(f'The owner "{owner}" has registered {limit} bot names, '
                                  "as many as an owner may")
    return user.id


class LoginRefusedError(ValueError):
    """A login that failed, and why (for the client: Battlebot said only "failed")."""


async def log_in(db: Database, login: Login, salt: str | None) -> Bot:
    """The bot a login is for, if its credential is right.

    :param salt: the salt the client was sent (salted login); None in the GraphQL era.
    :raises LoginRefusedError: for an unknown bot, a wrong credential, or a bot an admin
        disabled (one the fault rule disabled comes back by logging in, as a JSON-RPC
        bot does by registering again).
    """
    def read(conn: Connection) -> tuple[Bot | None, str | None]:
        found = next((b for b in reversed(bots.by_name(conn, login.name))
                      if b.protocol is login.era.protocol), None)
        owner = None if found is None else users.by_name(conn, found.owner)
        return found, None if owner is None else owner.suspended_reason

    bot, suspended = await db.read(read)
    if bot is None or bot.game != login.game.mnemonic:
        # Compared anyway, so that an unknown name takes as long as a wrong credential.
        same_secret(login.credential, "0" * 64)
        raise LoginRefusedError(f"there is no {login.game.name_in(login.era)} bot "
                           f"{login.name!r} of this protocol")
    expected = (wire.login_hash(bot.secret, salt or "") if login.era is Era.SALT
                else bot.secret)
    given = login.credential if login.era is Era.SALT else sha256_hex(login.credential)
    if not same_secret(given, expected):
        raise LoginRefusedError("wrong " + ("login_hash" if login.era is Era.SALT else "password"))
    if bot.status is BotStatus.DISABLED and bot.disabled_by == "ADMIN":
        raise LoginRefusedError(f"{bot.name} is disabled by an admin ({bot.disabled_reason})")
    if suspended is not None:
        raise LoginRefusedError(f"the owner of {bot.name} is suspended by an admin "
                                f"({suspended})")
    return bot

"""Guests: the players of gateways whose seeds had no accounts (MebiPenny hexagons players,
Kalaha boards, people playing in the browser).

A guest is a platform bot of protocol ``guest`` owned by one tokenless user,
:data:`GUEST_OWNER` (a name no account can take: user names have no parentheses).  A
player who gives a name plays as the guest bot of that name (made at its first game, one
version per game: ``bob`` of ``hexagons``), and is rated and ranked like any bot.  The name
is refused while another owner's bot holds it, or one spelt like it (:mod:`merknera.names`),
and it is bound to a secret the first time it is played (:func:`guest`), so that nobody
else can play, and lose, under it.  A player who gives none plays as :data:`ANONYMOUS`,
whose games rate nobody.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from merknera.names import (
    ANONYMOUS,
    CLAIM_SEPARATOR,
    Claim,
    NameRefusedError,
    check_bot_name,
    is_anonymous_name,
)
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.signing import new_secret, same_secret, sha256_hex
from merknera.refused import RefusedError
from merknera.scheduler.arena import Arena
from merknera.store import Database, bots, competition, logs, now, users
from merknera.store.bots import Bot, BotMetadata, BotStatus
from merknera.store.db import Connection

GUEST_OWNER = "(guests)"
"""The user who owns every guest."""
SECRET_HEADER = "X-Guest-Secret"  # noqa: S105 (a header's name)
"""The response header that tells a player the secret made for its name
(:attr:`Guest.new_secret`)."""


class GuestRefusedError(ValueError):
    """A name a guest may not play under, and why."""


class GuestNameTakenError(GuestRefusedError):
    """A well-formed name that may not be used now: another owner's bot holds it (or one
    spelt like it), it is kept for the anonymous, or an admin disabled it."""


class GuestSecretError(GuestNameTakenError):
    """A name played with a secret that is not its secret: a guess, counted as a wrong
    token is (:meth:`merknera.gateways.tables.Tables.guest`)."""


class GuestThrottledError(GuestRefusedError):
    """A new name refused for now: the client's address made as many as it may."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclasses.dataclass(frozen=True)
class Guest:
    """The guest bot a claim plays as, and the secret its name was bound to just now."""

    bot: Bot
    new_secret: str | None = None
    """The secret made for a name played for the first time without one: the player is
    told it once (only its hash is kept), and needs it to play under the name again."""

    @property
    def headers(self) -> dict[str, str]:
        """The headers that tell the player :attr:`new_secret` (none without one), with
        whatever answer follows: the name is bound to it whether or not the game the
        player asked for begins."""
        return {} if self.new_secret is None else {SECRET_HEADER: self.new_secret}


async def guest(arena: Arena, claim: Claim, game: str,
                admit: Callable[[], None] = lambda: None) -> Guest:
    """The guest bot that plays ``game`` as the claim's name (:data:`ANONYMOUS` for none),
    made if there is none yet (``admit`` is called first, and may refuse: a client without
    an account must not make names without end).

    A name is bound to a secret the first time it is played, the player's own or, if it
    gave none, one made for it (:attr:`Guest.new_secret`); from then on the name plays
    only with that secret, in every game.  A name played before secrets were kept is bound
    at its next game if it has no rating to lose; one that has is kept for its player, who
    gets a secret from the operator (:func:`give_secret`).  The anonymous guest is
    nobody's, and has no secret.

    :raises GuestRefusedError: for a name that is not a valid bot name, or that another
        owner's bot holds (or one spelt like it), or that an admin disabled, or a wrong
        or missing secret; :class:`GuestThrottledError` when ``admit`` refuses a new name.
    """
    try:
        claim = claim.resolved()
        name = claim.name
        wanted = ANONYMOUS if name is None else name
        checked = check_bot_name(wanted)
    except NameRefusedError as exc:
        raise GuestRefusedError(str(exc)) from None
    wanted = checked.text
    if name is not None and is_anonymous_name(checked):  # spelt any way
        raise GuestNameTakenError(f'the name "{ANONYMOUS}" is kept for players who give none')
    version = game.lower()
    made_secret = None if name is None or claim.secret is not None else new_secret()
    given = claim.secret if claim.secret is not None else made_secret

    def work(conn: Connection) -> tuple[Bot, bool, bool]:
        owner = users.by_name(conn, GUEST_OWNER)
        owner_id = owner.id if owner is not None else users.insert_user(conn, GUEST_OWNER,
                                                                        now())
        held = bots.by_name(conn, wanted)
        # The anonymous guest is nobody's name: a bot that took it first does not bar it.
        others = [bot for bot in held if bot.owner != GUEST_OWNER] if name is not None else []
        if others:
            raise GuestNameTakenError(f'the name "{wanted}" belongs to a bot of '
                                    f"{others[0].owner}; choose another name")
        alike = bots.look_alikes(conn, checked) if name is not None else []
        if alike:
            raise GuestNameTakenError(f'the name "{wanted}" is too like "{alike[0].name}", '
                                    "which plays here already; choose another name")
        own = [bot for bot in held if bot.owner == GUEST_OWNER]
        mine = next((bot for bot in own if bot.version == version), None)
        # A name an admin disabled is disabled in every game (as a registered name is in
        # every version); the anonymous guest game by game.
        barred = next((bot for bot in (own if name is not None else [mine])
                       if bot is not None and bot.status is BotStatus.DISABLED), None)
        if barred is not None:
            raise GuestNameTakenError(f'"{wanted}" is disabled by an admin '
                                    f"({barred.disabled_reason})")
        kept = ""
        bound = False
        if name is not None:
            assert given is not None
            kept = next((bot.secret for bot in own if bot.secret), "")
            if kept and not same_secret(sha256_hex(given), kept):
                if claim.secret is None:
                    raise GuestNameTakenError(
                        f'the name "{wanted}" is kept by the player who first played under '
                        f'it: give its secret, as "{wanted}{CLAIM_SEPARATOR}<secret>", or '
                        "choose another name")
                raise GuestSecretError(f'the secret given for "{wanted}" is not its secret; '
                                       "choose another name")
            if not kept:
                if competition.ratings_of(conn, [bot.id for bot in own]):
                    raise GuestNameTakenError(
                        f'the name "{wanted}" was rated before names had secrets: its player '
                        "gets its secret from the operator of this arena")
                kept, bound = sha256_hex(given), True
                bots.set_secret(conn, [bot.id for bot in own], kept)
        if mine is not None:
            return dataclasses.replace(mine, secret=kept), False, bound
        admit()
        bot = bots.insert(conn, name=wanted, version=version, game=game, user_id=owner_id,
                          meta=BotMetadata("", protocol=BotProtocol.GUEST), secret=kept,
                          status=BotStatus.OFFLINE)
        logs.add(conn, bot.id, f"{wanted} joined {game} as a guest (no account): it plays the "
                               "games it joins at a gateway, or in the browser")
        return bot, True, bound

    bot, made, bound = await arena.db.transaction(work)
    if made or arena.presence.bot(bot.id) is None:
        arena.presence.restored(bot)
    return Guest(bot, made_secret if bound else None)


def telling(refusal: RefusedError, player: Guest) -> RefusedError:
    """``refusal``, telling the player the secret made for its name if one was
    (:attr:`Guest.headers`)."""
    refusal.headers.update(player.headers)
    return refusal


async def give_secret(db: Database, name: str) -> str:
    """A new secret for the guest name ``name``, bound to every version of it (replacing
    any it had): for the operator to give its player (``merknera guest secret``), when the
    name was rated before names had secrets, or its secret was lost.

    :raises GuestRefusedError: when no guest plays under that name.
    """
    secret = new_secret()

    def work(conn: Connection) -> None:
        own = [bot for bot in bots.by_name(conn, name) if bot.owner == GUEST_OWNER]
        if not own or name == ANONYMOUS:
            raise GuestRefusedError(f'no guest plays under the name "{name}"')
        bots.set_secret(conn, [bot.id for bot in own], sha256_hex(secret))

    await db.transaction(work)
    return secret


def is_anonymous(bot: Bot) -> bool:
    """Whether ``bot`` is the guest of players who gave no name."""
    return bot.protocol is BotProtocol.GUEST and bot.name == ANONYMOUS

"""Guests: the players of gateways whose seeds had no accounts (MebiPenny hexagons players,
Kalaha boards, people playing in the browser).

A guest is a platform bot of protocol ``guest`` owned by one tokenless user,
:data:`GUEST_OWNER` (a name no account can take: user names have no parentheses).  A
player who gives a name plays as the guest bot of that name (made at its first game, one
version per game: ``bob`` of ``hexagons``), and is rated and ranked like any bot.  The name
is refused while another owner's bot holds it, or one spelt like it (:mod:`merknera.names`).
A player who gives none plays as :data:`ANONYMOUS`, whose games rate nobody.
"""

from __future__ import annotations

from collections.abc import Callable

from merknera.names import ANONYMOUS, NameRefusedError, check_bot_name, is_anonymous_name
from merknera.protocol.bot_protocols import BotProtocol
from merknera.scheduler.arena import Arena
from merknera.store import bots, logs, now, users
from merknera.store.bots import Bot, BotMetadata, BotStatus
from merknera.store.db import Connection

GUEST_OWNER = "(guests)"
"""The user who owns every guest."""


class GuestRefusedError(ValueError):
    """A name a guest may not play under, and why."""


class GuestNameTakenError(GuestRefusedError):
    """A well-formed name that may not be used now: another owner's bot holds it (or one
    spelt like it), it is kept for the anonymous, or an admin disabled it."""


class GuestThrottledError(GuestRefusedError):
    """A new name refused for now: the client's address made as many as it may."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


async def guest(arena: Arena, name: str | None, game: str,
                admit: Callable[[], None] = lambda: None) -> Bot:
    """The guest bot that plays ``game`` as ``name`` (:data:`ANONYMOUS` for None), made if
    there is none yet (``admit`` is called first, and may refuse: a client without an
    account must not make names without end).

    :raises GuestRefusedError: for a name that is not a valid bot name, or that another
        owner's bot holds (or one spelt like it), or that an admin disabled;
        :class:`GuestThrottledError` when ``admit`` refuses a new name.
    """
    wanted = ANONYMOUS if name is None else name.strip()
    try:
        checked = check_bot_name(wanted)
    except NameRefusedError as exc:
        raise GuestRefusedError(str(exc)) from None
    if name is not None and is_anonymous_name(checked):  # spelt any way
        raise GuestNameTakenError(f'the name "{ANONYMOUS}" is kept for players who give none')
    version = game.lower()

    def work(conn: Connection) -> tuple[Bot, bool]:
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
        if mine is not None:
            return mine, False
        admit()
        bot = bots.insert(conn, name=wanted, version=version, game=game, user_id=owner_id,
                          meta=BotMetadata("", protocol=BotProtocol.GUEST), secret="",
                          status=BotStatus.OFFLINE)
        logs.add(conn, bot.id, f"{wanted} joined {game} as a guest (no account): it plays the "
                               "games it joins at a gateway, or in the browser")
        return bot, True

    bot, made = await arena.db.transaction(work)
    if made or arena.presence.bot(bot.id) is None:
        arena.presence.restored(bot)
    return bot


def is_anonymous(bot: Bot) -> bool:
    """Whether ``bot`` is the guest of players who gave no name."""
    return bot.protocol is BotProtocol.GUEST and bot.name == ANONYMOUS

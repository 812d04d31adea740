"""Guests (merknera.gateways.guests) on a started platform with a real SQLite store: the
guest bot a name makes and reuses, the names refused (another owner's, one spelt like it,
``anonymous``, an admin-disabled one), and the anonymous guest."""

from __future__ import annotations

import pytest

from merknera.gateways.guests import (
    GUEST_OWNER,
    GuestRefusedError,
    guest,
    is_anonymous,
)
from merknera.names import ANONYMOUS
from merknera.protocol.bot_protocols import BotProtocol
from merknera.scheduler.arena import Arena as SchedulerArena
from merknera.store import bots
from merknera.store.bots import Bot, BotStatus
from tests.support import Arena

GAME = "KALAHA"
ENDPOINT = "http://127.0.0.1:9/rpc"
"""Where nobody listens: a registered bot that is never called here."""


def arena_of(arena: Arena) -> SchedulerArena:
    return arena.platform.scheduler.arena


async def guests_named(arena: Arena, name: str) -> list[tuple[int, str, str, str]]:
    """(id, version, game, status) of the guest bots of a name, from the store."""
    rows = await arena.platform.db.fetchall(
        "SELECT bots.id, bots.version, bots.game, bots.status FROM bots JOIN users "
        "ON users.id = bots.user_id WHERE bots.name = ? AND users.name = ? ORDER BY bots.id",
        (name, GUEST_OWNER))
    return [(row[0], row[1], row[2], row[3]) for row in rows]


async def register(arena: Arena, name: str, game: str = GAME) -> None:
    """Alice registers a bot of ``name``."""
    reply = await arena.register(name, ENDPOINT, game=game)
    assert "result" in reply, reply


async def refused(arena: Arena, name: str | None, game: str = GAME) -> str:
    """The refusal of ``name`` as a guest's, which must store nothing."""
    before = await arena.counts()
    with pytest.raises(GuestRefusedError) as caught:
        await guest(arena_of(arena), name, game)
    after = await arena.counts()
    # Refused, nothing of it stored (the guests' owner may be made once, on the way).
    assert {k: v for k, v in after.items() if k != "users"} == \
        {k: v for k, v in before.items() if k != "users"}, (before, after)
    return str(caught.value)


def check_guest(bot: Bot, name: str, game: str = GAME) -> None:
    assert (bot.name, bot.version, bot.game, bot.owner, bot.protocol) == (
        name, game.lower(), game, GUEST_OWNER, BotProtocol.GUEST), bot
    assert bot.endpoint == "" and bot.secret == "", bot


async def test_a_name_makes_a_guest_once_and_then_plays_as_it(arena: Arena) -> None:
    scheduler = arena_of(arena)
    made = await guest(scheduler, "Petra", GAME)
    check_guest(made, "Petra")
    assert not is_anonymous(made)
    assert scheduler.presence.bot(made.id) is not None  # known to the platform, to play
    again = await guest(scheduler, " Petra ", GAME)  # the ends' spaces are no part of it
    assert again.id == made.id
    assert await guests_named(arena, "Petra") == [(made.id, "kalaha", GAME, "OFFLINE")]
    joined = await arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM bot_log WHERE bot_id = ? AND message LIKE '%joined%'", (made.id,))
    assert joined == 1
    # Another game: a version of the same name of its own, the same owner.
    other = await guest(scheduler, "Petra", "HEXAGONS")
    check_guest(other, "Petra", "HEXAGONS")
    assert other.id != made.id and other.user_id == made.user_id
    assert [row[0] for row in await guests_named(arena, "Petra")] == [made.id, other.id]
    assert await arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM users WHERE name = ?", (GUEST_OWNER,)) == 1


async def test_a_name_another_owner_holds_is_refused(arena: Arena) -> None:
    await register(arena, "Bob")
    for game in (GAME, "HEXAGONS"):  # whatever game the bot of that name plays
        message = await refused(arena, "Bob", game)
        assert message == 'the name "Bob" belongs to a bot of alice; choose another name'
    assert await guests_named(arena, "Bob") == []


@pytest.mark.parametrize("alike", ["bob", "BOB", "\uff22\uff4f\uff42"])  # fullwidth Bob
async def test_a_name_spelt_like_another_owners_is_refused(arena: Arena, alike: str) -> None:
    await register(arena, "Bob")
    message = await refused(arena, alike)
    assert message == (f'the name "{alike}" is too like "Bob", which plays here already; '
                       "choose another name")


async def test_a_name_spelt_like_a_guests_is_refused(arena: Arena) -> None:
    await guest(arena_of(arena), "Petra", GAME)
    message = await refused(arena, "PETRA")
    assert 'is too like "Petra"' in message


@pytest.mark.parametrize("name", ["anonymous", "Anonymous", " ANONYMOUS ",
                                  "\uff41\uff4e\uff4f\uff4e\uff59\uff4d\uff4f\uff55\uff53"])
async def test_anonymous_is_no_name_to_choose(arena: Arena, name: str) -> None:
    message = await refused(arena, name)
    assert "is kept for players who give none" in message, message
    # Also once the anonymous guest exists.
    await guest(arena_of(arena), None, GAME)
    assert "is kept for players who give none" in await refused(arena, name)


@pytest.mark.parametrize("name", ["", "   ", "bad\u200bname", "mixed \u0430lice"])
async def test_a_name_that_is_no_bot_name_is_refused(arena: Arena, name: str) -> None:
    message = await refused(arena, name)
    assert message.startswith("The bot name"), message


async def test_no_name_plays_as_the_anonymous_guest(arena: Arena) -> None:
    scheduler = arena_of(arena)
    anonymous = await guest(scheduler, None, GAME)
    check_guest(anonymous, ANONYMOUS)
    assert is_anonymous(anonymous)
    assert scheduler.presence.bot(anonymous.id) is not None
    assert (await guest(scheduler, None, GAME)).id == anonymous.id
    hexagons = await guest(scheduler, None, "HEXAGONS")
    assert is_anonymous(hexagons) and hexagons.id != anonymous.id
    assert [row[0] for row in await guests_named(arena, ANONYMOUS)] == [anonymous.id,
                                                                        hexagons.id]


async def test_a_registered_bot_called_anonymous_is_not_the_anonymous_guest(
        arena: Arena) -> None:
    # A user named a bot "anonymous" before the name was kept for people (an older store;
    # registration refuses it now): boards without names must still be played (as the
    # guest), and the user's bot is not it.
    db = arena.platform.db
    alice = await db.fetchval("SELECT id FROM users WHERE name = 'alice'")
    await db.transaction(lambda conn: bots.insert(
        conn, name=ANONYMOUS, version="1", game=GAME, user_id=alice,
        meta=bots.BotMetadata("http://127.0.0.1:9/rpc"), secret="s"))
    anonymous = await guest(arena_of(arena), None, GAME)
    check_guest(anonymous, ANONYMOUS)
    assert is_anonymous(anonymous)
    users_bot = await arena.platform.db.fetchval(
        "SELECT bots.id FROM bots JOIN users ON users.id = bots.user_id "
        "WHERE bots.name = ? AND users.name = 'alice'", (ANONYMOUS,))
    assert users_bot is not None and users_bot != anonymous.id


async def test_an_admin_disabled_guest_is_refused_in_every_game(arena: Arena) -> None:
    scheduler = arena_of(arena)
    rude = await guest(scheduler, "Rude", GAME)
    assert await arena.platform.disable_bot(rude.id, "an insult")
    assert await guests_named(arena, "Rude") == [(rude.id, "kalaha", GAME, "DISABLED")]
    for game in (GAME, "HEXAGONS"):
        message = await refused(arena, "Rude", game)
        assert message == '"Rude" is disabled by an admin (an insult)', message
    assert await guests_named(arena, "Rude") == [(rude.id, "kalaha", GAME, "DISABLED")]
    # Enabled again, the name plays again, as the same guest.
    assert await arena.platform.enable_bot(rude.id)
    assert (await guest(scheduler, "Rude", GAME)).id == rude.id
    assert (await guests_named(arena, "Rude"))[0][3] != BotStatus.DISABLED.value

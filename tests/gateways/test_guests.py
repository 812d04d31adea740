"""Guests (merknera.gateways.guests) on a started platform with a real SQLite store: the
guest bot a name makes and reuses, the secret a name is bound to, the names refused
(another owner's, one spelt like it, ``anonymous``, an admin-disabled one, a name played
without its secret), and the anonymous guest."""

from __future__ import annotations

import asyncio

import pytest

from merknera import cli
from merknera.gateways.guests import (
    GUEST_OWNER,
    Guest,
    GuestNameTakenError,
    GuestRefusedError,
    GuestSecretError,
    GuestThrottledError,
    give_secret,
    guest,
    is_anonymous,
)
from merknera.names import ANONYMOUS, Claim
from merknera.protocol.bot_protocols import BotProtocol
from merknera.protocol.signing import sha256_hex
from merknera.scheduler.arena import Arena as SchedulerArena
from merknera.store import bots
from merknera.store.bots import Bot, BotStatus
from tests.support import Arena

GAME = "KALAHA"
SECRET = "petra's secret"
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


async def play_as(arena: Arena, name: str | None, game: str = GAME,
                  secret: str | None = SECRET) -> Bot:
    """The guest that plays as ``name`` with ``secret`` (none for no name)."""
    found = await guest(arena_of(arena), Claim(name, secret if name is not None else None),
                        game)
    assert found.new_secret is None  # the player gave its own
    return found.bot


async def refused(arena: Arena, name: str | None, game: str = GAME,
                  secret: str | None = SECRET) -> str:
    """The refusal of ``name`` as a guest's, which must store nothing."""
    before = await arena.counts()
    with pytest.raises(GuestRefusedError) as caught:
        await guest(arena_of(arena), Claim(name, secret), game)
    after = await arena.counts()
    # Refused, nothing of it stored (the guests' owner may be made once, on the way).
    assert {k: v for k, v in after.items() if k != "users"} == \
        {k: v for k, v in before.items() if k != "users"}, (before, after)
    return str(caught.value)


def check_guest(bot: Bot, name: str, game: str = GAME, secret: str | None = SECRET) -> None:
    assert (bot.name, bot.version, bot.game, bot.owner, bot.protocol) == (
        name, game.lower(), game, GUEST_OWNER, BotProtocol.GUEST), bot
    assert bot.endpoint == "", bot
    assert bot.secret == ("" if secret is None else sha256_hex(secret)), bot


async def test_a_name_makes_a_guest_once_and_then_plays_as_it(arena: Arena) -> None:
    scheduler = arena_of(arena)
    made = await play_as(arena, "Petra")
    check_guest(made, "Petra")
    assert not is_anonymous(made)
    assert scheduler.presence.bot(made.id) is not None  # known to the platform, to play
    again = await play_as(arena, " Petra ")  # the ends' spaces are no part of it
    assert again.id == made.id
    assert await guests_named(arena, "Petra") == [(made.id, "kalaha", GAME, "OFFLINE")]
    joined = await arena.platform.db.fetchval(
        "SELECT COUNT(*) FROM bot_log WHERE bot_id = ? AND message LIKE '%joined%'", (made.id,))
    assert joined == 1
    # Another game: a version of the same name of its own, the same owner.
    other = await play_as(arena, "Petra", "HEXAGONS")
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
    await play_as(arena, "Petra")
    message = await refused(arena, "PETRA")
    assert 'is too like "Petra"' in message


@pytest.mark.parametrize("name", ["anonymous", "Anonymous", " ANONYMOUS ",
                                  "\uff41\uff4e\uff4f\uff4e\uff59\uff4d\uff4f\uff55\uff53"])
async def test_anonymous_is_no_name_to_choose(arena: Arena, name: str) -> None:
    message = await refused(arena, name)
    assert "is kept for players who give none" in message, message
    # Also once the anonymous guest exists.
    await play_as(arena, None)
    assert "is kept for players who give none" in await refused(arena, name)


@pytest.mark.parametrize("name", ["", "   ", "bad\u200bname", "mixed \u0430lice"])
async def test_a_name_that_is_no_bot_name_is_refused(arena: Arena, name: str) -> None:
    message = await refused(arena, name)
    assert message.startswith("The bot name"), message


async def test_no_name_plays_as_the_anonymous_guest(arena: Arena) -> None:
    scheduler = arena_of(arena)
    anonymous = await play_as(arena, None)
    check_guest(anonymous, ANONYMOUS, secret=None)
    assert is_anonymous(anonymous)
    assert scheduler.presence.bot(anonymous.id) is not None
    assert (await play_as(arena, None)).id == anonymous.id
    hexagons = await play_as(arena, None, "HEXAGONS")
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
    anonymous = await play_as(arena, None)
    check_guest(anonymous, ANONYMOUS, secret=None)
    assert is_anonymous(anonymous)
    users_bot = await arena.platform.db.fetchval(
        "SELECT bots.id FROM bots JOIN users ON users.id = bots.user_id "
        "WHERE bots.name = ? AND users.name = 'alice'", (ANONYMOUS,))
    assert users_bot is not None and users_bot != anonymous.id


async def test_an_admin_disabled_guest_is_refused_in_every_game(arena: Arena) -> None:
    rude = await play_as(arena, "Rude")
    assert await arena.platform.disable_bot(rude.id, "an insult")
    assert await guests_named(arena, "Rude") == [(rude.id, "kalaha", GAME, "DISABLED")]
    for game in (GAME, "HEXAGONS"):
        message = await refused(arena, "Rude", game)
        assert message == '"Rude" is disabled by an admin (an insult)', message
    assert await guests_named(arena, "Rude") == [(rude.id, "kalaha", GAME, "DISABLED")]
    # Enabled again, the name plays again, as the same guest.
    assert await arena.platform.enable_bot(rude.id)
    assert (await play_as(arena, "Rude")).id == rude.id
    assert (await guests_named(arena, "Rude"))[0][3] != BotStatus.DISABLED.value


async def secrets_of(arena: Arena, name: str) -> list[str]:
    rows = await arena.platform.db.fetchall(
        "SELECT secret FROM bots WHERE name = ? ORDER BY id", (name,))
    return [row[0] for row in rows]


async def test_a_name_played_without_a_secret_is_bound_to_one_made_for_it(
        arena: Arena) -> None:
    scheduler = arena_of(arena)
    first = await guest(scheduler, Claim("Nadia"), GAME)
    made = first.new_secret
    assert made is not None and len(made) >= 20
    check_guest(first.bot, "Nadia", secret=made)  # only its hash is kept
    # Nobody plays under the name without it: not the first player without its secret,
    # nor anybody with a guess, in this game or another.
    for game in (GAME, "HEXAGONS"):
        assert await refused(arena, "Nadia", game, secret=None) == (
            'the name "Nadia" is kept by the player who first played under it: give its '
            'secret, as "Nadia#<secret>", or choose another name')
        assert await refused(arena, "Nadia", game, secret="a good guess") == (
            'the secret given for "Nadia" is not its secret; choose another name')
    # With it, on its own or after the name: the same guest, and nothing new to tell.
    for claim in (Claim("Nadia", made), Claim(f"Nadia#{made}"), Claim(f" Nadia #{made}")):
        again = await guest(scheduler, claim, GAME)
        assert again == Guest(first.bot), claim
    other = await guest(scheduler, Claim(f"Nadia#{made}"), "HEXAGONS")
    check_guest(other.bot, "Nadia", "HEXAGONS", secret=made)
    assert other.new_secret is None


async def test_a_name_from_before_secrets_is_bound_at_its_next_game(arena: Arena) -> None:
    # Guests played before names had secrets: the name's versions have none, and the
    # first player to come back with it binds every version, if it has no rating to lose.
    scheduler = arena_of(arena)
    old = await play_as(arena, "Olaf")
    hexagons = await play_as(arena, "Olaf", "HEXAGONS")
    await arena.platform.db.write_one("UPDATE bots SET secret = '' WHERE name = 'Olaf'", ())
    came_back = await guest(scheduler, Claim("Olaf", "mine now"), GAME)
    assert (came_back.bot.id, came_back.new_secret) == (old.id, None)
    check_guest(came_back.bot, "Olaf", secret="mine now")
    assert await secrets_of(arena, "Olaf") == [sha256_hex("mine now")] * 2
    assert (await guest(scheduler, Claim("Olaf#mine now"), "HEXAGONS")).bot.id == hexagons.id
    with pytest.raises(GuestNameTakenError):
        await guest(scheduler, Claim("Olaf", SECRET), "HEXAGONS")


@pytest.mark.parametrize(("claim", "why"), [
    (Claim("Petra#"), "A guest's secret is 8 to 200 characters long, not 0"),
    (Claim("Petra", "short"), "A guest's secret is 8 to 200 characters long, not 5"),
    (Claim("Petra", "x" * 201), "A guest's secret is 8 to 200 characters long, not 201"),
    (Claim("Petra#one is one", "two is two"),
     "The secret is given twice (after the name's # and on its own), and not the same"),
], ids=["empty after #", "too short", "too long", "two secrets"])
async def test_a_secret_that_is_no_secret_is_refused(arena: Arena, claim: Claim,
                                                     why: str) -> None:
    assert await refused(arena, claim.name, secret=claim.secret) == why


async def test_a_rated_name_from_before_secrets_is_bound_by_the_operator(
        arena: Arena, capsys: pytest.CaptureFixture[str]) -> None:
    # Anybody could otherwise take a rated guest's name at its next game, and lose with it.
    scheduler = arena_of(arena)
    star = await play_as(arena, "Star")
    await arena.platform.db.write_one("UPDATE bots SET secret = '' WHERE name = 'Star'", ())
    await arena.platform.db.write_one(
        "INSERT INTO ratings (bot_id, game, mu, sigma, rated_games, updated_at) "
        "VALUES (?, ?, 30.0, 5.0, 12, '2026-11-01T00:00:00.000Z')", (star.id, GAME))
    for claim in (Claim("Star"), Claim("Star", "first come")):
        assert await refused(arena, claim.name, secret=claim.secret) == (
            'the name "Star" was rated before names had secrets: its player gets its secret '
            "from the operator of this arena")
    secret = await give_secret(arena.platform.db, "Star")
    assert (await guest(scheduler, Claim(f"Star#{secret}"), GAME)).bot.id == star.id
    # The operator's command does the same, for a lost secret too.
    with pytest.raises(GuestRefusedError, match='no guest plays under the name "Nobody"'):
        await give_secret(arena.platform.db, "Nobody")
    assert await asyncio.to_thread(
        cli.main, ["guest", "secret", "Star", "--db", arena.platform.config.store.db]) == 0
    printed = capsys.readouterr().out.splitlines()[-1]
    assert await secrets_of(arena, "Star") == [sha256_hex(printed)]
    assert await refused(arena, "Star", secret=secret) == (
        'the secret given for "Star" is not its secret; choose another name')


async def test_wrong_secrets_slow_their_sender_down(arena: Arena) -> None:
    # A secret is guessed a guess at a time: each wrong one counts as a wrong token does.
    tables, burst = arena.platform.tables, arena.platform.config.limits.auth_failure_burst
    await tables.guest(Claim("Guarded", SECRET), GAME, "127.0.0.9")
    for _ in range(burst):
        with pytest.raises(GuestSecretError):
            await tables.guest(Claim("Guarded", "a wrong guess"), GAME, "127.0.0.9")
    # While it must wait, the guesser is refused whatever it sends; nobody else is.
    with pytest.raises(GuestThrottledError, match="too many wrong secrets"):
        await tables.guest(Claim("Guarded", SECRET), GAME, "127.0.0.9")
    assert (await tables.guest(Claim("Guarded", SECRET), GAME, "127.0.0.8")).bot.name == \
        "Guarded"
    # A missing secret is no guess: it does not count.
    for _ in range(burst + 1):
        with pytest.raises(GuestNameTakenError, match="give its secret"):
            await tables.guest(Claim("Guarded"), GAME, "127.0.0.7")

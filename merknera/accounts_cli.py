"""``merknera user ...`` and ``merknera bot ...``: users, their tokens and their bots, from
the command line.

Each command changes the store, beside any platform serving it, through the same operations
as the admin API (:mod:`merknera.store.discipline`, :mod:`merknera.store.users`).  Refusals
read the store, so they hold at once: a revoked token or a suspended user's token is refused
from the moment the command ends, and a disabled bot gets no new game.  A serving platform
also forgets a disabled bot, and pings an enabled one, at its next look at the store
(every third of ``lease_seconds``).

``list`` prints aligned columns, or with ``--json`` one JSON array (times as stored: ISO
8601 UTC).
"""

from __future__ import annotations

import functools
import json
import sys
import unicodedata
from collections.abc import Sequence

from merknera.clock import readable
from merknera.store import Database, bots, discipline, users
from merknera.store.bots import Bot, BotStatus
from merknera.store.db import redacted

TOKEN_DESCRIPTION = "issued with merknera user token"  # noqa: S105  # not a secret
ROTATED_DESCRIPTION = "issued with merknera user token rotate"


def _fail(message: str) -> int:
    print(f"merknera: {message}", file=sys.stderr)
    return 1


def _ids(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _width(text: str) -> int:
    """Columns ``text`` takes in a terminal (wide East Asian characters take two)."""
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def columns(headers: Sequence[str], rows: Sequence[Sequence[str | int]]) -> str:
    """Rows under their headers in aligned columns (numbers to the right), two spaces
    apart."""
    cells = [[str(value) for value in row] for row in rows]
    widths = [max([_width(h), *(_width(row[i]) for row in cells)])
              for i, h in enumerate(headers)]
    numeric = [bool(rows) and all(isinstance(row[i], int) for row in rows)
               for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        padded = [" " * (w - _width(v)) + v if right else v + " " * (w - _width(v))
                  for v, w, right in zip(values, widths, numeric, strict=True)]
        return "  ".join(padded).rstrip()

    return "\n".join([line(headers), *(line(row) for row in cells)])


# -- users ------------------------------------------------------------------------------------


async def user_add(db_path: str, name: str) -> int:
    """``merknera user add NAME``: a new user with one token, printed last."""
    db = await Database.open(db_path)
    try:
        user, token = await users.create_user(db, name)
    except users.UserExistsError as exc:
        return _fail(f"{exc}; `merknera user token {name}` issues another token")
    finally:
        await db.close()
    print(f'Created user "{user.name}" (id {user.id}) in {redacted(db_path)}.')
    print("Its API token follows; it is shown only now (the store keeps a hash):")
    print(token)
    return 0


async def user_token(db_path: str, name: str, description: str) -> int:
    """``merknera user token NAME``: another token for a user, printed last."""
    db = await Database.open(db_path)
    try:
        token = await users.issue_token(db, name, description)
    except users.UnknownUserError as exc:
        return _fail(str(exc))
    finally:
        await db.close()
    print(f'A new API token for "{name}" follows; it is shown only now:')
    print(token)
    return 0


async def token_rotate(db_path: str, name: str) -> int:
    """``merknera user token rotate NAME``: the user's tokens revoked, one new one printed
    last."""
    db = await Database.open(db_path)
    try:
        token, revoked = await users.rotate_token(db, name, ROTATED_DESCRIPTION)
    except (users.UnknownUserError, users.NoTokenError) as exc:
        return _fail(str(exc))
    finally:
        await db.close()
    print(f'Revoked {_plural(revoked, "token")} of "{name}": refused from now on.')
    print(f'The new API token for "{name}" follows; it is shown only now:')
    print(token)
    return 0


async def user_list(db_path: str, as_json: bool) -> int:
    """``merknera user list [--json]``: every user, their current tokens and bots."""
    db = await Database.open(db_path)
    try:
        found = await users.summaries(db)
    finally:
        await db.close()
    if as_json:
        print(json.dumps([{
            "id": s.user.id, "name": s.user.name, "created_at": s.user.created_at,
            "tokens": s.tokens, "bots": s.bots, "suspended": s.user.suspended,
            "suspended_at": s.user.suspended_at, "suspended_reason": s.user.suspended_reason,
        } for s in found], indent=2, ensure_ascii=False))
        return 0
    print(columns(["ID", "NAME", "TOKENS", "BOTS", "CREATED", "SUSPENDED"], [
        [s.user.id, s.user.name, s.tokens, s.bots, readable(s.user.created_at),
         "" if not s.user.suspended else
         f"since {readable(s.user.suspended_at or '')}: {s.user.suspended_reason}"]
        for s in found]))
    return 0


async def user_suspend(db_path: str, name: str, reason: str) -> int:
    """``merknera user suspend NAME``: the admin API's suspension."""
    db = await Database.open(db_path)
    try:
        before = await users.get_user(db, name)
        done = await discipline.suspend(db, name, reason)
    finally:
        await db.close()
    if before is None or done is None:
        return _fail(f'there is no user named "{name}"')
    print(f'Suspended user "{name}": {reason}' + (
        f" (suspended already since {readable(before.suspended_at or '')}: "
        f"{before.suspended_reason})" if before.suspended else "") + ".")
    count = len(done.bots_disabled)
    disabled = (f"{_plural(count, 'current bot')} of theirs {'is' if count == 1 else 'are'} "
                "disabled "
                f"(ids {_ids(done.bots_disabled)}; "
                f"{_plural(len(done.games_ended), 'unfinished game')} ended without a "
                "result)" if done.bots_disabled else "they have no current bot to disable")
    print(f"Their token is refused on /rpc and the API, and {disabled}. "
          f"`merknera user unsuspend {name}` lifts it.")
    return 0


async def user_unsuspend(db_path: str, name: str) -> int:
    """``merknera user unsuspend NAME``: the admin API's lifting of a suspension."""
    db = await Database.open(db_path)
    try:
        before = await users.get_user(db, name)
        if before is None:
            return _fail(f'there is no user named "{name}"')
        if not before.suspended:
            print(f'User "{name}" is not suspended; nothing changed.')
            return 0
        back = await discipline.unsuspend(db, name)
    finally:
        await db.close()
    if back is None:
        return _fail(f'there is no user named "{name}"')
    enabled = (f"{_plural(len(back), 'bot')} enabled again (ids {_ids([b.id for b in back])}): "
               "they play once they answer a ping" if back else "no bot of theirs to enable")
    print(f'Lifted the suspension of user "{name}"; {enabled}.')
    return 0


# -- bots -------------------------------------------------------------------------------------


async def bot_list(db_path: str, game: str | None, superseded: bool, as_json: bool) -> int:
    """``merknera bot list [--game G] [--all] [--json]``."""
    db = await Database.open(db_path)
    try:
        found = await bots.listing(db, game, superseded=superseded)
    finally:
        await db.close()
    if as_json:
        print(json.dumps([{
            "id": b.id, "name": b.name, "version": b.version, "game": b.game,
            "owner": b.owner, "protocol": b.protocol.value, "status": b.status.value,
            "endpoint": b.endpoint, "created_at": b.created_at,
            "last_seen_at": b.last_seen_at, "disabled_by": b.disabled_by,
            "disabled_reason": b.disabled_reason,
        } for b in found], indent=2, ensure_ascii=False))
        return 0
    print(columns(["ID", "NAME", "VERSION", "GAME", "OWNER", "PROTOCOL", "STATUS", "LAST SEEN",
                   "DISABLED"], [
        [b.id, b.name, b.version, b.game, b.owner, b.protocol.value, b.status.value,
         readable(b.last_seen_at) if b.last_seen_at else "never",
         f"by {b.disabled_by}: {b.disabled_reason}" if b.status is BotStatus.DISABLED else ""]
        for b in found]))
    return 0


async def _the_bot(db: Database, name: str) -> Bot | str:
    """The version of ``name`` that is not superseded, or why there is none to act on."""
    versions = await db.read(functools.partial(bots.by_name, name=name))
    live = [bot for bot in versions if bot.status is not BotStatus.SUPERSEDED]
    if not versions:
        return f'there is no bot named "{name}"'
    if not live:
        return f'every version of the bot "{name}" is superseded'
    if len(live) > 1:  # one name plays one game at a time; older stores may differ
        return (f'the bot name "{name}" has {len(live)} versions in play (ids '
                f"{_ids([b.id for b in live])}): disable them through the admin API by id")
    return live[0]


async def bot_disable(db_path: str, name: str, reason: str) -> int:
    """``merknera bot disable NAME``: the admin API's disabling, by the bot's name."""
    db = await Database.open(db_path)
    try:
        bot = await _the_bot(db, name)
        if isinstance(bot, str):
            return _fail(bot)
        ended = await discipline.disable(db, bot.id, "ADMIN", reason)
    finally:
        await db.close()
    said = f'bot "{bot.name}" {bot.version} (id {bot.id}, {bot.game})'
    if ended is None:
        return _fail(f"{said} is disabled already (by {bot.disabled_by}: "
                     f"{bot.disabled_reason})")
    if bot.status is BotStatus.DISABLED:
        print(f"Disabled {said} for itself: {reason}. It was out with its suspended owner; "
              "now it stays out when the suspension is lifted.")
        return 0
    print(f"Disabled {said}: {reason}.")
    print(f"{_plural(len(ended), 'unfinished game')} ended without a result"
          + (f" (ids {_ids(ended)})" if ended else "")
          + f"; `merknera bot enable {name}` puts it back.")
    return 0


async def bot_enable(db_path: str, name: str) -> int:
    """``merknera bot enable NAME``: the admin API's enabling, by the bot's name."""
    db = await Database.open(db_path)
    try:
        bot = await _the_bot(db, name)
        if isinstance(bot, str):
            return _fail(bot)
        enabled = await discipline.enable(db, bot.id)
    finally:
        await db.close()
    said = f'bot "{bot.name}" {bot.version} (id {bot.id}, {bot.game})'
    if enabled is None:
        return _fail(f"{said} is not disabled (it is {bot.status.value})")
    print(f"Enabled {said}: it plays again once it answers a ping.")
    return 0

"""Bots: one row per (name, version), its endpoint, metadata, secret and liveness."""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass

from merknera.names import BotName, name_key, name_shape
from merknera.protocol.bot_protocols import BotProtocol
from merknera.store.db import Connection, Database, Row, now


class BotStatus(enum.Enum):
    """Where a bot version stands."""

    ONLINE = "ONLINE"
    OFFLINE = "OFFLINE"
    SUPERSEDED = "SUPERSEDED"
    """A newer version of the same name was registered."""
    DISABLED = "DISABLED"
    """Taken out of play by an admin or by the fault rule."""


@dataclass(frozen=True)
class Bot:
    """One registered bot version."""

    id: int
    name: str
    version: str
    game: str
    user_id: int
    owner: str
    endpoint: str
    language: str
    website: str
    description: str
    status: BotStatus
    secret: str
    created_at: str
    last_seen_at: str | None
    disabled_by: str | None = None
    """ADMIN or FAULTS for a disabled bot."""
    disabled_reason: str | None = None
    protocol: BotProtocol = BotProtocol.JSONRPC
    """How the platform reaches the bot (its carrier: :mod:`merknera.seats`)."""
    self_name: str | None = None
    """The name the bot gives itself, where its protocol asks (Squelch's ``/bot/info``)."""
    candidate: bool = False
    """A version on trial: it superseded no version and plays only challenges and duels
    until it is made current."""


@dataclass(frozen=True)
class BotMetadata:
    """What a bot says about itself at registration."""

    endpoint: str
    language: str = ""
    website: str = ""
    description: str = ""
    protocol: BotProtocol = BotProtocol.JSONRPC


_SELECT = "SELECT bots.*, users.name AS owner FROM bots JOIN users ON users.id = bots.user_id"


def bot_from_row(row: Row) -> Bot:
    """A Bot from a row of ``_SELECT``."""
    return Bot(
        id=row["id"], name=row["name"], version=row["version"], game=row["game"],
        user_id=row["user_id"], owner=row["owner"], endpoint=row["endpoint"],
        language=row["language"], website=row["website"], description=row["description"],
        status=BotStatus(row["status"]), secret=row["secret"], created_at=row["created_at"],
        last_seen_at=row["last_seen_at"], disabled_by=row["disabled_by"],
        disabled_reason=row["disabled_reason"], protocol=BotProtocol(row["protocol"]),
        self_name=row["self_name"], candidate=bool(row["candidate"]),
    )


def by_name(conn: Connection, name: str) -> list[Bot]:
    """Every version registered under a name, oldest first."""
    cursor = conn.execute(f"{_SELECT} WHERE bots.name = ? ORDER BY bots.id", (name,))
    return [bot_from_row(row) for row in cursor]


def look_alikes(conn: Connection, name: BotName) -> list[Bot]:
    """Bots whose names are the same name as ``name`` but spelt otherwise (their key or
    their shape is ``name``'s: :mod:`merknera.names`), oldest first."""
    cursor = conn.execute(
        f"{_SELECT} WHERE (bots.name_key = ? OR bots.name_shape = ?) AND bots.name != ? "
        "ORDER BY bots.id", (name.key, name.shape, name.text))
    return [bot_from_row(row) for row in cursor]


def names_of(conn: Connection, user_id: int) -> int:
    """How many bot names a user has registered."""
    found: int = conn.execute("SELECT COUNT(DISTINCT name) FROM bots WHERE user_id = ?",
                              (user_id,)).fetchone()[0]
    return found


def insert(conn: Connection, *, name: str, version: str, game: str,
           user_id: int, meta: BotMetadata, secret: str,
           status: BotStatus = BotStatus.ONLINE, candidate: bool = False) -> Bot:
    """Add a new bot version, online unless told otherwise (inside a write transaction)."""
    stamp = now()
    cursor = conn.execute(
        "INSERT INTO bots (name, name_key, name_shape, version, game, user_id, endpoint, "
        "language, website, description, protocol, status, secret, created_at, "
        "last_seen_at, candidate) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "RETURNING id",
        (name, name_key(name), name_shape(name), version, game, user_id, meta.endpoint,
         meta.language, meta.website, meta.description, meta.protocol.value, status.value,
         secret, stamp, stamp if status is BotStatus.ONLINE else None, int(candidate)))
    bot_id = int(cursor.fetchone()[0])
    assert bot_id is not None
    return _reread(conn, bot_id)


def set_secret(conn: Connection, bot_ids: Sequence[int], secret: str) -> None:
    """Keep ``secret`` for these bots (a guest name's versions, when the name is bound)."""
    conn.executemany("UPDATE bots SET secret = ? WHERE id = ?",
                     [(secret, bot_id) for bot_id in bot_ids])


def _reread(conn: Connection, bot_id: int) -> Bot:
    found = by_id(conn, bot_id)
    assert found is not None
    return found


def by_id(conn: Connection, bot_id: int) -> Bot | None:
    """One bot version by id."""
    row = conn.execute(f"{_SELECT} WHERE bots.id = ?", (bot_id,)).fetchone()
    return None if row is None else bot_from_row(row)


def update_registration(conn: Connection, bot_id: int, meta: BotMetadata) -> Bot:
    """Re-registration of the same version: new endpoint and metadata, and online again.

    A disabled bot stays disabled only until its owner registers it again.
    """
    conn.execute(
        "UPDATE bots SET endpoint = ?, language = ?, website = ?, description = ?, "
        "status = 'ONLINE', last_seen_at = ?, disabled_by = NULL, disabled_reason = NULL, "
        "fault_reset_at = CASE WHEN status = 'DISABLED' THEN ? ELSE fault_reset_at END "
        "WHERE id = ?",
        (meta.endpoint, meta.language, meta.website, meta.description, now(), now(), bot_id))
    return _reread(conn, bot_id)


def supersede(conn: Connection, name: str, keep: int | None = None) -> list[int]:
    """Mark every version of ``name`` superseded but its candidates (and ``keep``, a
    candidate being made current); returns the ids of their unfinished games (which the
    caller ends)."""
    game_ids = [row[0] for row in conn.execute(
        "SELECT DISTINCT games.id FROM games JOIN seats ON seats.game_id = games.id "
        "JOIN bots ON bots.id = seats.bot_id WHERE bots.name = ? AND bots.candidate = 0 "
        "AND bots.id IS DISTINCT FROM ? AND games.status != 'FINISHED' ORDER BY games.id",
        (name, keep))]
    conn.execute("UPDATE bots SET status = 'SUPERSEDED' WHERE name = ? AND candidate = 0 "
                 "AND id IS DISTINCT FROM ? AND status != 'SUPERSEDED'", (name, keep))
    return game_ids


def make_current(conn: Connection, bot_id: int) -> None:
    """A candidate version becomes the current one (its name's others are superseded by
    the caller, :func:`supersede`)."""
    conn.execute("UPDATE bots SET candidate = 0 WHERE id = ?", (bot_id,))


def opponents(conn: Connection, game: str, exclude_name: str) -> list[Bot]:
    """Every other current bot of a game stored as online (no candidate), by id."""
    cursor = conn.execute(
        f"{_SELECT} WHERE bots.game = ? AND bots.status = 'ONLINE' AND bots.name != ? "
        "AND bots.protocol != 'guest' AND bots.candidate = 0 ORDER BY bots.id",
        (game, exclude_name))
    return [bot_from_row(row) for row in cursor]


async def get(db: Database, bot_id: int) -> Bot | None:
    """One bot version by id."""
    row = await db.fetchone(f"{_SELECT} WHERE bots.id = ?", (bot_id,))
    return None if row is None else bot_from_row(row)


async def get_many(db: Database, bot_ids: Sequence[int]) -> dict[int, Bot]:
    """Bot versions by id (the ones that exist)."""
    rows = await db.fetchall(f"{_SELECT} WHERE bots.id IN {db.dialect.ids()}",
                             (json.dumps(list(bot_ids)),))
    return {row["id"]: bot_from_row(row) for row in rows}


async def listing(db: Database, game: str | None = None, *,
                  superseded: bool = False) -> list[Bot]:
    """Bot versions by game, name and id: those that are not superseded (current or
    disabled), or every version with ``superseded``; of one game if ``game`` is given."""
    where, params = [], []
    if not superseded:
        where.append("bots.status != 'SUPERSEDED'")
    if game is not None:
        where.append("bots.game = ?")
        params.append(game)
    rows = await db.fetchall(f"{_SELECT}{' WHERE ' if where else ''}{' AND '.join(where)} "
                             "ORDER BY bots.game, bots.name, bots.id", tuple(params))
    return [bot_from_row(row) for row in rows]


async def current(db: Database) -> list[Bot]:
    """Every bot that can still play: neither superseded nor disabled."""
    rows = await db.fetchall(f"{_SELECT} WHERE bots.status IN ('ONLINE', 'OFFLINE') "
                             "ORDER BY bots.id")
    return [bot_from_row(row) for row in rows]


async def set_liveness(db: Database, bot_id: int, online: bool) -> bool:
    """Mark a current bot online (and seen now) or offline; returns whether it changed.

    Superseded and disabled bots are left as they are.
    """
    if online:
        changed = await db.write_one(
            "UPDATE bots SET status = 'ONLINE', last_seen_at = ? "
            "WHERE id = ? AND status IN ('ONLINE', 'OFFLINE')", (now(), bot_id))
    else:
        changed = await db.write_one(
            "UPDATE bots SET status = 'OFFLINE' WHERE id = ? AND status = 'ONLINE'", (bot_id,))
    return changed > 0


async def set_self_name(db: Database, bot_id: int, name: str) -> None:
    """Keep the name a bot gives itself (checked and shortened by the caller)."""
    await db.write_one("UPDATE bots SET self_name = ? WHERE id = ? "
                       "AND self_name IS DISTINCT FROM ?", (name, bot_id, name))


async def mark_all_offline(db: Database) -> None:
    """Mark every online bot offline (at start-up, until each answers a ping)."""
    await db.write_one("UPDATE bots SET status = 'OFFLINE' WHERE status = 'ONLINE'")


async def touch(db: Database, bot_ids: list[int]) -> None:
    """Record that these bots were heard from just now."""
    if bot_ids:
        await db.write_one(f"UPDATE bots SET last_seen_at = ? WHERE id IN {db.dialect.ids()}",
                           (now(), json.dumps(bot_ids)))


def disable(conn: Connection, bot_id: int, by: str, reason: str,
            with_owner: bool = False) -> list[int]:
    """Take a current bot out of play; returns its unfinished games (the caller ends them).

    ``by`` is ADMIN or FAULTS: re-registering re-enables only a bot the fault rule took out.
    ``with_owner``: it goes because its owner was suspended, and comes back with them.
    """
    conn.execute("UPDATE bots SET status = 'DISABLED', disabled_by = ?, disabled_reason = ?, "
                 "disabled_with_owner = ? WHERE id = ? AND status IN ('ONLINE', 'OFFLINE')",
                 (by, reason, int(with_owner), bot_id))
    return [row[0] for row in conn.execute(
        "SELECT games.id FROM games JOIN seats ON seats.game_id = games.id "
        "WHERE seats.bot_id = ? AND games.status != 'FINISHED' ORDER BY games.id", (bot_id,))]


def enable(conn: Connection, bot_id: int) -> Bot | None:
    """Put a disabled bot back (offline until it answers a ping); None if it was not
    disabled."""
    changed = conn.execute("UPDATE bots SET status = 'OFFLINE', disabled_by = NULL, "
                           "disabled_reason = NULL, disabled_with_owner = 0, "
                           "fault_reset_at = ? WHERE id = ? AND status = 'DISABLED'",
                           (now(), bot_id)).rowcount
    return _reread(conn, bot_id) if changed else None


def current_of(conn: Connection, user_id: int) -> list[int]:
    """The ids of a user's current bots (neither superseded nor disabled)."""
    return [row[0] for row in conn.execute(
        "SELECT id FROM bots WHERE user_id = ? AND status IN ('ONLINE', 'OFFLINE') "
        "ORDER BY id", (user_id,))]


def disabled_with_owner(conn: Connection, user_id: int) -> list[int]:
    """The ids of a user's bots disabled when the user was suspended."""
    return [row[0] for row in conn.execute(
        "SELECT id FROM bots WHERE user_id = ? AND status = 'DISABLED' "
        "AND disabled_with_owner = 1 ORDER BY id", (user_id,))]


def recent_faults(conn: Connection, bot_id: int, window: int) -> list[bool]:
    """For the bot's last ``window`` finished games with a result, newest first: whether it
    was at fault in each (a faulty reply of its own, or a forfeit it lost)."""
    rows = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM moves WHERE moves.game_id = games.id "
        "AND moves.seat = seats.seat AND moves.fault IS NOT NULL) "
        "OR (games.reason IN ('TIMEOUT', 'UNREACHABLE', 'STRIKES', 'NOT_READY') "
        "AND seats.result = 'LOSS') "
        "FROM seats JOIN games ON games.id = seats.game_id "
        "WHERE seats.bot_id = ? AND games.status = 'FINISHED' AND games.outcome != 'NO_RESULT' "
        "AND games.finished_at > COALESCE((SELECT fault_reset_at FROM bots WHERE id = ?), '') "
        "ORDER BY games.finished_at DESC, games.id DESC LIMIT ?", (bot_id, bot_id, window))
    return [bool(row[0]) for row in rows]

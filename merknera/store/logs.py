"""The per-bot log: what happened to a bot, in words its author can read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from merknera.store.db import Connection, Database, now, storable

MAX_MESSAGE = 2000


@dataclass(frozen=True)
class LogEntry:
    """One line of a bot's log."""

    id: int
    bot_id: int
    game_id: int | None
    message: str
    created_at: str


def add(conn: Connection, bot_id: int, message: str,
        game_id: int | None = None) -> None:
    """Append a line inside a write transaction."""
    add_many(conn, [(bot_id, message, game_id)])


def add_many(conn: Connection, lines: Sequence[tuple[int, str, int | None]],
             stamp: str | None = None) -> None:
    """Append ``(bot_id, message, game_id)`` lines inside a write transaction, in one
    statement, stamped ``stamp`` (now, if None)."""
    stamp = stamp or now()
    conn.executemany(
        "INSERT INTO bot_log (bot_id, game_id, message, created_at) VALUES (?, ?, ?, ?)",
        [(bot_id, game_id, storable(message[:MAX_MESSAGE]), stamp)
         for bot_id, message, game_id in lines])


async def write(db: Database, bot_id: int, message: str, game_id: int | None = None) -> None:
    """Append a line in a transaction of its own (group-committed with other writes)."""
    await db.transaction(lambda conn: add(conn, bot_id, message, game_id))


async def for_bot(db: Database, bot_id: int, limit: int = 200,
                  before: int | None = None) -> list[LogEntry]:
    """The newest lines of a bot's log, newest first (``before``: lines older than that id)."""
    rows = await db.fetchall(
        "SELECT * FROM bot_log WHERE bot_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
        (bot_id, before if before is not None else 2**62, limit))
    return [LogEntry(row["id"], row["bot_id"], row["game_id"], row["message"],
                     row["created_at"]) for row in rows]

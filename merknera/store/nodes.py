"""Queries of the nodes and their game leases (merknera.scheduler.leases keeps the state
in memory and decides when to run them).

Times of leases and heartbeats are epoch seconds of the node that writes them.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from merknera.store.db import Connection, Database
from merknera.store.games import GameRecord, records_of

_UNFINISHED = "status IN ('PENDING', 'RUNNING')"
"""Unfinished games, as the games_status index finds them."""

_FREE = "(node IS NULL OR node = ? OR lease_until < ?)"
"""A game ``node`` (the first parameter) may claim: unleased, its own, or its lease over
at ``now`` (the second)."""


@dataclass(frozen=True)
class NodeView:
    """A live node as ``GET /api/nodes`` shows it."""

    id: str
    address: str
    pid: int
    started_at: str
    seen_at: float
    coordinator: bool
    games: int


@dataclass(frozen=True)
class Beat:
    """One heartbeat of a node: what it tells, and the leases it renews."""

    node: str
    address: str
    pid: int
    started_at: str
    now: float
    lease_until: float
    coordinator: bool
    held: Collection[int]
    """The games this node believes it plays."""
    live_since: float
    """Nodes heard from since then are live."""
    forget_before: float
    """Nodes not heard from since then are forgotten."""


@dataclass(frozen=True)
class BeatResult:
    renewed: set[int]
    taken: set[int]
    """Games of ``held`` that another node plays now."""
    live_nodes: int


async def end_every_lease(db: Database) -> None:
    """Every unfinished game's lease ends now (one node to a SQLite file, starting)."""
    await db.write_one(f"UPDATE games SET lease_until = 0 WHERE lease_until IS NOT NULL "
                       f"AND {_UNFINISHED}")


async def claim(db: Database, game_id: int, node: str, now: float, until: float) -> bool:
    """Take the game's lease unless a live node (another one) holds it."""
    return await db.transaction(lambda conn: _claim_in(conn, game_id, node, now, until))


def claim_and_load_in(conn: Connection, game_ids: Sequence[int], node: str, now: float,
                      until: float) -> dict[int, GameRecord]:
    """Take the leases of these games where no live node (another one) holds them, inside
    a write transaction; the games taken, as stored then, by id.

    Three statements however many games: a newcomer's round robin (two games for each
    other bot) is claimed by three, not by four a game.
    """
    rows = conn.execute(
        f"UPDATE games SET node = ?, lease_until = ? WHERE id IN {conn.dialect.ids()} "
        f"AND {_UNFINISHED} "
        f"AND {_FREE} RETURNING *",
        (node, until, json.dumps(list(game_ids)), node, now)).fetchall()
    return {record.id: record for record in records_of(conn, rows)}


def _claim_in(conn: Connection, game_id: int, node: str, now: float, until: float) -> bool:
    return conn.execute(
        f"UPDATE games SET node = ?, lease_until = ? WHERE id = ? AND {_UNFINISHED} "
        f"AND {_FREE}", (node, until, game_id, node, now)).rowcount > 0


async def claim_many(db: Database, node: str, now: float, until: float,
                     limit: int) -> list[int]:
    """Take the leases of up to ``limit`` games no live node plays, oldest first; nodes
    claiming at the same moment skip each other's rows (PostgreSQL) and take others."""
    return await db.transaction(lambda conn: sorted(row[0] for row in conn.execute(
        f"UPDATE games SET node = ?, lease_until = ? WHERE id IN (SELECT id FROM games "
        f"WHERE {_UNFINISHED} AND (node IS NULL OR (node != ? AND lease_until < ?)) "
        f"ORDER BY id LIMIT ?{conn.dialect.claim_lock}) RETURNING id",
        (node, until, node, now, limit))))


async def claimable(db: Database, node: str, now: float, limit: int, *,
                    own: bool = False) -> list[int]:
    """Unfinished games (oldest first) that no live node plays or that ``node`` leased;
    ``own``: only those ``node`` leased."""
    if own:
        rows = await db.fetchall(f"SELECT id FROM games WHERE {_UNFINISHED} AND node = ? "
                                 "ORDER BY id LIMIT ?", (node, limit))
    else:
        rows = await db.fetchall(
            f"SELECT id FROM games WHERE {_UNFINISHED} "
            "AND (node IS NULL OR lease_until < ? OR node = ?) ORDER BY id LIMIT ?",
            (now, node, limit))
    return [row[0] for row in rows]


async def beat(db: Database, heartbeat: Beat) -> BeatResult:
    """Record a node's heartbeat and renew its leases, in one transaction."""
    def work(conn: Connection) -> BeatResult:
        conn.execute(
            "INSERT INTO nodes (id, address, pid, started_at, seen_at, coordinator, games) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
            "seen_at = excluded.seen_at, coordinator = excluded.coordinator, "
            "games = excluded.games",
            (heartbeat.node, heartbeat.address, heartbeat.pid, heartbeat.started_at,
             heartbeat.now, int(heartbeat.coordinator), len(heartbeat.held)))
        renewed: set[int] = {row[0] for row in conn.execute(
            f"UPDATE games SET lease_until = ? WHERE node = ? AND {_UNFINISHED} RETURNING id",
            (heartbeat.lease_until, heartbeat.node))}
        # Games of this node that just finished are not lost; those another took are.
        taken: set[int] = {row[0] for row in conn.execute(
            f"SELECT id FROM games WHERE id IN {conn.dialect.ids()} AND node != ?",
            (json.dumps(sorted(set(heartbeat.held) - renewed)), heartbeat.node))}
        live = conn.execute("SELECT COUNT(*) FROM nodes WHERE seen_at >= ? "
                            "AND stopped_at IS NULL", (heartbeat.live_since,)).fetchone()[0]
        conn.execute("DELETE FROM nodes WHERE seen_at < ?", (heartbeat.forget_before,))
        return BeatResult(renewed, taken, int(live))

    return await db.transaction(work)


async def set_coordinator(db: Database, node: str, coordinator: bool) -> None:
    """Whether the node coordinates, stored at once."""
    await db.write_one("UPDATE nodes SET coordinator = ? WHERE id = ?",
                       (int(coordinator), node))


async def stopped(db: Database, node: str, stamp: str) -> None:
    """The node stops: its leases end now and it is no longer live."""
    def work(conn: Connection) -> None:
        conn.execute(f"UPDATE games SET lease_until = 0 WHERE node = ? AND {_UNFINISHED}",
                     (node,))
        conn.execute("UPDATE nodes SET stopped_at = ?, coordinator = 0, games = 0 "
                     "WHERE id = ?", (stamp, node))

    await db.transaction(work)


async def live(db: Database, since: float) -> list[NodeView]:
    """Nodes heard from since ``since`` that have not stopped, oldest first."""
    rows = await db.fetchall(
        "SELECT id, address, pid, started_at, seen_at, coordinator, games FROM nodes "
        "WHERE seen_at >= ? AND stopped_at IS NULL ORDER BY started_at, id", (since,))
    return [NodeView(row[0], row[1], row[2], row[3], row[4], bool(row[5]), row[6])
            for row in rows]


async def playing(db: Database, now: float) -> dict[str, list[int]]:
    """The unfinished games of each node whose lease runs, by node."""
    found: dict[str, list[int]] = {}
    for row in await db.fetchall(
            f"SELECT node, id FROM games WHERE {_UNFINISHED} AND node IS NOT NULL "
            "AND lease_until >= ? ORDER BY id", (now,)):
        found.setdefault(row[0], []).append(row[1])
    return found


async def running_by_game(db: Database, node: str) -> dict[str, int]:
    """The games ``node`` plays that have begun (RUNNING), counted by game."""
    return {row[0]: int(row[1]) for row in await db.fetchall(
        "SELECT game, COUNT(*) FROM games WHERE status = 'RUNNING' AND node = ? "
        "GROUP BY game", (node,))}


async def unfinished_count(db: Database) -> int:
    """Unfinished games but those of gateways' people (which hold no place in play)."""
    return int(await db.fetchval(
        f"SELECT COUNT(*) FROM games WHERE {_UNFINISHED} AND handle IS NULL"))


async def notify(db: Database, channel: str, payload: str) -> None:
    """A PostgreSQL notification, sent when the write queue reaches it."""
    await db.write_one("SELECT pg_notify(?, ?)", (channel, payload))

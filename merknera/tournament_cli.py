"""``merknera tournament create|show``: tournaments from the command line.

``create`` writes the tournament to the database; the platform serving that database
(``merknera serve`` or ``merknera demo``) plays it round by round, and ``--wait`` stays
until it has finished and prints its table.  ``show`` prints a tournament's table.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Sequence

from merknera.scheduler.tournaments import create_in, table, total_rounds
from merknera.store import Database
from merknera.store import tournaments as store
from merknera.store.db import Connection, redacted


def resolve_bots(conn: Connection, game: str, given: Sequence[str]) -> list[int]:
    """Bot ids from ids or names (a name means its current version of ``game``).

    :raises ValueError: for a name or id that is no current bot of the game.
    """
    found = []
    for item in given:
        if item.isdigit():
            found.append(int(item))
            continue
        row = conn.execute("SELECT id FROM bots WHERE name = ? AND game = ? "
                           "AND status IN ('ONLINE', 'OFFLINE') AND candidate = 0",
                           (item, game)).fetchone()
        if row is None:
            raise ValueError(f'no current {game} bot is named "{item}"')
        found.append(row[0])
    return found


async def create(db_path: str, game: str, fmt: str, rounds: int, bots: Sequence[str] | None,
                 wait: bool) -> int:
    """The ``tournament create`` command."""
    db = await Database.open(db_path)
    try:
        def work(conn: Connection) -> int:
            chosen = None if bots is None else resolve_bots(conn, game, bots)
            return create_in(conn, game, fmt, rounds, chosen)

        try:
            tournament_id = await db.transaction(work)
        except ValueError as exc:
            print(f"merknera: {exc}", file=sys.stderr)
            return 2
        print(f"Created tournament {tournament_id} in {redacted(db_path)}; the platform "
              f"serving this database plays it (`merknera tournament show {tournament_id}` "
              "prints it).")
        if not wait:
            return 0
        print("Waiting for it to finish (the platform must be serving this database; "
              "Ctrl-C stops waiting, not the tournament)...", flush=True)
        while True:
            found = await db.read(functools.partial(store.load, tournament_id=tournament_id))
            if found is not None and found.status == "FINISHED":
                break
            await asyncio.sleep(1.0)
        return await _print(db, tournament_id)
    finally:
        await db.close()


async def show(db_path: str, tournament_id: int) -> int:
    """The ``tournament show`` command."""
    db = await Database.open(db_path)
    try:
        return await _print(db, tournament_id)
    finally:
        await db.close()


async def _print(db: Database, tournament_id: int) -> int:
    tournament = await db.read(functools.partial(store.load, tournament_id=tournament_id))
    if tournament is None:
        print(f"merknera: there is no tournament {tournament_id}", file=sys.stderr)
        return 1
    names = {row[0]: f"{row[1]} ({row[2]})" for row in await db.fetchall(
        "SELECT id, name, version FROM bots WHERE id IN (SELECT bot_id FROM "
        "tournament_entrants WHERE tournament_id = ?)", (tournament_id,))}
    fmt = tournament.format.lower().replace("_", "-")
    print(f"Tournament {tournament.id}: {tournament.game}, {fmt}, round {tournament.round} of "
          f"{total_rounds(tournament)}, {tournament.status.lower()}")
    print(f"{'#':>3}  {'bot':<32} {'points':>6} {'buchholz':>8} {'s-b':>6} "
          f"{'W-D-L':>7} {'byes':>4}")
    for row in table(tournament):
        record = f"{row.wins}-{row.draws}-{row.losses}"
        print(f"{row.rank:>3}  {names.get(row.entrant, str(row.entrant)):<32} "
              f"{row.points:>6g} {row.buchholz:>8g} {row.sonneborn_berger:>6g} "
              f"{record:>7} {row.byes:>4}")
    return 0

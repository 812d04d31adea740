"""Matching Battlebot clients (research a.5 and a.10), with the platform's other bots as
the fallback.

Clients wait by game and contest.  A client is matched with the first waiting client of
another bot in the same pool; in a contest only while the pair has met fewer than
:data:`CONTEST_MEETINGS` times (counted from the stored games, so a restart forgets
nothing).  Seats: in a contest the bot that has had the first seat against the other
less often moves first (Battlebot's later server balanced it so); otherwise a
salted-login newcomer's pair is shuffled (its server shuffled) and a GraphQL-era pair
has the earlier connection first (its server did not shuffle).

A client with no contest that finds nobody within ``battlebot_match_wait`` seconds plays
an online bot of another protocol (JSON-RPC, say) that has room for a game.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Sequence

from merknera.gateways.battlebot.clients import Client, Hub
from merknera.gateways.battlebot.records import contest_meetings
from merknera.gateways.battlebot.wire import Era
from merknera.scheduler.core import Scheduler
from merknera.store import competition, games, logs
from merknera.store.db import Connection
from merknera.tasks import TaskSet

log = logging.getLogger(__name__)

CONTEST_MEETINGS = 5
"""Games a pair of bots plays in one contest (Battlebot's MAX_GAMES, in both directions)."""

_RESERVED = -1
"""The game id of a client taken for a game that is being created."""


class Lobby:
    """Clients waiting for a game."""

    def __init__(self, scheduler: Scheduler, hub: Hub) -> None:
        self._scheduler = scheduler
        self._arena = scheduler.arena
        self._hub = hub
        self._waiting: dict[tuple[str, str | None], list[Client]] = {}
        self._lock = asyncio.Lock()
        self._background = TaskSet()
        hub.on_arrival = self.arrived

    def arrived(self, client: Client) -> None:
        """A client logged in and no game was waiting for it: match it."""
        self._waiting.setdefault((client.bot.game, client.contest), []).append(client)
        self._background.spawn(self._match((client.bot.game, client.contest)))
        if client.contest is None:
            self._background.spawn(self._fall_back(client))

    async def stop(self) -> None:
        """Stop matching."""
        await self._background.close()

    def _still_waiting(self, pool: tuple[str, str | None]) -> list[Client]:
        waiting = [c for c in self._waiting.get(pool, []) if not c.closed and c.turns is None]
        if waiting:
            self._waiting[pool] = waiting
        else:
            self._waiting.pop(pool, None)
        return waiting

    async def _match(self, pool: tuple[str, str | None]) -> None:
        async with self._lock:
            mnemonic, contest = pool
            waiting = self._still_waiting(pool)
            if len(waiting) < 2:
                return
            met: dict[tuple[int, int], int] = {}
            if contest is not None:
                met = await self._arena.db.read(
                    lambda conn: contest_meetings(conn, mnemonic, contest))
            pair = _first_pair(waiting, met, contest is not None)
            if pair is None:
                return
            first, second = pair
            if contest is not None:
                # The one that had the first seat against the other less often goes first.
                if met.get((first.bot.id, second.bot.id), 0) > met.get(
                        (second.bot.id, first.bot.id), 0):
                    first, second = second, first
            elif second.era is Era.SALT and secrets.randbelow(2):
                first, second = second, first
            await self._start([first, second], [first.bot.id, second.bot.id], contest)
        # Others may be waiting still: match them too.
        if len(self._still_waiting(pool)) >= 2:
            self._background.spawn(self._match(pool))

    async def _fall_back(self, client: Client) -> None:
        """Play a bot of another protocol if no client comes within the wait."""
        wait = self._arena.config.battlebot.match_wait
        while True:
            await asyncio.sleep(wait)
            async with self._lock:
                if client.closed or client.turns is not None:
                    return
                opponent = await self._opponent(client)
                if opponent is None:
                    continue  # nobody to play: wait another while
                seating = [client.bot.id, opponent]
                if secrets.randbelow(2):
                    seating.reverse()
                await self._start([client], seating, None)
                return

    async def _opponent(self, client: Client) -> int | None:
        """An online bot of another protocol with room for a game, or None."""
        arena = self._arena
        online = [bot_id for bot_id in arena.presence.online_bots(client.bot.game)
                  if (bot := arena.presence.bot(bot_id)) is not None
                  and not bot.protocol.connects]
        if not online:
            return None
        cap = arena.config.scheduling.max_games_per_bot
        roomy = await arena.db.read(
            lambda conn: [c.bot_id for c in competition.contenders(conn, online, cap)])
        return secrets.choice(roomy) if roomy else None

    async def _start(self, clients: Sequence[Client], seating: list[int],
                     contest: str | None) -> None:
        """Create the game, its clients seated in it, and start its runner; nothing if a
        client was taken meanwhile (by a game the ladder made, say, while this waited for
        the store)."""
        arena = self._arena
        taken = [client for client in clients if self._hub.seat(client, _RESERVED)]
        if len(taken) < len(clients):
            for client in taken:
                client.turns = None
            return
        mnemonic = clients[0].bot.game
        names = {bot_id: bot.name for bot_id in seating
                 if (bot := arena.presence.bot(bot_id)) is not None}
        settings = arena.new_game_settings(mnemonic)
        lease = arena.leases.fresh()  # the node holding the clients' sockets plays it

        def create(conn: Connection) -> int:
            game_id = games.create(conn, mnemonic, secrets.randbits(63), seating, settings,
                                   origin="MATCH", contest=contest, lease=lease)
            for seat, bot_id in enumerate(seating):
                other = names.get(seating[1 - seat], "a bot")
                pool = f" in the contest {contest!r}" if contest else ""
                logs.add(conn, bot_id, f"Matched with {other}{pool}. You are player "
                                       f"{'one' if seat == 0 else 'two'} (gameId: {game_id})",
                         game_id)
            return game_id

        try:
            game_id = await arena.db.transaction(create)
        except Exception:
            log.exception("could not create a game for Battlebot clients")
            for client in clients:
                client.turns = None
                client.connection.close()
            return
        for client in clients:
            assert client.turns is not None
            client.turns.game_id = game_id
        self._scheduler.submit([game_id])


def _first_pair(waiting: list[Client], met: dict[tuple[int, int], int],
                in_contest: bool) -> tuple[Client, Client] | None:
    """The first two waiting clients (in order of arrival) of different bots that may
    meet."""
    for j, later in enumerate(waiting):
        for earlier in waiting[:j]:
            if earlier.bot.id == later.bot.id or earlier.bot.name == later.bot.name:
                continue
            meetings = (met.get((earlier.bot.id, later.bot.id), 0)
                        + met.get((later.bot.id, earlier.bot.id), 0))
            if in_contest and meetings >= CONTEST_MEETINGS:
                continue
            return earlier, later
    return None

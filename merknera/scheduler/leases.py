"""Game leases: every game is played by exactly one node, and a dead node's games go on.

A runner claims its game's lease before it plays (:meth:`Leases.claim`: an UPDATE that
only takes a game with no node, or whose lease ran out); the node renews the leases of its
games every third of a lease (``lease_seconds``, 15 by default) together with its
heartbeat in ``nodes``.  The store refuses a move or a result from a node that no longer
holds the game (:func:`merknera.store.games.record_moves`), so a move is never stored
twice; and a runner asks for a move only while its lease has the move's time limit or half
a lease (the smaller) to run (:meth:`Leases.hold`), and the lease is renewed meanwhile, so
that no two nodes ask for the same move while the database can reach them both.  When a
node dies, even by SIGKILL, its leases run out and the other nodes' claim loops
(:meth:`Leases.run`) take its games, which finish from their stored moves.

On one node (SQLite) the same code runs, with one node: its games are leased to it, a
restarted node takes them back at once (:meth:`Leases.only_node`), and a lease never runs
out under a runner (nobody else could take the game).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Iterable

from merknera.store import Database, games, nodes
from merknera.store.db import StoreError, now
from merknera.store.games import GameRecord
from merknera.store.nodes import NodeView

log = logging.getLogger(__name__)

CLAIM_EVERY = 1.0
"""Seconds between two looks for games without a live node, when no node says it made
some (:meth:`Leases.offered`)."""

FORGET_NODES = 7 * 24 * 3600.0
"""Seconds after its last heartbeat that a node's row is deleted (one row per start)."""

OFFERS = "merknera_offers"
"""The PostgreSQL channel on which a node says it made games for any node to play (heard
through the event relay's listening connection: :meth:`Leases.notified`)."""


class LeaseLostError(Exception):
    """Another node plays the game now: its runner stops without a word to the bots."""


def node_name(address: str) -> str:
    """A node's id: its host and port, its pid, and a random part (a node restarted on the
    same port is another node)."""
    return f"{socket.gethostname()}/{address.split('://')[-1]}/{os.getpid()}-{secrets.token_hex(3)}"


class Leases:
    """This node's leases and heartbeat."""

    def __init__(self, db: Database, node: str, address: str, seconds: float) -> None:
        self.db = db
        self.node = node
        self.address = address
        self.seconds = seconds
        self.coordinator = False
        """Whether this node holds the coordinator's lock (set by the coordinator)."""
        self._held: dict[int, float] = {}
        """Game id -> the monotonic time until which its lease is surely this node's."""
        self._renewed = asyncio.Event()
        self._started = now()
        self.live_nodes = 1
        """Nodes that sent a heartbeat within a lease, at the last heartbeat."""
        self._offer = asyncio.Event()
        self._offers = 0
        self._last_beat = 0.0
        """time.monotonic() of the last heartbeat (the scheduler's start makes the first)."""
        self._stored_beat: float | None = None
        """time.monotonic() of the start of the last heartbeat that was stored."""
        self._taking: dict[int, asyncio.Future[GameRecord | None]] = {}
        """Runners waiting in :meth:`take`, by game id, to be claimed together."""

    async def only_node(self) -> None:
        """This is the only node (SQLite): every lease of an earlier run ends now, so the
        games of a node that was killed resume at once."""
        await nodes.end_every_lease(self.db)

    # -- a runner's lease -----------------------------------------------------------------

    async def claim(self, game_id: int) -> bool:
        """Take the game's lease if no live node holds it; whether this node plays it."""
        return await self.take(game_id) is not None

    async def take(self, game_id: int) -> GameRecord | None:
        """Take the game's lease if no live node holds it, and the game as stored then
        (None: this node does not play it)."""
        if self._held.get(game_id, 0.0) > time.monotonic() + self.seconds / 2:
            return await games.load(self.db, game_id)  # just taken by claim_many
        # Runners started together (a newcomer's round robin, a resumed node's games)
        # claim together: one write for all of them, sent once the loop has started them.
        waiting = self._taking.get(game_id)
        if waiting is None:
            waiting = asyncio.get_running_loop().create_future()
            if not self._taking:
                asyncio.get_running_loop().call_soon(self._take_waiting)
            self._taking[game_id] = waiting
        return await waiting

    def _take_waiting(self) -> None:
        """Claim the games whose runners wait in :meth:`take`, in one write."""
        taking, self._taking = self._taking, {}
        self._claim(taking)

    def _claim(self, taking: dict[int, asyncio.Future[GameRecord | None]]) -> None:
        started, wall = time.monotonic(), time.time()
        claimed = self.db.submit(lambda conn: nodes.claim_and_load_in(
            conn, list(taking), self.node, wall, wall + self.seconds))

        def answer(done: asyncio.Future[dict[int, GameRecord]]) -> None:
            failure = (StoreError("the claim was cancelled") if done.cancelled()
                       else done.exception())
            if failure is not None and len(taking) > 1:
                # One game's bad row must not fail the others': each is claimed alone.
                for game_id, waiting in taking.items():
                    if not waiting.done():
                        self._claim({game_id: waiting})
                return
            for game_id, waiting in taking.items():
                if waiting.done():
                    continue  # its runner was cancelled; the lease runs out unrenewed
                if failure is not None:
                    waiting.set_exception(failure)
                else:
                    record = done.result().get(game_id)
                    if record is not None:
                        self._held[game_id] = started + self.seconds
                    waiting.set_result(record)

        claimed.add_done_callback(answer)

    async def claim_many(self, limit: int) -> list[int]:
        """Take the leases of up to ``limit`` unfinished games that no live node plays
        (oldest first).  Nodes claiming at the same time take different games: on
        PostgreSQL the rows another node is taking are skipped (``FOR UPDATE SKIP
        LOCKED``), not waited for."""
        if limit <= 0 or not await self.claimable(1, ()):
            return []  # nothing to take: no write (the look costs a read)
        started, wall = time.monotonic(), time.time()
        ids = await nodes.claim_many(self.db, self.node, wall, wall + self.seconds, limit)
        for game_id in ids:
            self._held[game_id] = started + self.seconds
        return ids

    def notified(self, payload: str) -> None:
        """Another node offered games (a notification on :data:`OFFERS`: its node id and
        how many); this node's own offers it knows already."""
        sender, _, count = payload.rpartition(" ")
        if sender != self.node:
            with contextlib.suppress(ValueError):
                self.offered(int(count))

    def offered(self, count: int) -> None:
        """``count`` new games wait for a node (made here, or told by another node): the
        claim loop looks at once, for its share of them."""
        self._offers += count
        self._offer.set()

    async def secure(self, game_id: int, seconds: float) -> None:
        """Return once the game's lease has ``seconds`` (at most half a lease) to run.

        :raises LeaseLostError: when the lease is not this node's any more.
        """
        if not self.db.dialect.shared:
            # One node to a file: nobody else takes a game, whatever a slow writer did
            # to the renewals.
            if game_id not in self._held:
                raise LeaseLostError(f"game {game_id} is not leased to {self.node}")
            return
        wanted = min(seconds, self.seconds / 2)
        while True:
            until = self._held.get(game_id)
            if until is None or until <= time.monotonic():
                raise LeaseLostError(f"game {game_id} is not leased to {self.node} any more")
            if until - time.monotonic() >= wanted:
                return
            self._renewed.clear()
            try:
                async with asyncio.timeout(until - time.monotonic()):
                    await self._renewed.wait()
            except TimeoutError:
                pass

    def fresh(self) -> tuple[str, float]:
        """A lease for a game made now for a client connected to this node."""
        return self.node, time.time() + self.seconds

    def release(self, game_id: int) -> None:
        """The runner stopped (the game finished, or this node stops)."""
        self._held.pop(game_id, None)

    def holds(self) -> list[int]:
        """The games this node plays."""
        return list(self._held)

    # -- the node's loop ------------------------------------------------------------------

    async def heartbeat(self) -> set[int]:
        """Renew this node's leases and heartbeat; the games whose lease it lost."""
        started, wall = time.monotonic(), time.time()
        self._last_beat = started
        beat = await nodes.beat(self.db, nodes.Beat(
            self.node, self.address, os.getpid(), self._started, wall, wall + self.seconds,
            self.coordinator, list(self._held), wall - self.seconds, wall - FORGET_NODES))
        renewed, taken, self.live_nodes = beat.renewed, beat.taken, beat.live_nodes
        self._stored_beat = started
        for game_id in list(self._held):
            if game_id in renewed:
                self._held[game_id] = started + self.seconds
            elif game_id in taken:
                del self._held[game_id]
        self._renewed.set()
        return taken

    def heartbeat_age(self) -> float | None:
        """Seconds since the last heartbeat that was stored began (None before the first):
        past a lease, the other nodes may take this node's games."""
        return None if self._stored_beat is None else time.monotonic() - self._stored_beat

    async def announce(self) -> None:
        """Store at once whether this node coordinates (``GET /api/nodes`` says so before
        the next heartbeat)."""
        await nodes.set_coordinator(self.db, self.node, self.coordinator)

    async def claimable(self, limit: int, running: Iterable[int], *,
                        own: bool = False) -> list[int]:
        """Unfinished games that no live node plays (oldest first), or that this node
        leased and has no runner for; ``own``: only the latter."""
        if limit <= 0:
            return []
        running = set(running)
        wanted = limit + len(running)
        found = await nodes.claimable(self.db, self.node, time.time(), wanted, own=own)
        return [game_id for game_id in found if game_id not in running][:limit]

    async def stopped(self) -> None:
        """This node stops: its leases end now, so other nodes take its games at once."""
        held, self._held = self.holds(), {}
        await nodes.stopped(self.db, self.node, now())
        log.info("node %s stopped; its %d games go to other nodes", self.node, len(held))

    async def run(self, running: Callable[[], list[int]], room: Callable[[], int],
                  submit: Callable[[list[int]], None],
                  lost: Callable[[set[int]], object]) -> None:
        """Heartbeat every third of a lease; look for games without a live node when games
        are offered (:meth:`offered`), and every :data:`CLAIM_EVERY` in any case, and start
        up to ``room()`` of them.  Never raises (a store hiccup is logged and tried
        again)."""
        last_full = 0.0
        while True:
            try:
                if time.monotonic() - self._last_beat >= self.seconds / 3:
                    gone = await self.heartbeat()
                    if gone:
                        log.warning("node %s lost the leases of games %s", self.node,
                                    sorted(gone))
                        lost(gone)
                offers, self._offers = self._offers, 0
                self._offer.clear()
                # Offered games: this node's share, so that the nodes told at the same
                # moment share them out; the rest is taken at the next look by whichever
                # node has room.  Otherwise (a look every CLAIM_EVERY) this node's own
                # games without a runner first, then as many as there is room for.
                full = time.monotonic() - last_full >= CLAIM_EVERY
                if full:
                    last_full = time.monotonic()
                mine = await self.claimable(room(), running(), own=True) if full else []
                share = room() if full else -(-offers // max(1, self.live_nodes))
                taken = await self.claim_many(min(room() - len(mine), share))
                if mine or taken:
                    submit(mine + taken)
            except Exception:
                log.exception("node %s: leases could not be renewed", self.node)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLAIM_EVERY):
                    await self._offer.wait()


async def live_nodes(db: Database, seconds: float) -> list[NodeView]:
    """Nodes that sent a heartbeat within ``seconds`` and have not stopped."""
    return await nodes.live(db, time.time() - seconds)

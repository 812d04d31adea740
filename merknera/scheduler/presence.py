"""Who is online: the platform's view of every current bot, and the pinger that keeps it.

Bots are pinged at start-up, whenever an online bot has not been heard from for
``ping_interval`` seconds, and before a bot's first move in a game under the same rule.
An offline bot is re-pinged with exponential back-off, and games waiting on it resume the
moment it answers (or its owner registers it again).

With several nodes, one pings (the coordinator: :meth:`Presence.start_pinging`); every node
keeps its directory in step with the store (:meth:`Presence.refresh`), where the others'
registrations and the pinger's findings land, and still pings a bot before its first move
in a game it plays.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from merknera.botclient import PlatformResourceError
from merknera.config import Config
from merknera.events import BotStatusChanged, EventBus
from merknera.seats import Carriers
from merknera.store import Database, bots, logs
from merknera.store.bots import Bot, BotStatus
from merknera.tasks import TaskSet

log = logging.getLogger(__name__)

_PING_PARALLEL = 64
_FLUSH_SECONDS = 10.0


@dataclass
class _Liveness:
    bot: Bot
    recorded_online: bool
    """What the store says (ONLINE or OFFLINE); written whenever the belief changes."""
    online: asyncio.Event = field(default_factory=asyncio.Event)
    """The belief: set while the bot is thought to answer.  Unset until the first answer
    after start-up, so that no game calls a bot that has not answered this process."""
    last_heard: float = 0.0
    """time.monotonic() of the last answered call; 0.0 = never."""
    retry_delay: float = 0.0
    next_ping: float = 0.0


class Presence:
    """Liveness of every current bot, and their latest registration data."""

    def __init__(self, config: Config, db: Database, carriers: Carriers,
                 events: EventBus) -> None:
        self._config = config
        self._db = db
        self._carriers = carriers
        self._events = events
        self._bots: dict[int, _Liveness] = {}
        self._pinging: dict[int, asyncio.Task[bool]] = {}
        self._ping_slots = asyncio.Semaphore(_PING_PARALLEL)
        self._touched: set[int] = set()
        self._writes = TaskSet()
        self._loop_task: asyncio.Task[None] | None = None
        self._changes = 0
        """Counts this node's own changes to the directory (see :meth:`refresh`)."""

    async def start(self, *, alone: bool = True) -> None:
        """Load the current bots.

        ``alone``: no other node is running, and every bot starts offline: ONLINE in the
        store means "answered a running node", so that no game is scheduled against a bot
        that died with the previous one.  Otherwise the store's word is taken.
        """
        if alone:
            await bots.mark_all_offline(self._db)
        for bot in await bots.current(self._db):
            self._learn(bot)

    def start_pinging(self) -> None:
        """Start the pinger, which pings each bot at once (this node coordinates)."""
        if self._loop_task is None:
            self._loop_task = asyncio.create_task(self._loop(), name="pinger")

    async def stop_pinging(self) -> None:
        """Stop the pinger (another node coordinates now)."""
        task, self._loop_task = self._loop_task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def _learn(self, bot: Bot) -> _Liveness:
        entry = self._bots[bot.id] = _Liveness(
            bot, recorded_online=bot.status is BotStatus.ONLINE)
        if entry.recorded_online:
            entry.online.set()
            entry.last_heard = time.monotonic()
            entry.next_ping = entry.last_heard + self._config.liveness.ping_interval
        return entry

    def learn(self, bot: Bot) -> None:
        """A current bot read from the store that this node does not know yet (registered
        at another node since the last :meth:`refresh`): known from now on, as stored."""
        if bot.id not in self._bots and bot.status in (BotStatus.ONLINE, BotStatus.OFFLINE):
            self._changes += 1
            self._learn(bot)

    async def refresh(self) -> None:
        """Take the store's word for what other nodes changed: bots registered, retired,
        or found online or offline there.  A read that this node's own changes overtook
        (a registration here while it ran) is dropped: the next one has them."""
        changes = self._changes
        stored = {bot.id: bot for bot in await bots.current(self._db)}
        if changes != self._changes:
            return
        for bot_id in [bot_id for bot_id in self._bots if bot_id not in stored]:
            self.retired([bot_id])
        for bot_id, bot in stored.items():
            entry = self._bots.get(bot_id)
            if entry is None:
                self._learn(bot)
                continue
            if _registration(bot) != _registration(entry.bot):
                # A new endpoint or secret; the same object otherwise, so that a ping
                # under way is not taken for one made before a registration.
                entry.bot = dataclasses.replace(
                    bot, self_name=entry.bot.self_name or bot.self_name)
            online = bot.status is BotStatus.ONLINE
            if self._loop_task is not None:
                # The pinger's node keeps its belief, and writes it again at its next
                # ping if another node stored something else meanwhile.
                entry.recorded_online = online
            elif online != entry.recorded_online:
                entry.recorded_online = online
                if online:
                    entry.last_heard = time.monotonic()
                    entry.online.set()
                else:
                    entry.online.clear()

    async def stop(self) -> None:
        """Stop pinging (and record who was heard from)."""
        tasks: list[asyncio.Task[None] | asyncio.Task[bool]] = [*self._pinging.values()]
        if self._loop_task is not None:
            tasks.append(self._loop_task)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, self._writes.close(), return_exceptions=True)
        self._loop_task = None
        try:
            await self._flush_seen()
        except Exception:
            log.exception("could not record when bots were last seen")

    # -- the directory --------------------------------------------------------------------

    def bot(self, bot_id: int) -> Bot | None:
        """The latest record of a current bot (None if superseded, disabled or unknown)."""
        entry = self._bots.get(bot_id)
        return None if entry is None else entry.bot

    def registered(self, bot: Bot) -> None:
        """A bot (re-)registered just now: online (as stored), with this endpoint and secret."""
        self._changes += 1
        entry = self._bots.get(bot.id)
        if entry is None:
            entry = self._bots[bot.id] = _Liveness(bot, recorded_online=True)
        entry.bot = bot
        entry.recorded_online = True
        self._heard(entry)
        if self._carriers.of(bot).ping_names_bot:
            self._start_ping(bot.id)

    def retired(self, bot_ids: list[int]) -> None:
        """These bots were superseded or disabled: forget them."""
        self._changes += 1
        for bot_id in bot_ids:
            entry = self._bots.pop(bot_id, None)
            if entry is not None:
                # Wake any game waiting for it; it will find the bot gone.
                entry.online.set()

    # -- liveness ---------------------------------------------------------------------------

    def online_bots(self, game: str) -> list[int]:
        """The ids of the current bots of a game believed online that games may be made
        for (candidate versions play only their challenges and duels)."""
        return [bot_id for bot_id, entry in self._bots.items()
                if entry.bot.game == game and entry.online.is_set() and not entry.bot.candidate]

    def restored(self, bot: Bot) -> None:
        """A disabled bot was enabled again: ping it and play it once it answers."""
        self._changes += 1
        self._bots.setdefault(bot.id, _Liveness(bot, recorded_online=False))

    def is_online(self, bot_id: int) -> bool:
        """Whether the bot is current and believed online."""
        entry = self._bots.get(bot_id)
        return entry is not None and entry.online.is_set()

    def heard(self, bot_id: int) -> None:
        """The bot answered a call (any answer counts)."""
        entry = self._bots.get(bot_id)
        if entry is not None:
            self._heard(entry, why="it answered a call")

    def went_unreachable(self, bot_id: int, why: str) -> None:
        """A call could not reach the bot: it is offline until a ping says otherwise."""
        entry = self._bots.get(bot_id)
        if entry is not None and entry.online.is_set():
            self._unheard(entry, why)

    async def ensure_fresh(self, bot_id: int) -> bool:
        """Ping the bot if nothing was heard from it within the ping interval.

        Returns whether it is online afterwards (true of a bot whose carrier knows whether
        it is there, :attr:`~merknera.seats.Carrier.knows_liveness`, as its calls wait for
        it).
        """
        entry = self._bots.get(bot_id)
        if entry is None:
            return False
        if self._carriers.of(entry.bot).knows_liveness:
            return True
        if entry.online.is_set() and (
                time.monotonic() - entry.last_heard < self._config.liveness.ping_interval):
            return True
        return await self.ping(bot_id)

    async def wait_online(self, bot_id: int, time_limit: float) -> bool:
        """Wait until the bot is online, at most ``time_limit`` seconds."""
        entry = self._bots.get(bot_id)
        if entry is None:
            return False
        if not entry.online.is_set():
            try:
                async with asyncio.timeout(time_limit):
                    await entry.online.wait()
            except TimeoutError:
                return False
        return self._bots.get(bot_id) is entry

    async def ping(self, bot_id: int) -> bool:
        """Ping a bot now (joining a ping already under way); returns whether it answered."""
        task = self._pinging.get(bot_id) or self._start_ping(bot_id)
        return await asyncio.shield(task)

    def _start_ping(self, bot_id: int) -> asyncio.Task[bool]:
        task = asyncio.create_task(self._ping(bot_id), name=f"ping-{bot_id}")
        self._pinging[bot_id] = task

        def forget(_: asyncio.Task[bool]) -> None:
            if self._pinging.get(bot_id) is task:
                del self._pinging[bot_id]

        task.add_done_callback(forget)
        return task

    async def _ping(self, bot_id: int) -> bool:
        entry = self._bots.get(bot_id)
        if entry is None:
            return False
        pinged = entry.bot
        async with self._ping_slots:
            try:
                reply = await self._carriers.ping(pinged)
            except PlatformResourceError as exc:
                # Says nothing about the bot: it keeps its state and is pinged again soon.
                log.warning("could not ping bot %d: %s", bot_id, exc,
                            extra={"bot_id": bot_id})
                entry.next_ping = time.monotonic() + self._config.liveness.offline_retry_min
                return entry.online.is_set()
        if self._bots.get(bot_id) is not entry:
            return False
        if entry.bot is not pinged:
            # It registered again (perhaps at a new endpoint) while this ping was out: the
            # answer is about the old registration.
            return entry.online.is_set()
        if reply.fault is None:
            self._heard(entry, why="it answered a ping")
            if isinstance(reply.result, str) and reply.result != pinged.self_name:
                entry.bot = dataclasses.replace(pinged, self_name=reply.result)
                self._background(bots.set_self_name(self._db, pinged.id, reply.result))
            return True
        self._unheard(entry, f"{self._carriers.of(pinged).ping_name} failed: "
                             f"{reply.fault.message}")
        return False

    def _heard(self, entry: _Liveness, why: str = "") -> None:
        entry.last_heard = time.monotonic()
        entry.retry_delay = 0.0
        entry.next_ping = entry.last_heard + self._config.liveness.ping_interval
        entry.online.set()
        self._touched.add(entry.bot.id)
        if not entry.recorded_online:
            self._record(entry, online=True, why=why)

    def _unheard(self, entry: _Liveness, why: str) -> None:
        entry.online.clear()
        entry.retry_delay = min(self._config.liveness.offline_retry_max,
                                max(self._config.liveness.offline_retry_min, entry.retry_delay * 2))
        entry.next_ping = time.monotonic() + entry.retry_delay
        if entry.recorded_online:
            self._record(entry, online=False, why=why)

    def _record(self, entry: _Liveness, *, online: bool, why: str) -> None:
        """Store a change of status (in the background: callers are on a game's path)."""
        entry.recorded_online = online
        self._background(self._write_status(entry.bot, online=online, why=why))

    def _background(self, write: Coroutine[Any, Any, None]) -> None:
        """Run a store write in the background (callers are on a game's path); stop()
        waits for it."""
        self._writes.spawn(write)

    async def _write_status(self, bot: Bot, *, online: bool, why: str) -> None:
        if await bots.set_liveness(self._db, bot.id, online):
            state = "online" if online else "offline"
            await logs.write(self._db, bot.id,
                             f"{bot.name} (version: {bot.version}) is {state}: {why}")
            log.info("bot %s (%s) is %s: %s", bot.name, bot.version, state, why,
                     extra={"bot_id": bot.id})
            self._events.publish(BotStatusChanged(
                bot.id, bot.name, BotStatus.ONLINE if online else BotStatus.OFFLINE))

    async def _loop(self) -> None:
        tick = min(1.0, self._config.liveness.offline_retry_min)
        last_flush = time.monotonic()
        while True:
            now = time.monotonic()
            for bot_id, entry in list(self._bots.items()):
                if now >= entry.next_ping and bot_id not in self._pinging:
                    self._start_ping(bot_id)
            if now - last_flush >= _FLUSH_SECONDS:
                last_flush = now
                try:
                    await self._flush_seen()
                except Exception:
                    # The pinger must outlive a store hiccup, or offline bots would never
                    # be pinged again.
                    log.exception("could not record when bots were last seen")
            await asyncio.sleep(tick)

    async def _flush_seen(self) -> None:
        touched, self._touched = sorted(self._touched), set()
        await bots.touch(self._db, touched)


def _registration(bot: Bot) -> tuple[object, ...]:
    """What a registration changes about a bot: how it is reached and what it is called."""
    return (bot.name, bot.version, bot.endpoint, bot.secret, bot.protocol, bot.candidate)

"""Sessions of bots the platform calls at their endpoints (JSON-RPC, the Squelchbot REST
API): each call is a request of its own, and the session only names the bot to call.

Calls whose replies are ignored and that must not hold the game up (Error, Complete) go
through the :class:`Notifier`: in the background, and to one bot in the order they were
sent (a strike's Error before the game's Complete).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from abc import abstractmethod
from collections.abc import Awaitable, Callable

from merknera.botclient import CallResult
from merknera.games import AnyGame
from merknera.seats.base import Call, CallMade, CallWatcher, Carrier, Session, Sitting
from merknera.store.bots import Bot
from merknera.tasks import TaskSet


class Notifier:
    """Deliveries of calls whose replies are ignored, in the background: those to one bot
    one after another, in the order they were sent."""

    def __init__(self, time_limit: float, drain_time: float) -> None:
        self._time_limit = time_limit
        self._drain_time = drain_time
        self._tasks = TaskSet()
        self._last: dict[int, asyncio.Task[None]] = {}

    def send(self, bot_id: int, deliver: Callable[[float], Awaitable[object]]) -> None:
        """Run ``deliver(time_limit)`` for the bot ``bot_id`` after the deliveries sent to
        it before."""
        task = self._tasks.spawn(self._deliver(deliver, self._last.get(bot_id)))
        self._last[bot_id] = task
        task.add_done_callback(functools.partial(self._done, bot_id))

    def _done(self, bot_id: int, task: asyncio.Task[None]) -> None:
        if self._last.get(bot_id) is task:
            del self._last[bot_id]

    async def _deliver(self, deliver: Callable[[float], Awaitable[object]],
                       after: asyncio.Task[None] | None) -> None:
        if after is not None:
            await asyncio.gather(after, return_exceptions=True)
        await deliver(self._time_limit)

    async def drain(self) -> None:
        """Wait for every delivery under way to be made or to fail."""
        await self._tasks.wait()

    async def stop(self) -> None:
        """Let the deliveries under way finish (a little while), then give up on the rest."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._drain_time):
                await self.drain()
        await self._tasks.close()


class CalledCarrier(Carrier):
    """A carrier whose bots serve calls at their endpoints: its sessions make a request
    per call, to the bot's latest registration."""

    def __init__(self, notifier: Notifier) -> None:
        self.notifier = notifier
        """Where the sessions' calls that must not hold their games up go."""
        self.watchers: list[CallWatcher] = []
        """Shown every call its sessions make (see :meth:`Carriers.watch`)."""

    def open(self, sitting: Sitting) -> Session:
        return CalledSession(self, sitting)

    @abstractmethod
    def describe(self, game: AnyGame, name: str) -> str:
        """:meth:`Session.describe` for every session of this carrier."""

    @abstractmethod
    async def ask(self, bot: Bot, sitting: Sitting, call: Call,
                  time_limit: float) -> CallResult:
        """:meth:`Session.ask`, of the bot registered as ``bot``: the reply's envelope
        checked, the result the JSON value the game reads, or a classified fault.

        :raises PlatformResourceError: only when the platform itself is short of
            descriptors or memory.
        """

    @abstractmethod
    async def tell(self, bot: Bot, sitting: Sitting, call: Call,
                   time_limit: float) -> CallResult:
        """A call whose reply is ignored, of the bot registered as ``bot``.  Never raises:
        a call the platform cannot make is dropped (see BotClient.notify)."""

    def report(self, bot: Bot, sitting: Sitting, call: Call, result: CallResult, *,
             heeded: bool) -> None:
        """Show the watchers a call its session made."""
        if self.watchers:
            seen = CallMade(bot, sitting.game_id, sitting.seat, call.name,
                            self.describe(sitting.game, call.name), result, heeded)
            for watcher in self.watchers:
                watcher(seen)


class CalledSession(Session):
    """A seat whose bot is called: each call goes to the bot's latest registration."""

    def __init__(self, carrier: CalledCarrier, sitting: Sitting) -> None:
        super().__init__(sitting)
        self._carrier = carrier

    @property
    def ping_name(self) -> str:
        return self._carrier.ping_name

    def describe(self, name: str) -> str:
        return self._carrier.describe(self.sitting.game, name)

    async def ask(self, call: Call, time_limit: float) -> CallResult:
        bot = self.sitting.latest()
        result = await self._carrier.ask(bot, self.sitting, call, time_limit)
        self._carrier.report(bot, self.sitting, call, result, heeded=True)
        return result

    async def tell(self, call: Call, time_limit: float) -> None:
        await self._told(self.sitting.latest(), call, time_limit)

    def notify(self, call: Call) -> None:
        bot = self.sitting.latest()
        self._carrier.notifier.send(bot.id, functools.partial(self._told, bot, call))

    async def _told(self, bot: Bot, call: Call, time_limit: float) -> None:
        result = await self._carrier.tell(bot, self.sitting, call, time_limit)
        self._carrier.report(bot, self.sitting, call, result, heeded=False)

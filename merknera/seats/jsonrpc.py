"""Sessions of bots that speak Merknera's JSON-RPC convention (docs/bots/protocol.md): every
game, over either line a bot may have to the platform (:class:`JsonRpcLine`): HTTP POSTs to
the endpoint it serves, or frames on a WebSocket it opened (:mod:`merknera.seats.sockets`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from merknera.botclient import PING_METHOD, BotClient, CallResult
from merknera.games import JSON, AnyGame, JSONObject
from merknera.seats.base import Call, Sitting
from merknera.seats.called import CalledCarrier, Notifier
from merknera.store.bots import Bot


class JsonRpcLine(ABC):
    """How JSON-RPC requests reach a bot and its replies come back, checked strictly and
    classified into the same faults whatever the line."""

    knows_liveness: bool = False
    """:attr:`Carrier.knows_liveness` of the bots on this line."""

    @abstractmethod
    async def call(self, bot: Bot, method: str, params: JSON, time_limit: float,
                   idle: Callable[[], AbstractAsyncContextManager[None]]) -> CallResult:
        """A call whose answer matters; ``idle`` is the block to wait in, holding no
        place in play, for a bot that must connect before it can be called.

        :raises PlatformResourceError: only when the platform itself is short of
            descriptors or memory.
        """

    @abstractmethod
    async def notify(self, bot: Bot, method: str, params: JSON,
                     time_limit: float) -> CallResult:
        """A call whose reply is ignored.  Never raises."""

    @abstractmethod
    async def ping(self, bot: Bot) -> CallResult:
        """``Status.Ping``: whether the bot answers.

        :raises PlatformResourceError: as :meth:`call`.
        """


class HttpLine(JsonRpcLine):
    """Requests POSTed to the endpoint the bot registered, signed with its secret."""

    def __init__(self, client: BotClient) -> None:
        self._client = client

    async def call(self, bot: Bot, method: str, params: JSON, time_limit: float,
                   idle: Callable[[], AbstractAsyncContextManager[None]]) -> CallResult:
        return await self._client.call(bot.endpoint, bot.secret, method, params, time_limit)

    async def notify(self, bot: Bot, method: str, params: JSON,
                     time_limit: float) -> CallResult:
        return await self._client.notify(bot.endpoint, bot.secret, method, params, time_limit)

    async def ping(self, bot: Bot) -> CallResult:
        return await self._client.ping(bot.endpoint, bot.secret)


class JsonRpcCarrier(CalledCarrier):
    """A call named ``N`` of a game with prefix ``P`` is the method ``P.N``, its params the
    call's with the game id added under the game's ``game_id`` param."""

    ping_name = PING_METHOD

    def __init__(self, line: JsonRpcLine, notifier: Notifier) -> None:
        super().__init__(notifier)
        self._line = line
        self.knows_liveness = line.knows_liveness

    def describe(self, game: AnyGame, name: str) -> str:
        return game.calls.method(name)

    async def ask(self, bot: Bot, sitting: Sitting, call: Call,
                  time_limit: float) -> CallResult:
        calls = sitting.game.calls
        return await self._line.call(bot, calls.method(call.name), _params(sitting, call),
                                     time_limit, sitting.idle)

    async def tell(self, bot: Bot, sitting: Sitting, call: Call,
                   time_limit: float) -> CallResult:
        calls = sitting.game.calls
        return await self._line.notify(bot, calls.method(call.name), _params(sitting, call),
                                       time_limit)

    async def ping(self, bot: Bot) -> CallResult:
        return await self._line.ping(bot)


def _params(sitting: Sitting, call: Call) -> JSONObject:
    return {sitting.game.calls.game_id: sitting.game_id, **call.params}

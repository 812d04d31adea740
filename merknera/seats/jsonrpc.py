"""Sessions of bots that speak Merknera's JSON-RPC convention (docs/bots/protocol.md): every
game."""

from __future__ import annotations

from merknera.botclient import PING_METHOD, BotClient, CallResult
from merknera.games import AnyGame, JSONObject
from merknera.seats.base import Call, Sitting
from merknera.seats.called import CalledCarrier, Notifier
from merknera.store.bots import Bot


class JsonRpcCarrier(CalledCarrier):
    """A call named ``N`` of a game with prefix ``P`` is the method ``P.N``, its params the
    call's with the game id added under the game's ``game_id`` param."""

    ping_name = PING_METHOD

    def __init__(self, client: BotClient, notifier: Notifier) -> None:
        super().__init__(notifier)
        self._client = client

    def describe(self, game: AnyGame, name: str) -> str:
        return game.calls.method(name)

    async def ask(self, bot: Bot, sitting: Sitting, call: Call,
                  time_limit: float) -> CallResult:
        calls = sitting.game.calls
        return await self._client.call(bot.endpoint, bot.secret, calls.method(call.name),
                                       _params(sitting, call), time_limit)

    async def tell(self, bot: Bot, sitting: Sitting, call: Call,
                   time_limit: float) -> CallResult:
        calls = sitting.game.calls
        return await self._client.notify(bot.endpoint, bot.secret, calls.method(call.name),
                                         _params(sitting, call), time_limit)

    async def ping(self, bot: Bot) -> CallResult:
        return await self._client.ping(bot.endpoint, bot.secret)


def _params(sitting: Sitting, call: Call) -> JSONObject:
    return {sitting.game.calls.game_id: sitting.game_id, **call.params}

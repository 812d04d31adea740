"""Seats that speak Merknera's JSON-RPC convention (PROTOCOL.md): every game."""

from __future__ import annotations

from merknera.botclient import PING_METHOD, BotClient, CallResult
from merknera.games import AnyGame, JSONObject
from merknera.seats.base import SeatCall, Transport
from merknera.store.bots import Bot


class JsonRpcTransport(Transport):
    """A call named ``N`` of a game with prefix ``P`` is the method ``P.N``, its params the
    call's with the game id added under the game's ``game_id`` param."""

    ping_name = PING_METHOD

    def __init__(self, client: BotClient) -> None:
        self._client = client

    def describe(self, game: AnyGame, name: str) -> str:
        return game.calls.method(name)

    async def ask(self, bot: Bot, game: AnyGame, call: SeatCall,
                  time_limit: float) -> CallResult:
        return await self._client.call(bot.endpoint, bot.secret, game.calls.method(call.name),
                                       _params(game, call), time_limit)

    async def tell(self, bot: Bot, game: AnyGame, call: SeatCall,
                   time_limit: float) -> CallResult:
        return await self._client.notify(bot.endpoint, bot.secret, game.calls.method(call.name),
                                         _params(game, call), time_limit)

    async def ping(self, bot: Bot) -> CallResult:
        return await self._client.ping(bot.endpoint, bot.secret)


def _params(game: AnyGame, call: SeatCall) -> JSONObject:
    return {game.calls.game_id: call.game_id, **call.params}

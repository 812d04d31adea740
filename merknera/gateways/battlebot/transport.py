"""The seat transport of Battlebot's clients: the runner's calls as WebSocket messages.

The runner names its calls as for every bot; here they become what Battlebot's server
did (research a.6):

* the opening state and every state after a valid turn go to both players at once
  (:meth:`witness`), the mover's with its ``turn`` echoed and ``valid: true``;
* asking for a move sends nothing: it waits for the next message of the client, whose last
  state said it was to move, until the turn's deadline (3 s from the last valid update in
  the salted-login era, 4 s in the GraphQL era: invalid turns do not restart it);
* an Error goes to the mover only, as its turn echoed with ``valid: false`` and the state
  unchanged; a message sent out of turn is answered so at once and counts as a fault at
  the client's next turn;
* Complete sends the final state (unless the last update was it) and closes the socket.
"""

from __future__ import annotations

import asyncio

from merknera.botclient import CallResult, Fault
from merknera.config import Config
from merknera.games import AnyGame, JSONObject
from merknera.gateways.battlebot import wire
from merknera.gateways.battlebot.clients import Client, Hub
from merknera.gateways.battlebot.wire import Era
from merknera.protocol.faults import FaultKind
from merknera.seats.base import SeatCall, Transport, Witnessed
from merknera.seats.connected import NOTHING_SENT, Received, gone, next_turn
from merknera.store.bots import Bot


class BattlebotTransport(Transport):
    """Seats held by Battlebot clients connected to the listener (either era)."""

    ping_name = "the connection check"
    witnesses = True

    def __init__(self, hub: Hub, config: Config) -> None:
        self._hub = hub
        self._limits = {Era.SALT: config.battlebot.salt_turn_limit,
                        Era.GRAPHQL: config.battlebot.graphql_turn_limit}

    def describe(self, game: AnyGame, name: str) -> str:
        calls = game.calls
        return {calls.open: "the game's first state", calls.move: "a turn",
                calls.complete: "the final state",
                calls.error: "the answer to an invalid turn"}.get(name, name)

    def can_seat(self, bot: Bot) -> bool:
        # A client that asked for a contest plays only its contest's matches.
        client = self._hub.free(bot.id)
        return client is not None and client.contest is None

    def reserve(self, bot: Bot, game_id: int) -> None:
        self._hub.reserve(bot.id, game_id)

    def holds(self, bot: Bot, game_id: int) -> bool:
        return self._client(bot, game_id) is not None

    def departure(self, bot: Bot, game_id: int) -> asyncio.Event | None:
        client = self._client(bot, game_id)
        if client is not None:
            return client.connection.closed
        left = asyncio.Event()  # a game under way that holds no client for it: it left
        left.set()
        return left

    def release(self, bot: Bot, game_id: int) -> None:
        client = self._client(bot, game_id)
        if client is not None:
            self._hub.release(client, game_id)

    def turn_limit(self, era: Era) -> float:
        """Seconds a client of ``era`` has for a valid turn."""
        return self._limits[era]

    async def ping(self, bot: Bot) -> CallResult:
        if self._hub.connected(bot.id) is None:
            return CallResult(NOTHING_SENT, fault=Fault(
                FaultKind.UNREACHABLE, f"{bot.name} is not connected"))
        return CallResult(NOTHING_SENT)

    def _client(self, bot: Bot, game_id: int) -> Client | None:
        client = self._hub.connected(bot.id)
        if client is None or client.seating is None or client.seating.game_id != game_id:
            return None
        return client

    async def ask(self, bot: Bot, game: AnyGame, call: SeatCall,
                  time_limit: float) -> CallResult:
        if call.name == game.calls.open:
            claimed = await self._hub.claim(bot.id, call.game_id, time_limit)
            if claimed is None:
                return CallResult(NOTHING_SENT, fault=Fault(
                    FaultKind.UNREACHABLE,
                    f"{bot.name} has no connection free for the game (a Battlebot client "
                    "plays one game per connection, and connects again for the next)"))
            return CallResult(NOTHING_SENT)
        client = self._client(bot, call.game_id)
        if client is None or client.seating is None:
            return gone(bot.name)
        return await next_turn(client.seating, client.connection.closed,
                               self.turn_limit(client.era), bot.name)

    async def tell(self, bot: Bot, game: AnyGame, call: SeatCall,
                   time_limit: float) -> CallResult:
        client = self._client(bot, call.game_id)
        seating = client.seating if client is not None else None
        if client is None or seating is None:
            return gone(bot.name)
        if call.name == game.calls.error:
            message = seating.judging
            text = call.params.get("message")
            if message is not None and not message.answered:
                self.answer_invalid(client, message, text if isinstance(text, str) else None)
        elif call.name == game.calls.complete:
            final = call.params.get("state")
            if isinstance(final, dict) and not (seating.view and wire.is_complete(seating.view)):
                seating.view = final
                client.connection.send(wire.update(client.era, final))
            seating.finished = True
            client.connection.close()
        return CallResult(NOTHING_SENT)

    def answer_invalid(self, client: Client, message: Received, error: str | None) -> None:
        """Tell a client that a message of its was no valid turn: its turn echoed with
        ``valid: false`` and the state unchanged (Battlebot sent it to the mover only)."""
        seating = client.seating
        if seating is None or seating.view is None:
            return
        turn = wire.turn_echo(client.era, message.sent, client.bot.name, message.time_ms,
                              valid=False, error=error or message.problem)
        client.connection.send(wire.update(client.era, seating.view, turn))

    async def witness(self, bot: Bot, game: AnyGame, seen: Witnessed) -> None:
        client = self._client(bot, seen.game_id)
        seating = client.seating if client is not None else None
        view = seen.view.get("state")
        if client is None or seating is None or not isinstance(view, dict):
            return
        turn: JSONObject | None = None
        players = view.get("players")
        if seen.mover is not None and isinstance(players, list):
            sent = seen.sent if isinstance(seen.sent, dict) else (
                seen.move if isinstance(seen.move, dict) else {})
            turn = wire.turn_echo(client.era, sent, str(players[seen.mover]), seen.at_ms,
                                  valid=True)
        client.connection.send(wire.update(client.era, view, turn))
        # A valid update starts the clock of the player to move again.
        seating.moved_on(view, wire.is_to_move(view, bot.name), self.turn_limit(client.era),
                         lambda message: self.answer_invalid(
                             client, message, "sent while it was not your turn"))

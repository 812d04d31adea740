"""Battlebot's clients as held seats: the runner's calls as WebSocket messages.

The runner names its calls as for every bot; here they become what Battlebot's server
did (research a.6):

* the opening state and every state after a valid turn go to both players at once
  (:meth:`BattlebotHold.show`), the mover's with its ``turn`` echoed and ``valid: true``;
* asking for a move sends nothing: the next message of the client, whose last state said
  it was to move, is its turn, within the turn's limit (3 s from the last valid update in
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
from merknera.seats.base import Call, Moment, Sitting
from merknera.seats.held import Hold, Holder
from merknera.seats.turns import NOTHING_SENT, Received, Turns
from merknera.store.bots import Bot


class BattlebotHold(Hold):
    """A Battlebot client's hold on the seat of the one game its connection plays."""

    def __init__(self, client: Client, turns: Turns, sitting: Sitting,
                 turn_limit: float) -> None:
        self.client = client
        self.turns = turns
        self._sitting = sitting
        self._turn_limit = turn_limit

    @property
    def left(self) -> asyncio.Event:
        return self.client.connection.closed

    def turn_limit(self, time_limit: float) -> float:
        return self._turn_limit

    def show(self, moment: Moment) -> None:
        client = self.client
        view = moment.view(self._sitting.seat).get("state")
        if client.closed or not isinstance(view, dict):
            return
        turn: JSONObject | None = None
        players = view.get("players")
        if moment.mover is not None and isinstance(players, list):
            sent = moment.sent if isinstance(moment.sent, dict) else (
                moment.move if isinstance(moment.move, dict) else {})
            turn = wire.turn_echo(client.era, sent, str(players[moment.mover]), moment.at_ms,
                                  valid=True)
        client.connection.send(wire.update(client.era, view, turn))
        # A valid update starts the clock of the player to move again.
        self.turns.moved_on(view, wire.is_to_move(view, client.bot.name), self._turn_limit,
                            lambda message: refuse(client, message,
                                                   "sent while it was not your turn"))

    def faulted(self, error: Call) -> None:
        message = self.turns.judging
        text = error.params.get("message")
        if not self.client.closed and message is not None and not message.answered:
            refuse(self.client, message, text if isinstance(text, str) else None)

    def end(self, complete: Call) -> None:
        client, turns = self.client, self.turns
        if client.closed:
            return
        final = complete.params.get("state")
        if isinstance(final, dict) and not (turns.view and wire.is_complete(turns.view)):
            turns.view = final
            client.connection.send(wire.update(client.era, final))
        turns.finished = True
        client.connection.close()


def refuse(client: Client, message: Received, error: str | None) -> None:
    """Tell a client that a message of its was no valid turn: its turn echoed with
    ``valid: false`` and the state unchanged (Battlebot sent it to the mover only)."""
    turns = client.turns
    if turns is None or turns.view is None:
        return
    turn = wire.turn_echo(client.era, message.sent, client.bot.name, message.time_ms,
                          valid=False, error=error or message.problem)
    client.connection.send(wire.update(client.era, turns.view, turn))


class BattlebotHolder(Holder[BattlebotHold]):
    """Battlebot clients connected to the listener (either era), as the hub keeps them."""

    ping_name = "the connection check"

    def __init__(self, hub: Hub, config: Config) -> None:
        self._hub = hub
        self._limits = {Era.SALT: config.battlebot.salt_turn_limit,
                        Era.GRAPHQL: config.battlebot.graphql_turn_limit}

    def describe(self, game: AnyGame, name: str) -> str:
        calls = game.calls
        return {calls.open: "the game's first state", calls.move: "a turn",
                calls.complete: "the final state",
                calls.error: "the answer to an invalid turn"}.get(name, name)

    def take(self, sitting: Sitting) -> BattlebotHold | None:
        if not sitting.begun:
            self._hub.reserve(sitting.bot.id, sitting.game_id)
        return self._hold(self._hub.connected(sitting.bot.id), sitting)

    async def claim(self, sitting: Sitting, time_limit: float) -> BattlebotHold | str:
        bot = sitting.bot
        hold = self._hold(await self._hub.claim(bot.id, sitting.game_id, time_limit), sitting)
        if hold is None:
            return (f"{bot.name} has no connection free for the game (a Battlebot client "
                    "plays one game per connection, and connects again for the next)")
        return hold

    def _hold(self, client: Client | None, sitting: Sitting) -> BattlebotHold | None:
        """The client's hold on the seat, if its connection plays the game."""
        if client is None or client.turns is None or client.turns.game_id != sitting.game_id:
            return None
        return BattlebotHold(client, client.turns, sitting, self._limits[client.era])

    def let_go(self, hold: BattlebotHold) -> None:
        self._hub.release(hold.client, hold.turns.game_id)

    def free(self, bot: Bot) -> bool:
        # A client that asked for a contest plays only its contest's matches.
        client = self._hub.free(bot.id)
        return client is not None and client.contest is None

    async def ping(self, bot: Bot) -> CallResult:
        if self._hub.connected(bot.id) is None:
            return CallResult(NOTHING_SENT, fault=Fault(
                FaultKind.UNREACHABLE, f"{bot.name} is not connected"))
        return CallResult(NOTHING_SENT)

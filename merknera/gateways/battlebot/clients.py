"""Battlebot's connected clients: one logged-in WebSocket each, and the hub that knows
which bot is connected and hands a client to the game it plays.

A Battlebot client plays one game per connection (its server closed the socket after the
final state), and a bot may hold one connection at a time here.  What a client sends during
a game goes to its :class:`~merknera.seats.turns.Turns` (what it was last sent, whether it
may move, its turn's deadline), from which its held session
(:mod:`merknera.gateways.battlebot.holds`) takes its turns for the game's runner.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable

from merknera.gateways.battlebot.wire import Era, Login
from merknera.guard.sockets import CLOSE_GOING_AWAY, ClientSocket
from merknera.seats.turns import Received, Turns
from merknera.store.bots import Bot


class Client:
    """A logged-in Battlebot client."""

    def __init__(self, connection: ClientSocket, bot: Bot, login: Login) -> None:
        self.connection = connection
        self.bot = bot
        self.login = login
        self.turns: Turns | None = None
        """Its turns in the game it plays: set when a game takes the client."""

    @property
    def era(self) -> Era:
        return self.login.era

    @property
    def contest(self) -> str | None:
        return self.login.contest

    @property
    def closed(self) -> bool:
        return self.connection.closed.is_set()

    def received(self, message: Received, answer: Callable[[Received], None]) -> None:
        """A message came: its game's turns take it (:meth:`Turns.take`); before a game
        began it is nothing."""
        if self.turns is not None:
            self.turns.take(message, answer)


class Hub:
    """Every logged-in client, by bot; claims of clients by games."""

    def __init__(self) -> None:
        self._clients: dict[int, Client] = {}
        self._waiters: dict[int, collections.deque[tuple[int, asyncio.Future[Client]]]] = {}
        self.on_arrival: Callable[[Client], None] = lambda client: None
        """Called with each client that no game was waiting for (the lobby's door)."""

    def connected(self, bot_id: int) -> Client | None:
        """The bot's client, if it is connected."""
        client = self._clients.get(bot_id)
        return None if client is None or client.closed else client

    def free(self, bot_id: int) -> Client | None:
        """The bot's client if it is connected and in no game."""
        client = self.connected(bot_id)
        return client if client is not None and client.turns is None else None

    def add(self, client: Client) -> bool:
        """A client logged in: False if its bot is connected already (one connection
        each).  A game waiting for the bot takes it (unless the client asked for a
        contest: then only its contest's matches do); else it goes to the lobby."""
        if self.connected(client.bot.id) is not None:
            return False
        self._clients[client.bot.id] = client
        waiting = self._waiters.get(client.bot.id) if client.contest is None else None
        while waiting:
            game_id, future = waiting.popleft()
            if not future.done():
                client.turns = Turns(game_id)
                future.set_result(client)
                return True
        self.on_arrival(client)
        return True

    def remove(self, client: Client) -> None:
        """The client's socket closed."""
        if self._clients.get(client.bot.id) is client:
            del self._clients[client.bot.id]

    def seat(self, client: Client, game_id: int) -> bool:
        """Give a free client to a game (the lobby's match); False if it is not free."""
        if client.closed or client.turns is not None:
            return False
        client.turns = Turns(game_id)
        return True

    async def claim(self, bot_id: int, game_id: int, wait: float) -> Client | None:
        """The bot's client for a game: the one seated in it already, or a free one, or
        one that logs in within ``wait`` seconds; None if none does."""
        client = self.connected(bot_id)
        if client is not None and client.turns is not None and (
                client.turns.game_id == game_id):
            return client
        if client is not None and client.contest is None and self.seat(client, game_id):
            return client
        future: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        waiting = self._waiters.setdefault(bot_id, collections.deque())
        waiting.append((game_id, future))
        try:
            async with asyncio.timeout(wait):
                # Shielded: a client handed over just as the wait ran out is still ours.
                return await asyncio.shield(future)
        except TimeoutError:
            if future.done() and not future.cancelled():
                return future.result()
            future.cancel()
            return None
        except asyncio.CancelledError:
            # The game's runner stopped: a client handed over meanwhile is free again.
            if future.done() and not future.cancelled():
                self.release(future.result(), game_id)
            future.cancel()
            raise
        finally:
            if all(f.done() for _, f in waiting) and self._waiters.get(bot_id) is waiting:
                del self._waiters[bot_id]

    def reserve(self, bot_id: int, game_id: int) -> None:
        """Seat the bot's free client (not one that asked for a contest) in a game that
        was just made for it, so that nothing else takes it before the game opens."""
        client = self.free(bot_id)
        if client is not None and client.contest is None:
            self.seat(client, game_id)

    def release(self, client: Client, game_id: int) -> None:
        """The game ``game_id`` will not go on with the client (it ended without its
        final state, or its runner stopped): close the socket, so that the client
        connects again for its next game."""
        turns = client.turns
        if turns is not None and turns.game_id == game_id and not turns.finished:
            turns.finished = True
            client.connection.close(CLOSE_GOING_AWAY)

    def clients(self) -> list[Client]:
        """Every connected client."""
        return [client for client in self._clients.values() if not client.closed]

"""Seats getting ready: ``<G>.Ready`` calls from bots, and the runners waiting for them.

A bot that answers ``<G>.NewGame`` with PREPARING downloads the game's assets and then
calls ``<G>.Ready`` on ``/rpc`` with the SHA1 of each file it holds.  The call is checked
against the store (the game, its seats) and the asset manifest (the hashes), recorded,
and wakes the game's runner.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass

from merknera.assets import AssetStore
from merknera.games import JSON, AnyGame, JSONObject
from merknera.guard import AuthThrottle, Caller, same_host
from merknera.protocol import jsonrpc
from merknera.store import Database, logs, users
from merknera.store.db import Connection
from merknera.store.games import GameStatus
from merknera.store.users import User


class Readiness:
    """Seats that answered NewGame with PREPARING, and whether they have called Ready.

    The runner says which seats it expects a Ready from; ``<G>.Ready`` marks them; the
    runner waits and then forgets the game.  A Ready that comes before the runner has read
    the PREPARING answer is kept too (the bot may be that quick).
    """

    def __init__(self) -> None:
        self._events: dict[tuple[int, int], asyncio.Event] = {}
        self._addresses: dict[tuple[int, int], frozenset[str]] = {}

    def expect(self, game_id: int, seat: int,
               addresses: frozenset[str] = frozenset()) -> None:
        """The seat answered PREPARING: a Ready is due (a nameless one from ``addresses``,
        those of its bot's endpoint)."""
        self._events.setdefault((game_id, seat), asyncio.Event())
        self._addresses[(game_id, seat)] = addresses

    def addresses(self, game_id: int, seat: int) -> frozenset[str]:
        """The addresses of the preparing seat's endpoint when it answered PREPARING."""
        return self._addresses.get((game_id, seat), frozenset())

    def preparing(self, game_id: int, seats: Iterable[int]) -> list[int]:
        """Those of ``seats`` expected to call Ready that have not yet."""
        return [seat for seat in seats
                if (event := self._events.get((game_id, seat))) is not None
                and not event.is_set()]

    def mark(self, game_id: int, seat: int) -> None:
        """The seat is ready."""
        self._events.setdefault((game_id, seat), asyncio.Event()).set()

    def is_ready(self, game_id: int, seat: int) -> bool:
        """Whether the seat has called Ready."""
        event = self._events.get((game_id, seat))
        return event is not None and event.is_set()

    async def wait(self, game_id: int, seats: Iterable[int], time_limit: float) -> None:
        """Wait until these seats are ready or the time is up."""
        waiting = [self._events.setdefault((game_id, seat), asyncio.Event()) for seat in seats]
        pending = [asyncio.ensure_future(event.wait()) for event in waiting]
        try:
            if pending:
                await asyncio.wait(pending, timeout=time_limit)
        finally:
            for task in pending:
                task.cancel()

    def forget(self, game_id: int, seats: Iterable[int]) -> None:
        """Drop a game's entries (it has begun, or ended before it could)."""
        for seat in seats:
            self._events.pop((game_id, seat), None)
            self._addresses.pop((game_id, seat), None)


@dataclass(frozen=True)
class _Seat:
    seat: int
    bot_id: int
    bot_name: str
    user_id: int
    ready: bool


class ReadyService:
    """Serves ``<G>.Ready`` for every game with assets."""

    def __init__(self, db: Database, assets: AssetStore, readiness: Readiness,
                 auth: AuthThrottle) -> None:
        self._db = db
        self._assets = assets
        self._readiness = readiness
        self._auth = auth

    async def ready(self, game: AnyGame, params: JSONObject, caller: Caller) -> JSON:
        """Check a Ready call and mark the seat ready; returns ``{"status": "OK"}``.

        The seat is named by ``botname`` with its owner's ``token``; a Ready with neither
        (Merknera's wiki had no such params) is taken only from the address of the preparing
        seat's endpoint.

        :raises jsonrpc.RpcError: saying precisely what was wrong.
        """
        game_id = params.get("gameid")
        if isinstance(game_id, bool) or not isinstance(game_id, int) or not (
                1 <= game_id < 2**63):
            raise jsonrpc.RpcError(jsonrpc.INVALID_PARAMS,
                                   'The param "gameid" must be the integer id of the game')
        for name in game.assets:
            if not isinstance(params.get(name), str):
                raise jsonrpc.RpcError(
                    jsonrpc.INVALID_PARAMS,
                    f'The param "{name}" must be the SHA1 (hex) of the {name} file you hold')
        botname, token = params.get("botname"), params.get("token")
        if botname is not None and not isinstance(botname, str):
            raise jsonrpc.RpcError(jsonrpc.INVALID_PARAMS, 'The param "botname" must be a string')
        if botname is not None and token is None:
            raise jsonrpc.RpcError(jsonrpc.INVALID_PARAMS,
                                   'The param "token" is required with "botname"')
        if token is not None and botname is None:
            raise jsonrpc.RpcError(jsonrpc.INVALID_PARAMS,
                                   'The param "botname" is required with "token"')
        if token is not None and not isinstance(token, str):
            raise jsonrpc.RpcError(jsonrpc.INVALID_PARAMS, 'The param "token" must be a string')
        found = await self._db.read(lambda conn: _game_seats(conn, game_id))
        if found is None:
            raise jsonrpc.RpcError(jsonrpc.UNKNOWN_GAME_ID, f"Game {game_id} is not known")
        mnemonic, status, settings, seats = found
        if mnemonic != game.mnemonic:
            raise jsonrpc.RpcError(jsonrpc.UNKNOWN_GAME_ID,
                                   f"Game {game_id} is a {mnemonic} game, not {game.mnemonic}")
        if status is GameStatus.FINISHED:
            raise jsonrpc.RpcError(jsonrpc.NOT_ALLOWED, f"Game {game_id} has finished")
        recorded = settings.get("assets")
        for name, expected in sorted(self._assets.roles(game.mnemonic).items()):
            wanted = (recorded.get(name) if isinstance(recorded, dict) else None) or expected.sha1
            held = str(params[name]).strip().lower()
            if held != wanted:
                raise jsonrpc.RpcError(
                    jsonrpc.ASSET_MISMATCH,
                    f'The {name} file you hold (SHA1 {held[:64]}) is not the one of game '
                    f"{game_id}: {expected.name} has SHA1 {wanted}; download it again "
                    f"from {expected.name}'s URL in {game.calls.method(game.calls.open)}")
        if status is GameStatus.RUNNING:
            return {"status": "OK"}  # it began already: a repeated Ready changes nothing
        seat = await self._identify(game_id, seats, botname, token, caller)
        def record(conn: Connection) -> None:
            conn.execute("UPDATE seats SET ready = 1 WHERE game_id = ? AND seat = ?",
                         (game_id, seat.seat))
            calls = game.calls
            logs.add(conn, seat.bot_id, f"{calls.method(calls.ready)} (gameId: {game_id}): "
                                        "the asset hashes match", game_id)

        await self._db.transaction(record)
        self._readiness.mark(game_id, seat.seat)
        return {"status": "OK"}

    async def _identify(self, game_id: int, seats: list[_Seat], botname: str | None,
                        token: str | None, caller: Caller) -> _Seat:
        if botname is None:
            return self._by_address(game_id, seats, caller)
        mine = [seat for seat in seats if seat.bot_name == botname]
        if not mine:
            raise jsonrpc.RpcError(jsonrpc.NOT_ALLOWED,
                                   f'No bot named "{botname}" plays in game {game_id}')
        owner: User | None = await self._auth.verify(
            caller.client, token or "", functools.partial(users.find_user_by_token, self._db))
        if owner is None or owner.id != mine[0].user_id:
            raise jsonrpc.RpcError(jsonrpc.UNKNOWN_TOKEN,
                                   f'That token does not own the bot "{botname}"')
        if owner.suspended:
            raise jsonrpc.RpcError(jsonrpc.NOT_ALLOWED,
                                   f'User "{owner.name}" is suspended by an admin')
        # A bot seated twice (it cannot be, by the scheduler) would be ready twice over.
        return next((seat for seat in mine if not seat.ready), mine[0])


    def _by_address(self, game_id: int, seats: list[_Seat], caller: Caller) -> _Seat:
        """The seat a nameless Ready (Merknera's wiki form) is for: the one preparing seat
        whose endpoint is at the caller's address.  Anyone else could otherwise start a
        game while its bot is still downloading, by knowing the public hashes.

        The endpoint's addresses were looked up when the seat answered PREPARING, so a
        Ready costs no name lookup (whose time a bot's owner controls)."""
        waiting = set(self._readiness.preparing(game_id, [seat.seat for seat in seats]))
        theirs = [seat for seat in seats if seat.seat in waiting and caller.address is not None
                  and any(same_host(caller.address, address)
                          for address in self._readiness.addresses(game_id, seat.seat))]
        if len(theirs) == 1:
            return theirs[0]
        if not theirs:
            raise jsonrpc.RpcError(
                jsonrpc.NOT_ALLOWED,
                f"No seat of game {game_id} preparing for it has its endpoint at the address "
                'this call came from: send "botname" and "token" to say which seat is yours')
        raise jsonrpc.RpcError(
            jsonrpc.INVALID_PARAMS,
            f"{len(theirs)} seats of game {game_id} at your address are preparing: say which "
            'is yours with "botname" and "token"')


def _game_seats(conn: Connection,
                game_id: int) -> tuple[str, GameStatus, dict[str, JSON], list[_Seat]] | None:
    row = conn.execute("SELECT game, status, settings FROM games WHERE id = ?",
                       (game_id,)).fetchone()
    if row is None:
        return None
    seats = [_Seat(r["seat"], r["bot_id"], r["name"], r["user_id"], bool(r["ready"]))
             for r in conn.execute(
        "SELECT seats.seat, seats.bot_id, seats.ready, bots.name, bots.user_id FROM seats "
        "JOIN bots ON bots.id = seats.bot_id WHERE seats.game_id = ? ORDER BY seats.seat",
        (game_id,))]
    return row["game"], GameStatus(row["status"]), json.loads(row["settings"]), seats

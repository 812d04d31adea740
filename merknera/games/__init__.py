"""Pure game rules and the registry of the games the platform hosts.

Nothing in this package does I/O: no asyncio, no HTTP, no store.
"""

from __future__ import annotations

from typing import Any

from merknera.games.base import (
    CHANCE,
    JSON,
    Announcement,
    Calls,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    JSONObject,
    MoveError,
    Outcome,
    Seat,
    SeatResult,
    Step,
    Termination,
    UnknownGameError,
)
from merknera.games.battlebot import NoughtsAndCrosses, Numberwang
from merknera.games.hexagons import Hexagons
from merknera.games.kalaha import Kalaha
from merknera.games.plugins import discover
from merknera.games.scrabble import Scrabble
from merknera.games.squelch import Squelch
from merknera.games.tictactoe import TicTacToe

AnyGame = Game[Any, Any]

REGISTRY: dict[str, AnyGame] = {game.mnemonic: game for game in (
    TicTacToe(), Scrabble(), Squelch(), Hexagons(), NoughtsAndCrosses(), Numberwang(),
    Kalaha())}
"""Every hosted game by its mnemonic: the built-in ones, then those of installed plugins
(:mod:`merknera.games.plugins`).  Games with assets are not ready to play until
:meth:`Game.with_assets` has given them their files (the platform does that at start-up)."""

PLUGINS, PLUGIN_PROBLEMS = discover(REGISTRY)
"""The games installed plugins add (in REGISTRY too), and the plugins skipped, with why."""
REGISTRY.update((game.mnemonic, game) for game in PLUGINS)


def get_game(mnemonic: str) -> AnyGame:
    """The game registered under ``mnemonic``.

    :raises UnknownGameError: if there is none.
    """
    try:
        return REGISTRY[mnemonic]
    except KeyError:
        raise UnknownGameError(mnemonic) from None


__all__ = [
    "CHANCE", "JSON", "PLUGINS", "PLUGIN_PROBLEMS", "REGISTRY", "Announcement", "AnyGame",
    "Calls", "Game", "IllegalMoveError", "InvalidMoveError", "JSONObject", "MoveError",
    "Outcome", "Seat", "SeatResult", "Step", "Termination", "UnknownGameError", "get_game",
]

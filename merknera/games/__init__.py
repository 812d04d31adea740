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
from merknera.games.plugins import PluginProblem, discover
from merknera.games.scrabble import Scrabble
from merknera.games.squelch import Squelch
from merknera.games.tictactoe import TicTacToe

AnyGame = Game[Any, Any]

BUILT_IN: tuple[AnyGame, ...] = (
    TicTacToe(), Scrabble(), Squelch(), Hexagons(), NoughtsAndCrosses(), Numberwang(),
    Kalaha())
"""The games the platform itself hosts."""

# Looked up on first use (module __getattr__, below), not at import: a plugin's module
# imports this package for the Game interface, and must be imported completely before
# its entry point is loaded.
REGISTRY: dict[str, AnyGame]
"""Every hosted game by its mnemonic: the built-in ones, then those of installed plugins
(:mod:`merknera.games.plugins`).  Games with assets are not ready to play until
:meth:`Game.with_assets` has given them their files (the platform does that at start-up)."""
PLUGINS: list[AnyGame]
"""The games installed plugins add (in :data:`REGISTRY` too)."""
PLUGIN_PROBLEMS: list[PluginProblem]
"""The plugins skipped, with why."""

_FOUND_ON_FIRST_USE = ("REGISTRY", "PLUGINS", "PLUGIN_PROBLEMS")


def __getattr__(name: str) -> Any:
    if name not in _FOUND_ON_FIRST_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _found()[name]


def _found() -> dict[str, Any]:
    """The registry and the plugins, found once."""
    found = globals()
    if "REGISTRY" not in found:
        built_in = {game.mnemonic: game for game in BUILT_IN}
        plugins, problems = discover(built_in)
        found.update(REGISTRY={**built_in, **{game.mnemonic: game for game in plugins}},
                     PLUGINS=plugins, PLUGIN_PROBLEMS=problems)
    return found


def get_game(mnemonic: str) -> AnyGame:
    """The game registered under ``mnemonic``.

    :raises UnknownGameError: if there is none.
    """
    try:
        registry: dict[str, AnyGame] = _found()["REGISTRY"]
        return registry[mnemonic]
    except KeyError:
        raise UnknownGameError(mnemonic) from None


__all__ = [
    "CHANCE", "JSON", "PLUGINS", "PLUGIN_PROBLEMS", "REGISTRY", "Announcement", "AnyGame",
    "Calls", "Game", "IllegalMoveError", "InvalidMoveError", "JSONObject", "MoveError",
    "Outcome", "Seat", "SeatResult", "Step", "Termination", "UnknownGameError", "get_game",
]

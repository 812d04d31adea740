"""Games from other distributions: any installed distribution that declares an entry point
in the ``merknera.games`` group adds its game to the platform, as Battlebot's
server took any module dropped into its ``./games``::

    [project.entry-points."merknera.games"]
    connect4 = "merknera_connect4:ConnectFour"

An entry point names a :class:`~merknera.games.base.Game` subclass (made with no
arguments) or instance.  One that cannot be imported, is not a game, breaks the static
house rules (:func:`~merknera.games.testing.check_static_facts`) or takes a mnemonic
another game has is skipped, and :data:`merknera.games.PLUGIN_PROBLEMS` says why, with
the distribution's name; the platform reports those at start-up and starts all the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from merknera.games.base import Game
from merknera.games.testing import ConformanceError, check_static_facts

GROUP = "merknera.games"
"""The entry point group a game plugin declares."""


@dataclass(frozen=True)
class PluginProblem:
    """A game plugin that was skipped, and why."""

    distribution: str
    entry_point: str
    reason: str

    def __str__(self) -> str:
        return (f"the game plugin {self.entry_point!r} of the distribution "
                f"{self.distribution} is skipped: {self.reason}")


def discover(taken: Iterable[str],
             entry_points: Iterable[metadata.EntryPoint] | None = None,
             ) -> tuple[list[Game[Any, Any]], list[PluginProblem]]:
    """The games the ``merknera.games`` entry points give (``entry_points``: those, else
    every installed one), and the problems of those skipped.  ``taken``: the mnemonics
    already hosted (a plugin may not take one, nor two plugins the same)."""
    found: list[Game[Any, Any]] = []
    problems: list[PluginProblem] = []
    held = dict.fromkeys(taken, "the platform")
    chosen = (metadata.entry_points(group=GROUP) if entry_points is None
              else entry_points)
    for entry_point in sorted(chosen, key=lambda point: (point.name, point.value)):
        distribution = entry_point.dist.name if entry_point.dist is not None else "(unknown)"

        def skip(reason: str, point: metadata.EntryPoint = entry_point,
                 owner: str = distribution) -> None:
            problems.append(PluginProblem(owner, f"{point.name} = {point.value}", reason))

        try:
            loaded = entry_point.load()
            game = loaded() if isinstance(loaded, type) else loaded
        except Exception as exc:  # a plugin's own fault must not stop the platform
            skip(f"it cannot be loaded ({type(exc).__name__}: {exc})")
            continue
        if not isinstance(game, Game):
            skip(f"it gives {type(game).__name__}, not a merknera.games.Game")
            continue
        try:
            check_static_facts(game)
        except ConformanceError as exc:
            skip(f"it breaks a house rule: {exc}")
            continue
        except Exception as exc:
            skip(f"its facts cannot be read ({type(exc).__name__}: {exc})")
            continue
        if game.mnemonic in held:
            skip(f"its mnemonic {game.mnemonic} is taken by {held[game.mnemonic]}")
            continue
        held[game.mnemonic] = f"the distribution {distribution}"
        found.append(game)
    return found, problems

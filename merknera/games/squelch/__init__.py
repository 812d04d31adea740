"""Squelch, the Squelchbot arena's Farkle variant, played as matches
(docs/bots/protocol.md section 4).

* :mod:`.scoring`: the spec's table and the options offered for a roll.
* :mod:`.state`: the settings, the immutable match state and its JSON.
* :mod:`.game`: :class:`Squelch`, the rules of a turn, a game and a match, and the wire view.
"""

from __future__ import annotations

from merknera.games.squelch.game import (
    MAX_ROLLS_PER_TURN,
    Choice,
    Squelch,
    SquelchCall,
    SquelchMove,
    move_bound,
    parse_chance,
    parse_move,
    render,
)
from merknera.games.squelch.scoring import (
    Scoring,
    is_roll,
    points_using_all,
    scorings,
    squelches,
    triple_points,
)
from merknera.games.squelch.state import (
    DEFAULT_SETTINGS,
    MAX_GAME_COUNT,
    MAX_SEATS,
    MAX_TURN_LIMIT,
    BotTurn,
    FinalRound,
    Option,
    RollRecord,
    Settings,
    SquelchState,
    Turn,
    state_from_json,
    state_to_json,
)

__all__ = [
    "DEFAULT_SETTINGS", "MAX_GAME_COUNT", "MAX_ROLLS_PER_TURN", "MAX_SEATS", "MAX_TURN_LIMIT",
    "BotTurn", "Choice", "FinalRound", "Option", "RollRecord", "Scoring", "Settings",
    "Squelch", "SquelchCall", "SquelchMove", "SquelchState", "Turn", "is_roll", "move_bound",
    "parse_chance", "parse_move", "points_using_all", "render", "scorings", "squelches",
    "state_from_json", "state_to_json", "triple_points",
]

"""Scrabble (Merknera's wiki draft, completed in docs/bots/protocol.md section 4).

* :mod:`.assets`: the board, tile set and dictionary files, parsed.
* :mod:`.moves`: PLAY, PASS and EXCHANGE, and the bots' wire form of them.
* :mod:`.state`: the immutable game state and its JSON.
* :mod:`.bag`: drawing, returning and taking tiles.
* :mod:`.scoring`: checking and scoring a play (the referee's hot path).
* :mod:`.game`: :class:`Scrabble`, the rules of a turn, the end, and the wire view.
"""

from __future__ import annotations

from merknera.games.scrabble.assets import (
    BLANK,
    BoardLayout,
    Lexicon,
    TileSet,
    parse_dictionary,
    parse_gameboard,
    parse_letters,
    square_name,
)
from merknera.games.scrabble.game import SCORELESS_TURNS, AssetsMissingError, Scrabble, move_bound
from merknera.games.scrabble.moves import (
    Exchange,
    Pass,
    Placement,
    Play,
    ScrabbleMove,
    move_to_wire,
    parse_move,
)
from merknera.games.scrabble.scoring import ScoredPlay, Word, score_play
from merknera.games.scrabble.state import EMPTY, Ending, ScrabbleState, render

__all__ = [
    "BLANK", "EMPTY", "SCORELESS_TURNS", "AssetsMissingError", "BoardLayout", "Ending",
    "Exchange", "Lexicon", "Pass", "Placement", "Play", "ScoredPlay", "Scrabble",
    "ScrabbleMove", "ScrabbleState", "TileSet", "Word", "move_bound", "move_to_wire",
    "parse_dictionary", "parse_gameboard", "parse_letters", "parse_move", "render",
    "score_play", "square_name",
]

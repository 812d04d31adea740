"""Scrabble as the platform plays it: the rules of a turn, the end, and the wire view.

``Scrabble()`` knows the game's name and shape; ``Scrabble().with_assets(files)`` is the game
set up with a board, a tile set and a dictionary, and only that one can play.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from merknera.games.base import (
    JSON,
    Calls,
    Game,
    IllegalMoveError,
    JSONObject,
    Outcome,
    Seat,
)
from merknera.games.scrabble.assets import (
    BoardLayout,
    Lexicon,
    TileSet,
    parse_dictionary,
    parse_gameboard,
    parse_letters,
    square_name,
)
from merknera.games.scrabble.bag import draw, put_back, take
from merknera.games.scrabble.moves import (
    Exchange,
    Pass,
    Play,
    ScrabbleMove,
    move_to_wire,
    parse_move,
)
from merknera.games.scrabble.scoring import score_play
from merknera.games.scrabble.state import (
    EMPTY,
    Ending,
    ScrabbleState,
    state_from_json,
    state_to_json,
)

SCORELESS_TURNS = 6
"""Consecutive scoreless turns (by any players) that end the game."""


class AssetsMissingError(RuntimeError):
    """The game was asked to play before it was given its asset files."""


def move_bound(tiles: int) -> int:
    """The most turns a game with ``tiles`` tiles (at most one per square) can last.

    A turn that scores places at least one tile, so at most ``tiles`` turns score.  Passes,
    exchanges and plays worth 0 score nothing, and the sixth in a row ends the game, so at
    most five come before each scoring turn and after the last, then one more ends it:
    ``tiles + 5 * (tiles + 1) + 1 = 6 * (tiles + 1)``, 606 for the standard 100 tiles.
    """
    return 6 * (tiles + 1)


@dataclass(frozen=True)
class _Assets:
    layout: BoardLayout
    tiles: TileSet
    lexicon: Lexicon


class Scrabble(Game[ScrabbleState, ScrabbleMove]):
    """Standard Scrabble for 2-4 players on the board, tiles and dictionary of its assets.

    :meth:`legal_moves` lists PASS and the exchanges of one tile (one per letter held, when
    the bag allows exchanges), not the plays: plays are legal too, but listing them all is a
    move generator's job, not the referee's.
    """

    mnemonic = "SCRABBLE"
    name = "Scrabble"
    calls = Calls("Scrabble")
    min_seats = 2
    max_seats = 4
    max_moves = move_bound(100)
    """For the standard tile set; a game with assets uses its own tile count (see
    :func:`move_bound`)."""
    assets = ("gameboard", "dictionary", "letters")

    def __init__(self, layout: BoardLayout | None = None, tiles: TileSet | None = None,
                 lexicon: Lexicon | None = None) -> None:
        if layout is None or tiles is None or lexicon is None:
            if (layout, tiles, lexicon) != (None, None, None):
                raise ValueError("Scrabble needs all three of a board, a tile set and a lexicon")
            self._assets: _Assets | None = None
            return
        self._assets = _Assets(layout, tiles, lexicon)
        self.max_moves = move_bound(min(tiles.total, layout.size))

    @property
    def layout(self) -> BoardLayout:
        """The board.  :raises AssetsMissingError: without assets."""
        return self._ready().layout

    @property
    def tiles(self) -> TileSet:
        """The tile set.  :raises AssetsMissingError: without assets."""
        return self._ready().tiles

    @property
    def lexicon(self) -> Lexicon:
        """The dictionary.  :raises AssetsMissingError: without assets."""
        return self._ready().lexicon

    def with_assets(self, files: Mapping[str, bytes]) -> Scrabble:
        """This game with the ``gameboard``, ``dictionary`` and ``letters`` files' contents.

        :raises ValueError: if a file is missing or not what it should be.
        """
        missing = [name for name in self.assets if name not in files]
        if missing:
            raise ValueError(f"Scrabble needs the asset files {', '.join(missing)}")
        return Scrabble(parse_gameboard(files["gameboard"]), parse_letters(files["letters"]),
                        parse_dictionary(files["dictionary"]))

    def _ready(self) -> _Assets:
        if self._assets is None:
            raise AssetsMissingError(
                "Scrabble has no board, tiles or dictionary yet: play with "
                "Scrabble().with_assets({'gameboard': ..., 'dictionary': ..., 'letters': ...})")
        return self._assets

    # -- rules -------------------------------------------------------------------------

    def new(self, settings: Mapping[str, JSON], players: Sequence[str],
            rng: random.Random) -> ScrabbleState:
        """Shuffle the bag with ``rng``, draw the bag seed from it, and deal the racks."""
        tiles = self._ready().tiles
        seats = len(players)
        if not self.min_seats <= seats <= self.max_seats:
            raise ValueError(f"Scrabble is for 2-4 players, not {seats}")
        if tiles.total < seats * tiles.rack:
            raise ValueError(f"{tiles.total} tiles cannot fill {seats} racks of {tiles.rack}")
        bag = list(tiles.bag())
        rng.shuffle(bag)
        # 53 bits: the seed is a JSON number that any language reads exactly.
        seed = rng.getrandbits(53)
        racks = []
        rest = "".join(bag)
        for _ in players:
            rack, rest = draw(rest, tiles.rack)
            racks.append(rack)
        return ScrabbleState(tuple(players), EMPTY * self.layout.size, tuple(racks), rest,
                             (0,) * seats, seed)

    def to_move(self, state: ScrabbleState) -> Seat | None:
        return state.to_move

    def legal_moves(self, state: ScrabbleState, seat: Seat) -> Sequence[ScrabbleMove]:
        """PASS, then an exchange of one tile of each kind held when exchanges are allowed.

        Plays are legal too but not listed (see the class docstring).
        """
        if state.to_move != seat:
            return ()
        moves: list[ScrabbleMove] = [Pass()]
        if len(state.bag) >= self._ready().tiles.rack:
            moves.extend(Exchange(tile) for tile in sorted(set(state.racks[seat])))
        return tuple(moves)

    def apply(self, state: ScrabbleState, seat: Seat, move: ScrabbleMove) -> ScrabbleState:
        assets = self._ready()
        self._check_turn(state, seat)
        rack = state.racks[seat]
        bag = state.bag
        score = 0
        if isinstance(move, Play):
            played = score_play(assets.layout, assets.tiles, assets.lexicon, state.board, rack,
                                move.placements)
            drawn, bag = draw(bag, max(0, assets.tiles.rack - len(played.rack)))
            rack, board, score = played.rack + drawn, played.board, played.score
        elif isinstance(move, Exchange):
            if not move.tiles:
                raise IllegalMoveError("an exchange must return at least one tile")
            if len(bag) < assets.tiles.rack:
                raise IllegalMoveError(
                    f"there are only {len(bag)} tiles in the bag; exchanging needs at least "
                    f"{assets.tiles.rack}")
            kept = take(rack, move.tiles, "the exchange")
            # Draw first, then put back: the tiles returned cannot come straight back.
            drawn, bag = draw(bag, len(move.tiles))
            bag = put_back(bag, move.tiles, state.bag_seed, state.turn)
            rack, board = kept + drawn, state.board
        elif isinstance(move, Pass):
            board = state.board
        else:  # a caller outside the type system
            raise IllegalMoveError(f"not a Scrabble move: {move!r}")
        racks = (*state.racks[:seat], rack, *state.racks[seat + 1:])
        scores = list(state.scores)
        scores[seat] += score
        scoreless = 0 if score else state.scoreless + 1
        ending = None
        adjustments: tuple[int, ...] = ()
        if not rack and not bag:
            # Out: the others' racks count against them and for the player who went out.
            ending = Ending.OUT
            values = [assets.tiles.value(tiles) for tiles in racks]
            adjustments = tuple(sum(values) if s == seat else -values[s] for s in range(len(racks)))
        elif scoreless >= SCORELESS_TURNS:
            ending = Ending.SCORELESS
            adjustments = tuple(-assets.tiles.value(tiles) for tiles in racks)
        if ending is not None:
            scores = [points + change for points, change in zip(scores, adjustments, strict=True)]
        return ScrabbleState(state.players, board, racks, bag, tuple(scores), state.bag_seed,
                             state.turn + 1, scoreless, ending, adjustments)

    def _check_turn(self, state: ScrabbleState, seat: Seat) -> None:
        to_move = state.to_move
        if to_move is None:
            raise IllegalMoveError(f"the game is over ({self._ending(state)}); no more moves")
        if seat != to_move:
            names = state.players
            mover = names[seat] if 0 <= seat < len(names) else "nobody"
            raise IllegalMoveError(
                f"it is seat {to_move}'s turn ({names[to_move]}), not seat {seat}'s ({mover})")

    def outcome(self, state: ScrabbleState) -> Outcome | None:
        if state.ending is None:
            return None
        return Outcome.by_scores(tuple(state.scores), self._ending(state))

    def _ending(self, state: ScrabbleState) -> str:
        scores = ", ".join(f"{name} {points}" for name, points in zip(
            state.players, state.scores, strict=True))
        if state.ending is Ending.OUT:
            out = (state.turn - 1) % state.seats
            how = f"{state.players[out]} went out with the bag empty"
        else:
            how = f"{SCORELESS_TURNS} consecutive scoreless turns"
        return f"{how}; final scores: {scores}"

    def standings(self, state: ScrabbleState) -> tuple[float, ...] | None:
        return tuple(state.scores)

    # -- values <-> JSON -----------------------------------------------------------------

    def state_to_json(self, state: ScrabbleState) -> JSON:
        return state_to_json(state, self.layout.cols)

    def state_from_json(self, data: JSON) -> ScrabbleState:
        assets = self._ready()
        state = state_from_json(data, assets.layout, assets.tiles)
        if not self.min_seats <= state.seats <= self.max_seats:
            raise ValueError(f"not a Scrabble state: {state.seats} players")
        return state

    def move_to_wire(self, move: ScrabbleMove) -> JSON:
        return move_to_wire(move)

    def parse_move(self, reply: JSON) -> ScrabbleMove:
        layout = self.layout
        return parse_move(reply, layout.rows, layout.cols)

    # -- the wire view -------------------------------------------------------------------

    def next_move_params(self, state: ScrabbleState, seat: Seat) -> JSONObject:
        """The NextMove params for ``seat`` (without ``gameid``), as docs/bots/protocol.md
        gives them."""
        return {
            "tiles": list(state.racks[seat]),
            "gamestate": self._gamestate(state),
            "blanks": [
                {"row": row, "col": col, "letter": letter}
                for row, col, letter in self._blanks(state)],
            "players": [
                {"name": name, "score": score, "tiles": len(rack)}
                for name, score, rack in zip(state.players, state.scores, state.racks,
                                             strict=True)],
            "tilesremaining": len(state.bag),
            "you": seat,
        }

    def complete_params(self, state: ScrabbleState, seat: Seat,
                        outcome: Outcome | None = None) -> JSONObject:
        return {"scores": list(state.scores), "gamestate": self._gamestate(state)}

    def _gamestate(self, state: ScrabbleState) -> JSON:
        """The board as the wiki shows it: rows of ``""``, a letter, or ``"*"`` for a blank."""
        cols = self.layout.cols
        board = state.board
        return [["" if cell == EMPTY else "*" if cell.islower() else cell
                 for cell in board[start:start + cols]]
                for start in range(0, len(board), cols)]

    def _blanks(self, state: ScrabbleState) -> list[tuple[int, int, str]]:
        cols = self.layout.cols
        return [(*divmod(index, cols), cell.upper())
                for index, cell in enumerate(state.board) if cell.islower()]

    def public_move(self, wire: JSON) -> JSON:
        # Which tiles an exchange returned is secret until the game is over.
        if isinstance(wire, dict) and wire.get("type") == "EXCHANGE":
            tiles = wire.get("exchangetiles")
            return {"type": "EXCHANGE", "count": len(tiles) if isinstance(tiles, list) else 0}
        return wire

    def spectator_view(self, state: ScrabbleState, reveal: bool) -> JSON:
        """The board, the scores and how many tiles each rack and the bag hold; the racks'
        letters only once ``reveal``; never the bag's order or its seed."""
        view = state_to_json(state, self.layout.cols)
        assert isinstance(view, dict)
        del view["bag"], view["bagseed"]
        view["bagcount"] = len(state.bag)
        view["racksizes"] = [len(rack) for rack in state.racks]
        if not reveal:
            del view["racks"]
        return view

    def spectator_setup(self) -> JSONObject:
        """The premium squares (rows of ``""``, ``DL``, ``TL``, ``DW``, ``TW``), the start
        square and the tiles' points."""
        layout, tiles = self.layout, self.tiles
        return {"squares": [list(row) for row in layout.squares],
                "start": list(layout.start),
                "points": {letter: points for letter, points in tiles.points.items()
                           if letter.isupper() or letter == "*"}}

    def describe_move(self, state: ScrabbleState, seat: Seat, move: ScrabbleMove) -> str:
        """``"PLAY HOUSE at H8 across for 24"``, ``"EXCHANGE 3 tiles"`` or ``"PASS"``.

        A blank shows as a lower-case letter (``HOUsE``).
        """
        if isinstance(move, Exchange):
            count = len(move.tiles)
            return f"EXCHANGE {count} tile{'s' if count != 1 else ''}"
        if not isinstance(move, Play):
            return "PASS"
        assets = self._ready()
        try:
            played = score_play(assets.layout, assets.tiles, assets.lexicon, state.board,
                                state.racks[seat], move.placements)
        except IllegalMoveError:
            squares = " ".join(f"{p.square}={p.cell}" for p in move.placements)
            return f"PLAY {squares} (illegal)"
        word = played.words[0]
        row, col = divmod(word.start, assets.layout.cols)
        direction = "across" if word.across else "down"
        return f"PLAY {word.letters} at {square_name(row, col)} {direction} for {played.score}"

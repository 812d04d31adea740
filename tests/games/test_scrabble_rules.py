"""Scrabble's rules, wire format and state (merknera/games/scrabble/).

The tables list what the referee refuses and why, word for word: a bot author reads these
messages in ``Scrabble.Error``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from itertools import product
from pathlib import Path
from typing import Any

import pytest

from merknera.games.base import JSON, IllegalMoveError, InvalidMoveError
from merknera.games.scrabble import (
    EMPTY,
    AssetsMissingError,
    Ending,
    Exchange,
    Pass,
    Placement,
    Play,
    Scrabble,
    ScrabbleMove,
    ScrabbleState,
    move_bound,
    score_play,
)
from merknera.games.scrabble.bag import put_back

ASSETS = Path(__file__).resolve().parent.parent.parent / "assets" / "scrabble"
FILES = {
    "gameboard": (ASSETS / "board-standard.json").read_bytes(),
    "dictionary": (ASSETS / "dictionary-english.txt").read_bytes(),
    "letters": (ASSETS / "letters-english.json").read_bytes(),
}
GAME = Scrabble().with_assets(FILES)
PLAYERS = ("alice", "bob", "carol", "dave")
ACROSS, DOWN = True, False
RACK = "AEIRST*"
BAG = "EEEEEEEEEE"


def at(square: str) -> tuple[int, int]:
    """``"H8"`` -> (row 7, col 7)."""
    return int(square[1:]) - 1, ord(square[0]) - ord("A")


def tiles(*squares: str) -> Play:
    """A play of ``"H9=A"``-style tiles (lower case for a blank)."""
    placements = []
    for spec in squares:
        square, letter = spec.split("=")
        placements.append(Placement(*at(square), letter.upper(), blank=letter.islower()))
    return Play(tuple(placements))


def board(*words: tuple[str, bool, str]) -> str:
    cells = [EMPTY] * 225
    for square, across, letters in words:
        row, col = at(square)
        for i, letter in enumerate(letters):
            cells[row * 15 + col + i if across else (row + i) * 15 + col] = letter
    return "".join(cells)


HOUSE = ScrabbleState(PLAYERS[:2], board(("H8", ACROSS, "HOUSE")), (RACK, "QZXJKVW"), BAG,
                      (18, 0), bag_seed=1, turn=2)
"""Alice (seat 0) to move, with HOUSE on H8-L8."""
EMPTY_BOARD = replace(HOUSE, board=EMPTY * 225, scores=(0, 0), turn=0)
BLANK_E = replace(HOUSE, board=board(("H8", ACROSS, "HOUSe")))
SMALL_BAG = replace(HOUSE, bag="ABCDEF")
OVER = replace(HOUSE, ending=Ending.SCORELESS, adjustments=(-5, -48), scores=(13, -48))

ILLEGAL: list[tuple[str, ScrabbleState, int, ScrabbleMove, str]] = [
    ("tile not in the rack", HOUSE, 0, tiles("H9=Q"),
     "the tile Q (for H9) is not in your rack AEIRST*"),
    ("two of a tile held once", HOUSE, 0, tiles("M7=E", "M9=E"),
     "the play needs 2 E tiles but your rack AEIRST* holds only 1"),
    ("two blanks, one held", HOUSE, 0, tiles("H9=a", "H10=b"),
     "the play needs 2 blanks but your rack AEIRST* holds only 1"),
    ("a blank not held", replace(HOUSE, racks=("AEIRSTU", "QZ")), 0, tiles("H9=a"),
     "a blank (for H9) is not in your rack AEIRSTU"),
    ("occupied square", HOUSE, 0, tiles("H8=S"),
     "H8 (row 7, col 7) is already taken by H"),
    ("square occupied by a blank", BLANK_E, 0, tiles("L8=S", "M8=S"),
     "L8 (row 7, col 11) is already taken by a blank standing for E"),
    ("not in one line", HOUSE, 0, tiles("H9=A", "I10=T"),
     "the tiles are not in one row or one column: H9 and I10"),
    ("not in one line: an L", HOUSE, 0, tiles("H9=A", "H10=T", "I9=E"),
     "the tiles are not in one row or one column: H9, H10 and I9"),
    ("a gap in a row", HOUSE, 0, tiles("H9=A", "J9=T"),
     "there is a gap at I9 (row 8, col 8) between the tiles placed"),
    ("a gap in a column", HOUSE, 0, tiles("M6=A", "M9=T"),
     "there is a gap at M7 (row 6, col 12) between the tiles placed"),
    ("first play misses the centre", EMPTY_BOARD, 0, tiles("A1=A", "B1=T"),
     "the first play must cover the start square H8 (row 7, col 7)"),
    ("first play of one tile", EMPTY_BOARD, 0, tiles("H8=A"),
     "the first play must place at least two tiles"),
    ("not connected", HOUSE, 0, tiles("A1=A", "B1=T"),
     "the play does not touch any tile already on the board"),
    ("a lone tile touching nothing", HOUSE, 0, tiles("A1=A"),
     "the play does not touch any tile already on the board"),
    ("main word not in the dictionary", HOUSE, 0, tiles("M8=A"),
     "the word HOUSEA (across from H8) is not in the dictionary"),
    ("a word through a tile not in the dictionary", HOUSE, 0, tiles("L9=A", "L10=I"),
     "the word EAI (down from L8) is not in the dictionary"),
    ("cross word not in the dictionary", HOUSE, 0, tiles("H9=I", "I9=T"),
     "the cross word OT (down from I8) is not in the dictionary"),
    ("a lone tile's word", HOUSE, 0, tiles("I9=T"),
     "the word OT (down from I8) is not in the dictionary"),
    ("exchange with six tiles in the bag", SMALL_BAG, 0, Exchange("Q"),
     "there are only 6 tiles in the bag; exchanging needs at least 7"),
    ("exchange a tile not held", HOUSE, 0, Exchange("AQ"),
     "the tile Q is not in your rack AEIRST*"),
    ("exchange two of a tile held once", HOUSE, 0, Exchange("EE"),
     "the exchange needs 2 E tiles but your rack AEIRST* holds only 1"),
    ("exchange no tiles", HOUSE, 0, Exchange(""), "an exchange must return at least one tile"),
    ("exchange eight tiles", HOUSE, 0, Exchange("AEIRST**"),
     "the exchange needs 2 blanks but your rack AEIRST* holds only 1"),
    ("play after the end", OVER, 0, tiles("M8=S"),
     "the game is over (6 consecutive scoreless turns; final scores: alice 13, bob -48); "
     "no more moves"),
    ("pass after the end", OVER, 1, Pass(),
     "the game is over (6 consecutive scoreless turns; final scores: alice 13, bob -48); "
     "no more moves"),
    ("out of turn", HOUSE, 1, tiles("M8=S"), "it is seat 0's turn (alice), not seat 1's (bob)"),
    ("pass out of turn", HOUSE, 1, Pass(), "it is seat 0's turn (alice), not seat 1's (bob)"),
    ("no such seat", HOUSE, 5, Pass(), "it is seat 0's turn (alice), not seat 5's (nobody)"),
    ("off the board", HOUSE, 0, Play((Placement(15, 0, "A"),)),
     "row 15, col 0 is not on the 15x15 board"),
    ("two tiles on one square", HOUSE, 0, tiles("H9=A", "H9=T"),
     "two tiles are placed on H9 (row 8, col 7)"),
    ("no tiles", HOUSE, 0, Play(()), "a play must place at least one tile"),
]


@pytest.mark.parametrize(("state", "seat", "move", "message"), [row[1:] for row in ILLEGAL],
                         ids=[row[0] for row in ILLEGAL])
def test_illegal_moves_say_why(state: ScrabbleState, seat: int, move: ScrabbleMove,
                               message: str) -> None:
    with pytest.raises(IllegalMoveError) as caught:
        GAME.apply(state, seat, move)
    assert str(caught.value) == message
    assert not isinstance(caught.value, InvalidMoveError)


def test_the_same_positions_accept_legal_plays() -> None:
    # HOUSES: H4 + O1 + U1 + S1 + E1 + S1 = 9
    assert GAME.apply(HOUSE, 0, tiles("M8=S")).scores == (18 + 9, 0)
    # TOE down I7-I9: T1 x2 (I7 DL) + O1 (old) + E1 x2 (I9 DL) = 5
    assert GAME.apply(HOUSE, 0, tiles("I7=T", "I9=E")).scores == (18 + 5, 0)
    # AT over the centre: (A1 + T1) x2 = 4
    assert GAME.apply(EMPTY_BOARD, 0, tiles("G8=A", "H8=T")).scores == (4, 0)
    # HOUSeS: H4 + O1 + U1 + S1 + blank 0 + S1 = 8
    assert GAME.apply(BLANK_E, 0, tiles("M8=S")).scores == (18 + 8, 0)


# -- parsing a bot's reply ------------------------------------------------------------------------

SHAPE = ('expected an object {"type": "PLAY" | "PASS" | "EXCHANGE", "playtiles": [...], '
         '"exchangetiles": [...]}')


def tile(row: JSON = 7, col: JSON = 7, face: JSON = "A", **more: JSON) -> dict[str, JSON]:
    """One of "playtiles": ``face`` is the "tile"; ``more`` adds keys ("letter" for a blank)."""
    return {"row": row, "col": col, "tile": face, **more}


def playing(*items: JSON) -> dict[str, JSON]:
    return {"type": "PLAY", "playtiles": list(items)}


MALFORMED: list[tuple[str, JSON, str]] = [
    ("a number", 4, f"{SHAPE}, got 4"),
    ("a list", [], f"{SHAPE}, got []"),
    ("a string", "PLAY", f"{SHAPE}, got 'PLAY'"),
    ("null", None, f"{SHAPE}, got None"),
    ("no type", {"playtiles": []}, "the reply has no \"type\": {'playtiles': []}"),
    ("unknown type", {"type": "SWAP"}, '"type" must be "PLAY", "PASS" or "EXCHANGE", got \'SWAP\''),
    ("type a number", {"type": 1}, '"type" must be "PLAY", "PASS" or "EXCHANGE", got 1'),
    ("the same key twice", {"type": "PASS", "Type": "PLAY"},
     'the reply has the key "type" twice (in different cases)'),
    ("PLAY without playtiles", {"type": "PLAY"},
     'a PLAY needs "playtiles": a list of {"row", "col", "tile"}'),
    ("playtiles null", {"type": "PLAY", "playtiles": None},
     'a PLAY needs "playtiles": a list of {"row", "col", "tile"}'),
    ("playtiles an object", {"type": "PLAY", "playtiles": tile()},
     '"playtiles" must be a list of {"row", "col", "tile"}, got {'),
    ("playtiles empty", playing(),
     'a PLAY must place at least one tile: "playtiles" is empty'),
    ("a tile not an object", playing("A"),
     'playtiles[0] must be an object {"row", "col", "tile"}, got \'A\''),
    ("row missing", playing({"col": 7, "tile": "A"}), "playtiles[0].row is missing"),
    ("row a string", playing(tile(row="7")), "playtiles[0].row must be an integer 0-14, got '7'"),
    ("row a float", playing(tile(row=7.0)), "playtiles[0].row must be an integer 0-14, got 7.0"),
    ("row true", playing(tile(row=True)), "playtiles[0].row must be an integer 0-14, got True"),
    ("row -1", playing(tile(row=-1)), "playtiles[0].row must be between 0 and 14, got -1"),
    ("row 15", playing(tile(row=15)), "playtiles[0].row must be between 0 and 14, got 15"),
    ("col 15 on the second tile", playing(tile(), tile(col=15)),
     "playtiles[1].col must be between 0 and 14, got 15"),
    ("col missing", playing({"row": 7, "tile": "A"}), "playtiles[0].col is missing"),
    ("tile missing", playing({"row": 7, "col": 7}),
     'playtiles[0].tile must be one letter A-Z or "*" for a blank, got None'),
    ("tile empty", playing(tile(face="")),
     'playtiles[0].tile must be one letter A-Z or "*" for a blank, got \'\''),
    ("tile two letters", playing(tile(face="AB")),
     'playtiles[0].tile must be one letter A-Z or "*" for a blank, got \'AB\''),
    ("tile a digit", playing(tile(face="1")),
     'playtiles[0].tile must be one letter A-Z or "*" for a blank, got \'1\''),
    ("tile a number", playing(tile(face=1)),
     'playtiles[0].tile must be one letter A-Z or "*" for a blank, got 1'),
    ("tile an accented letter", playing(tile(face="é")),
     'playtiles[0].tile must be one letter A-Z or "*" for a blank, got \'é\''),
    ("tile a ligature that upper-cases to two letters", playing(tile(face="ﬆ")),
     'playtiles[0].tile must be one letter A-Z or "*" for a blank, got \'ﬆ\''),
    ("tile ?", playing(tile(face="?")),
     'playtiles[0].tile must be one letter A-Z or "*" for a blank, got \'?\''),
    ("a blank without its letter", playing(tile(face="*")),
     'playtiles[0] is a blank ("*") without the "letter" A-Z it stands for'),
    ("a blank standing for two letters", playing(tile(face="*", letter="AB")),
     "playtiles[0].letter must be one letter A-Z, got 'AB'"),
    ("a blank standing for *", playing(tile(face="*", letter="*")),
     "playtiles[0].letter must be one letter A-Z, got '*'"),
    ("a letter tile standing for another", playing(tile(face="A", letter="B")),
     'playtiles[0] is the tile A, not a blank, so it cannot stand for "B"'),
    ("two tiles on one square", playing(tile(), tile(face="B")),
     "playtiles[0] and playtiles[1] are both on square H8 (row 7, col 7)"),
    ("a key twice in a tile", playing({"row": 7, "ROW": 8, "col": 7, "tile": "A"}),
     'playtiles[0] has the key "row" twice (in different cases)'),
    ("EXCHANGE without tiles", {"type": "EXCHANGE"},
     'an EXCHANGE needs "exchangetiles": a list of tiles'),
    ("exchangetiles a string", {"type": "EXCHANGE", "exchangetiles": "QU"},
     '"exchangetiles" must be a list of tiles like ["Q", "*"], got \'QU\''),
    ("exchangetiles empty", {"type": "EXCHANGE", "exchangetiles": []},
     'an EXCHANGE must return at least one tile: "exchangetiles" is empty'),
    ("exchange two letters", {"type": "EXCHANGE", "exchangetiles": ["Q", "UU"]},
     'exchangetiles[1] must be one letter A-Z or "*" for a blank, got \'UU\''),
    ("exchange a number", {"type": "EXCHANGE", "exchangetiles": [5]},
     'exchangetiles[0] must be one letter A-Z or "*" for a blank, got 5'),
]


@pytest.mark.parametrize(("reply", "message"), [row[1:] for row in MALFORMED],
                         ids=[row[0] for row in MALFORMED])
def test_malformed_replies_are_invalid_moves(reply: JSON, message: str) -> None:
    with pytest.raises(InvalidMoveError) as caught:
        GAME.parse_move(reply)
    assert str(caught.value).startswith(message)
    assert not isinstance(caught.value, IllegalMoveError)


def test_a_long_malformed_reply_is_shortened_in_the_message() -> None:
    with pytest.raises(InvalidMoveError) as caught:
        GAME.parse_move("x" * 10_000)
    assert len(str(caught.value)) < 200


WELL_FORMED: list[tuple[str, JSON, ScrabbleMove]] = [
    ("PASS", {"type": "PASS"}, Pass()),
    ("pass in lower case", {"type": "pass"}, Pass()),
    ("PASS ignores tiles", {"type": "PASS", "playtiles": "junk", "exchangetiles": 5}, Pass()),
    ("PLAY", playing(tile(7, 7, "H"), tile(7, 8, "I")), tiles("H8=H", "I8=I")),
    ("keys in any case", {"Type": "Play", "PlayTiles": [{"ROW": 7, "Col": 7, "Tile": "h"}]},
     tiles("H8=H")),
    ("a blank", playing(tile(0, 14, "*", letter="E")), tiles("O1=e")),
    ("a blank in lower case", playing(tile(0, 14, "*", Letter="e")), tiles("O1=e")),
    ("a letter tile naming its own letter", playing(tile(face="A", letter="a")),
     tiles("H8=A")),
    ("a letter tile with a null letter", playing(tile(face="A", letter=None)), tiles("H8=A")),
    ("PLAY ignores exchangetiles", {**playing(tile()), "exchangetiles": 5}, tiles("H8=A")),
    ("extra keys", {**playing(tile(comment="hi")), "comment": "why not"}, tiles("H8=A")),
    ("EXCHANGE", {"type": "EXCHANGE", "exchangetiles": ["Q", "*", "u"]}, Exchange("Q*U")),
    ("EXCHANGE ignores playtiles", {"type": "exchange", "exchangetiles": ["Q"],
                                    "playtiles": 5}, Exchange("Q")),
]


@pytest.mark.parametrize(("reply", "move"), [row[1:] for row in WELL_FORMED],
                         ids=[row[0] for row in WELL_FORMED])
def test_well_formed_replies_parse(reply: JSON, move: ScrabbleMove) -> None:
    assert GAME.parse_move(reply) == move


@pytest.mark.parametrize("move", [
    Pass(), Exchange("QU*"), tiles("H8=H", "I8=I"), tiles("O1=e", "O2=X"), Exchange("E")])
def test_move_wire_round_trip(move: ScrabbleMove) -> None:
    wire = GAME.move_to_wire(move)
    assert GAME.parse_move(json.loads(json.dumps(wire))) == move


def test_wire_forms_are_protocol_md_s() -> None:
    assert GAME.move_to_wire(Pass()) == {"type": "PASS"}
    assert GAME.move_to_wire(Exchange("Q*")) == {"type": "EXCHANGE", "exchangetiles": ["Q", "*"]}
    assert GAME.move_to_wire(tiles("H8=H", "I8=i")) == {"type": "PLAY", "playtiles": [
        {"row": 7, "col": 7, "tile": "H"}, {"row": 7, "col": 8, "tile": "*", "letter": "I"}]}


def test_a_placement_is_one_letter() -> None:
    for letter in ("", "AB", "a", "*", "1"):
        with pytest.raises(ValueError, match="one letter A-Z"):
            Placement(7, 7, letter)


# -- new games, seats, bag, determinism -----------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_a_new_game_deals_full_racks_from_a_bag_of_100(seats: int) -> None:
    state = GAME.new({}, PLAYERS[:seats], random.Random(seats))
    assert state.players == PLAYERS[:seats]
    assert [len(rack) for rack in state.racks] == [7] * seats
    assert len(state.bag) == 100 - 7 * seats
    assert Counter("".join(state.racks) + state.bag) == Counter(GAME.tiles.bag())
    assert len(GAME.tiles.bag()) == 100
    assert GAME.tiles.bag().count("*") == 2
    assert state.board == EMPTY * 225
    assert state.scores == (0,) * seats
    assert (state.turn, state.scoreless, state.ending, state.adjustments) == (0, 0, None, ())
    assert GAME.to_move(state) == 0
    assert 0 <= state.bag_seed < 2**53
    # Turns go round the table.
    for turn in range(seats + 1):
        assert GAME.to_move(state) == turn % seats
        state = GAME.apply(state, turn % seats, Pass())


@pytest.mark.parametrize("seats", [0, 1, 5])
def test_scrabble_is_for_two_to_four(seats: int) -> None:
    with pytest.raises(ValueError, match=f"2-4 players, not {seats}"):
        GAME.new({}, [f"p{n}" for n in range(seats)], random.Random(0))


def test_the_shuffle_and_the_seed_come_from_the_rng() -> None:
    assert GAME.new({}, PLAYERS[:2], random.Random(5)) == GAME.new({}, PLAYERS[:2],
                                                                   random.Random(5))
    one, other = (GAME.new({}, PLAYERS[:2], random.Random(seed)) for seed in (5, 6))
    assert one.bag != other.bag
    assert one.bag_seed != other.bag_seed


def replay(seed: int, wires: list[JSON]) -> list[ScrabbleState]:
    state = GAME.new({}, PLAYERS[:3], random.Random(seed))
    states = [state]
    for wire in wires:
        seat = GAME.to_move(state)
        assert seat is not None
        state = GAME.apply(state, seat, GAME.parse_move(wire))
        states.append(state)
    return states


def opening(state: ScrabbleState) -> list[JSON]:
    """Some legal moves for the first turns of any game: exchanges, passes, a blank play."""
    first = state.racks[0]
    return [
        {"type": "EXCHANGE", "exchangetiles": list(first[:3])},
        {"type": "EXCHANGE", "exchangetiles": list(state.racks[1])},
        {"type": "PASS"},
        {"type": "EXCHANGE", "exchangetiles": [first[3]]},
    ]


def test_same_seed_and_moves_give_the_same_states() -> None:
    start = GAME.new({}, PLAYERS[:3], random.Random(42))
    wires = opening(start)
    first, second = replay(42, wires), replay(42, wires)
    assert first == second
    assert [GAME.state_to_json(s) for s in first] == [GAME.state_to_json(s) for s in second]
    assert replay(43, opening(GAME.new({}, PLAYERS[:3], random.Random(43)))) != first


def test_an_exchange_draws_first_then_returns_the_tiles_where_the_seed_says() -> None:
    state = GAME.new({}, PLAYERS[:2], random.Random(8))
    rack, bag = state.racks[0], state.bag
    after = GAME.apply(state, 0, Exchange(rack[:3]))
    # The three new tiles are the first three of the bag; the old ones go back into the rest.
    assert after.racks[0] == rack[3:] + bag[:3]
    assert after.bag == put_back(bag[3:], rack[:3], state.bag_seed, 0)
    assert len(after.bag) == len(bag)
    assert Counter(after.bag) == Counter(bag[3:] + rack[:3])
    assert (after.scores, after.scoreless, after.turn) == ((0, 0), 1, 1)
    # The same exchange on a later turn puts the tiles elsewhere (in all likelihood).
    later = GAME.apply(replace(state, turn=2), 0, Exchange(rack[:3]))
    assert later.bag != after.bag
    assert Counter(later.bag) == Counter(after.bag)


def test_put_back_is_a_pure_function_of_seed_and_turn() -> None:
    assert put_back("ABCDEFG", "XYZ", 7, 3) == put_back("ABCDEFG", "XYZ", 7, 3)
    assert put_back("", "XY", 7, 3) in ("XY", "YX")
    spots = {put_back("ABCDEFG", "X", seed, 0).index("X") for seed in range(200)}
    assert spots == set(range(8))  # every place in the bag can receive a returned tile


# -- legal moves ----------------------------------------------------------------------------------


def test_legal_moves_list_pass_and_one_tile_exchanges() -> None:
    state = replace(HOUSE, racks=("EEA*QEA", "QZ"))
    assert list(GAME.legal_moves(state, 0)) == [
        Pass(), Exchange("*"), Exchange("A"), Exchange("E"), Exchange("Q")]
    assert list(GAME.legal_moves(state, 1)) == []
    assert list(GAME.legal_moves(SMALL_BAG, 0)) == [Pass()]
    assert list(GAME.legal_moves(OVER, 0)) == []
    for move in GAME.legal_moves(state, 0):
        GAME.apply(state, 0, move)


def test_games_of_listed_moves_end_within_max_moves() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        state = GAME.new({}, PLAYERS[: 2 + seed % 3], rng)
        moves = 0
        while (seat := GAME.to_move(state)) is not None:
            legal = GAME.legal_moves(state, seat)
            assert legal
            state = GAME.apply(state, seat, rng.choice(list(legal)))
            moves += 1
        assert moves == 6 <= GAME.max_moves
        assert state.ending is Ending.SCORELESS
        assert GAME.outcome(state) is not None


def test_max_moves_is_six_per_tile_plus_six() -> None:
    assert Scrabble.max_moves == GAME.max_moves == move_bound(100) == 606
    letters = FILES["letters"].replace(b'"count": 12', b'"count": 2')  # 90 tiles: 10 fewer E
    assert Scrabble().with_assets({**FILES, "letters": letters}).max_moves == 6 * 91


# -- JSON -----------------------------------------------------------------------------------------


def states_to_round_trip() -> list[ScrabbleState]:
    """A new game, the states of a few turns, a game ended, and a board with a blank on it."""
    start = GAME.new({}, PLAYERS[:3], random.Random(9))
    states = replay(9, opening(start))
    ended = states[-1]
    for seat in (1, 2):  # four scoreless turns so far, and two more
        ended = GAME.apply(ended, seat, Pass())
    assert ended.ending is Ending.SCORELESS
    # HOUSe on the board: its tiles taken from the bag, so that the tile count stays right.
    bag = start.bag
    for tile in "HOUS*":
        assert tile in bag
        bag = bag.replace(tile, "", 1)
    played = replace(start, board=board(("H8", ACROSS, "HOUSe")), bag=bag, scores=(16, 0, 0),
                     turn=1)
    return [*states, ended, played]


@pytest.mark.parametrize("index", range(7))
def test_state_json_round_trip(index: int) -> None:
    state = states_to_round_trip()[index]
    text = json.dumps(GAME.state_to_json(state))
    assert GAME.state_from_json(json.loads(text)) == state


def test_the_state_json_format() -> None:
    state = ScrabbleState(("alice", "bob"), board(("H8", ACROSS, "HOUSe")), ("AB*", ""), "QZ",
                          (1, 2), 77, 3, 1, Ending.OUT, (5, -5))
    data = GAME.state_to_json(state)
    assert isinstance(data, dict)
    assert data == {
        "players": ["alice", "bob"],
        "board": ["." * 15] * 7 + [".......HOUSe..."] + ["." * 15] * 7,
        "racks": ["AB*", ""], "bag": "QZ", "bagseed": 77, "scores": [1, 2], "turn": 3,
        "scoreless": 1, "ending": "OUT", "adjustments": [5, -5]}


def good_json() -> dict[str, Any]:
    data = GAME.state_to_json(GAME.new({}, PLAYERS[:2], random.Random(1)))
    assert isinstance(data, dict)
    return data


BAD_STATES: list[tuple[str, Any, str]] = [
    ("not an object", [], "expected an object"),
    ("a key missing", {k: v for k, v in good_json().items() if k != "bag"}, "expected an object"),
    ("an extra key", {**good_json(), "x": 1}, "expected an object"),
    ("14 rows", {**good_json(), "board": ["." * 15] * 14}, "is not 15x15"),
    ("a short row", {**good_json(), "board": ["." * 15] * 14 + ["."]}, "is not 15x15"),
    ("a digit on the board", {**good_json(), "board": ["1" + "." * 14] + ["." * 15] * 14},
     "not . A-Z a-z"),
    ("one player", {**good_json(), "players": ["alice"]}, "differ in number"),
    ("scores missing a seat", {**good_json(), "scores": [0]}, "differ in number"),
    ("a score not an integer", {**good_json(), "scores": [0, 1.5]}, "scores must be an integer"),
    ("a tile missing", {**good_json(), "bag": good_json()["bag"][1:]}, "tile set"),
    ("a tile too many", {**good_json(), "bag": good_json()["bag"] + "E"}, "tile set"),
    ("an unknown tile", {**good_json(), "bag": good_json()["bag"][1:] + "?"}, "tile set"),
    ("a rack of eight", {**good_json(), "racks": [
        good_json()["racks"][0] + good_json()["bag"][0], good_json()["racks"][1]],
        "bag": good_json()["bag"][1:]}, "more than 7"),
    ("an unknown ending", {**good_json(), "ending": "BORED"}, "unknown ending"),
    ("adjustments before the end", {**good_json(), "adjustments": [1, -1]}, "adjustments"),
    ("an end without adjustments", {**good_json(), "ending": "OUT"}, "adjustments"),
    ("a negative turn", {**good_json(), "turn": -1}, "turn -1"),
    ("more scoreless turns than turns", {**good_json(), "scoreless": 2}, "turn 0 with 2"),
    ("a seed not an integer", {**good_json(), "bagseed": "7"}, "bagseed must be an integer"),
    ("five players", {**good_json(), "players": list("abcde"), "racks": [""] * 5,
                      "scores": [0] * 5}, ""),
]


@pytest.mark.parametrize(("data", "message"), [row[1:] for row in BAD_STATES],
                         ids=[row[0] for row in BAD_STATES])
def test_state_from_json_refuses_what_is_not_a_state(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match="not a Scrabble state") as caught:
        GAME.state_from_json(data)
    assert message in str(caught.value)


# -- the wire view (PROTOCOL.md section 4, Scrabble) ----------------------------------------------


def test_next_move_params_are_protocol_md_s() -> None:
    state = replace(BLANK_E, racks=("AEIRST*", "QZ"), bag="ABCDEFGHIJ", scores=(18, 7))
    params = GAME.next_move_params(state, 1)
    gamestate = [[""] * 15 for _ in range(15)]
    gamestate[7][7:12] = ["H", "O", "U", "S", "*"]
    assert params == {
        "tiles": ["Q", "Z"],
        "gamestate": gamestate,
        "blanks": [{"row": 7, "col": 11, "letter": "E"}],
        "players": [{"name": "alice", "score": 18, "tiles": 7},
                    {"name": "bob", "score": 7, "tiles": 2}],
        "tilesremaining": 10,
        "you": 1,
    }
    assert GAME.next_move_params(state, 0)["tiles"] == ["A", "E", "I", "R", "S", "T", "*"]
    assert GAME.next_move_params(state, 0)["you"] == 0
    assert json.loads(json.dumps(params)) == params
    assert GAME.new_game_params(state, 0) == {}


def test_complete_params_carry_the_scores_and_the_final_board() -> None:
    params = GAME.complete_params(OVER, 1)
    assert params["scores"] == [13, -48]
    assert params["gamestate"] == GAME.next_move_params(OVER, 1)["gamestate"]
    assert set(params) == {"scores", "gamestate"}


def test_params_are_fresh_lists_not_views_of_the_state() -> None:
    params = GAME.next_move_params(HOUSE, 0)
    tiles_ = params["tiles"]
    assert isinstance(tiles_, list)
    tiles_.clear()
    assert HOUSE.racks[0] == RACK


@pytest.mark.parametrize(("state", "move", "text"), [
    (HOUSE, tiles("M8=S"), "PLAY HOUSES at H8 across for 9"),
    (HOUSE, tiles("I7=T", "I9=E"), "PLAY TOE at I7 down for 5"),
    (HOUSE, tiles("H9=a"), "PLAY Ha at H8 down for 4"),
    (EMPTY_BOARD, tiles("G8=A", "H8=T"), "PLAY AT at G8 across for 4"),
    (HOUSE, tiles("A1=Q"), "PLAY A1=Q (illegal)"),
    (HOUSE, Exchange("ABC"), "EXCHANGE 3 tiles"),
    (HOUSE, Exchange("A"), "EXCHANGE 1 tile"),
    (HOUSE, Pass(), "PASS"),
], ids=["one tile", "through a tile", "a blank", "first play", "illegal", "exchange 3",
        "exchange 1", "pass"])
def test_describe_move(state: ScrabbleState, move: ScrabbleMove, text: str) -> None:
    assert GAME.describe_move(state, 0, move) == text


# -- the game without and with assets -------------------------------------------------------------


def test_the_game_names_itself_as_on_the_wire() -> None:
    game = Scrabble()
    assert (game.mnemonic, game.prefix, game.name) == ("SCRABBLE", "Scrabble", "Scrabble")
    assert (game.min_seats, game.max_seats) == (2, 4)
    assert game.assets == ("gameboard", "dictionary", "letters")
    assert game.default_settings == {}


@pytest.mark.parametrize("call", [
    lambda game: game.new({}, PLAYERS[:2], random.Random(0)),
    lambda game: game.apply(HOUSE, 0, Pass()),
    lambda game: game.parse_move({"type": "PASS"}),
    lambda game: game.legal_moves(HOUSE, 0),
    lambda game: game.state_from_json(good_json()),
    lambda game: game.next_move_params(HOUSE, 0),
], ids=["new", "apply", "parse_move", "legal_moves", "state_from_json", "next_move_params"])
def test_without_assets_the_game_cannot_play(call: Any) -> None:
    with pytest.raises(AssetsMissingError, match="with_assets"):
        call(Scrabble())


def test_with_assets_needs_every_file() -> None:
    with pytest.raises(ValueError, match="needs the asset files dictionary"):
        Scrabble().with_assets({k: v for k, v in FILES.items() if k != "dictionary"})
    with pytest.raises(ValueError, match="all three"):
        Scrabble(layout=GAME.layout)


@pytest.mark.parametrize(("name", "content", "message"), [
    ("gameboard", b"[]", "gameboard: expected a JSON object"),
    ("gameboard", b"{", "gameboard: not JSON"),
    ("gameboard", b'{"squares": [["", "XX"]]}', "gameboard: unknown square kinds ['XX']"),
    ("gameboard", b'{"squares": [[""], ["", ""]]}', "gameboard: the squares are not 2 rows of 1"),
    ("gameboard", b'{"squares": [[""]], "start": {"row": 3, "col": 0}}',
     "gameboard: the start square (row 3, col 0) is not on the board"),
    ("gameboard", b'{"rows": 1}', "gameboard: missing 'squares'"),
    ("letters", b'{"rack": 7, "bingo": 50, "tiles": []}', "letters: \"tiles\" must be"),
    ("letters", b'{"rack": 7, "tiles": []}', "letters: missing 'bingo'"),
    ("letters", b'{"rack": "7", "bingo": 50, "tiles": []}', 'letters: "rack" must be an integer'),
    ("letters", b'{"rack": 7, "bingo": 50, "tiles": [{"letter": "AB", "count": 1, "points": 1}]}',
     "letters: a tile letter must be A-Z or *, not 'AB'"),
    ("letters", b'{"rack": 7, "bingo": 50, "tiles": [{"letter": "A", "count": 1, "points": 1},'
                b' {"letter": "A", "count": 1, "points": 1}]}', "letters: the letter A is listed"),
    ("letters", b'{"rack": 7, "bingo": 50, "tiles": [{"letter": "A", "count": -1, "points": 1}]}',
     "letters: A: count and points must be >= 0"),
    ("dictionary", b"CAT\nDOG'S\n", "dictionary: a line is not a word of letters A-Z: b\"DOG'S\""),
    ("dictionary", b"\n\n", "dictionary: no words"),
])
def test_bad_asset_files_are_refused_by_name(name: str, content: bytes, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        Scrabble().with_assets({**FILES, name: content})
    assert str(caught.value).startswith(message)


def test_the_real_assets() -> None:
    assert (GAME.layout.rows, GAME.layout.cols, GAME.layout.start) == (15, 15, (7, 7))
    assert GAME.layout.squares[7][7] == "DW"
    assert (GAME.tiles.rack, GAME.tiles.bingo, GAME.tiles.total) == (7, 50, 100)
    assert len(GAME.lexicon) == 113_688
    assert "HOUSE" in GAME.lexicon
    assert "house" not in GAME.lexicon
    lower = Scrabble().with_assets({**FILES, "dictionary": b"house\r\nCat\n"})
    assert set(lower.lexicon) == {"HOUSE", "CAT"}


# -- robustness: whatever a bot sends, the referee answers with a move error or a state ----------


ALPHABET = "AEST"
PERMISSIVE = Scrabble().with_assets({**FILES, "dictionary": "\n".join(
    "".join(letters) for size in range(2, 9) for letters in product(ALPHABET, repeat=size)
).encode()})
"""Every string of 2-8 letters A, E, S and T is a word: most plays on a board of those
letters are legal, so the fuzzing below reaches scoring and the end of the game."""


def random_board(rng: random.Random) -> str:
    """A board with a few random runs of letters, usually through the centre."""
    cells = [EMPTY] * 225
    for _ in range(rng.randrange(0, 5)):
        row, col, length = rng.randrange(15), rng.randrange(15), rng.randrange(2, 6)
        across = rng.random() < 0.5
        for i in range(length):
            r, c = (row, col + i) if across else (row + i, col)
            if r < 15 and c < 15:
                cells[r * 15 + c] = rng.choice(ALPHABET + "e")
    if rng.random() < 0.8:
        cells[7 * 15 + 7] = "A"
    return "".join(cells)


def random_play(rng: random.Random, board: str, rack: str) -> Play:
    """Tiles on a line, usually starting next to a tile on the board (now and then with a
    step aside or off the board) or scattered; usually from the rack, now and then not."""
    tiles_ = list(rack + "Q") if rng.random() < 0.1 else list(rack)
    rng.shuffle(tiles_)
    tiles_ = tiles_[:rng.randrange(1, len(tiles_) + 1)] if tiles_ else ["Q"]
    taken = [i for i, cell in enumerate(board) if cell != EMPTY]
    if taken and rng.random() < 0.8:
        row, col = divmod(rng.choice(taken), 15)
        row, col = row + rng.randrange(-2, 2), col + rng.randrange(-2, 2)
    else:
        row, col = rng.randrange(15), rng.randrange(15)
    shape = rng.choice(("across", "down", "across", "down", "scattered"))
    placements = []
    for i, tile in enumerate(tiles_):
        step = i + (rng.random() < 0.05)
        if shape == "across":
            r, c = row, col + step
        elif shape == "down":
            r, c = row + step, col
        else:
            r, c = rng.randrange(-1, 16), rng.randrange(-1, 16)
        letter = rng.choice(ALPHABET) if tile == "*" else tile
        placements.append(Placement(r, c, letter, blank=tile == "*"))
    return Play(tuple(placements))


@pytest.mark.parametrize("game", [PERMISSIVE, GAME], ids=["permissive", "real"])
def test_random_plays_are_refused_or_applied_never_crash(game: Scrabble) -> None:
    rng = random.Random(2024)
    outcomes: Counter[str] = Counter()
    for _ in range(3000):
        rack = "".join(rng.choice(ALPHABET + "*") for _ in range(rng.randrange(1, 8)))
        bag = "E" * rng.choice((0, 0, 3, 20))
        state = replace(HOUSE, board=random_board(rng), racks=(rack, "QZ"), bag=bag)
        move = random_play(rng, state.board, rack)
        try:
            after = game.apply(state, 0, move)
        except IllegalMoveError as exc:
            outcomes[str(exc).split()[1]] += 1
            continue
        outcomes["applied"] += 1
        placed = len(move.placements)
        assert sum(cell != EMPTY for cell in after.board) == sum(
            cell != EMPTY for cell in state.board) + placed
        drawn = state.bag[:len(state.bag) - len(after.bag)]
        assert len(after.racks[0]) == min(7, len(rack) - placed + len(state.bag))
        assert Counter(after.racks[0]) + Counter(p.tile for p in move.placements) == Counter(
            rack) + Counter(drawn)
        if after.ending is None:
            assert after.scores[0] >= state.scores[0]
        else:
            assert after.ending is Ending.OUT
            assert after.adjustments == (20, -20)  # bob's Q and Z
    assert outcomes["applied"] > (300 if game is PERMISSIVE else 0), outcomes


def recount(game: Scrabble, before: str, after: str) -> tuple[set[str], int]:
    """The words through the new tiles and their points, counted the slow, obvious way."""
    new = {i for i in range(225) if before[i] != after[i]}
    runs: set[tuple[int, ...]] = set()
    for index in new:
        for step in (1, 15):
            run = [index]
            while run[0] - step >= 0 and after[run[0] - step] != EMPTY and (
                    step == 15 or run[0] % 15 > 0):
                run.insert(0, run[0] - step)
            while run[-1] + step < 225 and after[run[-1] + step] != EMPTY and (
                    step == 15 or run[-1] % 15 < 14):
                run.append(run[-1] + step)
            if len(run) > 1:
                runs.add(tuple(run))
    total = 0
    for word in runs:
        points, multiplier = 0, 1
        for square in word:
            kind = game.layout.squares[square // 15][square % 15] if square in new else ""
            value = 0 if after[square].islower() else game.tiles.points[after[square]]
            points += value * {"DL": 2, "TL": 3}.get(kind, 1)
            multiplier *= {"DW": 2, "TW": 3}.get(kind, 1)
        total += points * multiplier
    if len(new) == 7:
        total += 50
    return {"".join(after[i] for i in run).upper() for run in runs}, total


def test_accepted_plays_score_as_a_plain_recount_says() -> None:
    rng = random.Random(5)
    checked = 0
    for _ in range(3000):
        rack = "".join(rng.choice(ALPHABET + "*") for _ in range(rng.randrange(1, 8)))
        state = replace(HOUSE, board=random_board(rng), racks=(rack, "QZ"), bag="E" * 20)
        move = random_play(rng, state.board, rack)
        try:
            after = PERMISSIVE.apply(state, 0, move)
        except IllegalMoveError:
            continue
        played = score_play(PERMISSIVE.layout, PERMISSIVE.tiles, PERMISSIVE.lexicon,
                            state.board, rack, move.placements)
        words, total = recount(PERMISSIVE, state.board, after.board)
        assert {word.text for word in played.words} == words
        assert played.score == total == after.scores[0] - state.scores[0]
        checked += 1
    assert checked > 300


def random_json(rng: random.Random, depth: int = 0) -> JSON:
    choices: list[JSON] = [None, True, 0, 7, -1, 15, 1.5, "", "A", "*", "PLAY", "e", "AB"]
    if depth < 3:
        keys = ["type", "Type", "playtiles", "exchangetiles", "row", "col", "tile", "letter"]
        choices.append([random_json(rng, depth + 1) for _ in range(rng.randrange(4))])
        choices.append({rng.choice(keys): random_json(rng, depth + 1)
                        for _ in range(rng.randrange(5))})
    return rng.choice(choices)


def test_random_replies_parse_or_are_invalid_never_crash() -> None:
    rng = random.Random(7)
    parsed = 0
    for _ in range(5000):
        reply = random_json(rng)
        if isinstance(reply, dict) and rng.random() < 0.5:
            reply["type"] = rng.choice(["PLAY", "EXCHANGE", "PASS"])
        try:
            move = GAME.parse_move(reply)
        except InvalidMoveError as exc:
            assert str(exc)
            continue
        parsed += 1
        assert GAME.parse_move(GAME.move_to_wire(move)) == move
    assert parsed > 0

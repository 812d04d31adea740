"""Scrabble on the wire: parsing a bot's reply, the NextMove and Complete params and the move
descriptions (merknera/games/scrabble/).

The tables list what the referee refuses and why, word for word: a bot author reads these
messages in ``Scrabble.Error``.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from merknera.games.base import JSON, IllegalMoveError, InvalidMoveError
from merknera.games.scrabble import Exchange, Pass, Placement, ScrabbleMove, ScrabbleState
from tests.support.scrabble import BLANK_E, EMPTY_BOARD, GAME, HOUSE, OVER, RACK, tiles

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


# -- the wire view (docs/bots/protocol.md section 4, Scrabble) ---------------------------------


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


# -- robustness: whatever a bot sends, parse_move answers with a move or an error -----------------


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

"""Scrabble's state: new games, seats, the bag and determinism, the state's JSON and the
asset files (merknera/games/scrabble/).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from merknera.games.base import JSON
from merknera.games.scrabble import (
    EMPTY,
    AssetsMissingError,
    Ending,
    Exchange,
    Pass,
    Scrabble,
    ScrabbleState,
)
from merknera.games.scrabble.bag import put_back
from tests.support.scrabble import ACROSS, FILES, GAME, HOUSE, PLAYERS, board

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


# -- the game without and with assets -------------------------------------------------------------


def test_the_game_names_itself_as_on_the_wire() -> None:
    game = Scrabble()
    assert (game.mnemonic, game.calls.prefix, game.name) == ("SCRABBLE", "Scrabble", "Scrabble")
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

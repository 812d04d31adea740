"""The wire helpers every game shares (merknera/games/wire.py): keys in any case, one key
given twice in different cases refused, values quoted briefly in messages."""

from __future__ import annotations

import random

import pytest

from merknera.games import JSON, REGISTRY, InvalidMoveError
from merknera.games.wire import QUOTE, lowered, member, shorten
from tests.support import configured

# -- shorten ------------------------------------------------------------------------------------

SHORTENED: list[tuple[str, object, int, str]] = [
    ("a short string", "abc", 80, "'abc'"),
    ("None", None, 80, "None"),
    ("an object", {"take": "0"}, 80, "{'take': '0'}"),
    ("exactly the limit", "x" * 8, 10, "'xxxxxxxx'"),
    ("one over the limit", "x" * 9, 10, "'xxxxxx..."),
    ("far over", list(range(100)), 12, "[0, 1, 2,..."),
    ("the smallest limit", "abcdef", 3, "..."),
    ("the default limit", "y" * 200, QUOTE, "'" + "y" * (QUOTE - 4) + "..."),
]


@pytest.mark.parametrize(("value", "limit", "text"), [row[1:] for row in SHORTENED],
                         ids=[row[0] for row in SHORTENED])
def test_shorten(value: object, limit: int, text: str) -> None:
    assert shorten(value, limit) == text
    assert len(text) <= limit


def test_shorten_defaults_to_quote() -> None:
    assert QUOTE == 80
    assert shorten("z" * 1000) == shorten("z" * 1000, QUOTE)
    assert len(shorten("z" * 1000)) == QUOTE


@pytest.mark.parametrize("limit", [2, 0, -5])
def test_shorten_needs_room_for_the_dots(limit: int) -> None:
    with pytest.raises(ValueError, match="limit must be at least 3"):
        shorten("abc", limit)


# -- keys in any case ---------------------------------------------------------------------------

LOWERED: list[tuple[str, dict[str, JSON], dict[str, JSON]]] = [
    ("empty", {}, {}),
    ("lower already", {"take": "0"}, {"take": "0"}),
    ("mixed cases", {"Take": "0", "STAY": True, "pitIndex": 3},
     {"take": "0", "stay": True, "pitindex": 3}),
    ("null kept", {"Player": None}, {"player": None}),
    ("values untouched", {"K": {"Inner": "X"}}, {"k": {"Inner": "X"}}),
]


@pytest.mark.parametrize(("obj", "expected"), [row[1:] for row in LOWERED],
                         ids=[row[0] for row in LOWERED])
def test_lowered(obj: dict[str, JSON], expected: dict[str, JSON]) -> None:
    assert lowered(obj) == expected
    assert list(lowered(obj)) == list(expected)  # the order of the keys is kept


MEMBERS: list[tuple[str, dict[str, JSON], str, JSON]] = [
    ("exact", {"position": 4}, "position", 4),
    ("capitalised key", {"Position": 4}, "position", 4),
    ("upper-case key", {"POSITION": 0}, "position", 0),
    ("the name in any case", {"pitindex": 2}, "pitIndex", 2),
    ("absent", {"n": 1}, "position", None),
    ("null reads as absent", {"position": None}, "position", None),
    ("a false value is kept", {"stay": False}, "stay", False),
    ("other keys ignored", {"comment": "hi", "Line": [1]}, "line", [1]),
]


@pytest.mark.parametrize(("obj", "name", "value"), [row[1:] for row in MEMBERS],
                         ids=[row[0] for row in MEMBERS])
def test_member(obj: dict[str, JSON], name: str, value: JSON) -> None:
    assert member(obj, name) == value


# The rule: keys are case-insensitive, so two keys that differ only in case are one key given
# twice; the object is malformed, whichever key it is and whichever comes first.
TWICE: list[tuple[str, dict[str, JSON], str]] = [
    ("Take then take", {"Take": "1", "take": "2"}, "take"),
    ("take then Take", {"take": "2", "Take": "1"}, "take"),
    ("the same value twice", {"take": "1", "TAKE": "1"}, "take"),
    ("a one-letter key", {"n": 1, "N": 2}, "n"),
    ("a key the game ignores", {"take": "0", "Note": "a", "note": "b"}, "note"),
]


@pytest.mark.parametrize(("obj", "key"), [row[1:] for row in TWICE],
                         ids=[row[0] for row in TWICE])
def test_a_key_twice_in_different_cases_is_invalid(obj: dict[str, JSON], key: str) -> None:
    message = f'playtiles[0] has the key "{key}" twice (in different cases)'
    with pytest.raises(InvalidMoveError) as caught:
        lowered(obj, "playtiles[0]")
    assert str(caught.value) == message
    for name in ("take", key, "absent"):
        with pytest.raises(InvalidMoveError) as caught:
            member(obj, name, "playtiles[0]")
        assert str(caught.value) == message
    with pytest.raises(InvalidMoveError, match=r"^the reply has the key"):
        member(obj, "take")


# -- every game follows the rule ----------------------------------------------------------------


def doubled(reply: JSON) -> JSON:
    """``reply`` with its first key given once more in upper case (a different value)."""
    assert isinstance(reply, dict) and reply
    key = next(iter(reply))
    return {**reply, key.upper(): "other"}


@pytest.mark.parametrize("mnemonic", sorted(REGISTRY))
def test_every_game_refuses_a_reply_with_a_key_twice(mnemonic: str) -> None:
    """A legal move's own wire form, with its first key given twice, is invalid."""
    game = configured(mnemonic)
    players = [f"p{seat}" for seat in range(game.min_seats)]
    rng = random.Random(1)
    state = game.new(game.default_settings, players, rng)
    while (seat := game.to_move(state)) is not None and seat < 0:
        state = game.apply(state, seat, game.sample_chance(state, rng))
    assert seat is not None
    wire = game.move_to_wire(game.legal_moves(state, seat)[0])
    game.parse_move(wire)  # the wire form itself is a move
    with pytest.raises(InvalidMoveError, match=r"twice \(in different cases\)"):
        game.parse_move(doubled(wire))

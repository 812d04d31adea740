"""The MebiPenny hexagons server's wire, table by table: requests read with the original's
refusals, deltas since a snapshot, disqualified scores, observer lines."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from merknera.games import JSON, JSONObject
from merknera.games.hexagons import Hexagons, Point
from merknera.gateways.hexagons import wire
from merknera.gateways.hexagons.wire import NewGame, RequestRefusedError
from merknera.names import Claim


@pytest.mark.parametrize(("body", "expected"), [
    (b'{"rows": 5, "cols": 4}', NewGame(5, 4)),
    (b'{"rows": 25, "cols": 3, "seed": 1}', NewGame(25, 3)),
])
def test_a_new_game_is_read(body: bytes, expected: NewGame) -> None:
    assert wire.read_new_game(body) == expected


@pytest.mark.parametrize(("body", "why"), [
    (b"", "invalid game data"),
    (b"[5, 4]", 'invalid game data: expected {"rows", "cols"}'),
    (b'{"rows": 4, "cols": 4}', "invalid game data: rows must be odd"),
    (b'{"rows": 5}', "invalid game data: cols must be an integer"),
    (b'{"rows": true, "cols": 4}', "invalid game data: rows must be an integer"),
    (b'{"rows": 27, "cols": 4}', "invalid game data: rows must be from 3 to 25"),
    (b'{"rows": 5, "cols": 2}', "invalid game data: cols must be from 3 to 25"),
])
def test_a_bad_new_game_is_refused(body: bytes, why: str) -> None:
    with pytest.raises(RequestRefusedError) as caught:
        wire.read_new_game(body)
    assert str(caught.value) == why


@pytest.mark.parametrize(("body", "claim"), [
    (b'{"name": "bob"}', Claim("bob")), (b'{"name": " amy "}', Claim("amy")),
    (b'{"name": "bob#s3cret"}', Claim("bob#s3cret")),
    (b'{"name": "bob", "secret": "s3cret"}', Claim("bob", "s3cret"))])
def test_a_player_is_read(body: bytes, claim: Claim) -> None:
    assert wire.read_player(body) == claim


@pytest.mark.parametrize("body", [b"", b"{}", b'{"name": 7}', b'{"name": "  "}', b'"bob"',
                                  b'{"name": "bob", "secret": 7}'])
def test_a_bad_player_is_refused(body: bytes) -> None:
    with pytest.raises(RequestRefusedError, match=r"^invalid player data$"):
        wire.read_player(body)


def test_a_line_is_read_in_either_order_and_sorted() -> None:
    forwards = wire.read_line(b'[{"row": 1, "col": 1}, {"row": 1, "col": 2}]')
    backwards = wire.read_line(b'[{"row": 1, "col": 2}, {"row": 1, "col": 1}]')
    assert forwards == backwards == (Point(1, 1), Point(1, 2))
    assert wire.line_request(forwards) == {"line": [{"row": 1, "col": 1},
                                                    {"row": 1, "col": 2}]}


@pytest.mark.parametrize("body", [
    b"", b"{}", b"[]", b'[{"row": 1, "col": 1}]',
    b'[{"row": 1, "col": 1}, {"row": 1, "col": 2}, {"row": 1, "col": 3}]',
    b'[{"row": 1, "col": 1}, {"row": 1}]', b'[{"row": 1, "col": 1}, {"row": 1.5, "col": 2}]',
    b'[{"row": 1, "col": 1}, {"row": true, "col": 2}]', b'{"line": []}'])
def test_a_malformed_line_is_invalid_line_data(body: bytes) -> None:
    with pytest.raises(RequestRefusedError, match=r"^invalid line data$"):
        wire.read_line(body)


def _played(moves: int) -> Any:
    """The Game object after ``moves`` random legal moves of a seeded 5x4 game."""
    game, rng = Hexagons(), random.Random(7)
    state = game.new({"rows": 5, "cols": 4}, ["amy", "bob"], rng)
    for _ in range(moves):
        seat = game.to_move(state)
        assert seat is not None
        state = game.apply(state, seat, rng.choice(list(game.legal_moves(state, seat))))
    return game.game_object(state, completed=False)


def test_a_delta_holds_only_what_changed_since_the_snapshot() -> None:
    before = _played(10)
    seen = wire.snapshot(before)
    after = _played(30)
    change: Any = wire.delta(after, seen)
    assert set(change) == {"lines", "hexagons", "players", "state"}
    assert change["lines"] == after["lines"][10:] and len(change["lines"]) == 20
    assert change["hexagons"] == after["hexagons"][len(before["hexagons"]):]
    changed = {p["name"] for p, q in zip(after["players"], before["players"], strict=True)
               if p != q}
    assert {p["name"] for p in change["players"]} == changed
    assert wire.delta(after, wire.snapshot(after)) == {
        "lines": [], "hexagons": [], "players": [], "state": "in play"}


def test_a_disqualified_player_scores_disqualified_everywhere() -> None:
    game = _played(30)
    shown: Any = wire.disqualify(game, frozenset({"bob"}))
    assert {p["name"]: p["score"] for p in shown["players"]} == {
        "amy": game["players"][0]["score"], "bob": "disqualified"}
    owners = [item["owner"] for item in shown["lines"]]
    assert {o["score"] for o in owners if o["name"] == "bob"} == {"disqualified"}
    assert {o["score"] for o in owners if o["name"] == "amy"} == {game["players"][0]["score"]}
    assert wire.disqualify(game, frozenset()) is game


def test_observer_lines_are_one_line_each_and_wrapped() -> None:
    document: JSONObject = {"text": "two\nlines", "n": 1}  # a real newline inside
    plain = wire.Encoded(document).line()
    assert plain.count(b"\n") == 1 and plain.endswith(b"\n") and json.loads(plain) == document
    wrapped = wire.Encoded(document).line("<script>\nupdate(%s)</script>")
    assert wrapped.count(b"\n") == 1
    assert wrapped.startswith(b"<script> update({") and wrapped.endswith(b")</script>\n")
    assert wire.read_wrapper(b"") is None and wire.read_wrapper(b"{}") is None
    assert wire.read_wrapper(b'{"wrapper": "cb(%s);"}') == "cb(%s);"
    for bad in (b'{"wrapper": "no slot"}', b'{"wrapper": "%s%s"}', b'{"wrapper": 1}'):
        with pytest.raises(RequestRefusedError, match=r"^invalid observer data$"):
            wire.read_wrapper(bad)


def test_game_ids_are_eight_hex_digits() -> None:
    ids = {wire.new_game_id() for _ in range(50)}
    assert len(ids) == 50 and all(len(i) == 8 and int(i, 16) >= 0 for i in ids)


def _line(document: JSON, wrapper: str | None = None) -> bytes:
    """An observer's line as the original's wire has it: the document on one line, put
    into ``wrapper`` (its line ends made spaces) at ``%s``."""
    text = json.dumps(document, separators=(",", ":"))
    if wrapper is not None:
        text = wrapper.replace("\r", " ").replace("\n", " ").replace("%s", text)
    return (text + "\n").encode("utf-8")


def test_a_shown_game_is_encoded_and_its_deltas_made_once_as_the_functions_would() -> None:
    before, after = _played(10), _played(30)
    shown = wire.Shown(after)
    wrapper = "<script>\r\nupdate(%s)</script>"
    assert shown.snapshot == wire.snapshot(after) and shown.state == "in play"
    assert shown.game.line() == _line(after)
    assert shown.game.line(wrapper) == _line(after, wrapper)
    assert shown.game.body == json.dumps(after)  # as aiohttp's json_response writes it
    since = wire.snapshot(before)
    change = shown.delta(since)
    assert change.document == wire.delta(after, since)
    assert change.line(wrapper) == _line(wire.delta(after, since), wrapper)
    # Every observer shown the same snapshot gets the same delta and the same line.
    assert shown.delta(wire.snapshot(_played(10))) is change
    assert change.line() is shown.delta(since).line()

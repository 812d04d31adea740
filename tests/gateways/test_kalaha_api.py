"""The Kalaha board API's wire, table by table: PUT bodies read as the original's Spring
controller reads them, its checks in its order, BoardStates and Spring's error bodies."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from merknera.games.kalaha import Board
from merknera.gateways.kalaha import api
from merknera.gateways.kalaha.api import ApiError, Play

BOARD_ID = "3f2b1c4d-0000-4000-8000-00000000abcd"


@pytest.mark.parametrize(("body", "play"), [
    (b'{"pitIndex": 0, "player": "ONE"}', Play(0, 0)),
    (b'{"pitIndex": 5, "player": "TWO"}', Play(5, 1)),
    (b'{"pitIndex": "3", "player": "ONE"}', Play(3, 0)),  # the original's README sends a string
    (b'{"pitIndex": 2.0, "player": "ONE"}', Play(2, 0)),
    (b'{"player": "TWO"}', Play(0, 1)),  # a Java int: absent is 0
    (b'{"pitIndex": 1, "player": "ONE", "extra": true}', Play(1, 0)),
])
def test_a_play_is_read_as_jackson_reads_it(body: bytes, play: Play) -> None:
    assert api.read_play(body) == play


@pytest.mark.parametrize(("body", "message"), [
    (b"", "Required request body is missing"),
    (b"{nope", "JSON parse error: "),
    (b"[1]", "JSON parse error: Cannot construct instance of PlayRequest from Array value"),
    (b'{"pitIndex": 1, "player": "THREE"}',
     'JSON parse error: Cannot deserialize value of type Player from "THREE": not one of the '
     "values accepted for Enum class: [ONE, TWO]"),
    (b'{"pitIndex": 1, "player": "one"}', "not one of the values accepted"),
    (b'{"pitIndex": "x", "player": "ONE"}', 'from String "x": not a valid int value'),
    # Other scripts' digits (Java's parseInt reads them): refused, as the document says.
    ('{"pitIndex": "\u0663", "player": "ONE"}'.encode(),
     'from String "\\u0663": not a valid int value'),
    (b'{"pitIndex": 1.5, "player": "ONE"}', "Cannot coerce Floating-point value (1.5) to int"),
    (b'{"pitIndex": true, "player": "ONE"}', "Cannot coerce boolean value to int"),
    (b'{"pitIndex": 9999999999, "player": "ONE"}', "out of range of int"),
])
def test_an_unreadable_play_is_a_json_parse_error(body: bytes, message: str) -> None:
    with pytest.raises(ApiError) as caught:
        api.read_play(body)
    assert caught.value.status == 400 and message in caught.value.message
    assert caught.value.errors == ()


@pytest.mark.parametrize(("body", "fields"), [
    (b'{"pitIndex": 6, "player": "ONE"}', [("pitIndex", "Max", 6)]),
    (b'{"pitIndex": -1, "player": "ONE"}', [("pitIndex", "Min", -1)]),
    (b'{"pitIndex": 1}', [("player", "NotNull", None)]),
    (b'{"pitIndex": 7, "player": null}', [("pitIndex", "Max", 7), ("player", "NotNull", None)]),
])
def test_a_play_out_of_range_fails_validation_with_binding_errors(
        body: bytes, fields: list[tuple[str, str, Any]]) -> None:
    with pytest.raises(ApiError) as caught:
        api.read_play(body)
    error = caught.value
    assert error.status == 400
    assert error.message == ("Validation failed for object='playRequest'. Error count: "
                             f"{len(fields)}")
    assert [(e["field"], e["code"], e["rejectedValue"]) for e in error.errors] == fields
    messages = {e["field"]: e["defaultMessage"] for e in error.errors}
    assert messages.get("pitIndex", api.PIT_RANGE) == api.PIT_RANGE
    assert messages.get("player", "must not be null") == "must not be null"


PLAYED = Board(((0, 7, 7, 7, 7, 7), (6, 6, 6, 6, 6, 6)), (1, 0), 0)
"""After ONE sowed pit 0: its last stone fell in its store, so ONE moves again."""
OVER = Board(((0,) * 6, (0,) * 6), (40, 32), 1)


@pytest.mark.parametrize(("board", "play", "message"), [
    (OVER, Play(0, 0), "Game is over"),
    # Game over is checked before anything else, however wrong the rest is.
    (OVER, Play(3, 1), "Game is over"),
    # The pit checked is the player to move's, whoever asks: TWO asking for pit 0 (TWO's
    # pit 0 is full) is told the pit is empty, since ONE is to move and ONE's pit 0 is.
    (PLAYED, Play(0, 1), "Current pit is empty"),
    (PLAYED, Play(0, 0), "Current pit is empty"),
    (PLAYED, Play(1, 1), "Incorrect player order, next is ONE"),
    (Board(), Play(2, 1), "Incorrect player order, next is ONE"),
])
def test_the_originals_checks_come_in_its_order(board: Board, play: Play,
                                               message: str) -> None:
    with pytest.raises(ApiError) as caught:
        api.check_play(board, play)
    assert (caught.value.status, caught.value.message) == (400, message)


def test_a_legal_play_passes_the_checks() -> None:
    api.check_play(PLAYED, Play(1, 0))
    api.check_play(Board(), Play(5, 0))


def test_a_board_state_is_the_originals() -> None:
    assert api.board_state(BOARD_ID, Board()) == {
        "boardId": BOARD_ID, "nextPlayer": "ONE",
        "rowOne": {"pits": [{"stones": 6}] * 6, "kalahaStones": 0},
        "rowTwo": {"pits": [{"stones": 6}] * 6, "kalahaStones": 0},
        "gameOver": False, "winner": None}
    over = api.board_state(BOARD_ID, OVER)
    assert (over["gameOver"], over["winner"], over["nextPlayer"]) == (True, "ONE", "TWO")
    draw = Board(((0,) * 6, (0,) * 6), (36, 36), 0)
    assert api.board_state(BOARD_ID, draw)["winner"] is None  # a draw here, not TWO


@pytest.mark.parametrize(("text", "ok"), [
    (BOARD_ID, True), (BOARD_ID.upper(), True), ("not-a-uuid", False), ("", False)])
def test_a_board_id_is_a_uuid(text: str, ok: bool) -> None:
    if ok:
        assert api.read_board_id(text) == BOARD_ID
        return
    with pytest.raises(ApiError) as caught:
        api.read_board_id(text)
    assert caught.value.message == (
        "Failed to convert value of type 'java.lang.String' to required type "
        f"'java.util.UUID'; Invalid UUID string: {text}")


def test_an_error_body_is_springs() -> None:
    now = datetime.datetime(2026, 11, 24, 10, 15, 30, 123456, tzinfo=datetime.UTC)
    assert api.NOT_FOUND.body("/api/boards/x", now) == {
        "timestamp": "2026-11-24T10:15:30.123+00:00", "status": 404, "error": "Not Found",
        "message": "Board not found", "path": "/api/boards/x"}
    with pytest.raises(ApiError) as caught:
        api.read_play(b'{"pitIndex": 9, "player": "ONE"}')
    body = caught.value.body("/api/boards/x", now)
    assert list(body) == ["timestamp", "status", "error", "message", "errors", "path"]
    assert body["error"] == "Bad Request"

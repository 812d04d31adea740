"""The line ``merknera demo`` prints for a finished game, from the event's enums."""

from __future__ import annotations

from merknera.demo import _game_line
from merknera.events import GameFinished
from merknera.games import SeatResult, Termination


def test_a_won_game_names_the_winner_and_the_termination() -> None:
    line = _game_line(GameFinished(
        3, "TICTACTOE", ("alpha (1.0)", "beta (2)"), (SeatResult.LOSS, SeatResult.WIN),
        Termination.STRIKES, "alpha made 3 faulty replies"))
    assert "alpha vs beta" in line
    assert "beta won" in line
    assert line.endswith("strikes: alpha made 3 faulty replies")


def test_a_draw_and_a_game_without_a_result() -> None:
    drawn = _game_line(GameFinished(4, "KALAHA", ("a (1)", "b (1)"),
                                    (SeatResult.DRAW, SeatResult.DRAW), Termination.NORMAL,
                                    "equal stores", scores=(24.0, 24.0)))
    assert "a 24 vs b 24" in drawn and " draw " in drawn and "normal: equal stores" in drawn
    ended = _game_line(GameFinished(5, "KALAHA", ("a (1)", "b (1)"),
                                    (SeatResult.NONE, SeatResult.NONE), Termination.SUPERSEDED,
                                    "a newer version"))
    assert "no result" in ended and ended.endswith("superseded: a newer version")

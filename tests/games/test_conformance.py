"""One conformance test run over every registered game: the public check a plugin's author
runs too (:func:`merknera.games.testing.check_game`), and tests that the check catches a
game that breaks a house rule."""

from __future__ import annotations

import random
from typing import Any

import pytest

from merknera.games import REGISTRY, AnyGame, IllegalMoveError, Seat
from merknera.games.testing import ConformanceError, check_game
from merknera.games.tictactoe import TicTacToe
from tests.support import configured


@pytest.mark.parametrize("mnemonic", sorted(REGISTRY))
def test_every_hosted_game_keeps_the_house_rules(mnemonic: str) -> None:
    check_game(configured(mnemonic))


class AnyoneMoves(TicTacToe):
    """Tic-tac-toe that lets a seat move out of turn."""

    def apply(self, state: Any, seat: Seat, move: Any) -> Any:
        return super().apply(state, self.to_move(state) or 0, move)


class ForgetfulLog(TicTacToe):
    """Tic-tac-toe whose stored moves read back as another cell."""

    def parse_logged(self, seat: Seat, stored: Any) -> Any:
        return super().parse_move({"position": (stored["position"] + 1) % 9})


class LowerCase(TicTacToe):
    mnemonic = "tictactoe"


class Coin(TicTacToe):
    """Overrides sample_chance alone: chance moves it could never read back."""

    def sample_chance(self, state: Any, rng: random.Random) -> Any:
        raise IllegalMoveError("no chance here")


@pytest.mark.parametrize(("game", "rule"), [
    (AnyoneMoves(), "a seat not to move played: nothing was raised"),
    (ForgetfulLog(), "seed 1: the replay parts from the game at move 1"),
    (LowerCase(), "the mnemonic 'tictactoe' is not upper-case"),
    (Coin(), "a game with chance moves overrides both"),
], ids=["out of turn", "replay", "mnemonic", "half a chance game"])
def test_the_check_names_the_rule_a_game_breaks(game: AnyGame, rule: str) -> None:
    with pytest.raises(ConformanceError, match=rule):
        check_game(game)

"""Merknera's round robin at registration: two games against every current opponent."""

from __future__ import annotations

from collections.abc import Sequence


def registration_pairings(newcomer: int, opponents: Sequence[int]) -> list[tuple[int, int]]:
    """Seatings for a newly registered bot: one game each way against every opponent.

    In each pair, the first id takes seat 0 (moves first).  Merknera seated the opponent
    first in the first game of each pair, and so do we.
    """
    return [seating for opponent in opponents
            for seating in ((opponent, newcomer), (newcomer, opponent))]

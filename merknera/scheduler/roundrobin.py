"""Merknera's round robin at registration: two games against every current opponent, and
for games of more than two seats one game of each larger size."""

from __future__ import annotations

from collections.abc import Sequence


def registration_pairings(newcomer: int, opponents: Sequence[int]) -> list[tuple[int, int]]:
    """Seatings for a newly registered bot: one game each way against every opponent.

    In each pair, the first id takes seat 0 (moves first).  Merknera seated the opponent
    first in the first game of each pair, and so do we.
    """
    return [seating for opponent in opponents
            for seating in ((opponent, newcomer), (newcomer, opponent))]


def registration_groups(newcomer: int, opponents: Sequence[int],
                        max_seats: int) -> list[tuple[int, ...]]:
    """Seatings for a newly registered bot of a game for up to ``max_seats`` seats.

    Merknera's pairs (both seatings against every opponent) come first.  Then, for each
    larger table size that enough opponents allow, one game with the most recently
    registered opponents, the newcomer in the second-to-last seat (the pairs already give it
    the first and the last).
    """
    groups: list[tuple[int, ...]] = list(registration_pairings(newcomer, opponents))
    for size in range(3, max_seats + 1):
        if len(opponents) < size - 1:
            break
        others = list(opponents[-(size - 1):])
        others.insert(size - 2, newcomer)
        groups.append(tuple(others))
    return groups

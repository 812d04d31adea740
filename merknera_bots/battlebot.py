"""What the reference bots of Battlebot's games share (:mod:`merknera_bots.noughtsandcrosses`,
:mod:`merknera_bots.numberwang`): NextMove brings ``{"state": {...}}`` and the answer is a turn
worked out from that state.  Like :mod:`merknera_bots.kit` it imports nothing from ``merknera``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from merknera_bots.kit import Bot, InvalidParamsError

Turn = dict[str, Any]


def state_bot(prefix: str, choose: Callable[[Any], Turn], *, delay: float = 0.0) -> Bot:
    """A :class:`~merknera_bots.kit.Bot` answering ``<prefix>.NextMove`` with ``choose(state)``,
    after waiting ``delay`` seconds; a ValueError from ``choose`` is an invalid-params error
    (the state is not a game it can move in)."""

    async def next_move(*, gameid: int, state: Any, **extra: Any) -> Turn:
        try:
            turn = choose(state)
        except ValueError as exc:
            raise InvalidParamsError(str(exc)) from None
        if delay > 0:
            await asyncio.sleep(delay)
        return turn

    return Bot(prefix, next_move)

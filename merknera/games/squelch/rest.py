"""Squelch's calls on the Squelchbot REST API (``seeds/000_*``; ``research/seed-systems.md``
b.2): the spec's path and body of each.

The arena calls the bot's base URL with ``PUT`` for every game call and ``GET /bot/info``
as the ping.  The game's calls map one to one onto the spec's (docs/bots/protocol.md section 4 names
them after it), the ids moving from params into the path:

=================  ===========================================================
``MatchStart``     ``PUT /match/{m}/start``  dieCount, maxPoints, gameCount, ...
``GameStart``      ``PUT /match/{m}/game/{g}/start``  (``{}``: the spec has no body)
``TurnStart``      ``PUT /match/{m}/game/{g}/turn/{t}/start``
``NextMove``       ``PUT /match/{m}/game/{g}/turn/{t}/choose`` -> {take, stay}
``Squelch``        ``PUT /match/{m}/game/{g}/turn/{t}/squelch``
``GameEnd``        ``PUT /match/{m}/game/{g}/end``
``MatchEnd``       ``PUT /match/{m}/end``
=================  ===========================================================

The match id is the platform's game id.  The spec has no call for the platform's
``Error``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from merknera.games.base import JSON, JSONObject
from merknera.games.squelch.game import SquelchCall

INFO_PATH = "/bot/info"
"""The spec's ``GET`` path that says whether a bot is up, and its name."""


@dataclass(frozen=True)
class Route:
    """Where a call goes and which of its params make the body."""

    path: str
    """The spec's path, with ``{matchId}``, ``{gameId}`` and ``{turnId}`` to fill in."""
    body: tuple[str, ...]
    """The body's keys, in the spec's order.  A call the spec gives no body gets ``{}``
    as JSON: bots built on frameworks that read every PUT as JSON refuse anything else
    (CherryPy's ``json_in``, which ``rmpacheco/py-squelch-bot`` uses, answers 411 without
    a length, 415 for an empty body of another type and 400 for an empty JSON one)."""

    def url_path(self, match_id: int, params: Mapping[str, JSON]) -> str:
        """The path of a call with these params: the match id is the platform's game id;
        the game and turn ids are the call's ``gameid`` and ``turnid`` params.

        :raises ValueError: if a param the path needs is not an integer.
        """
        return self.path.format_map(_Ids(self.path, match_id, params))

    def request_body(self, params: Mapping[str, JSON]) -> JSONObject:
        """The body of a call with these params: the spec's keys, in its order."""
        return {key: params.get(key) for key in self.body}


class _Ids(dict[str, int]):
    def __init__(self, path: str, match_id: int, params: Mapping[str, JSON]) -> None:
        super().__init__(matchId=match_id)
        self._path = path
        self._params = params

    def __missing__(self, key: str) -> int:
        value = self._params.get(key.lower())
        if not isinstance(value, int) or isinstance(value, bool):
            # The game makes these params: anything else is the platform's bug.
            raise ValueError(f"the Squelch call to {self._path} has no integer {key}")
        return value


ROUTES: Mapping[str, Route] = {
    SquelchCall.MATCH_START: Route(
        "/match/{matchId}/start",
        ("dieCount", "maxPoints", "gameCount", "yourBotIndex", "botNames")),
    SquelchCall.GAME_START: Route("/match/{matchId}/game/{gameId}/start", ()),
    SquelchCall.TURN_START: Route("/match/{matchId}/game/{gameId}/turn/{turnId}/start",
                                  ("startPoints", "otherPlayerTurns", "isFinalRound")),
    SquelchCall.CHOOSE: Route("/match/{matchId}/game/{gameId}/turn/{turnId}/choose",
                              ("dieValues", "options")),
    SquelchCall.SQUELCH: Route("/match/{matchId}/game/{gameId}/turn/{turnId}/squelch",
                               ("dieValues",)),
    SquelchCall.GAME_END: Route("/match/{matchId}/game/{gameId}/end",
                                ("finalPlayerTurns", "winnerBotIndex")),
    SquelchCall.MATCH_END: Route("/match/{matchId}/end", ("winsByBotIndex",)),
}
"""Squelch's calls by the game's names for them."""

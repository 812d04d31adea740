"""A reference Squelch bot speaking the Squelchbot REST API: ``good`` or ``random``.

Run one with::

    python -m merknera_bots.squelch_rest --strategy good --platform http://127.0.0.1:8080 \\
        --token TOKEN --port 0 [--seed N]

It registers through ``RegistrationService.Register`` like the other reference bots, adding
``"protocol": "squelch-rest"`` and giving its base URL (no ``/rpc``) as ``rpcendpoint``.  The
platform then calls it as the Squelchbot API spec says, with JSON bodies:

* ``GET /bot/info`` answers ``{"name": ...}`` (at most 20 characters);
* ``PUT /match/{m}/start``, ``/match/{m}/game/{g}/start``, ``.../turn/{t}/start``,
  ``.../turn/{t}/squelch``, ``/match/{m}/game/{g}/end`` and ``/match/{m}/end`` answer an
  empty 200;
* ``PUT /match/{m}/game/{g}/turn/{t}/choose`` answers ``{"take": "<option id>", "stay": bool}``.

The strategies are those of :mod:`merknera_bots.squelch`
(:func:`~merknera_bots.squelch.choose_good`, :func:`~merknera_bots.squelch.choose_random`).
The choose body does not carry the points taken earlier in the turn, so the bot adds up its
own answers of the turn.

Every call may be repeated: a repeated choose (same match, game, turn, roll and options) gets
the first answer again, and the announcements only set what they set the first time.  State is
kept per match and per game (several of each may run at once) and bounded: a match is
forgotten at its end, and beyond :data:`MAX_MATCHES` (or :data:`MAX_GAMES` games of one match)
the least recently heard of is forgotten.

Once the Register reply has brought the secret, every call must carry the platform's
signature headers (see :func:`merknera_bots.kit.verify`; a GET signs the empty body) or gets 401, as
the kit does for JSON-RPC.  Bodies over :data:`MAX_BODY` bytes get 413, malformed ones 400
with the reason.  The fields the bot plays by are required; those it only logs
(``gameCount``, ``botNames``, the end calls' fields, the squelch roll) are checked when sent.
"""

from __future__ import annotations

import json
import logging
import random
import sys
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from merknera_bots.kit import unsigned
from merknera_bots.launcher import make_parser, run_bot
from merknera_bots.squelch import (
    STRATEGIES,
    Option,
    Situation,
    chase_chance,
    choose_good,
    choose_random,
    turn_value,
)

__all__ = ["DESCRIPTIONS", "GAME", "MAX_BODY", "MAX_GAMES", "MAX_MATCHES", "NAME_LIMIT",
           "PROTOCOL", "SquelchRestBot", "main"]

logger = logging.getLogger(__name__)

GAME = "SQUELCH"
PROTOCOL = "squelch-rest"
"""The ``protocol`` param of the bot's registration."""
NAME_LIMIT = 20
"""The spec's limit on the name ``/bot/info`` gives."""
MAX_BODY = 64 * 1024
"""The largest request body taken (a choose body is well under 2 KiB)."""
MAX_MATCHES = 1000
"""Matches remembered at most (an endless stream of match ids must not grow memory)."""
MAX_GAMES = 64
"""Games of one match remembered at most."""
_MAX_ROLLS = 100
"""Choose answers remembered per turn; a turn of that many rolls does not happen."""
_MAX_SEATS = 64
_MAX_ID = 128
"""The longest match, game or turn id taken (the spec's ids are short)."""
_MAX_POINTS = 10**9
"""Points beyond this are refused: the tables work in floats."""

DESCRIPTIONS = {
    "good": "Banks the most points on average (an expected-value table over every roll); in "
            "the final round rolls on until ahead. Speaks the Squelchbot REST API.",
    "random": "Takes a random option and stays half the time. Speaks the Squelchbot REST API.",
}

_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class _BadRequestError(ValueError):
    """A malformed call: answered 400 with this message."""


@dataclass(frozen=True)
class _Answer:
    take: str
    stay: bool
    points: int
    """The points of the option taken."""


_Roll = tuple[str, tuple[Option, ...]]


@dataclass
class _Game:
    """What the bot knows of one game: its score, the others', and its current turn."""

    banked: int = 0
    others: dict[int, int] = field(default_factory=dict)
    """The score of each other seat, from its latest turn."""
    final_round: bool = False
    turn: str | None = None
    answers: OrderedDict[_Roll, _Answer] = field(default_factory=OrderedDict)
    """This turn's choose answers, by roll and options."""


@dataclass
class _Match:
    """What the bot knows of one match."""

    die_count: int = 6
    max_points: int = 5000
    me: int | None = None
    games: OrderedDict[str, _Game] = field(default_factory=OrderedDict)

    def game(self, game_id: str) -> _Game:
        """The game's state, created (and the least recent game beyond the cap forgotten)
        when it is new."""
        game = self.games.get(game_id)
        if game is None:
            game = self.games[game_id] = _Game()
            while len(self.games) > MAX_GAMES:
                self.games.popitem(last=False)
        self.games.move_to_end(game_id)
        return game


class SquelchRestBot:
    """One bot serving the Squelchbot REST API with a :mod:`merknera_bots.squelch` strategy.

    Serve it with :meth:`make_app` (or :func:`merknera_bots.launcher.run_bot`).  :attr:`secret`
    works as :attr:`merknera_bots.kit.Bot.secret` does.
    """

    def __init__(self, strategy: str, *, name: str, seed: int | None = None,
                 max_matches: int = MAX_MATCHES) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}")
        self.strategy = strategy
        self.name = name
        self.secret: str | None = None
        """The secret from the Register reply; once set, every call must be signed with it."""
        self._rng = random.Random(seed)
        self._max_matches = max_matches
        self._matches: OrderedDict[str, _Match] = OrderedDict()
        if strategy == "good":
            _warm_tables(6)  # a moment's work: not during the first call (1 s per call)

    @property
    def matches(self) -> int:
        """How many matches the bot remembers."""
        return len(self._matches)

    def make_app(self) -> web.Application:
        """The aiohttp application serving the API."""
        app = web.Application(client_max_size=MAX_BODY, middlewares=[self._guard])
        turn = "/match/{match}/game/{game}/turn/{turn}"
        app.router.add_get("/bot/info", self._info)
        for path, handler in (
                ("/match/{match}/start", self._match_start),
                ("/match/{match}/end", self._match_end),
                ("/match/{match}/game/{game}/start", self._game_start),
                ("/match/{match}/game/{game}/end", self._game_end),
                (turn + "/start", self._turn_start),
                (turn + "/choose", self._choose),
                (turn + "/squelch", self._squelch)):
            app.router.add_put(path, handler)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: _Handler) -> web.StreamResponse:
        """Signatures first (once the secret is known), then 400 for a malformed call."""
        body = await request.read()  # 413 beyond client_max_size
        # Until the Register reply brings the secret every call is accepted: the platform may
        # start a match the moment the registration commits, before the reply reaches us.
        if self.secret is not None:
            refused = unsigned(self.secret, request, body)
            if refused is not None:
                return refused
            # No replay guard, unlike the kit's JSON-RPC bots: the spec makes every call
            # idempotent and the arena repeats calls (the platform asks again, within the
            # same second, the choose that a strike followed: the same URL, body and
            # signature).  A recorded call sent again within the timestamp's 60 s gets the
            # answer the first got, which tells nobody anything new.
        try:
            return await handler(request)
        except _BadRequestError as exc:
            return web.Response(status=400, text=f"{exc}\n")

    def _match(self, request: web.Request) -> _Match:
        """The state of the request's match, created when new (forgetting the least recently
        heard of beyond the cap)."""
        key = _path_id(request, "match")
        match = self._matches.get(key)
        if match is None:
            match = self._matches[key] = _Match()
            while len(self._matches) > self._max_matches:
                self._matches.popitem(last=False)
        self._matches.move_to_end(key)
        return match

    # --- the calls --------------------------------------------------------------------

    async def _info(self, request: web.Request) -> web.Response:
        return web.json_response({"name": self.name[:NAME_LIMIT]})

    async def _match_start(self, request: web.Request) -> web.Response:
        body = await _body(request)
        die_count = _int(body, "dieCount", 1, 6)
        max_points = _int(body, "maxPoints", 1, _MAX_POINTS)
        me = _int(body, "yourBotIndex", 0, _MAX_SEATS - 1)
        if "gamecount" in body:
            _int(body, "gameCount", 0, None)
        names = body.get("botnames", [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _BadRequestError("botNames must be a list of strings")
        match = self._match(request)
        match.die_count, match.max_points, match.me = die_count, max_points, me
        if self.strategy == "good":
            _warm_tables(die_count)
        return _ok()

    async def _game_start(self, request: web.Request) -> web.Response:
        await _body(request, required=False)
        # The game's state is made if new: a repeated start must not clear a game under way.
        self._match(request).game(_path_id(request, "game"))
        return _ok()

    async def _turn_start(self, request: web.Request) -> web.Response:
        body = await _body(request)
        banked = _int(body, "startPoints", 0, _MAX_POINTS)
        final_round = body.get("isfinalround")
        if not isinstance(final_round, bool):
            raise _BadRequestError("isFinalRound must be true or false")
        turns = body.get("otherplayerturns")
        if not isinstance(turns, list):
            raise _BadRequestError("otherPlayerTurns must be a list of BotTurns")
        scores: dict[int, int] = {}
        for item in turns:
            turn = _fields(item, "a BotTurn in otherPlayerTurns")
            scores[_int(turn, "botIndex", 0, _MAX_SEATS - 1)] = _int(turn, "endPoints", 0,
                                                                       _MAX_POINTS)
        match = self._match(request)
        game = match.game(_path_id(request, "game"))
        turn_id = _path_id(request, "turn")
        if game.turn != turn_id:  # a repeated start keeps what the turn has taken
            game.turn, game.answers = turn_id, OrderedDict()
        game.banked, game.final_round = banked, final_round
        if match.me is not None:
            scores.pop(match.me, None)  # only the others' scores are to beat
        game.others.update(scores)
        return _ok()

    async def _choose(self, request: web.Request) -> web.Response:
        body = await _body(request)
        match = self._match(request)
        roll = _dice(body.get("dievalues"), "dieValues", match.die_count)
        items = body.get("options")
        if not isinstance(items, list) or not items:
            raise _BadRequestError("options must be a non-empty list")
        options = tuple(_option(item, roll) for item in items)
        if len({option.id for option in options}) < len(options):
            raise _BadRequestError("the option ids must be unique")
        game = match.game(_path_id(request, "game"))
        turn_id = _path_id(request, "turn")
        if game.turn != turn_id:  # no turn start heard: a turn from nothing in hand
            game.turn, game.answers = turn_id, OrderedDict()
        key = (roll, options)
        answer = game.answers.get(key)
        if answer is None:  # not a repeated call
            answer = self._decide(match, game, roll, options)
            game.answers[key] = answer
            while len(game.answers) > _MAX_ROLLS:
                game.answers.popitem(last=False)
        return web.json_response({"take": answer.take, "stay": answer.stay})

    def _decide(self, match: _Match, game: _Game, roll: str,
                options: tuple[Option, ...]) -> _Answer:
        situation = Situation(
            roll, options,
            turn_points=sum(a.points for a in game.answers.values() if not a.stay),
            banked=game.banked, best_other=max(game.others.values(), default=0),
            final_round=game.final_round, die_count=match.die_count)
        if self.strategy == "good":
            take, stay = choose_good(situation)
        else:
            take, stay = choose_random(situation, self._rng)
        points = next(option.points for option in options if option.id == take)
        return _Answer(take, stay, points)

    async def _squelch(self, request: web.Request) -> web.Response:
        body = await _body(request)
        roll = body.get("dievalues")
        if roll is not None:
            _dice(roll, "dieValues", 6)
        logger.info("match %s game %s: squelched with %s", _path_id(request, "match"),
                    _path_id(request, "game"), roll)
        return _ok()

    async def _game_end(self, request: web.Request) -> web.Response:
        body = await _body(request)
        winner = body.get("winnerbotindex")
        if winner is not None and (isinstance(winner, bool) or not isinstance(winner, int)):
            raise _BadRequestError(f"winnerBotIndex must be an integer, not {winner!r}")
        if not isinstance(body.get("finalplayerturns", []), list):
            raise _BadRequestError("finalPlayerTurns must be a list of BotTurns")
        match_id, game_id = _path_id(request, "match"), _path_id(request, "game")
        match = self._matches.get(match_id)
        me = None if match is None else match.me
        verdict = "won" if me is not None and winner == me else "lost"
        logger.info("match %s: game %s %s (winner: bot %s)", match_id, game_id, verdict, winner)
        if match is not None:
            match.games.pop(game_id, None)
        return _ok()

    async def _match_end(self, request: web.Request) -> web.Response:
        body = await _body(request)
        wins = body.get("winsbybotindex")
        if wins is not None and (not isinstance(wins, list) or not all(
                isinstance(w, int) and not isinstance(w, bool) for w in wins)):
            raise _BadRequestError("winsByBotIndex must be a list of integers")
        match_id = _path_id(request, "match")
        logger.info("match %s over: wins by bot %s", match_id, wins)
        self._matches.pop(match_id, None)
        return _ok()


# --- reading requests ---------------------------------------------------------------------


def _ok() -> web.Response:
    return web.Response(status=200)


def _warm_tables(die_count: int) -> None:
    """Build the strategy's tables for ``die_count`` dice (cached: once per die count)."""
    turn_value(0, die_count, die_count)
    chase_chance(1, die_count, die_count)


def _path_id(request: web.Request, name: str) -> str:
    value = request.match_info[name]
    if len(value) > _MAX_ID:
        raise _BadRequestError(f"the {name} id is longer than {_MAX_ID} characters")
    return value


async def _body(request: web.Request, *, required: bool = True) -> dict[str, Any]:
    """The request's JSON object with its keys in lower case (the spec's keys are matched
    case-insensitively, as Go's encoding/json does); ``{}`` for an empty body that is not
    ``required``."""
    raw = await request.read()
    if not raw.strip():
        if required:
            raise _BadRequestError("a JSON object body is required")
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise _BadRequestError(f"the body is not JSON: {exc}") from None
    if value is None and not required:
        return {}
    return _fields(value, "the body")


def _fields(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _BadRequestError(f"{what} must be a JSON object")
    return {str(key).lower(): item for key, item in value.items()}


def _int(fields: dict[str, Any], name: str, low: int, high: int | None) -> int:
    if name.lower() not in fields:
        raise _BadRequestError(f"{name} is missing")
    value = fields[name.lower()]
    if (isinstance(value, bool) or not isinstance(value, int) or value < low
            or (high is not None and value > high)):
        bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise _BadRequestError(f"{name} must be an integer {bounds}, not {value!r}")
    return value


def _dice(value: Any, name: str, most: int) -> str:
    if (not isinstance(value, str) or not 1 <= len(value) <= most
            or not set(value) <= set("123456")):
        raise _BadRequestError(f"{name} must be 1 to {most} dice as digits 1-6, "
                               f"not {value!r}")
    return value


def _option(value: Any, roll: str) -> Option:
    fields = _fields(value, "an option")
    option_id = fields.get("id")
    if not isinstance(option_id, str) or not 1 <= len(option_id) <= 50:
        raise _BadRequestError(f"an option id must be a string of 1 to 50 characters, "
                               f"not {option_id!r}")
    dice = _dice(fields.get("dievalues"), f"the dieValues of option {option_id!r}", len(roll))
    if Counter(dice) - Counter(roll):
        raise _BadRequestError(f"option {option_id!r} takes dice {dice} not in the roll {roll}")
    return Option(option_id, dice, _int(fields, "points", 0, _MAX_POINTS))


# --- the command line ---------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``--strategy good|random [--seed N]`` plus the kit's common options
    (see :func:`merknera_bots.launcher.make_parser`); the default name is
    ``squelch-rest-<strategy>``."""
    # The platform can only call a REST bot: it cannot connect out (no --connect).
    parser = make_parser("A reference Squelch bot for the Merknera platform that speaks the "
                         "Squelchbot REST API.", connect=False)
    parser.add_argument("--strategy", choices=STRATEGIES, default="good")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the random strategy's generator")
    args = parser.parse_args(argv)
    # The name is needed before run_bot resolves it: /bot/info answers with it.
    name: str = args.name or f"squelch-rest-{args.strategy}"
    bot = SquelchRestBot(args.strategy, name=name, seed=args.seed)
    return run_bot(bot, args, game=GAME, default_name=name,
                   description=DESCRIPTIONS[args.strategy], protocol=PROTOCOL)


if __name__ == "__main__":
    sys.exit(main())

"""Challenges and duels over HTTP: ``/api/challenges``, ``/api/duels`` (an owner's bearer
token to ask, anybody to read) and the duel's page ``/duels/N`` with its test's chart."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp_jinja2
from aiohttp import web

from merknera.games import JSON, JSONObject
from merknera.scheduler.trials import TrialError, Trials
from merknera.web.api import viewer
from merknera.web.params import BodyRefusedError, bearer_token, json_object, whole_number
from merknera.web.query import error_text

routes = web.RouteTableDef()

TRIALS_KEY: web.AppKey[Callable[[], Trials]] = web.AppKey("trials")
"""Where the application finds the platform's challenges and duels."""
MAX_BODY = 4096


def _refused(status: int, message: str) -> web.HTTPException:
    kinds: dict[int, type[web.HTTPException]] = {
        400: web.HTTPBadRequest, 401: web.HTTPUnauthorized, 403: web.HTTPForbidden,
        404: web.HTTPNotFound, 409: web.HTTPConflict, 413: web.HTTPRequestEntityTooLarge,
        429: web.HTTPTooManyRequests}
    kind = kinds.get(status, web.HTTPBadRequest)
    if kind is web.HTTPRequestEntityTooLarge:
        return web.HTTPRequestEntityTooLarge(MAX_BODY, MAX_BODY + 1, text=error_text(message),
                                             content_type="application/json")
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return kind(text=error_text(message), content_type="application/json", headers=headers)


async def _owner(request: web.Request) -> int:
    """The user whose token the request carries (401 without one, 403 for another)."""
    if not bearer_token(request):
        raise _refused(401, "send your API token as Authorization: Bearer <token>")
    found = await viewer(request)
    if found.user_id is None:
        raise _refused(403, "challenges and duels are asked for with an owner's token")
    return found.user_id


async def _body(request: web.Request) -> JSONObject:
    try:
        return await json_object(request, MAX_BODY)
    except BodyRefusedError as exc:
        raise _refused(exc.status, exc.message) from None


def _id(request: web.Request, what: str) -> int:
    raw = request.match_info["id"]
    found = whole_number(raw)
    if found is None:
        raise _refused(404, f'no {what} "{raw[:40]}"')
    return found


async def _asked(request: web.Request, ask: Callable[[Trials, int, JSONObject], Any],
                 read: Callable[[Trials, int], Any]) -> web.Response:
    """Run an owner's request, answered 201 with what it made."""
    user_id = await _owner(request)
    body = await _body(request)
    trials = request.app[TRIALS_KEY]()
    try:
        made = await ask(trials, user_id, body)
    except TrialError as exc:
        raise _refused(exc.status, exc.message) from None
    return web.json_response(await read(trials, made), status=201)


@routes.post("/api/challenges")
async def create_challenge(request: web.Request) -> web.Response:
    """Ask for unrated games between a bot of yours and another (paired: one seed, seats
    swapped)."""
    return await _asked(request, Trials.challenge, Trials.challenge_view)


async def _read(request: web.Request, what: str,
                read: Callable[[Trials, int], Awaitable[JSONObject | None]]) -> web.Response:
    """A challenge or a duel by the id in the path (404 if there is none)."""
    trial_id = _id(request, what)
    found = await read(request.app[TRIALS_KEY](), trial_id)
    if found is None:
        raise _refused(404, f"no {what} {trial_id}")
    return web.json_response(found)


async def _acted(request: web.Request,
                 act: Callable[[Trials, int, int], Awaitable[JSONObject]]) -> web.Response:
    """An owner's act on their duel of the id in the path, answered with what it gives."""
    duel_id = _id(request, "duel")
    user_id = await _owner(request)
    try:
        return web.json_response(await act(request.app[TRIALS_KEY](), user_id, duel_id))
    except TrialError as exc:
        raise _refused(exc.status, exc.message) from None


@routes.get("/api/challenges/{id}")
async def challenge_detail(request: web.Request) -> web.Response:
    """A challenge: its status, games, and the challenger's wins, draws and losses."""
    return await _read(request, "challenge", Trials.challenge_view)


@routes.post("/api/duels")
async def create_duel(request: web.Request) -> web.Response:
    """Start a duel between a candidate version and a baseline version of a bot of yours."""
    return await _asked(request, Trials.duel, Trials.duel_view)


@routes.get("/api/duels/{id}")
async def duel_detail(request: web.Request) -> web.Response:
    """A duel: its pairs, the sequential test's LLR and bounds, and the Elo estimate."""
    return await _read(request, "duel", Trials.duel_view)


async def _stopped(trials: Trials, user_id: int, duel_id: int) -> JSONObject:
    await trials.stop_duel(user_id, duel_id)
    found = await trials.duel_view(duel_id)
    assert found is not None
    return found


async def _promoted(trials: Trials, user_id: int, duel_id: int) -> JSONObject:
    bot = await trials.promote(user_id, duel_id)
    return {"id": bot.id, "name": bot.name, "version": bot.version,
            "candidate": bot.candidate}


@routes.delete("/api/duels/{id}")
async def stop_duel(request: web.Request) -> web.Response:
    """Stop a duel of yours."""
    return await _acted(request, _stopped)


@routes.post("/api/duels/{id}/promote")
async def promote(request: web.Request) -> web.Response:
    """Make a duel's candidate the current version of its bot."""
    return await _acted(request, _promoted)


@routes.get("/duels/{id}", name="duel")
@aiohttp_jinja2.template("duel.html")
async def duel_page(request: web.Request) -> dict[str, Any]:
    """A duel's page: the LLR against its bounds pair by pair, the Elo estimate, the
    pairs."""
    duel_id = _id(request, "duel")
    found = await request.app[TRIALS_KEY]().duel_view(duel_id)
    if found is None:
        raise web.HTTPNotFound(text=f"There is no duel {duel_id}.")
    return {"d": found, "chart": chart(found)}


CHART_WIDTH, CHART_HEIGHT = 640, 240


def chart(duel: JSONObject) -> dict[str, Any]:
    """The SVG chart's geometry: the LLR after each pair as a polyline, the bounds as two
    lines, in a box of :data:`CHART_WIDTH` by :data:`CHART_HEIGHT`."""
    history = [_number(x) for x in _list(duel["llr_history"])]
    lower, upper = (_number(x) for x in _list(duel["bounds"]))
    top, bottom = max([upper, *history]) * 1.1, min([lower, *history]) * 1.1
    span = (top - bottom) or 1.0
    count = max(len(history), 1)

    def y(value: float) -> float:
        return round((top - value) / span * CHART_HEIGHT, 1)

    points = " ".join(f"{round((i + 1) / count * CHART_WIDTH, 1)},{y(v)}"
                      for i, v in enumerate(history))
    return {"width": CHART_WIDTH, "height": CHART_HEIGHT, "points": f"0,{y(0.0)} {points}",
            "upper": y(upper), "lower": y(lower), "zero": y(0.0)}


def _list(value: JSON) -> list[JSON]:
    if not isinstance(value, list):
        raise TypeError(f"a list was expected, not {value!r}")
    return value


def _number(value: JSON) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"a number was expected, not {value!r}")
    return float(value)

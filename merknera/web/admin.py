"""The admin API: disable and enable bots, pause and resume the ladder, create tournaments.

Every call needs ``Authorization: Bearer <admin_token>`` (the config key ``admin_token``):
without it the answer is 401, with a wrong token (or none configured) 403, and nothing
changes.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any, Protocol

from aiohttp import web

from merknera.games import JSON, REGISTRY
from merknera.guard import GUARD_KEY
from merknera.protocol import strict_json
from merknera.scheduler.tournaments import FORMATS, EntrantsError
from merknera.store.discipline import DISABLED_BY_ADMIN, SUSPENDED_BY_ADMIN
from merknera.web.params import bearer_token, json_integer, whole_number
from merknera.web.query import error_text


class AdminOps(Protocol):
    """What the admin API can do to a running platform."""

    @property
    def admin_token(self) -> str: ...

    async def disable_bot(self, bot_id: int, reason: str) -> bool: ...

    async def enable_bot(self, bot_id: int) -> bool: ...

    async def suspend_user(self, name: str, reason: str) -> list[int] | None: ...

    async def unsuspend_user(self, name: str) -> list[int] | None: ...

    def ladder_state(self) -> str: ...

    def set_ladder_paused(self, paused: bool) -> str: ...

    async def create_tournament(self, game: str, fmt: str, rounds: int,
                                bot_ids: list[int] | None) -> int: ...


OPS_KEY: web.AppKey[Callable[[], AdminOps]] = web.AppKey("admin-ops")

routes = web.RouteTableDef()


def _error(kind: type[web.HTTPError], message: str, **headers: str) -> web.HTTPError:
    return kind(text=error_text(message), content_type="application/json",
                headers=headers or None)


async def admin_ops(request: web.Request) -> AdminOps:
    """The platform, once the caller has shown the admin token: 401 without a token, 403
    with another (a client that keeps showing wrong ones is slowed down: 429).  The one
    check of the admin token, for every route that needs it."""
    ops = request.app[OPS_KEY]()
    token = bearer_token(request)
    if not token:
        raise _error(web.HTTPUnauthorized, "send the admin token as Authorization: Bearer "
                     "<token>", **{"WWW-Authenticate": "Bearer"})
    async def lookup(given: str) -> AdminOps | None:
        return ops if is_admin_token(ops.admin_token, given) else None

    if await request.app[GUARD_KEY].verify_token(request, token, lookup) is None:
        if not ops.admin_token:
            raise _error(web.HTTPForbidden, "no admin token is configured (admin_token)")
        raise _error(web.HTTPForbidden, "that is not the admin token")
    return ops


def is_admin_token(admin_token: str, given: str) -> bool:
    """Whether ``given`` is the configured admin token (never when none is configured)."""
    # aiohttp decodes odd header bytes to surrogates; surrogateescape gives them back.
    return bool(admin_token) and hmac.compare_digest(
        given.encode("utf-8", "surrogateescape"), admin_token.encode("utf-8"))


def _bot_id(request: web.Request) -> int:
    raw = request.match_info["id"]
    found = whole_number(raw)
    if found is None:
        raise _error(web.HTTPNotFound, f'no such bot "{raw[:40]}"')
    return found


async def _body(request: web.Request) -> dict[str, Any]:
    if not request.can_read_body:
        return {}
    try:
        body = strict_json.loads(await request.read())
    except strict_json.BadJSONError as exc:
        raise _error(web.HTTPBadRequest, f"the body must be JSON: {exc}") from None
    if not isinstance(body, dict):
        raise _error(web.HTTPBadRequest, "the body must be a JSON object")
    return body


def _reason(body: dict[str, Any], default: str) -> str:
    """The body's ``reason`` (a string when given: null is no reason), else ``default``."""
    reason = body.get("reason", default)
    if not isinstance(reason, str):
        raise _error(web.HTTPBadRequest, '"reason" must be a string')
    return reason or default


@routes.post("/api/admin/bots/{id}/disable")
async def disable_bot(request: web.Request) -> web.Response:
    """Take a bot out of play (its unfinished games end without a result)."""
    ops = await admin_ops(request)
    bot_id = _bot_id(request)
    reason = _reason(await _body(request), DISABLED_BY_ADMIN)
    if not await ops.disable_bot(bot_id, reason):
        raise _error(web.HTTPConflict, f"bot {bot_id} is not a current bot (unknown, "
                                       "superseded or disabled already)")
    return web.json_response({"bot": bot_id, "status": "DISABLED"})


@routes.post("/api/admin/bots/{id}/enable")
async def enable_bot(request: web.Request) -> web.Response:
    """Put a disabled bot back in play."""
    ops = await admin_ops(request)
    bot_id = _bot_id(request)
    if not await ops.enable_bot(bot_id):
        raise _error(web.HTTPConflict, f"bot {bot_id} is not disabled")
    return web.json_response({"bot": bot_id, "status": "OFFLINE"})


@routes.post("/api/admin/users/{name}/suspend")
async def suspend_user(request: web.Request) -> web.Response:
    """Suspend a user: their registrations are refused and their current bots disabled
    (their unfinished games end without a result) until the suspension is lifted."""
    ops = await admin_ops(request)
    name = request.match_info["name"]
    reason = _reason(await _body(request), SUSPENDED_BY_ADMIN)
    disabled = await ops.suspend_user(name, reason)
    if disabled is None:
        raise _error(web.HTTPNotFound, f'no user named "{name[:100]}"')
    return web.json_response({"user": name, "suspended": True, "bots_disabled": disabled})


@routes.post("/api/admin/users/{name}/unsuspend")
async def unsuspend_user(request: web.Request) -> web.Response:
    """Lift a user's suspension; the bots it disabled play again once they answer."""
    ops = await admin_ops(request)
    name = request.match_info["name"]
    enabled = await ops.unsuspend_user(name)
    if enabled is None:
        raise _error(web.HTTPNotFound, f'no user named "{name[:100]}"')
    return web.json_response({"user": name, "suspended": False, "bots_enabled": enabled})


@routes.get("/api/admin/ladder")
async def ladder_state(request: web.Request) -> web.Response:
    """OFF, PAUSED or RUNNING."""
    return web.json_response({"ladder": (await admin_ops(request)).ladder_state()})


@routes.post("/api/admin/ladder/pause")
async def pause_ladder(request: web.Request) -> web.Response:
    """Stop scheduling ladder games (games under way go on)."""
    return web.json_response({"ladder": (await admin_ops(request)).set_ladder_paused(True)})


@routes.post("/api/admin/ladder/resume")
async def resume_ladder(request: web.Request) -> web.Response:
    """Schedule ladder games again."""
    return web.json_response({"ladder": (await admin_ops(request)).set_ladder_paused(False)})


@routes.post("/api/admin/tournaments")
async def create_tournament(request: web.Request) -> web.Response:
    """``{"game", "format": "round-robin"|"swiss", "rounds", "bots"?}`` -> ``{"id"}``.

    Terms the document's schema refuses get 400; terms it lets through that no bots would
    allow (more round-robin cycles than :data:`MAX_CYCLES`) 422; terms the current bots do
    not allow (too few, unknown ones, as many Swiss rounds as entrants) 409.
    """
    ops = await admin_ops(request)
    body = await _body(request)
    game, fmt, rounds = body.get("game"), body.get("format"), json_integer(body.get("rounds"))
    if not isinstance(game, str) or game not in REGISTRY:
        raise _error(web.HTTPBadRequest, '"game" must be one of ' + ", ".join(sorted(REGISTRY)))
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise _error(web.HTTPBadRequest, '"format" must be one of ' + ", ".join(FORMATS))
    if rounds is None or rounds < 1:
        raise _error(web.HTTPBadRequest, '"rounds" must be an integer of at least 1')
    listed, bot_ids = body.get("bots"), None
    if "bots" in body:
        bot_ids = ([] if not isinstance(listed, list)
                   else [found for item in listed if (found := json_integer(item)) is not None])
        if not isinstance(listed, list) or len(bot_ids) != len(listed):
            raise _error(web.HTTPBadRequest, '"bots" must be a list of bot ids')
    try:
        tournament = await ops.create_tournament(game, fmt, rounds, bot_ids)
    except EntrantsError as exc:
        raise _error(web.HTTPConflict, str(exc)) from None
    except ValueError as exc:
        raise _error(web.HTTPUnprocessableEntity, str(exc)) from None
    created: dict[str, JSON] = {"id": tournament}
    return web.json_response(created, status=201)

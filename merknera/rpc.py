"""``POST /rpc``: the JSON-RPC methods bots call on the platform.

The envelope is read by :mod:`merknera.protocol.jsonrpc` in either dialect and answered in
the dialect of the request.  Unexpected exceptions never reach the caller: they are logged
and answered with a fixed "Internal error"; a store outage is that error with HTTP 503 and
``Retry-After``.

A method that checks a token does so through :class:`merknera.guard.AuthThrottle`: a client
that sends wrong tokens is slowed down, and while it must wait its requests with a token
are answered with HTTP 429 and ``Retry-After``, as are a user's registrations beyond their
limit.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from merknera.games import JSON, JSONObject
from merknera.guard import BodyError, Caller, Guard, RateLimitedError
from merknera.protocol import jsonrpc, strict_json
from merknera.refused import retry_after_header
from merknera.scheduler.registration import (
    Enrolment,
    Registrar,
    RegistrationError,
    RegistrationRequest,
)
from merknera.store.db import StoreUnavailableError

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 64 * 1024
REGISTER = "RegistrationService.Register"


Method = Callable[[JSONObject, Caller], Awaitable[JSON]]
"""A bot-initiated method: the (lower-cased) params and the caller in, the result out;
refusals raise :class:`jsonrpc.RpcError`."""


class RpcService:
    """The table of bot-initiated methods and the HTTP handler that serves them."""

    def __init__(self, registrar: Registrar, guard: Guard) -> None:
        self._registrar = registrar
        self._guard = guard
        self._methods: dict[str, Method] = {REGISTER: self._register}

    def add_method(self, name: str, method: Method) -> None:
        """Serve another method (later games add their bot-initiated calls)."""
        self._methods[name] = method

    async def _register(self, params: JSONObject, caller: Caller) -> JSON:
        return (await self._enrol(params, caller, socket=False)).reply

    async def _enrol(self, params: JSONObject, caller: Caller, *, socket: bool) -> Enrolment:
        try:
            return await self._registrar.enrol(
                RegistrationRequest.from_params(params, socket=socket), caller)
        except RegistrationError as exc:
            raise jsonrpc.RpcError(exc.code, exc.message) from None

    async def enrol(self, call: jsonrpc.Request,
                    caller: Caller) -> tuple[Answer, Enrolment | None]:
        """Run a registration on a bot's socket to ``/rpc/ws``: its reply, and the bot
        as registered if it was."""
        enrolled: list[Enrolment] = []

        async def register(params: JSONObject, by: Caller) -> JSON:
            enrolled.append(await self._enrol(params, by, socket=True))
            return enrolled[0].reply

        answer = await self.answer(call, caller, register)
        return answer, (enrolled[0] if enrolled else None)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """The aiohttp handler of ``POST /rpc``."""
        try:
            body = await self._guard.read_body(request, MAX_REQUEST_BYTES)
        except BodyError as exc:
            error = jsonrpc.RpcError(jsonrpc.INVALID_REQUEST, f"Invalid request: {exc.message}")
            return _reply(jsonrpc.error_reply(jsonrpc.Dialect.V2, None, error), exc.status)
        try:
            call = jsonrpc.parse_request(body)
        except jsonrpc.RequestError as exc:
            return _reply(jsonrpc.error_reply(exc.dialect, exc.request_id, exc))
        answer = await self.answer(call, self._guard.caller(request))
        headers = None if answer.retry_after is None else {"Retry-After": answer.retry_after}
        return _reply(answer.reply, answer.status, headers, empty=call.is_notification)

    async def answer(self, call: jsonrpc.Request, caller: Caller,
                     method: Method | None = None) -> Answer:
        """Run a bot's request (with ``method`` rather than the one of its name, where
        given): its reply in the request's dialect, whatever went wrong."""
        method = method or self._methods.get(call.method)
        try:
            if method is None:
                raise jsonrpc.RpcError(jsonrpc.METHOD_NOT_FOUND,
                                       f'Method not found: "{call.method}"')
            result = await method(call.params, caller)
        except jsonrpc.RpcError as exc:
            return Answer.refused(call, exc)
        except RateLimitedError as exc:
            # Too many wrong tokens from this address, or registrations of this user.
            return Answer.refused(call, jsonrpc.RpcError(jsonrpc.RATE_LIMITED, exc.message),
                                  429, exc.retry_after_header)
        except StoreUnavailableError as exc:  # an outage: ask again later
            return Answer.refused(call, jsonrpc.RpcError(jsonrpc.INTERNAL_ERROR,
                                                         exc.for_clients),
                                  503, retry_after_header(exc.retry_after))
        except Exception:
            log.exception("/rpc %s failed", call.method)
            return Answer.refused(call, jsonrpc.RpcError(jsonrpc.INTERNAL_ERROR,
                                                         "Internal error"))
        return Answer(jsonrpc.success_reply(call.dialect, call.id, result))


@dataclass(frozen=True)
class Answer:
    """The reply to a bot's request, and how HTTP sends it."""

    reply: JSONObject
    status: int = 200
    """200, or 429 (wait :attr:`retry_after`), or 503 (the store is out)."""
    retry_after: str | None = None
    """The ``Retry-After`` header's value, where the caller is to ask again later."""
    error: jsonrpc.RpcError | None = None
    """Why the request failed, if it did."""

    @classmethod
    def refused(cls, call: jsonrpc.Request, error: jsonrpc.RpcError, status: int = 200,
                retry_after: str | None = None) -> Answer:
        """The reply to a request that failed with ``error``."""
        return cls(jsonrpc.error_reply(call.dialect, call.id, error), status, retry_after,
                   error)


def refusal(status: int, message: str) -> web.Response:
    """A request refused before it was read (``Content-Type``: 415, as Merknera's server
    answered one that is not ``application/json``), as a JSON-RPC error."""
    error = jsonrpc.RpcError(jsonrpc.INVALID_REQUEST, f"Invalid request: {message}")
    return _reply(jsonrpc.error_reply(jsonrpc.Dialect.V2, None, error), status)


def _reply(reply: JSONObject, status: int = 200, headers: dict[str, str] | None = None,
           empty: bool = False) -> web.Response:
    if empty:
        # Merknera's server wrote nothing for a notification: an empty body.
        return web.Response(status=status, headers=headers)
    return web.Response(body=strict_json.dumps(reply), status=status, headers=headers,
                        content_type="application/json", charset="utf-8")

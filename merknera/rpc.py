"""``POST /rpc``: the JSON-RPC methods bots call on the platform.

The envelope is read by :mod:`merknera.protocol.jsonrpc` in either dialect and answered in
the dialect of the request.  Unexpected exceptions never reach the caller: they are logged
and answered with a fixed "Internal error".
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from merknera.games import JSON, JSONObject
from merknera.protocol import jsonrpc
from merknera.scheduler.registration import Registrar, RegistrationError, RegistrationRequest

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 64 * 1024

Method = Callable[[JSONObject], Awaitable[JSON]]
"""A bot-initiated method: the (lower-cased) params in, the result out; refusals raise
:class:`jsonrpc.RpcError`."""


class RpcService:
    """The table of bot-initiated methods and the HTTP handler that serves them."""

    def __init__(self, registrar: Registrar) -> None:
        self._registrar = registrar
        self._methods: dict[str, Method] = {
            "RegistrationService.Register": self._register,
        }

    def add_method(self, name: str, method: Method) -> None:
        """Serve another method (later games add their bot-initiated calls)."""
        self._methods[name] = method

    async def _register(self, params: JSONObject) -> JSON:
        try:
            return await self._registrar.register(RegistrationRequest.from_params(params))
        except RegistrationError as exc:
            raise jsonrpc.RpcError(exc.code, exc.message) from None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """The aiohttp handler of ``POST /rpc``."""
        if request.content_length is not None and request.content_length > MAX_REQUEST_BYTES:
            return _too_large()
        chunks: list[bytes] = []
        size = 0
        try:
            # read() returns what has arrived so far, not the whole body: read to the end.
            while chunk := await request.content.read(MAX_REQUEST_BYTES + 1 - size):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_REQUEST_BYTES:
                    return _too_large()
        except (OSError, ValueError) as exc:
            log.info("could not read an /rpc request: %s", exc)
            return web.Response(status=400, text="cannot read the request body")
        body = b"".join(chunks)
        try:
            call = jsonrpc.parse_request(body)
        except jsonrpc.RequestError as exc:
            return _reply(jsonrpc.error_reply(exc.dialect, exc.request_id, exc))
        method = self._methods.get(call.method)
        try:
            if method is None:
                raise jsonrpc.RpcError(jsonrpc.METHOD_NOT_FOUND,
                                       f'Method not found: "{call.method}"')
            result = await method(call.params)
        except jsonrpc.RpcError as exc:
            reply = jsonrpc.error_reply(call.dialect, call.id, exc)
        except Exception:
            log.exception("/rpc %s failed", call.method)
            reply = jsonrpc.error_reply(call.dialect, call.id, jsonrpc.RpcError(
                jsonrpc.INTERNAL_ERROR, "Internal error"))
        else:
            reply = jsonrpc.success_reply(call.dialect, call.id, result)
        if call.is_notification:
            # Merknera's server wrote nothing for a notification: an empty HTTP 200.
            return web.Response(status=200)
        return _reply(reply)


def _reply(reply: JSONObject, status: int = 200) -> web.Response:
    return web.Response(body=jsonrpc.dumps(reply), status=status,
                        content_type="application/json", charset="utf-8")


def _too_large() -> web.Response:
    error = jsonrpc.RpcError(jsonrpc.INVALID_REQUEST,
                             f"Invalid request: larger than {MAX_REQUEST_BYTES} bytes")
    return _reply(jsonrpc.error_reply(jsonrpc.Dialect.V2, None, error), status=413)

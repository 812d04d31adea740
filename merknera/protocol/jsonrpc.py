"""JSON-RPC envelopes: requests the platform serves and replies it receives from bots.

Two dialects are spoken (docs/bots/protocol.md section 1):

* JSON-RPC 2.0, for a request carrying ``"jsonrpc": "2.0"``: errors are objects with
  numeric codes;
* Merknera's 1.0-flavoured dialect, for a request without ``"jsonrpc"``: the reply is
  ``{"result": ..., "error": null | "<message>", "id": ...}`` with the error as a string,
  which is what Merknera's Go bots parse.

Everything here treats its input as hostile: any body decodes to a value or to an
exception that says precisely what was wrong, never to a crash.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Final

from merknera.games.base import JSON, JSONObject
from merknera.protocol.excerpt import excerpt
from merknera.protocol.strict_json import BadJSONError, dumps, loads

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
# Application errors of the platform's own methods (the -32000..-32099 band is the
# implementation-defined server error range of JSON-RPC 2.0).
UNKNOWN_GAME: Final = -32001
UNKNOWN_TOKEN: Final = -32002
NAME_TAKEN: Final = -32003
ENDPOINT_REFUSED: Final = -32004
UNKNOWN_GAME_ID: Final = -32005
ASSET_MISMATCH: Final = -32006
NOT_ALLOWED: Final = -32007
RATE_LIMITED: Final = -32008
"""Too many attempts (wrong tokens from one address, registrations of one user); the HTTP
status is 429 with a ``Retry-After`` header."""


class Dialect(enum.Enum):
    """Which JSON-RPC flavour a request spoke, and so which its reply must speak."""

    V2 = "2.0"
    MERKNERA = "1.0"


class RpcError(Exception):
    """An error answer to a request: a JSON-RPC code and a message for the caller."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- the platform as server (POST /rpc) ------------------------------------------------------

RequestId = int | float | str | None


@dataclass(frozen=True)
class Request:
    """A JSON-RPC request received by the platform."""

    method: str
    params: JSONObject
    """The params with their keys lower-cased (Merknera matched keys case-insensitively)."""
    id: RequestId
    dialect: Dialect
    is_notification: bool


class RequestError(RpcError):
    """A request that cannot be served, with what is known of it for the error reply."""

    def __init__(self, code: int, message: str, dialect: Dialect = Dialect.V2,
                 request_id: RequestId = None) -> None:
        super().__init__(code, message)
        self.dialect = dialect
        self.request_id = request_id


def parse_request(body: bytes) -> Request:
    """Read one JSON-RPC request in either dialect.

    :raises RequestError: ``PARSE_ERROR``, ``INVALID_REQUEST`` or ``INVALID_PARAMS`` with the
        reason, and the dialect and id to answer with (2.0 and null when the body is not
        even a JSON object).
    """
    try:
        message = loads(body)
    except BadJSONError as exc:
        raise RequestError(PARSE_ERROR, f"Parse error: the body is not JSON: {exc}") from None
    if isinstance(message, list):
        raise RequestError(INVALID_REQUEST, "Invalid request: batches are not supported")
    if not isinstance(message, dict):
        raise RequestError(INVALID_REQUEST, "Invalid request: the body must be a JSON object")
    # Merknera ignored "jsonrpc" altogether; anything but "2.0" gets its dialect.
    dialect = Dialect.V2 if message.get("jsonrpc") == "2.0" else Dialect.MERKNERA
    request_id = message.get("id")
    if isinstance(request_id, bool | list | dict):
        raise RequestError(INVALID_REQUEST,
                           'Invalid request: "id" must be a number, a string or null', dialect)

    def fail(code: int, message: str) -> RequestError:
        return RequestError(code, message, dialect, request_id)

    method = message.get("method")
    if not isinstance(method, str) or not method:
        raise fail(INVALID_REQUEST, 'Invalid request: "method" must be a non-empty string')
    params = message.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise fail(INVALID_PARAMS, 'Invalid params: "params" must be an object of named params')
    folded: JSONObject = {}
    for key, value in params.items():
        lower = key.lower()
        if lower in folded:
            raise fail(INVALID_PARAMS, f'Invalid params: the param "{lower}" is given twice '
                                       "(param names are matched without regard to case)")
        folded[lower] = value
    return Request(
        method=method,
        params=folded,
        id=request_id,
        dialect=dialect,
        # No "id" member means a notification, in JSON-RPC 2.0 as in Merknera's server.
        is_notification="id" not in message,
    )


def success_reply(dialect: Dialect, request_id: RequestId, result: JSON) -> JSONObject:
    """The reply to a request that succeeded."""
    if dialect is Dialect.V2:
        return {"jsonrpc": "2.0", "result": result, "id": request_id}
    return {"result": result, "error": None, "id": request_id}


def error_reply(dialect: Dialect, request_id: RequestId, error: RpcError) -> JSONObject:
    """The reply to a request that failed, in the request's dialect."""
    if dialect is Dialect.V2:
        return {"jsonrpc": "2.0", "error": {"code": error.code, "message": error.message},
                "id": request_id}
    return {"result": None, "error": error.message, "id": request_id}


# -- the platform as client (calls to bots) --------------------------------------------------


def encode_call(method: str, params: JSON, request_id: int | str) -> bytes:
    """A JSON-RPC 2.0 request body, as every platform call to a bot is sent."""
    return dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": request_id})


class BotReplyError(Exception):
    """A bot's reply that is not a successful JSON-RPC reply."""


class MalformedReplyError(BotReplyError):
    """The reply is not a JSON-RPC reply to our request (bad JSON, wrong shape, wrong id)."""


class BotRpcError(BotReplyError):
    """The bot answered with a JSON-RPC error (string or object)."""


def decode_reply(body: bytes, request_id: int | str) -> JSON:
    """The ``result`` of a bot's reply, checked strictly.

    Accepted: a JSON object whose ``id`` equals ``request_id``, with a ``result`` member
    and a null or absent ``error``, in either dialect.

    :raises MalformedReplyError: for anything that is not such a reply.
    :raises BotRpcError: when the reply carries an error, with the bot's message.
    """
    try:
        reply = loads(body)
    except BadJSONError as exc:
        raise MalformedReplyError(f"the body is not JSON: {exc}") from None
    return read_reply(reply, request_id)


def read_reply(reply: JSON, request_id: int | str) -> JSON:
    """:func:`decode_reply` of a reply already read as JSON (a WebSocket's frame)."""
    if not isinstance(reply, dict):
        raise MalformedReplyError(f"the reply must be a JSON object, got {_kind(reply)}")
    if "jsonrpc" in reply and reply["jsonrpc"] != "2.0":
        raise MalformedReplyError(f'"jsonrpc" must be "2.0", got {_clip(reply["jsonrpc"])}')
    error = reply.get("error")
    if error is not None:
        raise BotRpcError(_error_text(error))
    if "id" not in reply:
        raise MalformedReplyError('the reply has no "id"')
    reply_id = reply["id"]
    # bool == int in Python (True == 1); a bot answering "id": true has not echoed our id.
    if isinstance(reply_id, bool) or reply_id != request_id or type(reply_id) is not type(
            request_id):
        raise MalformedReplyError(
            f'the reply "id" {_clip(reply_id)} does not match the request id {request_id!r}')
    if "result" not in reply:
        raise MalformedReplyError('the reply has neither "result" nor "error"')
    return reply["result"]


def _error_text(error: JSON) -> str:
    if isinstance(error, str):
        return error or "(empty error string)"
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message")
        text = message if isinstance(message, str) else _clip(message)
        return f"{text} (code {_clip(code)})" if code is not None else text
    return _clip(error)


def _kind(value: JSON) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}[type(value)]


def _clip(value: JSON) -> str:
    return excerpt(json.dumps(value, ensure_ascii=False))

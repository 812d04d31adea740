"""What the platform's OpenAPI documents share: the results API's
(:mod:`merknera.web.openapi`) and each listener's (the Kalaha board API, Battlebot's HTTP
routes, MebiPenny's hexagons API).  Each is written by hand next to the handlers it
describes, and checked against them by ``tests/e2e/test_e2e_openapi.py``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from merknera import __version__

JSONSchema = dict[str, Any]
"""A piece of an OpenAPI document (or of a JSON Schema in it)."""

VERSION = "3.1.0"


def document(title: str, description: str, paths: JSONSchema,
             **rest: Any) -> JSONSchema:
    """An OpenAPI 3.1 document of this platform's version."""
    return {"openapi": VERSION,
            "info": {"title": title, "version": __version__, "description": description},
            **rest, "paths": paths}


def answer(status: int, description: str, schema: JSONSchema | None = None, *,
           media_type: str = "application/json", headers: JSONSchema | None = None,
           links: JSONSchema | None = None) -> JSONSchema:
    """``{status: response}``: one response of an operation, with its body's schema (none:
    no body), its headers and its links."""
    response: JSONSchema = {"description": description}
    if schema is not None:
        response["content"] = {media_type: {"schema": schema}}
    if headers:
        response["headers"] = headers
    if links:
        response["links"] = links
    return {str(status): response}


RETRY_AFTER: JSONSchema = {"Retry-After": {
    "description": "Seconds to wait before asking again",
    "schema": {"type": "string", "pattern": "^[0-9]+$"}}}
"""The header of every 429 and 503 answer."""


def refusals(why: dict[int, str], schema: JSONSchema, statuses: tuple[int, ...], *,
             media_type: str = "application/json") -> JSONSchema:
    """The responses of ``statuses``, each described by ``why`` and bodied by ``schema``
    (429 and 503 with :data:`RETRY_AFTER`)."""
    found: JSONSchema = {}
    for status in statuses:
        found.update(answer(status, why[status], schema, media_type=media_type,
                            headers=RETRY_AFTER if status in (429, 503) else None))
    return found


def route(served: JSONSchema) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A handler that answers with the document ``served``."""
    async def handler(_request: web.Request) -> web.Response:
        return web.json_response(served)

    return handler

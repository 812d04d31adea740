"""Requests that a page of another origin makes a visitor's browser send.

A browser sends a ``POST`` (``PUT``, ...) to another origin without asking it first (no
CORS preflight) when the body is of a "simple" type (``text/plain``, a form) or there is
none; the request goes out whatever the listener's CORS says, which only hides the answer
from the page.  A hostile page could so start and play games through its visitors'
addresses.  Every listener refuses such a request before a route acts on it, with this
module's one check (:func:`middleware`), by the route's :class:`Body` rule:

* a route whose original clients send JSON takes only a JSON ``Content-Type``
  (``application/json``, ``application/*+json``; 415 otherwise): a browser sends that to
  another origin only after a preflight, which the listener's CORS must allow (the main
  site's allows none, the Kalaha listener's only the front ends it lists);
* a route whose original clients send another type, or no body (the MebiPenny Ruby
  clients' ``Net::HTTP`` posts are typed as forms; the Kalaha front end creates a board with
  an empty ``POST``), refuses such a request when its ``Origin`` names another origin than
  the listener's own or one it trusts (403): browsers send ``Origin`` with every
  cross-origin ``POST``, while those clients, which are no browsers, send none.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from aiohttp import hdrs, web
from aiohttp.typedefs import Middleware

from merknera.hosts import parse_origin

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
"""The methods whose requests may change something (a ``GET`` never does)."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Body(enum.Enum):
    """What a state-changing route takes from a client that does not send JSON."""

    JSON = "json"
    """Nothing: a JSON ``Content-Type`` or 415 (the route's clients always send one)."""
    JSON_OR_NONE = "json or none"
    """No body at all, from a client that is no page of a foreign origin (403); a body
    must be typed JSON (415)."""
    ANY = "any"
    """Any body, from a client that is no page of a foreign origin (403): the route's
    original clients send their JSON typed otherwise, or untyped."""


@dataclass(frozen=True)
class CrossSiteRefusal:
    """Why a request is refused: 415 (its ``Content-Type``) or 403 (its ``Origin``)."""

    status: int
    message: str
    """What was wrong, naming the value sent."""
    content_type: str | None
    """The request's ``Content-Type`` as sent (None: none)."""
    origin: str | None
    """The request's ``Origin`` as sent (None: none)."""


TrustedOrigins = Callable[[web.BaseRequest], Collection[str]]
"""The origins (as :func:`merknera.hosts.parse_origin` writes them) whose pages may send
a request besides the listener's own."""


def _none(_request: web.BaseRequest) -> Collection[str]:
    return ()


def is_json(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` header names JSON: ``application/json`` or
    ``application/<anything>+json``, with any parameters (a browser sends neither to
    another origin without a preflight)."""
    if content_type is None:
        return False
    media = content_type.split(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/")
                                           and media.endswith("+json"))


def own_origin(request: web.BaseRequest) -> str | None:
    """The origin the request was sent to (its scheme and ``Host``), as
    :func:`merknera.hosts.parse_origin` writes origins."""
    return parse_origin(f"{request.scheme}://{request.host}")


def is_trusted(request: web.BaseRequest, trusted: Collection[str] = ()) -> bool:
    """Whether the request's ``Origin`` is the listener's own or in ``trusted`` (parsed
    origins); False without an ``Origin``, and for ``null`` (a sandboxed or local page)."""
    sent = request.headers.get(hdrs.ORIGIN)
    origin = None if sent is None else parse_origin(sent)
    return origin is not None and (origin == own_origin(request) or origin in trusted)


def check(request: web.BaseRequest, body: Body,
          trusted: Collection[str] = ()) -> CrossSiteRefusal | None:
    """Why ``request`` must be refused under ``body``'s rule, or None when it may go on.

    Only state-changing methods are looked at; ``trusted`` are the origins (parsed) whose
    pages may send what the rule lets through only when no foreign origin sends it.
    """
    if request.method not in STATE_CHANGING:
        return None
    content_type = request.headers.get(hdrs.CONTENT_TYPE)
    if is_json(content_type):
        return None
    origin = request.headers.get(hdrs.ORIGIN)
    if body is Body.JSON or (body is Body.JSON_OR_NONE and request.body_exists):
        sent = "no Content-Type" if content_type is None else \
            f"Content-Type '{shown(content_type, 100)}'"
        also = "" if body is Body.JSON else ", or send no body"
        return CrossSiteRefusal(415, f"{sent} is not accepted here: send the body as "
                                     f"application/json{also}", content_type, origin)
    if origin is None or is_trusted(request, trusted):
        return None
    return CrossSiteRefusal(403, f"refused: {request.method} from a page of another origin "
                                 f"(Origin: {shown(origin, 200)}); pages of other origins "
                                 "may not change anything here", content_type, origin)


def sent_by_foreign_page(request: web.BaseRequest) -> bool:
    """Whether a browser says it sends the request for a page of another site
    (``Sec-Fetch-Site: cross-site``): for the rare ``GET`` that changes something, which
    no ``Origin`` names (a browser sends none with such a ``GET``); clients that are no
    browsers send neither header."""
    return request.headers.get("Sec-Fetch-Site", "").strip().lower() == "cross-site"


def shown(text: str, limit: int) -> str:
    """A header's value to quote in a message: cut to ``limit`` characters, and with the
    bytes that are no UTF-8 (which aiohttp decodes to lone surrogates) as escapes."""
    return text[:limit].encode("utf-8", "backslashreplace").decode("utf-8")


def middleware(rule: Body | Callable[[web.Request], Body],
               answer: Callable[[web.Request, CrossSiteRefusal], web.StreamResponse],
               trusted: TrustedOrigins = _none) -> Middleware:
    """A listener's middleware that refuses (:func:`check`) a state-changing request a
    page of another origin could have sent without a preflight, before its route sees it.

    :param rule: the :class:`Body` rule of every route, or of each route (a function of
        the routed request).
    :param answer: the refusal in the listener's own error shape.
    :param trusted: the origins whose pages may send what only a page of a foreign origin
        may not.
    """
    @web.middleware
    async def refuse_cross_site(request: web.Request, handler: Handler) -> web.StreamResponse:
        # A request no route takes (404, 405) changes nothing: it gets the usual answer.
        if request.method in STATE_CHANGING and request.match_info.http_exception is None:
            body = rule if isinstance(rule, Body) else rule(request)
            refusal = check(request, body, trusted(request))
            if refusal is not None:
                return answer(request, refusal)
        return await handler(request)

    return refuse_cross_site


def text_refusal(_request: web.Request, refusal: CrossSiteRefusal) -> web.Response:
    """The refusal as plain text (the MebiPenny hexagons server's refusals)."""
    return web.Response(status=refusal.status, text=refusal.message)


def json_refusal(_request: web.Request, refusal: CrossSiteRefusal) -> web.Response:
    """The refusal as ``{"error": message}`` (the results API's and Battlebot's)."""
    return web.json_response({"error": refusal.message}, status=refusal.status)

"""HTTP/1.1 requests to bots over kept-alive connections: the wire of the bot client.

Why not aiohttp's client: a call to a bot is one small request and one small reply,
thousands a second, and aiohttp's ``ClientSession`` spends more CPU on each (request and
response objects, header multidicts, payload writers, stream readers, trace hooks) than
the rest of a move together.  Here a request is written as one bytes object, and a reply
is parsed by llhttp (``httptools``: the parser of Node.js, also used by uvicorn) straight
into a status and a body, for a fraction of that.

It does what calls to bots need and no more: one request at a time on a connection,
connections kept alive per origin (LIFO, closed after :data:`KEEPALIVE` idle seconds), a
bound on connections in all, names resolved through a resolver (the platform's
:class:`~merknera.endpoints.Resolver`, which keeps a name's addresses a while), TLS with
the system's certificates, and a cap on the reply's size checked as it arrives.  No
redirects, no cookies, no proxies, no compression: a bot's reply is the bytes it sent.

Every failure is a :class:`HttpError` that says which stage failed, so that the caller can
tell a bot that cannot be reached from one whose reply broke off.  Deadlines are the
caller's (``asyncio.timeout`` around :meth:`ConnectionPool.request`); a cancelled request
closes its connection, so a late reply never meets the next request.
"""

from merknera.http1.connection import (
    FRAMING,
    MAX_HEAD,
    BrokenReplyError,
    ConnectError,
    ConnectionLostError,
    ConnectTimeoutError,
    HttpError,
    InvalidReplyError,
    Reply,
    ReplyTooLargeError,
)
from merknera.http1.pool import KEEPALIVE, ConnectionPool, Origin, Resolver

__all__ = ["FRAMING", "KEEPALIVE", "MAX_HEAD", "BrokenReplyError", "ConnectError",
           "ConnectTimeoutError", "ConnectionLostError", "ConnectionPool", "HttpError",
           "InvalidReplyError", "Origin", "Reply", "ReplyTooLargeError", "Resolver"]

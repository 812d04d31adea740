"""Reading a request body within a size limit and a deadline."""

from __future__ import annotations

import asyncio

from aiohttp import web


class BodyError(Exception):
    """A body that could not be read: the HTTP status to answer and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def read_body(request: web.BaseRequest, limit: int, time_limit: float) -> bytes:
    """The whole body of ``request``: at most ``limit`` bytes, within ``time_limit`` seconds.

    A client that sends its body a byte at a time would otherwise hold its handler (and
    its connection) for as long as it likes.

    :raises BodyError: 413 for a larger body, 408 for a late one, 400 for a broken one,
        415 for a compressed one.
    """
    encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise BodyError(415, f"the body is sent with Content-Encoding {encoding[:40]!r}; "
                             "bodies are read as sent (identity) only")
    if request.content_length is not None and request.content_length > limit:
        raise BodyError(413, f"the body is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(time_limit):
            # read() returns what has arrived so far, not the whole body: read to the end.
            while chunk := await request.content.read(limit + 1 - size):
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise BodyError(413, f"the body is larger than {limit} bytes")
    except TimeoutError:
        raise BodyError(408, f"the body did not arrive within {time_limit:g} s") from None
    except (OSError, ValueError, web.RequestPayloadError) as exc:
        raise BodyError(400, f"the body could not be read: {type(exc).__name__}") from None
    return b"".join(chunks)

"""Requests refused for a reason the client is told: a listener answers a
:class:`RefusedError` in its own words and body (the gateways in their seeds' plain text,
Spring's error body or the API's JSON), and every refusal that says when to ask again says
it the same way (:func:`retry_after_header`)."""

from __future__ import annotations

import math


def retry_after_header(seconds: float) -> str:
    """The ``Retry-After`` value for a wait of ``seconds``: whole seconds, rounded up, at
    least 1 (a client told 0 would ask again at once)."""
    return str(max(1, math.ceil(seconds)))


class RefusedError(Exception):
    """A refusal: the HTTP status, the words for the client, when to ask again (for the
    platform's limits: 429, 503), and headers the answer carries besides."""

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.headers: dict[str, str] = {}
        """What the client must hear whatever the answer (a guest's new secret)."""

    def answer_headers(self) -> dict[str, str]:
        """The answer's headers: :attr:`headers`, and ``Retry-After`` if it has one."""
        found = dict(self.headers)
        if self.retry_after is not None:
            found["Retry-After"] = retry_after_header(self.retry_after)
        return found

"""A request that a gateway refuses, whatever its wire: each listener answers it in its
seed's own words and body (plain text, Spring's error body, the API's JSON)."""

from __future__ import annotations

import math


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
            found["Retry-After"] = str(max(1, math.ceil(self.retry_after)))
        return found

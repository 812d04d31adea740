"""A request that a gateway refuses, whatever its wire: each listener answers it in its
seed's own words and body (plain text, Spring's error body, the API's JSON)."""

from __future__ import annotations


class RefusedError(Exception):
    """A refusal: the HTTP status, the words for the client, and when to ask again (for
    the platform's limits: 429, 503)."""

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after

"""Requests refused for a reason the client is told: a listener answers a
:class:`RefusedError` in its own words and body (the gateways in their seeds' plain text,
Spring's error body or the API's JSON), and every refusal that says when to ask again says
it the same way (:func:`retry_after_header`); each refusal by a limit of the platform is
counted by its :class:`Limit` (:class:`Refusals`)."""

from __future__ import annotations

import enum
import math
from collections import Counter


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


class Limit(enum.Enum):
    """A limit of the platform that refuses clients, by the name the metrics give it."""

    REQUEST_RATE = "request_rate"
    """Requests one client address may send a second (``request_rate``)."""
    CONNECTIONS_PER_CLIENT = "connections_per_client"
    """Connections one client address may hold open (``max_connections_per_client``)."""
    CONNECTIONS_FULL = "connections_full"
    """Every client connection is taken (``max_connections``)."""
    STREAMS_PER_CLIENT = "streams_per_client"
    """Live streams one client address may hold open (``max_streams_per_client``)."""
    STREAMS_FULL = "streams_full"
    """Every live stream is taken (``max_streams``)."""
    WRONG_TOKENS = "wrong_tokens"
    """Wrong tokens, secrets or logins one client address may send (``auth_failure_*``)."""
    HEAVY_PER_CLIENT = "heavy_per_client"
    """Costly answers one client address may wait for (``max_heavy_per_client``)."""
    BUSY = "busy"
    """The platform makes as many costly answers as it may at once (:mod:`merknera.work`)."""
    REGISTRATIONS = "registrations"
    """New bots of one user, or new guest names of one address, in quick succession
    (``registration_burst``, ``registration_interval``)."""
    OPEN_GAMES_PER_CLIENT = "open_games_per_client"
    """Guests' games one client address may have open (``max_open_games_per_client``)."""
    OPEN_GAMES_FULL = "open_games_full"
    """Every guests' game place is taken (``max_open_games``)."""


class Refusals:
    """How many clients each :class:`Limit` refused since the platform started (what the
    metrics read)."""

    def __init__(self) -> None:
        self.counts: Counter[Limit] = Counter()

    def count(self, limit: Limit) -> None:
        """A client was refused by ``limit``."""
        self.counts[limit] += 1

"""The open-files limit, and how the platform shares its descriptors out.

Every socket is a file descriptor.  A process that runs out of them fails in every part
at once (accepting, calling bots, opening asset files), so the platform raises its soft
limit to the hard one at start-up and then sizes its pools to fit: calls to bots get
their share first (a game must never lose a move because strangers hold connections
open), clients connecting to the listeners the rest.
"""

from __future__ import annotations

import logging
import resource
from dataclasses import dataclass

log = logging.getLogger(__name__)

RESERVE = 128
"""Descriptors kept for everything but sockets: the store's files, logs, the resolver."""
FLOOR = 16
"""Fewest connections either pool is given, however low the limit."""


@dataclass(frozen=True)
class DescriptorBudget:
    """How many connections each pool may hold."""

    limit: int
    """The soft open-files limit the budget was made for."""
    outbound: int
    """Connections to bots at once (the bot client's pool)."""
    inbound: int
    """Client connections at once, on every listener together."""


def raise_open_files_limit() -> int:
    """Raise the soft open-files limit to the hard limit; returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-files limit from %d to %d: %s",
                        soft, target, exc)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def plan(limit: int, outbound: int, inbound: int) -> DescriptorBudget:
    """Fit the wanted pool sizes into ``limit`` descriptors.

    Calls to bots may take a third of what is left after :data:`RESERVE`; clients get
    half of the rest, because a client connection may hold a second descriptor while an
    asset file is sent to it.
    """
    available = max(0, limit - RESERVE)
    out = max(FLOOR, min(outbound, available // 3))
    into = max(FLOOR, min(inbound, (available - out) // 2))
    return DescriptorBudget(limit, out, into)

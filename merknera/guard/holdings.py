"""What clients hold at once (connections, live streams): capped per client and in all.

When every place is taken, turning the newcomer away would let a few addresses keep
everybody else out for good; instead the network holding the most places gives up its
oldest one, if it holds more than the newcomer's would with the newcomer in.  A client
that holds one place among thousands is never the one turned out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from merknera.guard.clients import network_key
from merknera.guard.throttle import RateLimitedError

Item = TypeVar("Item", bound=Hashable)


class FullError(Exception):
    """Every place is taken, and no network holds more than the newcomer's would."""


class Holdings(Generic[Item]):
    """Items (connections, streams) held by clients: at most ``per_client`` each, at most
    ``total`` in all."""

    def __init__(self, total: int, per_client: int, what: str) -> None:
        self.total = total
        self.per_client = per_client
        self._what = what
        self._owner: dict[Item, tuple[str, Callable[[], None]]] = {}
        self._by_client: Counter[str] = Counter()
        self._by_network: dict[str, dict[Item, None]] = {}
        """Per network, its items oldest first."""

    def __len__(self) -> int:
        return len(self._owner)

    def held(self, client: str) -> int:
        """How many items ``client`` holds now."""
        return self._by_client[client]

    def take(self, client: str, item: Item, turn_out: Callable[[], None], *,
             capped: bool = True) -> None:
        """``client`` holds ``item`` from now; ``turn_out`` ends it should it have to give
        it up for a newcomer.  An item taken not ``capped`` does not count against
        ``per_client`` (what a client that stands for many holds: a trusted proxy's
        connections), only against ``total``.

        :raises RateLimitedError: when ``client`` holds its share already.
        :raises FullError: when every place is taken and nobody can make room.
        """
        if capped and self._by_client[client] >= self.per_client:
            raise RateLimitedError(f"your address holds {self.per_client} {self._what} open "
                                   "already; close one first", 5.0)
        if len(self._owner) >= self.total:
            self._make_room(network_key(client))
        self._owner[item] = (client, turn_out)
        self._by_client[client] += 1
        self._by_network.setdefault(network_key(client), {})[item] = None

    def give_back(self, item: Item) -> None:
        """The item has ended (whoever ended it)."""
        found = self._owner.pop(item, None)
        if found is None:
            return
        client = found[0]
        self._by_client[client] -= 1
        if self._by_client[client] <= 0:
            del self._by_client[client]
        network = network_key(client)
        items = self._by_network[network]
        del items[item]
        if not items:
            del self._by_network[network]

    def _make_room(self, newcomer: str) -> None:
        busiest = max(self._by_network, key=lambda network: len(self._by_network[network]))
        mine = len(self._by_network.get(newcomer, {}))
        if busiest == newcomer or len(self._by_network[busiest]) <= mine + 1:
            raise FullError(f"every place for {self._what} is taken")
        oldest = next(iter(self._by_network[busiest]))
        _, turn_out = self._owner[oldest]
        self.give_back(oldest)
        turn_out()

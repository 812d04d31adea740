"""Places held by clients: each client's share, the total, and who makes room."""

from __future__ import annotations

import pytest

from merknera.guard import FullError, Holdings, RateLimitedError
from merknera.guard.clients import network_key


class Held:
    """An item that records being turned out."""

    def __init__(self, holdings: Holdings[object], client: str) -> None:
        self.out = False
        holdings.take(client, self, self.turn_out)

    def turn_out(self) -> None:
        self.out = True


def test_a_client_holds_no_more_than_its_share() -> None:
    holdings: Holdings[object] = Holdings(total=100, per_client=2, what="streams")
    Held(holdings, "10.0.0.1")
    Held(holdings, "10.0.0.1")
    with pytest.raises(RateLimitedError, match="your address holds 2 streams"):
        Held(holdings, "10.0.0.1")
    Held(holdings, "10.0.0.2")
    assert (holdings.held("10.0.0.1"), holdings.held("10.0.0.2"), len(holdings)) == (2, 1, 3)


def test_when_full_the_busiest_network_gives_up_its_oldest() -> None:
    holdings: Holdings[object] = Holdings(total=5, per_client=3, what="connections")
    busy = [Held(holdings, "10.0.0.1") for _ in range(3)]
    other = [Held(holdings, "10.0.0.2") for _ in range(2)]
    newcomer = Held(holdings, "10.0.0.3")
    assert [item.out for item in busy] == [True, False, False]  # the oldest of the busiest
    assert not any(item.out for item in other) and not newcomer.out
    assert len(holdings) == 5
    # Now no network holds more than one more than the newcomer's would: refused.
    with pytest.raises(FullError):
        Held(holdings, "10.0.0.2")
    with pytest.raises(FullError):  # nor does the busiest turn out its own
        Held(holdings, "10.0.0.1")


def test_an_ipv6_site_counts_as_one_network() -> None:
    holdings: Holdings[object] = Holdings(total=4, per_client=1, what="connections")
    site = [Held(holdings, f"2001:db8:0:{n}::/64") for n in range(4)]  # one /48, four /64s
    newcomer = Held(holdings, "10.0.0.9")
    assert [item.out for item in site] == [True, False, False, False]
    assert not newcomer.out


@pytest.mark.parametrize(("client", "network"), [
    ("2001:db8:1:2::/64", "2001:db8:1::/48"),
    ("10.1.2.3", "10.1.2.3"),
    ("unknown", "unknown"),
])
def test_network_keys(client: str, network: str) -> None:
    assert network_key(client) == network

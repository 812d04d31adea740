"""Which client a connection counts against."""

from __future__ import annotations

import pytest

from merknera.guard import client_key, same_host
from merknera.guard.clients import UNKNOWN_CLIENT


@pytest.mark.parametrize(("address", "key"), [
    ("127.0.0.1", "127.0.0.1"),
    ("10.1.2.3", "10.1.2.3"),
    ("::ffff:10.1.2.3", "10.1.2.3"),                      # IPv4 mapped into IPv6
    ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),        # an IPv6 host by its /64
    ("2001:db8:1:2:ffff::9", "2001:db8:1:2::/64"),
    ("fe80::1%eth0", "fe80::/64"),                        # a zone is not part of the host
    (None, UNKNOWN_CLIENT),
    ("", UNKNOWN_CLIENT),
    ("not an address", "not an address"),
])
def test_client_keys(address: str | None, key: str) -> None:
    assert client_key(address) == key


@pytest.mark.parametrize(("first", "second", "same"), [
    ("127.0.0.1", "127.0.0.1", True),
    ("127.0.0.1", "::ffff:127.0.0.1", True),
    ("127.0.0.1", "127.0.0.2", False),
    ("::1", "::1", True),
    ("::1", "127.0.0.1", False),
    ("127.0.0.1", "localhost", False),
])
def test_same_host(first: str, second: str, same: bool) -> None:
    assert same_host(first, second) is same

"""Who a request's client is behind trusted proxies: the forwarding headers as parsed."""

from __future__ import annotations

import ipaddress

import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from merknera.config import ConfigError, load_config
from merknera.guard.forwarded import (
    MAX_HOP_LENGTH,
    MAX_HOPS,
    Forwarded,
    Hop,
    Proxies,
    ProxyHeader,
    forwarded_element,
    parse_address,
)

PROXY = "10.0.0.2"
"""A trusted proxy's address (the peer of the requests below)."""
NETWORKS = (ipaddress.ip_network("10.0.0.0/24"), ipaddress.ip_network("fd00::/64"))


def headers(*pairs: tuple[str, str]) -> CIMultiDictProxy[str]:
    return CIMultiDictProxy(CIMultiDict(pairs))


def resolve(*pairs: tuple[str, str], peer: str = PROXY,
            header: ProxyHeader = ProxyHeader.X_FORWARDED_FOR) -> Forwarded | None:
    return Proxies(NETWORKS, header).resolve(peer, headers(*pairs))


@pytest.mark.parametrize(("text", "address"), [
    ("192.0.2.7", "192.0.2.7"),
    (" 192.0.2.7 ", "192.0.2.7"),
    ("192.0.2.7:4711", "192.0.2.7"),
    ("2001:db8::7", "2001:db8::7"),
    ("[2001:db8::7]", "2001:db8::7"),
    ("[2001:db8::7]:4711", "2001:db8::7"),
    ("::ffff:192.0.2.7", "192.0.2.7"),
    ("unknown", None),
    ("_hidden", None),
    ("", None),
    ("192.0.2.7:port", None),
    ("192.0.2.7:123456", None),
    ("[192.0.2.7]", None),
    ("[2001:db8::7", None),
    ("[2001:db8::7]x", None),
    ("1" * (MAX_HOP_LENGTH + 1), None),
])
def test_addresses_as_proxies_write_them(text: str, address: str | None) -> None:
    parsed = parse_address(text)
    assert (None if parsed is None else str(parsed)) == address


@pytest.mark.parametrize(("text", "hop"), [
    ("for=192.0.2.60", Hop(ipaddress.ip_address("192.0.2.60"))),
    ("for=192.0.2.60;proto=https;by=203.0.113.43",
     Hop(ipaddress.ip_address("192.0.2.60"), "https")),
    ('For="[2001:db8:cafe::17]:4711"; Proto=HTTP',
     Hop(ipaddress.ip_address("2001:db8:cafe::17"), "http")),
    ('for="\\192.0.2.60"', Hop(ipaddress.ip_address("192.0.2.60"))),
    ("for=unknown;proto=https", Hop(None, "https")),
    ("proto=gopher;for=192.0.2.60", Hop(ipaddress.ip_address("192.0.2.60"))),
    ("for=192.0.2.60;for=192.0.2.61", Hop(None)),
    ("for=192.0.2.60;garbage", Hop(None)),
    ('for="192.0.2.60', Hop(None)),
    ("", Hop(None)),
    ("for=" + "1" * MAX_HOP_LENGTH, Hop(None)),
])
def test_forwarded_elements(text: str, hop: Hop) -> None:
    assert forwarded_element(text) == hop


def test_the_client_is_the_right_most_address_that_is_no_trusted_proxy() -> None:
    # A client (192.0.2.7) that wrote its own header, then two trusted proxies.
    sent = ("X-Forwarded-For", "203.0.113.9, 192.0.2.7, 10.0.0.5")
    assert resolve(sent) == Forwarded("192.0.2.7", None)
    assert resolve(("X-Forwarded-For", "203.0.113.9, 192.0.2.7"),
                   ("X-Forwarded-For", "10.0.0.5")) == Forwarded("192.0.2.7", None)
    # Only the configured header is read: the other is what a client may have written.
    assert resolve(sent, ("Forwarded", "for=198.51.100.1")) == Forwarded("192.0.2.7", None)
    assert resolve(("Forwarded", "for=198.51.100.1")) == Forwarded(None, None)
    assert resolve(sent, header=ProxyHeader.FORWARDED) == Forwarded(None, None)
    # A client inside the trusted networks, every hop a proxy: the left-most hop.
    assert resolve(("X-Forwarded-For", "10.0.0.9, 10.0.0.5")) == Forwarded("10.0.0.9", None)


def test_headers_of_peers_that_are_no_trusted_proxy_are_ignored() -> None:
    sent = ("X-Forwarded-For", "192.0.2.7")
    assert resolve(sent, peer="192.0.2.99") is None
    assert resolve(sent, peer="10.0.1.2") is None
    assert Proxies(()).resolve(PROXY, headers(sent)) is None
    assert resolve(sent, peer="::ffff:10.0.0.2") == Forwarded("192.0.2.7", None)
    assert resolve(sent, peer="fd00::1") == Forwarded("192.0.2.7", None)


def test_the_scheme_is_the_client_s_hop_s() -> None:
    address = ("X-Forwarded-For", "192.0.2.7")
    assert resolve(address, ("X-Forwarded-Proto", "https")) == Forwarded("192.0.2.7", "https")
    assert resolve(address, ("X-Forwarded-Proto", "HTTPS")) == Forwarded("192.0.2.7", "https")
    assert resolve(address, ("X-Forwarded-Proto", "ftp")) == Forwarded("192.0.2.7", None)
    # One per hop: the client's hop's; otherwise the nearest proxy's.
    assert resolve(("X-Forwarded-For", "192.0.2.7, 10.0.0.5"),
                   ("X-Forwarded-Proto", "https, http")) == Forwarded("192.0.2.7", "https")
    assert resolve(("X-Forwarded-For", "198.51.100.1, 192.0.2.7, 10.0.0.5"),
                   ("X-Forwarded-Proto", "https, http")) == Forwarded("192.0.2.7", "http")
    # The proxy's own request (no address), over TLS.
    assert resolve(("X-Forwarded-Proto", "https")) == Forwarded(None, "https")
    assert resolve() == Forwarded(None, None)
    forwarded = ProxyHeader.FORWARDED
    assert resolve(("Forwarded", "for=192.0.2.7;proto=https, for=10.0.0.5;proto=http"),
                   header=forwarded) == Forwarded("192.0.2.7", "https")
    assert resolve(("Forwarded", 'for="[2001:db8::7]:80"'), ("X-Forwarded-Proto", "https"),
                   header=forwarded) == Forwarded("2001:db8::7", None)


@pytest.mark.parametrize("value", [
    "unknown",
    "192.0.2.7, garbage",
    "192.0.2.7, 10.0.0.5, _obfuscated",
    "192.0.2.7, " + "9" * 10_000,
    ",",
])
def test_an_unreadable_client_hop_counts_as_the_proxy(value: str) -> None:
    assert resolve(("X-Forwarded-For", value)) == Forwarded(None, None)


def test_what_a_client_wrote_left_of_its_own_address_does_not_matter() -> None:
    assert resolve(("X-Forwarded-For", "garbage, 192.0.2.7")) == Forwarded("192.0.2.7", None)
    assert resolve(("X-Forwarded-For", "x" * 100_000 + ", 192.0.2.7")) == Forwarded(
        "192.0.2.7", None)
    assert resolve(("Forwarded", 'for="oops;by=, for=192.0.2.7'),
                   header=ProxyHeader.FORWARDED) == Forwarded("192.0.2.7", None)


def test_only_so_many_hops_are_read() -> None:
    proxies = ", ".join(f"10.0.0.{n}" for n in range(1, MAX_HOPS + 1))
    assert resolve(("X-Forwarded-For", proxies)) == Forwarded("10.0.0.1", None)
    # A client behind more trusted proxies than are read counts as the nearest proxy.
    assert resolve(("X-Forwarded-For", f"192.0.2.7, {proxies}")) == Forwarded(None, None)
    assert resolve(("X-Forwarded-For", f"10.0.0.99, {proxies}")) == Forwarded(None, None)


def test_the_settings() -> None:
    config = load_config(None, environ={"MERKNERA_TRUSTED_PROXIES": "10.0.0.0/24,fd00::/64",
                                        "MERKNERA_PROXY_HEADER": "forwarded"})
    proxies = Proxies.of(config.listeners)
    assert proxies.networks == NETWORKS and proxies.header is ProxyHeader.FORWARDED
    assert not Proxies.of(load_config(None, environ={}).listeners)
    with pytest.raises(ConfigError, match=r"trusted_proxies: '10\.0\.0\.0/33' is not a network"):
        load_config(None, environ={"MERKNERA_TRUSTED_PROXIES": "10.0.0.0/33"})
    with pytest.raises(ConfigError, match="proxy_header = 'X-Real-IP': must be one of"):
        load_config(None, environ={"MERKNERA_PROXY_HEADER": "X-Real-IP"})

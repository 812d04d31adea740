"""Which endpoint URLs a bot may register and which addresses the platform may call.

No test here leaves the machine: hosts are IP literals or ``localhost``, and the resolver
tests use a fixed-answer lookup in place of DNS.
"""

from __future__ import annotations

import ipaddress
import socket

import pytest

from merknera.config import Config, IPNetwork
from merknera.endpoints import (
    MAX_URL_LENGTH,
    AddressRefusedError,
    EndpointRefusedError,
    Resolver,
    address_allowed,
    check_endpoint,
    literal_ip,
    parse_endpoint,
)
from merknera.lookups import AddrInfo, Lookups

DEFAULT: tuple[IPNetwork, ...] = Config().calls.networks
LOOPBACK: tuple[IPNetwork, ...] = (ipaddress.ip_network("127.0.0.0/8"),
                                   ipaddress.ip_network("::1/128"))
PRIVATE_10: tuple[IPNetwork, ...] = (ipaddress.ip_network("10.0.0.0/8"),)


# -- parse_endpoint --------------------------------------------------------------------------

REFUSED = [
    ("ftp scheme", "ftp://example.org/rpc", "must start with http:// or https://"),
    ("file scheme", "file:///etc/passwd", "must start with http:// or https://"),
    ("javascript", "javascript:alert(1)", "must start with http:// or https://"),
    ("no scheme", "example.org/rpc", "must start with http:// or https://"),
    ("scheme-relative", "//example.org/rpc", "must start with http:// or https://"),
    ("empty", "", "must start with http:// or https://"),
    ("garbage", "not a url at all", "must start with http:// or https://"),
    ("no host", "http://", "has no host"),
    ("no host, a path", "http:///rpc", "has no host"),
    ("user and password", "http://user:pass@example.org/rpc", "must not carry a user or password"),
    ("user only", "http://bot@example.org/rpc", "must not carry a user or password"),
    ("empty user and password", "http://:@127.0.0.1/rpc", "must not carry a user or password"),
    ("port out of range", "http://example.org:99999/rpc", "is not a URL"),
    ("port not a number", "http://example.org:http/rpc", "is not a URL"),
    ("broken v6 literal", "http://[::1/rpc", "is not a URL"),
    ("too long", "http://example.org/" + "a" * MAX_URL_LENGTH,
     f"longer than {MAX_URL_LENGTH} characters"),
]


@pytest.mark.parametrize(("url", "reason"), [row[1:] for row in REFUSED],
                         ids=[row[0] for row in REFUSED])
def test_refused_urls(url: str, reason: str) -> None:
    with pytest.raises(EndpointRefusedError) as caught:
        parse_endpoint(url)
    assert reason in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_refusal_does_not_echo_a_very_long_url() -> None:
    with pytest.raises(EndpointRefusedError) as caught:
        parse_endpoint("http://example.org/" + "a" * 100_000)
    assert len(str(caught.value)) < 200


@pytest.mark.parametrize(("url", "host", "port", "path"), [
    ("http://127.0.0.1:8081/rpc", "127.0.0.1", 8081, "/rpc"),
    ("https://bots.example.org/tictactoe/rpc", "bots.example.org", 443, "/tictactoe/rpc"),
    ("http://localhost:9000", "localhost", 9000, "/"),
    ("HTTP://Example.ORG:80/RPC", "example.org", 80, "/RPC"),
    ("http://[::1]:8080/rpc", "::1", 8080, "/rpc"),
    ("http://10.0.0.7/rpc?bot=1", "10.0.0.7", 80, "/rpc"),
    ("http://example.org/" + "a" * (MAX_URL_LENGTH - 19), "example.org", 80,
     "/" + "a" * (MAX_URL_LENGTH - 19)),
], ids=["ip and port", "https default port", "no path", "upper case", "v6 literal", "query",
        "exactly the longest"])
def test_accepted_urls(url: str, host: str, port: int, path: str) -> None:
    parsed = parse_endpoint(url)
    assert parsed.scheme in ("http", "https")
    assert parsed.host == host
    assert parsed.port == port
    assert parsed.path == path


# -- address_allowed and literal_ip ----------------------------------------------------------

ADDRESSES = [
    ("127.0.0.1", LOOPBACK, True),
    ("127.255.255.254", LOOPBACK, True),
    ("128.0.0.1", LOOPBACK, False),
    ("::1", LOOPBACK, True),
    ("::2", LOOPBACK, False),
    ("::ffff:127.0.0.1", LOOPBACK, True),       # v4-mapped v6 counts as its v4 address
    ("::ffff:8.8.8.8", LOOPBACK, False),
    ("::ffff:10.1.2.3", PRIVATE_10, True),
    ("10.255.0.1", PRIVATE_10, True),
    ("11.0.0.1", PRIVATE_10, False),
    ("::1", PRIVATE_10, False),                 # no v6 network at all
    ("fe80::1%eth0", (ipaddress.ip_network("fe80::/10"),), True),  # a zone is ignored
    ("172.16.5.4", DEFAULT, True),
    ("172.32.0.1", DEFAULT, False),
    ("192.168.10.10", DEFAULT, True),
    ("fd12:3456::1", DEFAULT, True),
    ("2001:db8::1", DEFAULT, False),
    ("8.8.8.8", DEFAULT, False),
    ("0.0.0.0", DEFAULT, False),  # noqa: S104 (an address to check, not to bind)
    ("169.254.169.254", DEFAULT, False),        # cloud metadata stays out by default
    ("8.8.8.8", (ipaddress.ip_network("0.0.0.0/0"),), True),
    ("2001:db8::1", (ipaddress.ip_network("0.0.0.0/0"),), False),
    ("2001:db8::1", (ipaddress.ip_network("::/0"),), True),
    ("not-an-ip", (ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0")), False),
    ("", (ipaddress.ip_network("0.0.0.0/0"),), False),
    ("127.0.0.1", (), False),
]


@pytest.mark.parametrize(("address", "networks", "allowed"), ADDRESSES,
                         ids=[f"{row[0] or 'empty'}-{len(row[1])}nets" for row in ADDRESSES])
def test_address_allowed(address: str, networks: tuple[IPNetwork, ...], allowed: bool) -> None:
    assert address_allowed(address, networks) is allowed


@pytest.mark.parametrize(("host", "literal"), [
    ("127.0.0.1", "127.0.0.1"), ("[::1]", "::1"), ("::1", "::1"),
    ("[0:0:0:0:0:0:0:1]", "::1"), ("localhost", None), ("example.org", None), ("", None),
    ("2130706433", None),
])
def test_literal_ip(host: str, literal: str | None) -> None:
    assert literal_ip(host) == literal


# -- check_endpoint --------------------------------------------------------------------------


@pytest.mark.parametrize(("url", "networks"), [
    ("http://127.0.0.1:8081/rpc", LOOPBACK),
    ("http://[::1]:8081/rpc", LOOPBACK),
    ("http://10.9.8.7/rpc", PRIVATE_10),
    ("http://192.168.1.20:9000/", DEFAULT),
    ("http://localhost:8081/rpc", LOOPBACK),
    ("http://LOCALHOST:8081/rpc", LOOPBACK),
], ids=["v4 loopback", "v6 loopback", "private", "default networks", "localhost",
        "LOCALHOST"])
async def test_check_endpoint_accepts(url: str, networks: tuple[IPNetwork, ...]) -> None:
    parsed = await check_endpoint(url, networks)
    assert parsed == parse_endpoint(url)


@pytest.mark.parametrize(("url", "address"), [
    ("http://8.8.8.8/rpc", "8.8.8.8"),
    ("http://[2001:db8::1]:80/rpc", "2001:db8::1"),
    ("http://[::ffff:8.8.8.8]/rpc", "::ffff:808:808"),
    ("http://169.254.169.254/latest/meta-data", "169.254.169.254"),
    ("http://10.0.0.1/rpc", "10.0.0.1"),
    ("http://localhost:8081/rpc", "127.0.0.1"),
    # Numeric host spellings that are not IP literals to ipaddress still resolve (locally,
    # by inet_aton) and are checked by their address.
    ("http://2130706433/rpc", "127.0.0.1"),
    ("http://0x7f.1/rpc", "127.0.0.1"),
    ("http://127.1/rpc", "127.0.0.1"),
], ids=["public v4", "public v6", "v4-mapped public", "metadata", "outside the list",
        "localhost", "integer", "hex", "short dotted"])
async def test_check_endpoint_refuses_addresses_outside(url: str, address: str) -> None:
    networks = (ipaddress.ip_network("192.168.0.0/16"),)
    with pytest.raises(EndpointRefusedError) as caught:
        await check_endpoint(url, networks)
    message = str(caught.value)
    assert f"resolves to {address}, outside the networks" in message
    assert "192.168.0.0/16" in message


async def test_check_endpoint_checks_the_shape_first() -> None:
    with pytest.raises(EndpointRefusedError, match="must start with http"):
        await check_endpoint("ftp://127.0.0.1/", LOOPBACK)
    with pytest.raises(EndpointRefusedError, match="user or password"):
        await check_endpoint("http://u:p@127.0.0.1/", LOOPBACK)


async def test_check_endpoint_with_no_networks_refuses_everything() -> None:
    with pytest.raises(EndpointRefusedError, match="outside the networks"):
        await check_endpoint("http://127.0.0.1/rpc", ())


async def test_a_host_that_does_not_resolve_is_refused() -> None:
    # ".invalid" is reserved (RFC 2606): it never resolves, and resolvers may answer it
    # without asking the network.  A label longer than 63 octets cannot even be encoded.
    with pytest.raises(EndpointRefusedError, match="does not resolve"):
        await check_endpoint("http://" + "a" * 64 + ".invalid/rpc", DEFAULT)


# -- Resolver --------------------------------------------------------------------------------


class Fixed:
    """A lookup function (:class:`~merknera.lookups.Lookups`) that answers every name with
    the same addresses and records what it was asked."""

    def __init__(self, *addresses: str) -> None:
        self.addresses = addresses
        self.asked: list[tuple[str, int, int, int]] = []

    def __call__(self, host: str, port: int, family: int, flags: int) -> list[AddrInfo]:
        self.asked.append((host, port, family, flags))
        return [(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM,
                 socket.IPPROTO_TCP, "", (address, port)) for address in self.addresses]


async def test_the_resolver_keeps_only_allowed_addresses() -> None:
    lookup = Fixed("8.8.8.8", "10.0.0.5", "2001:db8::1", "::ffff:10.0.0.6", "127.0.0.1")
    resolver = Resolver(PRIVATE_10, Lookups(lookup=lookup))
    allowed = await resolver.resolve("bot.example", 8081)
    assert [host for host, _ in allowed] == ["10.0.0.5", "::ffff:10.0.0.6"]
    assert allowed[0] == ("10.0.0.5", socket.AF_INET)
    assert lookup.asked == [("bot.example", 8081, socket.AF_UNSPEC, socket.AI_ADDRCONFIG)]


async def test_the_resolver_passes_everything_allowed_in_order() -> None:
    resolver = Resolver(LOOPBACK, Lookups(lookup=Fixed("127.0.0.2", "::1", "127.0.0.1")))
    assert await resolver.resolve("bot.example", 80) == [
        ("127.0.0.2", socket.AF_INET), ("::1", socket.AF_INET6), ("127.0.0.1", socket.AF_INET)]


async def test_the_resolver_refuses_when_nothing_is_allowed() -> None:
    resolver = Resolver(PRIVATE_10, Lookups(lookup=Fixed("8.8.8.8", "2001:db8::1")))
    with pytest.raises(AddressRefusedError, match="resolves only to addresses outside") as refused:
        await resolver.resolve("bot.example", 8081)
    # The message ends up in public fault messages: it names neither host nor address.
    assert "bot.example" not in str(refused.value)
    assert "8.8.8.8" not in str(refused.value)


async def test_a_name_without_addresses_does_not_resolve() -> None:
    with pytest.raises(socket.gaierror):
        await Resolver(LOOPBACK, Lookups(lookup=Fixed())).resolve("bot.example", 8081)


async def test_the_resolver_looks_a_name_up_once_and_never_a_literal() -> None:
    lookup = Fixed("10.0.0.5")
    resolver = Resolver(PRIVATE_10, Lookups(lookup=lookup), ttl=3600)
    for _ in range(3):
        assert await resolver.resolve("bot.example", 8081) == [("10.0.0.5", socket.AF_INET)]
    assert await resolver.resolve("10.0.0.9", 8081) == [("10.0.0.9", socket.AF_INET)]
    assert len(lookup.asked) == 1  # the name once; a literal is never looked up
    await resolver.resolve("other.example", 8081)
    assert [host for host, *_ in lookup.asked] == ["bot.example", "other.example"]

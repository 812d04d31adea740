"""Who a request's client is when a trusted reverse proxy passed the request on.

A proxy adds the address it got the request from to the right of ``X-Forwarded-For`` (or
of ``Forwarded``, RFC 7239), keeping whatever the client wrote to the left of it.  So only
the right-most addresses are known to be true: reading from the right, each address that
is itself a trusted proxy passed the request on too, and the first that is not is the
client.  What a client wrote is never believed, nor anything at all from a peer that is
not a trusted proxy.

Parsing is bounded: only the right-most :data:`MAX_HOPS` hops are read, each of at most
:data:`MAX_HOP_LENGTH` characters, and a hop that cannot be read where the client should
be makes the request count as the proxy's own (:meth:`Proxies.resolve` answers None),
never as some address made up from it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from multidict import CIMultiDictProxy

from merknera.config import IPNetwork, ListenerSettings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_HOPS = 16
"""Hops read from the right of a forwarding header; a client further left than this many
trusted proxies counts as the nearest proxy."""
MAX_HOP_LENGTH = 256
"""Characters of one hop (an element of ``Forwarded``, an address of
``X-Forwarded-For``); a longer one cannot be read."""

SCHEMES = frozenset({"http", "https"})
"""The schemes a proxy may name (in ``X-Forwarded-Proto`` or ``proto=``)."""


class ProxyHeader(Enum):
    """The header the trusted proxies add the client's address to (``proxy_header``)."""

    X_FORWARDED_FOR = "X-Forwarded-For"
    """Addresses, comma-separated; the scheme in ``X-Forwarded-Proto``."""
    FORWARDED = "Forwarded"
    """RFC 7239 elements: ``for=`` the address, ``proto=`` the scheme."""


@dataclass(frozen=True)
class Hop:
    """One hop a request took: the address it came from (None where the hop did not say
    or said it unreadably) and the scheme it came by (None where not said)."""

    address: IPAddress | None
    scheme: str | None = None


@dataclass(frozen=True)
class Forwarded:
    """A request's client as its trusted proxies name it."""

    address: str | None
    """The client's address; None where the proxies do not name the client readably."""
    scheme: str | None
    """The scheme the client used (``https`` when a proxy ended its TLS), or None when the
    proxies do not say."""


def parse_address(text: str) -> IPAddress | None:
    """An address as proxies write them: ``192.0.2.7``, ``192.0.2.7:4711``,
    ``2001:db8::7``, ``[2001:db8::7]`` or ``[2001:db8::7]:4711`` (an IPv4 address mapped
    into IPv6 as the IPv4 address); None for anything else (``unknown``, an obfuscated
    name, a port out of place)."""
    text = text.strip()
    if not text or len(text) > MAX_HOP_LENGTH:
        return None
    host, port = text, ""
    if text.startswith("["):
        host, bracket, port = text[1:].partition("]")
        if not bracket or (port and not _PORT.fullmatch(port)):
            return None
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
        if not _PORT.fullmatch(":" + port):
            return None
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    if text.startswith("[") and not isinstance(ip, ipaddress.IPv6Address):
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


_PORT = re.compile(r":[0-9]{1,5}")
_PAIR = re.compile(r'\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)=([!#$%&\'*+.^_`|~0-9A-Za-z-]+|'
                   r'"(?:[^"\\]|\\.)*")\s*')
"""A ``Forwarded`` parameter: a token, ``=``, and a token or a quoted string."""


def forwarded_element(text: str) -> Hop:
    """One element of a ``Forwarded`` header (``for=192.0.2.7;proto=https``): its ``for``
    address and its ``proto``.  An element that is not a list of ``name=value`` pairs, or
    names a parameter twice, says nothing (an address of None)."""
    if len(text) > MAX_HOP_LENGTH:
        return Hop(None)
    params: dict[str, str] = {}
    for pair in text.split(";"):
        found = _PAIR.fullmatch(pair)
        if found is None:
            return Hop(None)
        name, value = found.group(1).lower(), found.group(2)
        if name in params:
            return Hop(None)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        params[name] = value
    proto = params.get("proto", "").lower()
    return Hop(parse_address(params.get("for", "")), proto if proto in SCHEMES else None)


def _right_most(values: Sequence[str]) -> tuple[list[str], bool]:
    """The right-most :data:`MAX_HOPS` comma-separated items of a header's values (its
    lines, in order), and whether that is all of them; none for no values."""
    if not values:
        return [], True
    items = ",".join(values).rsplit(",", MAX_HOPS)
    if len(items) > MAX_HOPS:
        return items[1:], False
    return items, True


class Proxies:
    """The trusted proxies (``trusted_proxies``), and how they name a request's client."""

    def __init__(self, networks: Sequence[IPNetwork],
                 header: ProxyHeader = ProxyHeader.X_FORWARDED_FOR) -> None:
        self.networks = tuple(networks)
        self.header = header

    @classmethod
    def of(cls, settings: ListenerSettings) -> Proxies:
        """The proxies ``trusted_proxies`` and ``proxy_header`` describe."""
        header = next(kind for kind in ProxyHeader
                      if kind.value.upper() == settings.proxy_header.upper())
        return cls(settings.proxy_networks, header)

    def __bool__(self) -> bool:
        """Whether any proxy is trusted."""
        return bool(self.networks)

    def trusts(self, address: str | IPAddress | None) -> bool:
        """Whether ``address`` (a peer's) is a trusted proxy."""
        ip = parse_address(address) if isinstance(address, str) else address
        return ip is not None and any(ip in network for network in self.networks)

    def resolve(self, peer: str | None, headers: CIMultiDictProxy[str]) -> Forwarded | None:
        """The client of a request that came from ``peer`` with ``headers``, or None when
        the peer is no trusted proxy (its headers are not read)."""
        if peer is None or not self.trusts(peer):
            return None
        if self.header is ProxyHeader.FORWARDED:
            items, whole = _right_most(headers.getall("Forwarded", ()))
            hops = [forwarded_element(item) for item in items]
        else:
            items, whole = _right_most(headers.getall("X-Forwarded-For", ()))
            schemes, _ = _right_most(headers.getall("X-Forwarded-Proto", ()))
            hops = _with_schemes([Hop(parse_address(item)) for item in items], schemes)
            if not hops and schemes:  # no addresses: the proxy asks for itself
                hops = _with_schemes([Hop(None)], schemes[-1:])
        client = self._client(hops, whole)
        if client is None:
            return Forwarded(None, None)
        return Forwarded(None if client.address is None else str(client.address), client.scheme)

    def _client(self, hops: Sequence[Hop], whole: bool) -> Hop | None:
        """The right-most hop that is no trusted proxy; the left-most when every hop is
        one, if they are all the hops there are; None for no hops."""
        for hop in reversed(hops):
            if not self.trusts(hop.address):
                return hop
        return hops[0] if hops and whole else None


def _with_schemes(hops: list[Hop], schemes: Sequence[str]) -> list[Hop]:
    """The ``X-Forwarded-For`` hops with ``X-Forwarded-Proto``'s schemes: hop by hop when
    there are as many of each, else the right-most scheme (the nearest proxy's) for all."""
    named = [scheme.strip().lower() for scheme in schemes]
    if not named or not hops:
        return hops
    if len(named) != len(hops):
        named = [named[-1]] * len(hops)
    return [Hop(hop.address, scheme if scheme in SCHEMES else None)
            for hop, scheme in zip(hops, named, strict=True)]

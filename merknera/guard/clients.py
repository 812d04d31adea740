"""Who a client is, for the per-client limits: its address, an IPv6 address by its /64."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from aiohttp import web

UNKNOWN_CLIENT = "unknown"
"""The key of a connection whose peer address is not known (a Unix socket, a test)."""

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _address(text: str) -> IPAddress | None:
    """An address as IP (an IPv4 address mapped into IPv6 as the IPv4 address), or None."""
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def client_key(address: str | None) -> str:
    """The key a client's connections, streams and wrong tokens are counted under.

    An IPv4 address stands for itself; an IPv6 address for its /64, which is what one
    host is usually given (counting single IPv6 addresses would let a host use 2**64
    keys).  An IPv4 address mapped into IPv6 counts as the IPv4 address.
    """
    if not address:
        return UNKNOWN_CLIENT
    ip = _address(address)
    if ip is None:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def network_key(client: str) -> str:
    """The network a client belongs to, for choosing whom to turn away when every place
    is taken: an IPv6 /64 by its /48 (what one site is usually given, 65,536 clients'
    worth), anything else by itself."""
    try:
        network = ipaddress.ip_network(client, strict=False)
    except ValueError:
        return client
    if isinstance(network, ipaddress.IPv6Network) and network.prefixlen > 48:
        return str(network.supernet(new_prefix=48))
    return client


def same_host(first: str, second: str) -> bool:
    """Whether two IP address strings name the same host (an IPv4 address equals its
    IPv4-mapped IPv6 form); False when either is not an address."""
    a, b = _address(first), _address(second)
    return a is not None and a == b


_HOST_HEADER = re.compile(r"(?P<name>[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?")


def requested_host(request: web.BaseRequest) -> str | None:
    """The host name or address a request was sent to (its Host header, without the port;
    an IPv6 address without its brackets), or None for a header that is neither.

    Read without parsing a URL: yarl would run IDNA on a long or non-ASCII Host header
    (costly, and a UnicodeError for some).
    """
    found = _HOST_HEADER.fullmatch(request.headers.get("Host", ""))
    return None if found is None else found.group("name").strip("[]")


@dataclass(frozen=True)
class Caller:
    """Who made a call to one of the platform's listeners: the address it came from (the
    client's, behind a trusted proxy)."""

    address: str | None
    """None when unknown, or when a trusted proxy did not name its client readably."""
    via: str | None = None
    """The trusted proxy's address, when it forwarded the request without naming its client
    readably: such callers are counted together, apart from the proxy's own requests, and
    have no address any network or host check may allow."""

    @property
    def client(self) -> str:
        """The key the caller is counted under (:func:`client_key`)."""
        if self.via is not None:
            return f"via {client_key(self.via)}"
        return client_key(self.address)


CALLER: web.RequestKey[Caller] = web.RequestKey("merknera.caller", Caller)
"""Where a request keeps its :class:`Caller` (:meth:`merknera.guard.Guard.forwarded` puts
it there, before any other middleware runs)."""

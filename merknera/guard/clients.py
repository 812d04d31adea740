"""Who a client is, for the per-client limits: its address, an IPv6 address by its /64."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

UNKNOWN_CLIENT = "unknown"
"""The key of a connection whose peer address is not known (a Unix socket, a test)."""


def client_key(address: str | None) -> str:
    """The key a client's connections, streams and wrong tokens are counted under.

    An IPv4 address stands for itself; an IPv6 address for its /64, which is what one
    host is usually given (counting single IPv6 addresses would let a host use 2**64
    keys).  An IPv4 address mapped into IPv6 counts as the IPv4 address.
    """
    if not address:
        return UNKNOWN_CLIENT
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def same_host(first: str, second: str) -> bool:
    """Whether two IP address strings name the same host (an IPv4 address equals its
    IPv4-mapped IPv6 form); False when either is not an address."""
    try:
        a = ipaddress.ip_address(first.split("%", 1)[0])
        b = ipaddress.ip_address(second.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped is not None:
        a = a.ipv4_mapped
    if isinstance(b, ipaddress.IPv6Address) and b.ipv4_mapped is not None:
        b = b.ipv4_mapped
    return a == b


@dataclass(frozen=True)
class Caller:
    """Who made a call to one of the platform's listeners: the address it came from."""

    address: str | None

    @property
    def client(self) -> str:
        """The key the caller is counted under (:func:`client_key`)."""
        return client_key(self.address)

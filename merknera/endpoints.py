"""Which URLs a bot may register, and which addresses the platform may call.

A bot's ``rpcendpoint`` must be an http(s) URL whose host resolves only into the
configured ``allowed_networks``.  The same rule holds at call time: the bot client's
:class:`Resolver` drops addresses outside the networks (a DNS answer can change after
registration), and literal IP hosts are checked directly.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence

from yarl import URL

from merknera.cache import Cache
from merknera.config import IPNetwork
from merknera.lookups import LOOKUPS, Lookups

MAX_URL_LENGTH = 2000


class EndpointRefusedError(ValueError):
    """An endpoint URL the platform will not call, with the reason."""


class AddressRefusedError(OSError):
    """A host that resolves only to addresses outside the allowed networks.

    An OSError, raised by :class:`Resolver`, as a failed lookup is; its message names
    neither the host nor its addresses (it ends up in fault messages, which everybody may
    read).
    """


def parse_endpoint(url: str) -> URL:
    """Check the shape of an endpoint URL.

    :raises EndpointRefusedError: if it is not an absolute http(s) URL with a host.
    """
    if len(url) > MAX_URL_LENGTH:
        raise EndpointRefusedError(f"the endpoint URL is longer than {MAX_URL_LENGTH} characters")
    try:
        parsed = URL(url)
    except (ValueError, TypeError) as exc:
        raise EndpointRefusedError(f'"{url}" is not a URL ({exc})') from None
    if parsed.scheme not in ("http", "https"):
        raise EndpointRefusedError(f'the endpoint "{url}" must start with http:// or https://')
    if not parsed.host:
        raise EndpointRefusedError(f'the endpoint "{url}" has no host')
    if parsed.user is not None or parsed.password is not None:
        raise EndpointRefusedError(f'the endpoint "{url}" must not carry a user or password')
    try:
        _ = parsed.port
    except ValueError:
        raise EndpointRefusedError(f'the endpoint "{url}" has an invalid port') from None
    return parsed


def address_allowed(address: str, networks: Sequence[IPNetwork]) -> bool:
    """Whether an IP address lies in one of the networks."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip.version == net.version and ip in net for net in networks)


def literal_ip(host: str) -> str | None:
    """The host itself if it is an IP address literal, else None."""
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


async def _addresses(parsed: URL) -> list[str]:
    """The addresses of an endpoint's host.

    :raises OSError: (or UnicodeError) if it does not resolve.
    """
    host = parsed.raw_host or ""
    literal = literal_ip(host)
    if literal is not None:
        return [literal]
    infos = await LOOKUPS.getaddrinfo(host, parsed.port or 0)
    return sorted({str(info[4][0]) for info in infos})


async def check_endpoint(url: str, networks: Sequence[IPNetwork]) -> URL:
    """Check an endpoint's shape and that every address of its host is allowed.

    :raises EndpointRefusedError: with the reason.
    """
    parsed = parse_endpoint(url)
    try:
        addresses = await _addresses(parsed)
    except (OSError, UnicodeError) as exc:
        raise EndpointRefusedError(
            f'the endpoint host "{parsed.raw_host}" does not resolve ({exc})') from None
    refused = [address for address in addresses if not address_allowed(address, networks)]
    if refused:
        raise EndpointRefusedError(
            f'the endpoint "{url}" resolves to {", ".join(refused)}, outside the networks '
            f"this platform calls ({', '.join(str(n) for n in networks)})")
    return parsed


async def endpoint_addresses(url: str, time_limit: float) -> frozenset[str]:
    """The addresses an endpoint URL resolves to now (none if it does not resolve within
    ``time_limit`` seconds)."""
    try:
        async with asyncio.timeout(time_limit):
            return frozenset(await _addresses(parse_endpoint(url)))
    except (EndpointRefusedError, OSError, UnicodeError):
        return frozenset()


DNS_TTL = 10.0
"""Seconds a host name's addresses are kept."""
NAMES_KEPT = 10_000
"""Host names whose addresses are kept, the most recently used."""

Address = tuple[str, int]
"""An address to connect to, and its socket family."""


class Resolver:
    """Host names to the addresses the platform may call: looked up on the platform's
    lookup threads (:mod:`merknera.lookups`), only those inside ``networks``, kept
    :data:`DNS_TTL` seconds.  An address literal is itself: its caller checks it against
    the networks (once per URL, :class:`~merknera.botclient.BotClient`)."""

    def __init__(self, networks: Sequence[IPNetwork], lookups: Lookups = LOOKUPS,
                 ttl: float = DNS_TTL) -> None:
        self._networks = tuple(networks)
        self._lookups = lookups
        self._known: Cache[tuple[str, int], list[Address]] = Cache(NAMES_KEPT, ttl=ttl)

    async def resolve(self, host: str, port: int) -> list[Address]:
        """The addresses to try for ``host``, in the resolver's order.

        :raises OSError: ``socket.gaierror`` when the name does not resolve;
            :class:`AddressRefusedError` when it resolves only outside the networks.
        """
        literal = literal_ip(host)
        if literal is not None:
            return [(literal, socket.AF_INET6 if ":" in literal else socket.AF_INET)]
        known = self._known.get((host, port))
        if known is not None:
            return known
        found: list[Address] = []
        # AI_ADDRCONFIG: no IPv6 addresses on a host without IPv6, which could only fail
        # to connect.
        for family, _, _, _, address in await self._lookups.getaddrinfo(
                host, port, socket.AF_UNSPEC, socket.AI_ADDRCONFIG):
            shown = str(address[0])
            if family == socket.AF_INET6 and len(address) > 3 and address[3]:
                shown = f"{shown}%{address[3]}"  # a link-local address keeps its scope
            found.append((shown, family))
        if not found:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        allowed = [entry for entry in found if address_allowed(entry[0], self._networks)]
        if not allowed:
            raise AddressRefusedError(
                "the endpoint resolves only to addresses outside the allowed networks")
        self._known.put((host, port), allowed)
        return allowed

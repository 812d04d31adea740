"""What the bot client's wire tests share: scripted servers, requests and replies, a
pool on the platform's resolver over a lookup that counts its calls."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from merknera import http1
from merknera.endpoints import Resolver
from merknera.lookups import AddrInfo, Lookups

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
HEAD = b"POST /rpc HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\n"


@dataclass
class Server:
    """A TCP server running a script per connection; counts connections."""

    port: int
    connections: int = 0
    open_now: int = 0
    most_open: int = 0
    closed: list[bool] = field(default_factory=list)
    """Per connection ended: whether the client had closed it (read hit the end)."""



async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length")), 0)
    return await reader.readexactly(length)


def reply(body: bytes = b"ok", extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\n" + extra + f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def answering(*replies: bytes, then_close: bool = False) -> Script:
    """A script that reads one request per reply and writes it."""
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for answer in replies:
            await read_request(reader)
            writer.write(answer)
            await writer.drain()
        if not then_close:
            await reader.read()  # until the client closes
    return script


def held_until(release: asyncio.Event) -> Script:
    """A script that reads a request and answers it (then closes) once ``release`` is set."""
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await release.wait()
        writer.write(reply(b"done", b"Connection: close\r\n"))
        await writer.drain()
    return script


class CountingLookup:
    """A lookup function (:class:`~merknera.lookups.Lookups`) that resolves every name to
    loopback but those under ``.invalid``, counting its calls."""

    def __init__(self) -> None:
        self.lookups = 0

    def __call__(self, host: str, port: int, family: int, flags: int) -> list[AddrInfo]:
        self.lookups += 1
        if host.endswith(".invalid"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", port))]


LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


def pool(limit: int = 8, lookup: CountingLookup | None = None,
         context: ssl.SSLContext | None = None) -> http1.ConnectionPool:
    resolver = Resolver(LOOPBACK, Lookups(lookup=lookup or CountingLookup()))
    return http1.ConnectionPool(limit, 1.0, resolver, context)


def at(port: int, host: str = "127.0.0.1", tls: bool = False) -> http1.Origin:
    return http1.Origin.of(f"{'https' if tls else 'http'}://{host}:{port}/rpc")


def soon(seconds: float = 2.0) -> float:
    return asyncio.get_running_loop().time() + seconds

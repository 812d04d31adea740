"""The bot client against real servers that misbehave at the HTTP level."""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from merknera.botclient import BotClient
from merknera.config import Config
from merknera.protocol.excerpt import EXCERPT
from merknera.protocol.faults import FaultKind
from merknera_bots.kit import ReplayGuard, verify
from tests.support import free_port

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@pytest.fixture
async def client(config: Config) -> AsyncIterator[BotClient]:
    # A ping's own limit generous: the ping test is about what an answer means, and a busy
    # CI machine once took over the shared 1 s to answer on loopback.
    async with BotClient(config.replace(max_reply_bytes=2048,
                                        ping_timeout=10.0)) as bot_client:
        yield bot_client


@dataclasses.dataclass
class RawServer:
    """A TCP server that answers each connection with a scripted byte stream."""

    url: str
    connections: int = 0


async def read_request(reader: asyncio.StreamReader) -> dict[str, object]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length"))
    call = json.loads(await reader.readexactly(length))
    assert isinstance(call, dict)
    return call


@pytest.fixture
async def raw_server() -> AsyncIterator[Callable[[Script], Awaitable[RawServer]]]:
    servers: list[asyncio.Server] = []

    async def start(script: Script) -> RawServer:
        found = RawServer("")

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            found.connections += 1
            try:
                await script(reader, writer)
            finally:
                writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        servers.append(server)
        found.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/rpc"
        return found

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()


def ok_reply(call_id: object, result: object = None, *, declared: int | None = None) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "result": result, "id": call_id}).encode()
    length = len(body) if declared is None else declared
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {length}\r\n\r\n".encode() + body)


async def test_a_good_reply(client: BotClient, raw_server: Callable[[Script], Awaitable[RawServer]]
                            ) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        call = await read_request(reader)
        writer.write(ok_reply(call["id"], {"position": 4}))
        await writer.drain()

    server = await raw_server(script)
    result = await client.call(server.url, "s", "TicTacToe.NextMove", {"a": 1}, 2.0)
    assert result.ok and result.result == {"position": 4} and result.status == 200


async def test_a_reply_that_breaks_off_is_malformed_not_unreachable(
        client: BotClient, raw_server: Callable[[Script], Awaitable[RawServer]]) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        call = await read_request(reader)
        writer.write(ok_reply(call["id"], {"position": 4}, declared=500))
        await writer.drain()

    server = await raw_server(script)
    result = await client.call(server.url, "s", "TicTacToe.NextMove", {}, 2.0)
    assert result.fault is not None
    assert result.fault.kind is FaultKind.MALFORMED_REPLY
    assert "broke off" in result.fault.message


async def test_a_connection_closed_before_any_reply_is_retried_once_then_unreachable(
        client: BotClient, raw_server: Callable[[Script], Awaitable[RawServer]]) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    server = await raw_server(script)
    result = await client.call(server.url, "s", "TicTacToe.NextMove", {}, 2.0)
    assert result.fault is not None and result.fault.kind is FaultKind.UNREACHABLE
    assert server.connections == 2


async def test_a_lost_reply_is_asked_again_with_the_same_id(
        client: BotClient, raw_server: Callable[[Script], Awaitable[RawServer]]) -> None:
    ids: list[object] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        call = await read_request(reader)
        ids.append(call["id"])
        if len(ids) > 1:
            writer.write(ok_reply(call["id"], {"position": 2}))
            await writer.drain()

    server = await raw_server(script)
    result = await client.call(server.url, "s", "TicTacToe.NextMove", {}, 2.0)
    assert result.ok and result.result == {"position": 2}
    assert len(ids) == 2 and ids[0] == ids[1]


async def test_a_slow_drip_reply_times_out(
        client: BotClient, raw_server: Callable[[Script], Awaitable[RawServer]]) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        call = await read_request(reader)
        for byte in ok_reply(call["id"], {"position": 4}):
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.05)

    server = await raw_server(script)
    result = await client.call(server.url, "s", "TicTacToe.NextMove", {}, 0.5)
    assert result.fault is not None and result.fault.kind is FaultKind.TIMEOUT
    assert result.fault.message == "no reply within 0.5 s"


async def test_a_chunked_reply_larger_than_the_cap_is_refused(
        client: BotClient, raw_server: Callable[[Script], Awaitable[RawServer]]) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(10):
            writer.write(b"400\r\n" + b"x" * 0x400 + b"\r\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    server = await raw_server(script)
    result = await client.call(server.url, "s", "TicTacToe.NextMove", {}, 2.0)
    assert result.fault is not None and result.fault.kind is FaultKind.MALFORMED_REPLY
    assert "larger than 2048 bytes" in result.fault.message


async def test_not_http_at_all(client: BotClient,
                               raw_server: Callable[[Script], Awaitable[RawServer]]) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")
        await writer.drain()

    server = await raw_server(script)
    result = await client.call(server.url, "s", "TicTacToe.NextMove", {}, 2.0)
    assert result.fault is not None
    assert result.fault.kind in (FaultKind.MALFORMED_REPLY, FaultKind.UNREACHABLE)


async def test_a_gzipped_reply_is_taken_as_the_bytes_it_is(
        client: BotClient, raw_server: Callable[[Script], Awaitable[RawServer]]) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        call = await read_request(reader)
        body = gzip.compress(json.dumps({"jsonrpc": "2.0", "result": 1,
                                         "id": call["id"]}).encode())
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()

    server = await raw_server(script)
    result = await client.call(server.url, "s", "TicTacToe.NextMove", {}, 2.0)
    assert result.fault is not None and result.fault.kind is FaultKind.MALFORMED_REPLY


async def test_refused_connections_and_addresses_outside_the_networks(
        client: BotClient, unused_tcp_port: int) -> None:
    result = await client.call(f"http://127.0.0.1:{unused_tcp_port}/rpc", "s", "X.Y", {}, 2.0)
    assert result.fault is not None and result.fault.kind is FaultKind.UNREACHABLE
    assert "cannot connect" in result.fault.message
    outside = await client.call("http://8.8.8.8/rpc", "s", "X.Y", {}, 2.0)
    assert outside.fault is not None and outside.fault.kind is FaultKind.UNREACHABLE
    assert "outside the networks" in outside.fault.message


async def test_ping_counts_any_http_200(client: BotClient,
                                        raw_server: Callable[[Script], Awaitable[RawServer]]
                                        ) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK")
        await writer.drain()

    server = await raw_server(script)
    assert (await client.ping(server.url, "s")).ok


async def test_a_retried_call_carries_a_new_signature(
        client: BotClient, raw_server: Callable[[Script], Awaitable[RawServer]]) -> None:
    """A bot that refuses a signature it has seen (the kit does: a replay) must take the
    platform's second attempt, which is the same request sent again."""
    seen: list[tuple[str, str, bytes]] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        fields = dict(line.split(": ", 1) for line in head.split("\r\n")[1:] if ": " in line)
        body = await reader.readexactly(int(fields["Content-Length"]))
        seen.append((fields["X-Merknera-Timestamp"], fields["X-Merknera-Signature"], body))
        if len(seen) > 1:
            writer.write(ok_reply(json.loads(body)["id"], {"position": 2}))
            await writer.drain()

    server = await raw_server(script)
    result = await client.call(server.url, "the-secret", "TicTacToe.NextMove", {}, 2.0)
    assert result.ok, result.fault
    (first_stamp, first_signature, first_body), (stamp, signature, body) = seen
    assert body == first_body  # the same request, the same id...
    assert int(stamp) > int(first_stamp) and signature != first_signature  # ...signed anew
    replays = ReplayGuard()
    for timestamp, signed, sent in seen:
        assert verify("the-secret", timestamp, sent, signed, now=int(stamp))
        assert replays.first_time(signed, timestamp, now=int(stamp))


@pytest.mark.parametrize(("endpoint", "networks", "kind", "words"), [
    ("http://127.0.0.1:{closed}/private?key=hunter2", None, FaultKind.UNREACHABLE,
     "cannot connect: Connection refused"),
    ("http://8.8.8.8:8080/private?key=hunter2", None, FaultKind.UNREACHABLE,
     "the endpoint's address is outside the networks this platform calls"),
    ("http://localhost:{closed}/private?key=hunter2", ("10.0.0.0/8",), FaultKind.UNREACHABLE,
     "resolves only to addresses outside the allowed networks"),
    ("http://no-such-host.invalid/private?key=hunter2", None, FaultKind.UNREACHABLE,
     "the host name does not resolve"),
], ids=["refused", "address outside", "name outside", "no such name"])
async def test_fault_messages_never_name_the_endpoint(
        config: Config, endpoint: str, networks: tuple[str, ...] | None, kind: FaultKind,
        words: str) -> None:
    """Fault messages are public once a game is over; the bot list hides endpoints."""
    port = free_port()
    endpoint = endpoint.format(closed=port)
    if networks is not None:
        config = config.replace(allowed_networks=networks)
    async with BotClient(config) as bot_client:
        result = await bot_client.call(endpoint, "s", "TicTacToe.NextMove", {}, 2.0)
    assert result.fault is not None and result.fault.kind is kind
    assert words in result.fault.message
    for piece in ("hunter2", "private", str(port), "127.0.0.1", "8.8.8.8", "localhost",
                  "no-such-host", "8080"):
        assert piece not in result.fault.message, result.fault.message


@pytest.mark.parametrize(("status", "reply", "kind"), [
    (500, b"SECRET-" * 200, FaultKind.HTTP_STATUS),
    (200, json.dumps({"jsonrpc": "2.0", "error": "SECRET-" * 200, "id": 1}).encode(),
     FaultKind.RPC_ERROR),
])
async def test_fault_messages_quote_a_bots_text_only_in_part(
        client: BotClient, raw_server: Callable[[Script], Awaitable[RawServer]], status: int,
        reply: bytes, kind: FaultKind) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        call = await read_request(reader)
        body = reply.replace(b'"id": 1', f'"id": {call["id"]}'.encode())
        writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                     + body)
        await writer.drain()

    server = await raw_server(script)
    result = await client.call(server.url, "s", "TicTacToe.NextMove", {}, 2.0)
    assert result.fault is not None and result.fault.kind is kind
    assert result.fault.message.count("SECRET-") <= EXCERPT // len("SECRET-")
    assert len(result.fault.message) < 200

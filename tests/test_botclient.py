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
from merknera.protocol.faults import FaultKind

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@pytest.fixture
async def client(config: Config) -> AsyncIterator[BotClient]:
    async with BotClient(dataclasses.replace(config, max_reply_bytes=2048)) as bot_client:
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

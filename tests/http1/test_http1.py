"""The bot client's HTTP/1.1 wire (merknera.http1) against real sockets that answer with
scripted bytes: kept-alive connections, the bound on connections, replies of every framing,
names and TLS (deadlines are in test_deadlines.py); each test on asyncio's loop and on
uvloop (see conftest.py)."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from merknera import http1
from tests.http1.support import (
    HEAD,
    CountingLookup,
    Server,
    answering,
    at,
    held_until,
    pool,
    read_request,
    reply,
    soon,
)
from tests.support import until
from tests.support.tls import throwaway_ca


@pytest.mark.parametrize(("url", "tls", "host", "port", "host_header", "target"), [
    ("http://127.0.0.1:8001/rpc", False, "127.0.0.1", 8001, "127.0.0.1:8001", "/rpc"),
    ("http://bot.example/", False, "bot.example", 80, "bot.example", "/"),
    ("http://bot.example", False, "bot.example", 80, "bot.example", "/"),
    ("https://bot.example/a/b?x=1&y=2", True, "bot.example", 443, "bot.example",
     "/a/b?x=1&y=2"),
    ("https://bot.example:8443/rpc", True, "bot.example", 8443, "bot.example:8443", "/rpc"),
    ("http://[::1]:9000/rpc", False, "::1", 9000, "[::1]:9000", "/rpc"),
    ("http://bücher.example/a b", False, "xn--bcher-kva.example", 80,
     "xn--bcher-kva.example", "/a%20b"),
])
def test_an_origin_is_the_url_as_it_goes_on_the_wire(
        url: str, tls: bool, host: str, port: int, host_header: str, target: str) -> None:
    assert http1.Origin.of(url) == http1.Origin(tls, host, port, host_header, target)


@pytest.mark.parametrize(("url", "words"), [
    ("ftp://bot.example/", "not an absolute http"), ("/rpc", "not an absolute http"),
    ("http:///rpc", "not an absolute http"),
    ("http://[::1%25é]:8000/", "characters a request line cannot carry"),
    ("http://[fe80::1%25a b]:8000/", "characters a request line cannot carry"),
])
def test_an_origin_needs_an_absolute_http_url_with_a_plain_host(url: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        http1.Origin.of(url)


async def test_a_connection_is_kept_alive_for_the_next_request(
        serve: Callable[..., Awaitable[Server]]) -> None:
    server = await serve(answering(reply(b"one"), reply(b"two")))
    async with pool() as client:
        first = await client.request(at(server.port), HEAD, b"{}", 100, soon())
        second = await client.request(at(server.port), HEAD, b"{}", 100, soon())
    assert (first, second) == (http1.Reply(200, b"one"), http1.Reply(200, b"two"))
    assert server.connections == 1


@pytest.mark.parametrize(("first", "connections"), [
    (reply(b"one", b"Connection: close\r\n"), 2),
    (b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\none", 2),
    (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\none", 1),
    (reply(b"one") + b"HTTP/1.1 200 OK\r\n", 2),  # bytes after the reply's end
    (reply(b"one") + reply(b"extra"), 2),  # a second whole reply in the same read
], ids=["close", "HTTP/1.0", "HTTP/1.0 keep-alive", "trailing bytes", "two replies"])
async def test_a_connection_is_reused_only_when_the_reply_allows_it(
        serve: Callable[..., Awaitable[Server]], first: bytes, connections: int) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        answers = [first, reply(b"two")] if server.connections == 1 else [reply(b"two")]
        for answer in answers:
            await read_request(reader)
            writer.write(answer)
            await writer.drain()
        await reader.read()

    server = await serve(script)
    async with pool() as client:
        assert (await client.request(at(server.port), HEAD, b"{}", 100, soon())).body == b"one"
        if connections == 2:
            # Dropped as the reply ends, or once the trailing bytes reach it idle.
            await until(lambda: client.open_connections == 0)
        assert (await client.request(at(server.port), HEAD, b"{}", 100, soon())).body == b"two"
    assert server.connections == connections


@pytest.mark.parametrize(("raw", "body"), [
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\none\r\n3\r\ntwo\r\n0\r\n\r\n",
     b"onetwo"),
    (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\nto the end", b"to the end"),
    (b"HTTP/1.1 100 Continue\r\n\r\n" + reply(b"final"), b"final"),
    (b"HTTP/1.1 204 No Content\r\n\r\n", b""),
], ids=["chunked", "until the end of the stream", "interim 100", "no content"])
async def test_replies_of_every_framing(serve: Callable[..., Awaitable[Server]], raw: bytes,
                                        body: bytes) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(raw)
        await writer.drain()
        if b"Content-Length" not in raw and b"chunked" not in raw and b" 204 " not in raw:
            writer.close()  # the end of the stream is the end of the body

    server = await serve(script)
    async with pool() as client:
        got = await client.request(at(server.port), HEAD, b"{}", 100, soon())
    assert got.body == body and got.status in (200, 204)


@pytest.mark.parametrize(("raw", "error", "words"), [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n", http1.ReplyTooLargeError, None),
    (b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 101, http1.ReplyTooLargeError, None),
    (b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * (http1.MAX_HEAD + 1), http1.InvalidReplyError,
     "head is longer"),
    (b"SSH-2.0-OpenSSH_9.2\r\n\r\n", http1.InvalidReplyError, "HTTP"),
    (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
     http1.InvalidReplyError, "switches protocols"),
    (reply(b"x" * 50)[:-10], http1.BrokenReplyError, "closed"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: a\r\n\r\n",
     http1.InvalidReplyError, "trailer"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: "
     + b"a" * (http1.MAX_HEAD + 200 + http1.FRAMING), http1.ReplyTooLargeError, None),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=" + b"e" * (
        http1.MAX_HEAD + 200 + http1.FRAMING), http1.ReplyTooLargeError, None),
], ids=["declared too large", "streamed too large", "endless head", "not HTTP", "upgrade",
        "broken off", "a trailer", "an endless trailer", "an endless chunk extension"])
async def test_bad_replies_say_what_was_wrong(serve: Callable[..., Awaitable[Server]],
                                              raw: bytes, error: type[Exception],
                                              words: str | None) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(raw)
        await writer.drain()
        if error is not http1.BrokenReplyError:
            await reader.read()  # until the client, refusing the reply, closes

    server = await serve(script)
    async with pool() as client:
        with pytest.raises(error, match=words):
            await client.request(at(server.port), HEAD, b"{}", 100, soon())
        await until(lambda: client.open_connections == 0)  # the aborted connection's end
        assert client.open_connections == 0


async def test_a_reset_does_not_end_a_body_that_runs_to_the_end_of_the_stream(
        serve: Callable[..., Awaitable[Server]]) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\n\r\npart of a bo")
        await writer.drain()
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        writer.transport.abort()  # RST, not FIN

    server = await serve(script)
    async with pool() as client:
        with pytest.raises(http1.BrokenReplyError):
            await client.request(at(server.port), HEAD, b"{}", 100, soon())


async def test_a_connection_that_closes_before_any_reply_is_lost_not_broken(
        serve: Callable[..., Awaitable[Server]]) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    server = await serve(script)
    async with pool() as client:
        with pytest.raises(http1.ConnectionLostError):
            await client.request(at(server.port), HEAD, b"{}", 100, soon())


async def test_a_kept_connection_the_server_closed_is_not_used_again(
        serve: Callable[..., Awaitable[Server]]) -> None:
    server = await serve(answering(reply(b"one"), then_close=True))
    async with pool() as client:
        await client.request(at(server.port), HEAD, b"{}", 100, soon())
        await until(lambda: client.open_connections == 0)  # the server's close reached it
        assert client.open_connections == 0
        await client.request(at(server.port), HEAD, b"{}", 100, soon())
    assert server.connections == 2


async def test_connections_stay_within_the_limit_and_waiters_get_the_freed_room(
        serve: Callable[..., Awaitable[Server]]) -> None:
    release = asyncio.Event()
    server = await serve(held_until(release))
    async with pool(limit=2) as client:
        calls = [asyncio.create_task(client.request(at(server.port), HEAD, b"{}", 100,
                                                    soon(5))) for _ in range(5)]
        await until(lambda: server.open_now == 2)
        assert server.open_now == 2 and client.open_connections == 2
        release.set()
        replies = await asyncio.gather(*calls)
    assert [r.body for r in replies] == [b"done"] * 5
    assert server.connections == 5 and server.most_open == 2


async def test_room_is_made_by_closing_an_idle_connection_of_another_origin(
        serve: Callable[..., Awaitable[Server]]) -> None:
    first = await serve(answering(reply(b"a")))
    second = await serve(answering(reply(b"b")))
    async with pool(limit=1) as client:
        assert (await client.request(at(first.port), HEAD, b"{}", 100, soon())).body == b"a"
        assert (await client.request(at(second.port), HEAD, b"{}", 100, soon())).body == b"b"
        assert client.open_connections == 1
    await until(lambda: first.open_now == 0)
    assert first.open_now == 0


async def test_a_waiter_gets_the_room_of_a_connection_that_goes_idle(
        serve: Callable[..., Awaitable[Server]]) -> None:
    """Limit 1: B waits while A's connection is busy; when A's is kept idle, B closes it
    and goes on, long before B's deadline."""
    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(0.2)
        writer.write(reply(b"a"))
        await writer.drain()
        await reader.read()

    first, second = await serve(slow), await serve(answering(reply(b"b")))
    async with pool(limit=1) as client:
        busy = asyncio.create_task(client.request(at(first.port), HEAD, b"{}", 100, soon()))
        await until(lambda: first.open_now == 1)  # A's connection is busy
        started = asyncio.get_running_loop().time()
        got = await client.request(at(second.port), HEAD, b"{}", 100, soon(5))
        assert got.body == b"b" and (await busy).body == b"a"
        assert asyncio.get_running_loop().time() - started < 2.5  # not its deadline
        assert client.open_connections == 1


async def test_a_waiter_is_not_passed_over_by_requests_that_keep_coming(
        serve: Callable[..., Awaitable[Server]]) -> None:
    """Limit 1: a run of requests to one origin, each sent as soon as the last is answered,
    leaves its connection idle only for an instant.  A request to another origin waiting
    for room takes it at the first such instant, not after the run."""
    busy = await serve(answering(*[reply(b"a")] * 200))
    other = await serve(answering(reply(b"b")))
    answered = 0
    under_way, served = asyncio.Event(), asyncio.Event()
    async with pool(limit=1) as client:
        async def run() -> None:
            nonlocal answered
            while answered < 200 and not served.is_set():
                await client.request(at(busy.port), HEAD, b"{}", 100, soon())
                answered += 1
                if answered == 2:
                    under_way.set()

        running = asyncio.create_task(run())
        await under_way.wait()
        before = answered
        got = await client.request(at(other.port), HEAD, b"{}", 100, soon())
        during = answered - before
        served.set()
        await running
    assert got.body == b"b"
    assert during <= 2  # passed over, it would have waited for the whole run


async def test_a_request_cancelled_as_its_connection_opens_frees_its_room_once(
        serve: Callable[..., Awaitable[Server]], monkeypatch: pytest.MonkeyPatch) -> None:
    server = await serve(answering(reply(b"ok")))
    made = http1.connection.Connection.connection_made
    tasks: list[asyncio.Task[http1.Reply]] = []

    def cancel_as_made(self: http1.connection.Connection,
                       transport: asyncio.BaseTransport) -> None:
        made(self, transport)
        tasks[0].cancel()  # lands while create_connection still awaits

    monkeypatch.setattr(http1.connection.Connection, "connection_made", cancel_as_made)
    async with pool(limit=2) as client:
        tasks.append(asyncio.create_task(
            client.request(at(server.port), HEAD, b"{}", 100, soon())))
        with pytest.raises(asyncio.CancelledError):
            await tasks[0]
        await until(lambda: client.open_connections == 0)
        assert client.open_connections == 0
        monkeypatch.undo()
        assert (await client.request(at(server.port), HEAD, b"{}", 100, soon())).body == b"ok"
        assert client.open_connections == 1


async def test_a_cancelled_waiter_passes_its_room_on(
        serve: Callable[..., Awaitable[Server]]) -> None:
    release = asyncio.Event()
    server = await serve(held_until(release))
    async with pool(limit=1) as client:
        holder = asyncio.create_task(client.request(at(server.port), HEAD, b"{}", 100, soon()))
        await until(lambda: server.open_now == 1)
        doomed = asyncio.create_task(client.request(at(server.port), HEAD, b"{}", 100, soon()))
        patient = asyncio.create_task(client.request(at(server.port), HEAD, b"{}", 100,
                                                     soon()))
        await until(lambda: client.waiting == 2)
        release.set()
        await holder
        doomed.cancel()  # woken first, cancelled before it could take the room
        assert (await patient).body == b"done"


async def test_names_are_resolved_once_within_their_time_to_live(
        serve: Callable[..., Awaitable[Server]]) -> None:
    server = await serve(answering(reply(b"one", b"Connection: close\r\n"), then_close=True))
    lookup = CountingLookup()
    async with pool(lookup=lookup) as client:
        for _ in range(2):
            await client.request(at(server.port, "bot.example"), HEAD, b"{}", 100, soon())
        with pytest.raises(http1.ConnectError) as refused:
            await client.request(at(server.port, "gone.invalid"), HEAD, b"{}", 100, soon())
    assert lookup.lookups == 2  # bot.example once, gone.invalid once
    assert isinstance(refused.value.os_error, socket.gaierror)


async def test_a_refused_connection_carries_the_os_error(unused_tcp_port: int) -> None:
    async with pool() as client:
        with pytest.raises(http1.ConnectError) as refused:
            await client.request(at(unused_tcp_port), HEAD, b"{}", 100, soon())
        assert isinstance(refused.value.os_error, ConnectionRefusedError)
        assert client.open_connections == 0


async def test_tls_with_a_trusted_certificate_and_refused_without(
        serve: Callable[..., Awaitable[Server]], tmp_path: Path) -> None:
    authority, cert, key = throwaway_ca(tmp_path)
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    server = await serve(answering(reply(b"secret")), tls=server_side)
    trusting = ssl.create_default_context(cafile=str(authority))
    async with pool(context=trusting) as client:
        got = await client.request(at(server.port, "localhost", tls=True), HEAD, b"{}", 100,
                                   soon())
    assert got.body == b"secret"
    async with pool() as client:  # the system's certificates do not know this one
        with pytest.raises(http1.ConnectError) as refused:
            await client.request(at(server.port, "localhost", tls=True), HEAD, b"{}", 100,
                                 soon())
    assert isinstance(refused.value.os_error, ssl.SSLCertVerificationError)

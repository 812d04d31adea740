"""The bot client's deadlines (merknera.http1): a reply not come by its deadline ends the
request and its connection; one that came while the platform's loop stalled is taken
(merknera.stalls); each test on asyncio's loop and on uvloop (see conftest.py)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field

import pytest

from tests.http1.support import HEAD, Server, at, pool, read_request, reply, soon
from tests.support import until


async def test_the_deadline_ends_the_request_and_its_connection(
        serve: Callable[..., Awaitable[Server]]) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\n")
        await writer.drain()
        server.closed.append(await reader.read() == b"")

    server = await serve(script)
    async with pool() as client:
        with pytest.raises(TimeoutError):
            await client.request(at(server.port), HEAD, b"{}", 100, soon(0.2))
        await until(lambda: client.open_connections == 0)
        assert client.open_connections == 0
    await until(lambda: len(server.closed) == 1)  # the server has seen the connection end
    assert server.closed == [True]


@dataclass
class Stall(asyncio.Protocol):
    """Blocks the loop for ``seconds`` inside an I/O callback (where a long callback or a
    full collection in the platform would), setting ``began`` first."""

    seconds: float
    began: threading.Event = field(default_factory=threading.Event)

    def data_received(self, data: bytes) -> None:
        self.began.set()
        time.sleep(self.seconds)


@contextlib.contextmanager
def threaded_server(answer: bool, when: threading.Event
                    ) -> Iterator[tuple[int, threading.Event, threading.Event]]:
    """A server on a thread of its own (it goes on while the test's loop is blocked): it
    reads one request and sets ``received``; once ``when`` is set it answers (if
    ``answer``); it closes the connection when the test sets ``finished``."""
    listener = socket.create_server(("127.0.0.1", 0))
    received, finished = threading.Event(), threading.Event()

    def serve_one() -> None:
        connection, _ = listener.accept()
        with connection:
            data = b""
            while not data.endswith(b"{}"):
                data += connection.recv(4096)
            received.set()
            when.wait(5)
            if answer:
                connection.sendall(reply(b"in time"))
            finished.wait(5)

    thread = threading.Thread(target=serve_one, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], received, finished
    finally:
        finished.set()
        listener.close()
        thread.join(5)


@pytest.mark.parametrize("answer", [True, False])
async def test_a_reply_that_came_while_the_loop_stalled_is_in_time(answer: bool) -> None:
    """The loop blocks past the deadline (the platform's own stall) while the reply comes
    and sits unread in the socket: it is read and taken, not timed out (uvloop runs due
    timers before it polls again); a reply that never came still times out."""
    stall = Stall(0.4)
    ours, theirs = socket.socketpair()
    with theirs, threaded_server(answer, stall.began) as (port, received, finished):
        transport, _ = await asyncio.get_running_loop().create_connection(
            lambda: stall, sock=ours)
        async with pool() as client:
            request = asyncio.ensure_future(
                client.request(at(port), HEAD, b"{}", 100, soon(0.2)))
            assert await asyncio.to_thread(received.wait, 5)
            theirs.send(b"stall")
            if answer:
                assert (await request).body == b"in time"
            else:
                with pytest.raises(TimeoutError):
                    await request
            finished.set()
        transport.close()

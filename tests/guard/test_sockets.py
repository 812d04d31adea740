"""ClientSocket: a client that does not read its socket is cut off before the platform
queues more than its share of memory for it."""

from __future__ import annotations

import asyncio

import aiohttp
from aiohttp import web
from pytest_aiohttp import AiohttpClient

from merknera.guard.sockets import ClientSocket


async def test_a_client_that_never_reads_is_cut_off(aiohttp_client: AiohttpClient) -> None:
    cut_off = asyncio.Event()
    most_queued: list[int] = []  # the bytes queued after each message offered
    frame = b'"' + b"x" * 65_000 + b'"'

    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        transport = request.transport
        assert transport is not None
        socket = ClientSocket(ws, "tester", transport.abort)
        for _ in range(10_000):
            socket.send(frame)
            most_queued.append(socket.queued_bytes)
            if socket.closed.is_set():
                cut_off.set()
                break
            await asyncio.sleep(0)
        await socket.finish()
        return ws

    app = web.Application()
    app.router.add_get("/", handler)
    client = await aiohttp_client(app)
    ws = await client.ws_connect("/")  # and never receive(): aiohttp stops reading
    await asyncio.wait_for(cut_off.wait(), 60)
    # The connection was aborted: reading now, the client finds it ended after what got
    # through, far less than all that was offered.
    frames = 0
    async with asyncio.timeout(60):
        while (await ws.receive()).type is aiohttp.WSMsgType.TEXT:
            frames += 1
    assert frames < len(most_queued) < 10_000


async def test_messages_and_the_close_reason_arrive_in_order(
        aiohttp_client: AiohttpClient) -> None:
    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        socket = ClientSocket(ws, "tester", lambda: None)
        socket.send({"n": 1})
        socket.send(b'{"n":2}')
        socket.close(4000, "r" * 200)
        socket.send({"n": 3})  # after the close: never sent
        await socket.finish()
        return ws

    app = web.Application()
    app.router.add_get("/", handler)
    client = await aiohttp_client(app)
    ws = await client.ws_connect("/")
    got = [await ws.receive_json(timeout=10), await ws.receive_json(timeout=10)]
    closing = await ws.receive(timeout=10)
    assert got == [{"n": 1}, {"n": 2}]
    assert closing.type is aiohttp.WSMsgType.CLOSE and ws.close_code == 4000
    assert len(str(closing.extra).encode()) <= 123

"""merknera_bots.launcher.register() against a tiny aiohttp server playing the platform."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from pytest_aiohttp import AiohttpServer

from merknera_bots.launcher import RegisterResult, RegistrationError, platform_rpc_url, register
from tests.support import free_port

GREETING = "Hello, tester (version: 1.0.0), good luck with Tic-Tac-Toe!"
SECRET = "ab" * 32

Reply = Callable[[dict[str, Any]], web.Response]


def _fake_platform(reply: Reply, seen: list[dict[str, Any]]) -> web.Application:
    async def rpc(request: web.Request) -> web.Response:
        call = await request.json()
        seen.append(call)
        return reply(call)

    app = web.Application()
    app.router.add_post("/rpc", rpc)
    return app


async def _register(server: TestServer, **overrides: Any) -> RegisterResult:
    kwargs: dict[str, Any] = {
        "token": "t0k3n", "botname": "tester", "botversion": "1.0.0", "game": "TICTACTOE",
        "rpcendpoint": "http://127.0.0.1:9999/rpc", "retry_for": 0.5,
    }
    kwargs.update(overrides)
    return await register(str(server.make_url("/")), **kwargs)


def _ok(call: dict[str, Any]) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "result": {"message": GREETING,
                                                           "secret": SECRET},
                              "id": call["id"]})


async def test_success_returns_the_secret(aiohttp_server: AiohttpServer) -> None:
    seen: list[dict[str, Any]] = []
    server = await aiohttp_server(_fake_platform(_ok, seen))
    result = await _register(server, website="https://example.org", description="d")
    assert result == RegisterResult(message=GREETING, secret=SECRET)
    [call] = seen
    assert call["jsonrpc"] == "2.0"
    assert call["method"] == "RegistrationService.Register"
    assert call["params"] == {
        "token": "t0k3n", "botname": "tester", "botversion": "1.0.0", "game": "TICTACTOE",
        "rpcendpoint": "http://127.0.0.1:9999/rpc", "programminglanguage": "Python",
        "website": "https://example.org", "description": "d",
    }
    assert "id" in call


async def test_a_1_0_style_success_without_secret(aiohttp_server: AiohttpServer) -> None:
    def merknera(call: dict[str, Any]) -> web.Response:
        return web.json_response({"result": {"message": GREETING}, "error": None,
                                  "id": call["id"]})

    server = await aiohttp_server(_fake_platform(merknera, []))
    assert await _register(server) == RegisterResult(message=GREETING, secret=None)


def _legacy_error(call: dict[str, Any]) -> web.Response:
    return web.json_response({"result": None, "error": 'Game "TICTACTOE" is not known',
                              "id": call["id"]})


def _v2_error(call: dict[str, Any]) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "error": {
        "code": -32002,
        "message": 'User with Token "t0k3n" is not currently registered with Merknera'},
        "id": call["id"]})


def _v2_error_with_data(call: dict[str, Any]) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "error": {
        "code": -32602, "message": "Invalid params", "data": "botname is missing"},
        "id": call["id"]})


def _garbage(call: dict[str, Any]) -> web.Response:
    return web.Response(status=500, text="<html>Internal Server Error</html>")


def _not_an_envelope(call: dict[str, Any]) -> web.Response:
    return web.json_response({"message": GREETING})


def _error_without_code(call: dict[str, Any]) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "error": {"text": "nope"}, "id": call["id"]})


def _wrong_id(call: dict[str, Any]) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "result": {"message": GREETING,
                                                           "secret": SECRET},
                              "id": "someone-else"})


def _result_without_message(call: dict[str, Any]) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "result": "ok", "id": call["id"]})


def _numeric_secret(call: dict[str, Any]) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "result": {"message": GREETING, "secret": 5},
                              "id": call["id"]})


def _a_list(call: dict[str, Any]) -> web.Response:
    return web.json_response([{"jsonrpc": "2.0", "result": {"message": GREETING},
                               "id": call["id"]}])


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # The platform's own words, as they are.
        (_legacy_error, 'Game "TICTACTOE" is not known'),
        (_v2_error, 'User with Token "t0k3n" is not currently registered with Merknera'),
        (_v2_error_with_data, "Invalid params: botname is missing"),
    ],
)
async def test_error_replies_raise_the_platforms_message(aiohttp_server: AiohttpServer,
                                                         reply: Reply, expected: str) -> None:
    server = await aiohttp_server(_fake_platform(reply, []))
    with pytest.raises(RegistrationError) as caught:
        await _register(server)
    assert str(caught.value) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (_garbage, "malformed reply from http://127.0.0.1:{port}/rpc (HTTP 500): '<html>"),
        (_not_an_envelope, "malformed reply from"),
        (_error_without_code, "malformed reply from"),
        (_wrong_id, "has id 'someone-else'"),
        (_result_without_message, "malformed reply from"),
        (_numeric_secret, "malformed reply from"),
        (_a_list, "malformed reply from"),
    ],
)
async def test_bad_replies_raise_a_clear_error(aiohttp_server: AiohttpServer, reply: Reply,
                                               expected: str) -> None:
    server = await aiohttp_server(_fake_platform(reply, []))
    with pytest.raises(RegistrationError) as caught:
        await _register(server)
    assert expected.format(port=server.port) in str(caught.value)


async def test_retries_until_the_platform_listens(aiohttp_server: AiohttpServer) -> None:
    port = free_port()
    seen: list[dict[str, Any]] = []

    async def start_late() -> TestServer:
        await asyncio.sleep(0.3)
        return await aiohttp_server(_fake_platform(_ok, seen), port=port)

    starter = asyncio.create_task(start_late())
    result = await register(f"http://127.0.0.1:{port}", token="t", botname="b",
                            botversion="1", game="TICTACTOE",
                            rpcendpoint="http://127.0.0.1:1/rpc", retry_for=10)
    await starter
    assert result.secret == SECRET
    assert len(seen) == 1


async def test_gives_up_on_an_unreachable_platform() -> None:
    port = free_port()
    with pytest.raises(RegistrationError, match="cannot reach the platform"):
        await register(f"http://127.0.0.1:{port}", token="t", botname="b", botversion="1",
                       game="TICTACTOE", rpcendpoint="http://127.0.0.1:1/rpc", retry_for=0.2)


def test_platform_rpc_url() -> None:
    assert platform_rpc_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080/rpc"
    assert platform_rpc_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/rpc"
    assert platform_rpc_url("http://h/rpc") == "http://h/rpc"
    assert platform_rpc_url("http://h/merknera/") == "http://h/merknera/rpc"



def _limited_then_ok(retry_after: str) -> Reply:
    calls = 0

    def reply(call: dict[str, Any]) -> web.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return web.json_response(
                {"jsonrpc": "2.0", "id": call["id"], "error": {
                    "code": -32008, "message": "too many registrations; try again in 1 s"}},
                status=429, headers={"Retry-After": retry_after})
        return _ok(call)

    return reply


async def test_a_429_is_waited_out_within_retry_for(aiohttp_server: AiohttpServer) -> None:
    seen: list[dict[str, Any]] = []
    server = await aiohttp_server(_fake_platform(_limited_then_ok("1"), seen))
    result = await _register(server, retry_for=5.0)
    assert result.secret == SECRET and len(seen) == 2


async def test_a_429_beyond_retry_for_is_the_platforms_refusal(
        aiohttp_server: AiohttpServer) -> None:
    seen: list[dict[str, Any]] = []
    server = await aiohttp_server(_fake_platform(_limited_then_ok("30"), seen))
    with pytest.raises(RegistrationError, match="too many registrations"):
        await _register(server, retry_for=5.0)
    assert len(seen) == 1

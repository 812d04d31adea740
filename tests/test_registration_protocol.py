"""The ``protocol`` param of ``RegistrationService.Register``: which protocols, which games,
which endpoints, and that a registered version keeps the protocol it was registered with.

Every refusal is checked for its JSON-RPC error code, a message naming the problem, and
that it stored nothing (every table's row count, :meth:`tests.support.Arena.counts`).
"""

from __future__ import annotations

from typing import Any

import pytest
from pytest_aiohttp import AiohttpServer

from merknera.protocol import jsonrpc
from merknera.protocol.bot_protocols import BotProtocol
from tests.support import Arena, InfoBot, until

NOWHERE = "http://127.0.0.1:9"
"""A base URL nothing listens on (the discard port of loopback)."""


async def register(arena: Arena, name: str, endpoint: str, *, protocol: object = None,
                   game: str = "SQUELCH", version: str = "1.0") -> dict[str, Any]:
    """Register a bot (with ``protocol`` unless None) and return the JSON-RPC reply."""
    params: dict[str, object] = {"token": arena.token, "botname": name, "botversion": version,
                                 "game": game, "rpcendpoint": endpoint}
    if protocol is not None:
        params["protocol"] = protocol
    return await arena.rpc("RegistrationService.Register", params)


def refusal(reply: dict[str, Any]) -> tuple[int, str]:
    """The code and message of a refused registration (fails the test for a result)."""
    assert "error" in reply and "result" not in reply, reply
    return reply["error"]["code"], reply["error"]["message"]


async def shown(arena: Arena, bot_id: int) -> dict[str, Any]:
    """A bot as ``/api/bots/{id}`` shows it."""
    response = await arena.client.get(f"/api/bots/{bot_id}")
    assert response.status == 200, await response.text()
    found = await response.json()
    assert isinstance(found, dict)
    return found


async def serve(aiohttp_server: AiohttpServer, bot: InfoBot) -> str:
    """Serve a REST bot; returns its base URL."""
    server = await aiohttp_server(bot.app())
    return str(server.make_url(""))


async def named_itself(arena: Arena, bot_id: int, name: str) -> None:
    """Wait until the bot's first ping has been answered and its name stored (so that no
    write of the platform's is still under way when the tables are counted)."""
    async def stored() -> bool:
        return bool((await shown(arena, bot_id))["self_name"] == name)

    await until(stored)


# --- protocols the platform does not speak ----------------------------------------------------


@pytest.mark.parametrize("protocol", ["grpc", "jsonrpc2", "squelch"])
async def test_an_unknown_protocol_is_refused(arena: Arena, protocol: str) -> None:
    before = await arena.counts()
    code, message = refusal(await register(arena, "stranger", NOWHERE, protocol=protocol))
    assert code == jsonrpc.INVALID_PARAMS
    assert message.startswith('The param "protocol" must be one of ')
    assert all(f'"{known.value}"' in message for known in BotProtocol)
    assert message.endswith(f"not {protocol!r}")
    assert await arena.counts() == before


NOT_STRINGS = [(7, "7"), (True, "true"), (["squelch-rest"], '["squelch-rest"]'),
               ({"name": "squelch-rest"}, '{"name":"squelch-rest"}')]
NOT_STRING_IDS = ["a number", "a boolean", "a list", "an object"]


@pytest.mark.parametrize(("protocol", "as_json"), NOT_STRINGS, ids=NOT_STRING_IDS)
async def test_a_protocol_that_is_not_a_string_is_refused(arena: Arena, protocol: object,
                                                          as_json: str) -> None:
    before = await arena.counts()
    code, message = refusal(await register(arena, "stranger", NOWHERE, protocol=protocol))
    assert code == jsonrpc.INVALID_PARAMS
    assert message.startswith('The param "protocol" must be a string, got ')
    assert as_json in message
    assert await arena.counts() == before


@pytest.mark.parametrize(("protocol", "as_json"), NOT_STRINGS, ids=NOT_STRING_IDS)
async def test_the_refusal_quotes_the_value_as_json_not_as_python_bytes(
        arena: Arena, protocol: object, as_json: str) -> None:
    _, message = refusal(await register(arena, "stranger", NOWHERE, protocol=protocol))
    assert message == f'The param "protocol" must be a string, got {as_json!r}'


async def test_a_rest_bot_may_play_only_the_games_its_protocol_carries(arena: Arena) -> None:
    before = await arena.counts()
    code, message = refusal(await register(arena, "rester", NOWHERE, protocol="squelch-rest",
                                           game="TICTACTOE"))
    assert (code, message) == (
        jsonrpc.INVALID_PARAMS,
        'A bot of protocol "squelch-rest" can play only SQUELCH, not TICTACTOE')
    assert await arena.counts() == before


# --- a REST bot's endpoint is a base URL ------------------------------------------------------


@pytest.mark.parametrize("endpoint", [
    f"{NOWHERE}/base?k=v", f"{NOWHERE}/base#top", f"{NOWHERE}/?k=v#top", f"{NOWHERE}?k=v",
], ids=["a query", "a fragment", "both", "a query without a path"])
async def test_a_rest_endpoint_with_a_query_or_a_fragment_is_refused(arena: Arena,
                                                                     endpoint: str) -> None:
    before = await arena.counts()
    code, message = refusal(await register(arena, "rester", endpoint, protocol="squelch-rest"))
    assert (code, message) == (
        jsonrpc.ENDPOINT_REFUSED,
        'The rpcendpoint of a "squelch-rest" bot is its base URL, without a query (?...) '
        "or a fragment (#...)")
    assert await arena.counts() == before


@pytest.mark.parametrize("tail", ["/base?", "/base#"], ids=["an empty query",
                                                            "an empty fragment"])
async def test_a_rest_endpoint_with_an_empty_query_or_fragment_is_refused(
        arena: Arena, aiohttp_server: AiohttpServer, tail: str) -> None:
    """A bare "?" or "#" would swallow the API's paths as a query or a fragment does."""
    rest = InfoBot()
    base = await serve(aiohttp_server, rest)
    before = await arena.counts()
    reply = await register(arena, "rester", base.rstrip("/") + tail, protocol="squelch-rest")
    assert refusal(reply)[0] == jsonrpc.ENDPOINT_REFUSED
    assert await arena.counts() == before
    assert rest.heard == []


async def test_a_json_rpc_endpoint_may_have_a_query(arena: Arena) -> None:
    """The base-URL rule is the REST protocol's: a JSON-RPC bot is called at its endpoint
    as given, a query and all."""
    reply = await register(arena, "rpcer", f"{NOWHERE}/rpc?k=v")
    assert "result" in reply, reply
    assert (await shown(arena, 1))["protocol"] == "jsonrpc"


# --- a version keeps its protocol -------------------------------------------------------------


async def test_a_json_rpc_version_may_not_come_back_speaking_rest(arena: Arena) -> None:
    assert "result" in await register(arena, "switcher", f"{NOWHERE}/rpc")
    before = await arena.counts()
    code, message = refusal(await register(arena, "switcher", NOWHERE,
                                           protocol="squelch-rest"))
    assert (code, message) == (
        jsonrpc.NOT_ALLOWED,
        '"switcher" (version: 1.0) speaks protocol "jsonrpc", not "squelch-rest"; register '
        "a new version to change its protocol")
    assert await arena.counts() == before
    bot = await shown(arena, 1)
    assert (bot["protocol"], bot["status"]) == ("jsonrpc", "ONLINE")


async def test_a_rest_version_may_not_come_back_speaking_json_rpc(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    rest = InfoBot(name="switcher v1")
    base = await serve(aiohttp_server, rest)
    assert "result" in await register(arena, "switcher", base, protocol="squelch-rest")
    await named_itself(arena, 1, "switcher v1")
    pings = rest.pings()
    before = await arena.counts()
    code, message = refusal(await register(arena, "switcher", f"{base}/rpc"))
    assert (code, message) == (
        jsonrpc.NOT_ALLOWED,
        '"switcher" (version: 1.0) speaks protocol "squelch-rest", not "jsonrpc"; register '
        "a new version to change its protocol")
    assert await arena.counts() == before
    bot = await shown(arena, 1)
    assert (bot["protocol"], bot["self_name"]) == ("squelch-rest", "switcher v1")
    # The refused registration changed nothing the platform calls either: it is pinged
    # over REST at the base URL it was registered with.
    assert await arena.platform.scheduler.arena.presence.ping(1)
    assert rest.pings() == pings + 1
    assert all(path == "/bot/info" for _, path in rest.heard)


async def test_a_new_version_may_change_the_protocol(
        arena: Arena, aiohttp_server: AiohttpServer) -> None:
    assert "result" in await register(arena, "switcher", f"{NOWHERE}/rpc")
    base = await serve(aiohttp_server, InfoBot(name="switcher v2"))
    reply = await register(arena, "switcher", base, protocol="squelch-rest", version="2.0")
    assert "A new version of your bot has been registered" in reply["result"]["message"]
    await named_itself(arena, 2, "switcher v2")
    assert [(await shown(arena, bot_id))["protocol"] for bot_id in (1, 2)] == [
        "jsonrpc", "squelch-rest"]


# --- how the protocol may be spelt ------------------------------------------------------------


@pytest.mark.parametrize("spelt", ["SQUELCH-REST", "Squelch-Rest", "  squelch-rest  "])
async def test_the_protocol_is_read_in_any_case(arena: Arena, aiohttp_server: AiohttpServer,
                                                spelt: str) -> None:
    """The param is lower-cased (and trimmed): the bot speaks REST, stored as
    ``squelch-rest``, and the same version registered again in lower case is the same
    protocol, not another."""
    rest = InfoBot(name="shouter")
    base = await serve(aiohttp_server, rest)
    reply = await register(arena, "shouter", base, protocol=spelt)
    assert "result" in reply, reply
    await named_itself(arena, 1, "shouter")
    assert (await shown(arena, 1))["protocol"] == "squelch-rest"
    assert rest.heard[0] == ("GET", "/bot/info")  # called over REST, at once
    again = await register(arena, "shouter", base, protocol="squelch-rest")
    assert "is already registered" in again["result"]["message"]
    back = await register(arena, "shouter", base, protocol=spelt.lower())
    assert "result" in back, back


@pytest.mark.parametrize("spelt", [None, "", "   ", "JSONRPC", "JsonRpc"],
                         ids=["missing", "empty", "spaces", "upper case", "mixed case"])
async def test_json_rpc_is_the_default_and_read_in_any_case(arena: Arena,
                                                            spelt: str | None) -> None:
    reply = await register(arena, "plain", f"{NOWHERE}/rpc", protocol=spelt,
                           game="TICTACTOE")
    assert "result" in reply, reply
    bot = await shown(arena, 1)
    assert (bot["protocol"], bot["self_name"]) == ("jsonrpc", None)


@pytest.mark.parametrize("protocol", [p.value for p in BotProtocol if p.connects])
async def test_a_connecting_protocol_registers_at_its_listener_not_here(
        arena: Arena, protocol: str) -> None:
    before = await arena.counts()
    code, message = refusal(await register(arena, "client", NOWHERE, protocol=protocol,
                                           game="NUMBERWANG"))
    assert code == jsonrpc.INVALID_PARAMS
    assert message == (f'A bot of protocol "{protocol}" connects to the platform and '
                       "registers at its Battlebot listener, not here (see the README)")
    assert await arena.counts() == before

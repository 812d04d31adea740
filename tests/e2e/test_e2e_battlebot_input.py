"""Bad input at the Battlebot listener: refused registrations, bad first messages, frames
over the cap, a flood of messages, and 1,000 sockets that never log in while a game is
played.  The platform is a real process; the probes are WebSocket and HTTP clients in the
test, some of them from other loopback addresses (each address is a client of its own
to the platform's per-client limits)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from tests.e2e.harness import E2E
from tests.support.battlebot import run_clients, start_listener

IDLE_SOCKETS = 1000
IDLE_ADDRESSES = 16
"""Loopback addresses the idle sockets come from: 63 each, under the 64 a client may hold."""


@contextlib.asynccontextmanager
async def _from(address: str) -> AsyncIterator[aiohttp.ClientSession]:
    """An HTTP session whose connections come from ``address``."""
    connector = aiohttp.TCPConnector(local_addr=(address, 0), limit=0)
    async with aiohttp.ClientSession(connector=connector,
                                     timeout=aiohttp.ClientTimeout(total=30)) as session:
        yield session


async def _first_reply(session: aiohttp.ClientSession, url: str,
                       frame: str | bytes) -> tuple[Any, int | None]:
    """Connect, send ``frame`` at once (as a GraphQL-era client speaks first), and read
    the reply and the close code."""
    async with session.ws_connect(url) as ws:
        if isinstance(frame, bytes):
            await ws.send_bytes(frame)
        else:
            await ws.send_str(frame)
        reply = await ws.receive(timeout=10)
        closing = await ws.receive(timeout=10)
        assert closing.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
        return json.loads(reply.data), ws.close_code


async def test_bad_first_messages_and_large_frames_are_refused(e2e: E2E) -> None:
    url = await start_listener(e2e, battlebot_max_message="2048")
    probes: list[tuple[str | bytes, str]] = [
        (b"\x00\x01binary", "a login is a JSON text frame"),
        ("{not json", "the login is not JSON"),
        (json.dumps({"name": "x", "password": "y", "gameType": "NUMBERWANG", "admin": True}),
         "unknown: 'admin'"),
        (json.dumps({"name": "x", "password": "y", "gameType": "CHESS"}),
         "there is no game 'CHESS'"),
        (json.dumps(["a", "list"]), "a login is a JSON object"),
        # A lone surrogate in the name used to raise in the login, closing with 1000.
        ('{"name": "\\ud800", "password": "y", "gameType": "NUMBERWANG"}',
         "the login is not JSON: it holds an unpaired UTF-16 surrogate escape"),
        ('{"name": "x", "name": "y", "password": "y", "gameType": "NUMBERWANG"}',
         'the login is not JSON: the member name "name" is given twice'),
    ]
    for frame, why in probes:
        reply, code = await _first_reply(e2e.session, url, frame)
        assert reply["authentication"] == "failed" and why in reply["error"], (frame, reply)
        assert code == 1008
    async with e2e.session.ws_connect(url) as ws:
        await ws.send_str(json.dumps({"padding": "x" * 4096}))
        message = await ws.receive(timeout=10)
        assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
        assert ws.close_code == 1009  # "message too big"
    assert not e2e.read_db("SELECT id FROM bots")


async def _post(session: aiohttp.ClientSession, url: str, body: Any) -> tuple[int, Any]:
    async with session.post(url, json=body) as response:
        return response.status, await response.json()


async def test_registrations_refused_with_battlebots_messages(e2e: E2E) -> None:
    url = await start_listener(e2e)
    token = await e2e.add_user("account")
    await e2e.start_bot("perfect", "Taken", token, module="merknera_bots.noughtsandcrosses")
    session = e2e.session
    refusals = [
        ("/bots/chess", {"bot_id": "a", "owner": "b"}, "Game not recognised"),
        ("/bots/numberwang", {"owner": "b"}, "No ID set"),
        ("/bots/numberwang", {"bot_id": "a"}, "No owner set"),
        ("/bots/numberwang", {"bot_id": "a", "owner": "b", "x": 1}, "Unknown keys: x"),
        # One namespace with every bot: a JSON-RPC bot's name is taken.
        ("/bots/numberwang", {"bot_id": "Taken", "owner": "b"},
         "Bot already registered with that name"),
        ("/bots/numberwang", {"bot_id": "TAKEN", "owner": "b"}, 'too like "Taken"'),
        ("/bots/numberwang", {"bot_id": "a\u202eb", "owner": "b"}, "formatting character"),
        # One limit on every name, the owner's too.
        ("/bots/numberwang", {"bot_id": "x" * 60_001, "owner": "b"},
         "The bot name is 60001 characters long; at most 100 are allowed"),
        ("/bots/numberwang", {"bot_id": "a", "owner": "o" * 101},
         "The owner name is 101 characters long; at most 100 are allowed"),
    ]
    for path, body, why in refusals:
        status, answer = await _post(session, url + path, body)
        assert status == 400 and why in answer["error"], (path, body, answer)
    status, answer = await _post(session, url + "/bots/numberwang", [1])
    assert status == 400 and answer == {"error": "The body must be a JSON object"}
    async with session.get(url + "/no/such/path") as response:
        assert response.status == 404 and "error" in await response.json()

    mutation = ("mutation($n: ID!) { registerBot(gameType: NUMBERWANG, name: $n, "
                "owner: \"o\") { password } }")
    for query, variables, why in [
            ("mutation { registerBot(", {}, "Syntax Error"),
            ("mutation { registerBot(gameType: CHESS, name: \"a\", owner: \"o\") "
             "{ password } }", {}, "CHESS"),
            (mutation, {"n": "Taken"}, "Bot already registered with that name"),
            (mutation, {"n": "x" * 60_001}, "The bot name is 60001 characters long"),
            ("{ bots(gameType: NUMBERWANG) { name password } }", {}, "password")]:
        status, answer = await _post(session, url + "/graphql",
                                     {"query": query, "variables": variables})
        assert status == 200 and why in json.dumps(answer["errors"]), (query, answer)
    # One registration per request, whatever the aliases.
    status, answer = await _post(session, url + "/graphql", {"query": (
        "mutation { a: registerBot(gameType: NUMBERWANG, name: \"x1\", owner: \"o\") "
        "{ password } b: registerBot(gameType: NUMBERWANG, name: \"x2\", owner: \"o\") "
        "{ password } }")})
    assert status == 200 and "one field at its root" in answer["errors"][0]["message"]
    status, answer = await _post(session, url + "/graphql",
                                 {"query": mutation, "variables": {"n": "fresh"}})
    assert status == 200 and len(answer["data"]["registerBot"]["password"]) == 64
    # An owner's name is its own: it takes nothing from the account of the same name.
    status, answer = await _post(session, url + "/bots/numberwang",
                                 {"bot_id": "owned", "owner": "account"})
    assert status == 201
    names = {row["name"]: (row["protocol"], row["owner"]) for row in e2e.read_db(
        "SELECT bots.*, users.name AS owner FROM bots JOIN users ON users.id = bots.user_id")}
    assert names == {"Taken": ("jsonrpc", "account"),
                     "fresh": ("battlebot-graphql", "o (Battlebot)"),
                     "owned": ("battlebot-salt", "account (Battlebot)")}
    async with session.get(url + "/bots/numberwang") as response:
        assert {b["bot_id"]: b["owner"] for b in await response.json()} == {
            "fresh": "o", "owned": "account"}


async def test_registrations_from_one_address_are_limited(e2e: E2E) -> None:
    url = await start_listener(e2e, registration_burst="3", registration_interval="600")
    async with _from("127.0.0.6") as session:
        answers = [await _post(session, url + "/bots/numberwang",
                               {"bot_id": f"r{i}", "owner": "o"}) for i in range(4)]
        graphql = await _post(session, url + "/graphql", {"query": (
            "mutation { registerBot(gameType: NUMBERWANG, name: \"r9\", owner: \"o\") "
            "{ password } }")})
    assert [status for status, _ in answers] == [201, 201, 201, 429]
    assert "Too many registrations from your address" in answers[-1][1]["error"]
    assert "Too many registrations" in graphql[1]["errors"][0]["message"]
    # Another address is not held up.
    status, _ = await _post(e2e.session, url + "/bots/numberwang", {"bot_id": "r5", "owner": "o"})
    assert status == 201


async def test_a_flood_of_messages_closes_the_socket(e2e: E2E) -> None:
    url = await start_listener(e2e, request_burst="30", request_rate="5")
    async with _from("127.0.0.5") as session:
        status, answer = await _post(session, url + "/graphql", {"query": (
            "mutation { registerBot(gameType: NUMBERWANG, name: \"flood\", owner: \"o\") "
            "{ password } }")})
        assert status == 200, answer
        password = answer["data"]["registerBot"]["password"]
        async with session.ws_connect(url) as ws:
            await ws.send_json({"name": "flood", "password": password,
                                "gameType": "NUMBERWANG"})
            assert (await ws.receive_json(timeout=10))["authentication"] == "OK"
            with contextlib.suppress(ConnectionError):
                for _ in range(100):
                    await ws.send_json({"n": 1})
            last: Any = None
            while True:
                message = await ws.receive(timeout=10)
                if message.type is not aiohttp.WSMsgType.TEXT:
                    break
                last = json.loads(message.data)
            assert last == {"error": "too many messages from your address"}
            assert ws.close_code == 1008


async def test_a_thousand_sockets_that_never_log_in_do_not_stop_a_game(e2e: E2E) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    url = await start_listener(e2e, battlebot_login_timeout="8", battlebot_match_wait="60",
                               battlebot_first_message_wait="0.5")
    sessions = [aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(local_addr=(f"127.0.0.{10 + i}", 0), limit=0),
        timeout=aiohttp.ClientTimeout(total=60)) for i in range(IDLE_ADDRESSES)]
    try:
        opened = await asyncio.gather(*(
            sessions[i % IDLE_ADDRESSES].ws_connect(url) for i in range(IDLE_SOCKETS)))
        runs = await run_clients(e2e, url, [("busy-a", {"era": "a"}),
                                            ("busy-c", {"era": "c"})])
        assert [run.code for run in runs.values()] == [0, 0]
        assert {run.results[0]["reason"] for run in runs.values()} == {"complete"}
        # Each idle socket was sent a salt, then told that it never logged in, and closed.
        outcomes = await asyncio.gather(*(_idle_end(ws) for ws in opened))
        assert outcomes == [("salt", "no login within 8 s", 1008)] * IDLE_SOCKETS
    finally:
        await asyncio.gather(*(session.close() for session in sessions))
    assert len(e2e.read_db("SELECT id FROM games")) == 1
    assert e2e.platform is not None and e2e.platform.child.running


async def _idle_end(ws: aiohttp.ClientWebSocketResponse) -> tuple[str, str, int | None]:
    salt = await ws.receive_json(timeout=30)
    refusal = await ws.receive_json(timeout=30)
    closing = await ws.receive(timeout=30)
    assert closing.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
    return ("salt" if set(salt) == {"salt"} else repr(salt), refusal.get("error", ""),
            ws.close_code)


async def _register_graphql(session: aiohttp.ClientSession, url: str, name: str) -> str:
    status, answer = await _post(session, url + "/graphql", {"query": (
        f'mutation {{ registerBot(gameType: NOUGHTS_AND_CROSSES, name: "{name}", '
        'owner: "o") { password } }')})
    assert status == 200, answer
    password: str = answer["data"]["registerBot"]["password"]
    return password


async def test_a_turn_the_platform_cannot_write_again_is_its_senders_fault(e2e: E2E) -> None:
    # Keys equal but for case, with a lone surrogate: the fault's message could not be
    # written to the bot's log, the runner failed, and the game ended ABORTED with no
    # result (a client could cancel any game it was losing).
    url = await start_listener(e2e, battlebot_match_wait="60",
                               battlebot_graphql_turn_limit="10")
    turn = '{"x\\ud800": 1, "X\\ud800": 2}'
    async with e2e.session.ws_connect(url) as shifty, e2e.session.ws_connect(url) as steady:
        for ws, name in ((shifty, "shifty"), (steady, "steady")):  # the earlier moves first
            password = await _register_graphql(e2e.session, url, name)
            await ws.send_json({"name": name, "password": password,
                                "gameType": "NOUGHTS_AND_CROSSES"})
            assert (await ws.receive_json(timeout=30))["authentication"] == "OK"
        update = await shifty.receive_json(timeout=30)
        assert update["state"]["waitingFor"] == ["shifty"], update
        for _ in range(3):
            await shifty.send_str(turn)
            update = await shifty.receive_json(timeout=30)
            assert update["turn"]["valid"] is False, update
            assert "unpaired UTF-16 surrogate" in update["turn"]["error"], update
        while update["state"]["result"] is None:
            update = await shifty.receive_json(timeout=30)
        assert update["state"]["result"]["victor"] == "steady", update

    [game] = e2e.read_db("SELECT id, outcome, reason, detail FROM games")
    assert (game["outcome"], game["reason"]) == ("WIN", "STRIKES"), tuple(game)
    faults = e2e.read_db("SELECT fault, fault_detail FROM moves WHERE game_id = ? AND fault "
                         "IS NOT NULL", (game["id"],))
    assert [row["fault"] for row in faults] == ["MALFORMED_REPLY"] * 3
    logged = e2e.read_db("SELECT message FROM bot_log JOIN bots ON bots.id = bot_log.bot_id "
                         "WHERE bots.name = 'shifty' AND message LIKE 'Fault%'")
    assert len(logged) == 3 and "unpaired UTF-16 surrogate" in logged[0]["message"]


async def test_costly_graphql_documents_are_refused_before_their_cost(e2e: E2E) -> None:
    # The documents: 5,950 __typename (64 KiB, 1.2-2.7 s of validation each, 8 of
    # them froze every listener for 24.5 s) and 80 x 80 aliased introspection (3.3 KB, an
    # 8.3 MB answer), a fragment bomb and a fragment never spread; all at once from one
    # address, while another client registers with the document Apollo sends.  Each is
    # refused for what makes it costly, before the costly step (bench/costly_requests.py
    # gives the other client's latency).
    url = await start_listener(e2e, request_burst="100", request_rate="50")
    typenames = "{" + " ".join(["__typename"] * 5950) + "}"
    types = " ".join(f"a{i}: types {{ ...F }}" for i in range(80))
    fields = " ".join(f"b{j}: fields {{ name }}" for j in range(80))
    introspection = f"{{ __schema {{ {types} }} }} fragment F on __Type {{ {fields} }}"
    bomb = "\n".join(["query { bots(gameType: NUMBERWANG) { ...F0 } }",
                      *(f"fragment F{i} on Bot {{ ...F{i + 1} ...F{i + 1} }}"
                        for i in range(7)), "fragment F7 on Bot { name }"])
    unused = "{ gameTypes } fragment F on Query { " + " ".join(["__typename"] * 80) + " }"
    costly = [(typenames, "The document is 65451 characters long; at most 4096 are read"),
              (introspection, "Document contains more than 100 tokens"),
              (bomb, "The document has 129 fields (fragments counted where spread)"),
              (unused, "The document has 81 fields (fragments counted where spread)"),
              ("{ __schema { types { name } } }", "Introspection (__schema) is off here")]
    apollo = ("mutation Register($gameType: GameType!, $name: ID!, $owner: String!) {\n"
              "  registerBot(gameType: $gameType, name: $name, owner: $owner) {\n"
              "    password\n    bot { name owner gameType dateRegistered __typename }\n"
              "    __typename\n  }\n}")
    async with _from("127.0.0.7") as attacker:
        refused = await asyncio.gather(*(
            _post(attacker, url + "/graphql", {"query": query})
            for query, _ in costly for _ in range(8)))
        registered = await _post(e2e.session, url + "/graphql", {
            "query": apollo, "variables": {"gameType": "NUMBERWANG", "name": "apollo",
                                           "owner": "o"}, "operationName": "Register"})
    for (status, answer), (query, why) in zip(refused, [c for c in costly for _ in range(8)],
                                               strict=True):
        assert status == 200 and answer.get("data") is None, answer
        assert why in answer["errors"][0]["message"], (query[:40], answer)
    status, answer = registered
    assert status == 200 and "errors" not in answer, answer
    assert answer["data"]["registerBot"]["bot"] == {
        "name": "apollo", "owner": "o", "gameType": "NUMBERWANG",
        "dateRegistered": answer["data"]["registerBot"]["bot"]["dateRegistered"],
        "__typename": "Bot"}
    async with e2e.session.get(url + "/graphql") as response:
        assert response.status == 200 and response.content_type == "text/plain"
        assert "registerBot(gameType: GameType!, name: ID!, owner: String!)" in \
            await response.text()

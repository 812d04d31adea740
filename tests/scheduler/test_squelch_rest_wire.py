"""A bot of the Squelchbot REST API (``protocol: "squelch-rest"``) is called exactly as the
spec says: the same values a JSON-RPC bot in its seat is sent, the ids in the path, every
call signed, every call of the game routed (see tests/support/squelch_rest.py)."""

from __future__ import annotations

from pathlib import Path

from pytest_aiohttp import AiohttpServer

from merknera.botclient import BotClient
from merknera.config import Config
from merknera.games import get_game
from merknera.games.squelch import SquelchCall
from merknera.seats import Notifier
from merknera.seats.squelch_rest import SquelchRestCarrier
from tests.conftest import ArenaFactory
from tests.support.squelch_rest import (  # noqa: F401 (same_short_matches: a fixture)
    ROUTES,
    RPC_ONLY,
    SELF_NAME,
    RestBot,
    RpcBot,
    api,
    by_match,
    exact,
    move_log,
    read_call,
    same_short_matches,
    seat,
    without,
)

# --- the exact wire ----------------------------------------------------------------------------


async def test_a_rest_bot_is_called_exactly_as_the_spec_says(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer, tmp_path: Path) -> None:
    # Platform A: a JSON-RPC bot ("rpc") against the REST bot ("rest").
    arena = await make_arena(db=str(tmp_path / "rest.db"))
    rpc, rest = RpcBot(), RestBot()
    await seat(arena, aiohttp_server, "rpc", rpc)
    secret = await seat(arena, aiohttp_server, "rest", rest)
    await arena.settle(60.0)
    # Platform B: the same two matches, with a JSON-RPC bot that plays alike in rest's seat.
    twin_arena = await make_arena(db=str(tmp_path / "twin.db"))
    twin_rpc, twin = RpcBot(), RpcBot()
    await seat(twin_arena, aiohttp_server, "rpc", twin_rpc)
    await seat(twin_arena, aiohttp_server, "rest", twin)
    await twin_arena.settle(60.0)

    games = {match: await arena.game(match) for match in (1, 2)}
    for match, game in games.items():
        assert (game["status"], game["reason"]) == ("FINISHED", "NORMAL"), game["detail"]
        assert [m for m in game["moves"] if m["fault"]] == []
        assert move_log(game) == move_log(await twin_arena.game(match))
    # Registration asks the bot its name first; that GET has no body, and it is the only GET.
    first = rest.heard[0]
    assert (first.method, first.path, first.body) == ("GET", "/bot/info", b"")
    assert {(h.method, h.path) for h in rest.heard if h.method != "PUT"} == {("GET",
                                                                             "/bot/info")}
    # Every request is signed with the secret Register returned, over the exact body.
    assert all(heard.signed_by(secret) for heard in rest.heard)
    assert not any(heard.signed_by(secret + "0") for heard in rest.heard)

    puts = [heard for heard in rest.heard if heard.method == "PUT"]
    for heard in puts:
        call = read_call(heard)
        keys = ROUTES[call.name][1]
        assert call.body is not None and set(call.body) == keys, heard
        assert heard.headers.get("Content-Type") == "application/json"

    # Call for call, the REST bot was sent what the JSON-RPC bot in its seat was sent, the
    # ids moved from the params into the path (JSON-RPC's own params aside).
    rest_calls = by_match([(c.name, c.as_params()) for c in rest.calls()])
    twin_calls = by_match([(name, without(params, *RPC_ONLY))
                           for name, params in twin.squelch_calls()])
    assert set(rest_calls) == {1, 2}
    assert {match: [(name, exact(params)) for name, params in calls]
            for match, calls in rest_calls.items()} == {
        match: [(name, exact(params)) for name, params in calls]
        for match, calls in twin_calls.items()}
    for mine in rest_calls.values():
        assert {name for name, _ in mine} == set(ROUTES)

    rpc_calls = by_match(rpc.squelch_calls())
    for match, mine in rest_calls.items():
        names = [name for name, _ in mine]
        assert names[0] == "MatchStart" and names[-1] == "MatchEnd"
        assert "Error" not in names
        # The game ids run 1..gameCount; the turn ids of a game, 1.. across both seats.
        starts = [params["gameid"] for name, params in mine if name == "GameStart"]
        assert starts == [1, 2]
        theirs = rpc_calls[match]
        for game_id in starts:
            turns = sorted(params["turnid"] for name, params in mine + theirs
                           if name == "TurnStart" and params["gameid"] == game_id)
            assert turns == list(range(1, len(turns) + 1)) and len(turns) >= 2
        # What both seats are told, the REST bot is told with the same values.
        start, their_start = mine[0][1], theirs[0][1]
        assert exact(without(start, "yourBotIndex")) == exact(
            without(their_start, "yourBotIndex", *RPC_ONLY))
        assert start["botNames"] == (["rpc", "rest"] if match == 1 else ["rest", "rpc"])
        assert start["botNames"][start["yourBotIndex"]] == "rest"
        assert start["yourBotIndex"] != their_start["yourBotIndex"]
        for shared in ("GameStart", "GameEnd"):
            assert exact([p for n, p in mine if n == shared]) == exact(
                [p for n, p in theirs if n == shared])
        wins = games[match]["final_state"]["wins"]
        assert exact(mine[-1][1]) == exact({"matchid": match, "winsByBotIndex": wins})
        assert theirs[-1][1]["winsByBotIndex"] == wins and sum(wins) == 2
    # The platform's Error has no REST form: none went to the JSON-RPC bot either here, and
    # every request the REST bot got is a call of the spec (read_call above).
    assert rpc.squelch_calls("Error") == []

    # The API shows the protocol and the name the bot gives itself (cut to 20 characters).
    shown = await api(arena, "/api/bots/2")
    assert (shown["name"], shown["protocol"], shown["self_name"]) == (
        "rest", "squelch-rest", SELF_NAME[:20].strip())
    other = await api(arena, "/api/bots/1")
    assert (other["protocol"], other["self_name"]) == ("jsonrpc", None)
    page = await arena.client.get("/bots/2")
    text = await page.text()
    assert page.status == 200
    assert "the Squelchbot REST API" in text and SELF_NAME[:20].strip() in text


def test_every_squelch_call_has_a_rest_route() -> None:
    """A call of the game without a route would not reach a REST bot."""
    config = Config()
    carrier = SquelchRestCarrier(BotClient(config), config,
                                 Notifier(config.calls.notify_timeout, config.calls.notify_timeout))
    shown = {call: carrier.describe(get_game("SQUELCH"), call) for call in SquelchCall}
    assert all(text.startswith("PUT /match/{matchId}") for text in shown.values()), shown
    assert len(set(shown.values())) == len(SquelchCall)

"""Squelch bots of both wires end to end: the platform, two reference bots that speak the
Squelchbot REST API (``python -m merknera_bots.squelch_rest``, good and random) and the reference
JSON-RPC bot (``python -m merknera_bots.squelch``), all real processes.

The round robin at registration gives seven matches: each REST bot against the JSON-RPC bot
and the two REST bots against each other, both seatings, and one match of all three (the
last registration adds a three-seat table).  The platform process takes no
Squelch settings, so these are full-length matches (five games to 5000 points).
"""

from __future__ import annotations

from collections import Counter

from tests.e2e.harness import E2E

REST = "merknera_bots.squelch_rest"
RPC = "merknera_bots.squelch"


async def test_rest_bots_play_json_rpc_bots_and_each_other(e2e: E2E) -> None:
    token = await e2e.add_user("e2e")
    # The spec's 1 s per call is checked in process (tests/scheduler/test_squelch_rest.py);
    # here a busy machine must not turn a slow answer into a forfeit.
    await e2e.start_platform(rest_call_timeout="5")
    await e2e.start_bot("good", "rpc-good", token, seed=1, module=RPC)
    await e2e.start_bot("good", "rest-good", token, seed=2, module=REST)
    await e2e.start_bot("random", "rest-random", token, seed=3, module=REST)

    summaries = await e2e.wait_all_finished(7)
    bots = {bot["name"]: bot for bot in (await e2e.get("/api/bots?game=SQUELCH"))["bots"]}
    assert {name: (bot["protocol"], bot["self_name"]) for name, bot in bots.items()} == {
        "rpc-good": ("jsonrpc", None),
        # What each gave as its name in GET /bot/info (the name it was started with).
        "rest-good": ("squelch-rest", "rest-good"),
        "rest-random": ("squelch-rest", "rest-random"),
    }
    pairs = Counter(frozenset(seat["name"] for seat in summary["seats"])
                    for summary in summaries)
    assert pairs == {frozenset({"rpc-good", "rest-good"}): 2,
                     frozenset({"rpc-good", "rest-random"}): 2,
                     frozenset({"rest-good", "rest-random"}): 2,
                     frozenset(bots): 1}
    for summary in summaries:
        game = await e2e.game(summary["id"])
        assert (game["game"], game["status"], game["reason"]) == (
            "SQUELCH", "FINISHED", "NORMAL"), (game["id"], game["detail"])
        moves = game["moves"]
        assert [m for m in moves if m["fault"]] == [], game["id"]
        assert [m["seq"] for m in moves] == list(range(1, len(moves) + 1))
        final = game["final_state"]
        assert final["turn"] is None and sum(final["wins"]) == final["settings"]["gameCount"]
        names = [seat["name"] for seat in sorted(game["seats"], key=lambda s: s["seat"])]
        chosen = [m for m in moves if m["seat"] >= 0]
        assert {names[m["seat"]] for m in chosen} == set(names), game["id"]
        for move in chosen:
            # What the platform sent: a REST seat's call is the spec's choose, its path and
            # body; a JSON-RPC seat's is the envelope of Squelch.NextMove, the same values
            # inside.
            request, reply = move["request"], move["reply"]
            if names[move["seat"]].startswith("rest-"):
                assert (request["method"], request["path"].rsplit("/", 1)[-1]) == (
                    "PUT", "choose"), request
                assert request["path"].startswith(f"/match/{summary['id']}/game/"), request
                assert set(request["body"]) == {"dieValues", "options"}, request
                choice = reply
            else:
                assert request["method"] == "Squelch.NextMove", request
                choice = reply["result"]
            assert move["move"] == {"take": choice["take"], "stay": choice["stay"]}

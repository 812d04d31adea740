"""Battlebot's WebSocket clients end to end: the platform with its Battlebot listener, and
clients of both of Battlebot's protocols (``tests/support/battlebot_client.py``) and the reference
JSON-RPC bots, all real processes.

The well-behaved client plays the first empty cell, row by row (Numberwang: adds 2), so in
a game of two such clients the first player always wins noughts and crosses (on the
diagonal [0, 2]-[2, 0]) and Numberwang (n reaches 10 on its fifth turn).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote

import pytest

from tests.e2e.harness import E2E
from tests.support.battlebot import (
    ClientRun,
    finish,
    run_clients,
    start_client,
    start_listener,
)
from tests.support.tls import throwaway_ca


def _final(run: ClientRun) -> dict[str, Any]:
    """The last update the client got (the final state)."""
    return run.updates()[-1]


async def test_both_protocols_play_each_other_and_their_games_are_the_platforms(
        e2e: E2E) -> None:
    url = await start_listener(e2e, battlebot_match_wait="60")
    runs = await run_clients(e2e, url, [
        ("salty", {"era": "a"}), ("graphy", {"era": "c"}),
        ("wang-a", {"era": "a", "game": "numberwang"}),
        ("wang-c", {"era": "c", "game": "numberwang"})])
    assert {name: run.code for name, run in runs.items()} == dict.fromkeys(runs, 0)
    for one, other in (("salty", "graphy"), ("wang-a", "wang-c")):
        first, second = runs[one].results[0], runs[other].results[0]
        assert first["victor"] == second["victor"] and first["reason"] == "complete"
        assert {first["won"], second["won"]} == {True, False}

    # Each era's messages have its own shape, of the same game.
    salty, graphy = _final(runs["salty"]), _final(runs["graphy"])
    assert salty["state"]["complete"] is True and "nextPlayer" in salty["state"]
    assert graphy["state"]["result"] == {"victor": salty["state"]["victor"],
                                         "reason": "complete"}
    assert graphy["state"]["waitingFor"] == [] and "complete" not in graphy["state"]
    assert salty["state"]["board"] == graphy["state"]["board"]
    assert salty["turn"]["player"] == graphy["turn"]["name"] == salty["state"]["victor"]
    assert runs["salty"].of("closed")[-1]["by"] == "server"

    # The games are platform games: stored, listed, replayable, with the bots' protocols.
    games = await e2e.wait_all_finished(2)
    assert sorted(g["game"] for g in games) == ["NOUGHTSANDCROSSES", "NUMBERWANG"]
    bots = {b["name"]: b for b in (await e2e.get("/api/bots?game=NOUGHTSANDCROSSES"))["bots"]}
    assert {name: bot["protocol"] for name, bot in bots.items()} == {
        "salty": "battlebot-salt", "graphy": "battlebot-graphql"}
    ours = next(g for g in games if g["game"] == "NOUGHTSANDCROSSES")
    detail = await e2e.game(ours["id"])
    assert detail["reason"] == "NORMAL" and [m["fault"] for m in detail["moves"]] == [None] * 7
    # The move log keeps what each client sent, as it sent it.
    assert detail["moves"][0]["reply"] == {"mark": "X", "space": [0, 0]}
    async with e2e.session.get(f"{e2e.url}/games/{ours['id']}") as page:
        assert page.status == 200
    async with e2e.session.get(f"{e2e.url}/bots/{bots['salty']['id']}") as page:
        text = await page.text()
        assert "Battlebot" in text and runs["salty"].secret not in text

    # Battlebot's own read-only paths.
    async with e2e.session.get(f"{url}/games/noughtsandcrosses") as response:
        listed = await response.json()
    assert [(g["_id"], g["victor"], g["reason"]) for g in listed] == [
        (str(ours["id"]), salty["state"]["victor"], "complete")]
    assert "turns" not in listed[0]
    async with e2e.session.get(f"{url}/games/noughtsandcrosses/{ours['id']}") as response:
        document = await response.json()
    assert [turn["space"] for turn in document["turns"]] == [
        [0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [2, 0]]
    assert document["turns"][0]["player"] == document["players"][0]
    async with e2e.session.get(f"{url}/bots/noughtsandcrosses") as response:
        listed_bots = await response.text()
    assert sorted(b["bot_id"] for b in json.loads(listed_bots)) == ["graphy", "salty"]
    # No credential is shown anywhere.
    public = listed_bots + json.dumps(await e2e.get("/api/bots"))
    for run in runs.values():
        assert run.secret not in public


async def test_a_lone_client_plays_a_json_rpc_bot_after_the_wait(e2e: E2E) -> None:
    url = await start_listener(e2e, battlebot_match_wait="0.5")
    token = await e2e.add_user("rpc-owner")
    await e2e.start_bot("perfect", "Noughty", token, module="merknera_bots.noughtsandcrosses")
    await e2e.start_bot("good", "Wanger", token, module="merknera_bots.numberwang")
    runs = await run_clients(e2e, url, [
        ("loner", {"era": "a", "extra": ["--games", "2"]}),
        ("hermit", {"era": "c", "game": "numberwang"})])
    assert runs["loner"].code == 0 and len(runs["loner"].results) == 2
    assert runs["hermit"].code == 0 and len(runs["hermit"].results) == 1
    games = await e2e.wait_all_finished(3)
    for game in games:
        names = {seat["name"] for seat in game["seats"]}
        assert names in ({"loner", "Noughty"}, {"hermit", "Wanger"}), names
        detail = await e2e.game(game["id"])
        assert detail["reason"] == "NORMAL", detail["detail"]
        assert detail["origin"] == "MATCH"


async def test_faults_lose_as_battlebot_said_and_are_answered_to_the_mover_only(
        e2e: E2E) -> None:
    url = await start_listener(e2e, battlebot_match_wait="60", battlebot_salt_turn_limit="1",
                               battlebot_graphql_turn_limit="1")
    cases = {"invalid": "Didn't write unit tests", "malformed": "Didn't write unit tests",
             "binary": "Didn't write unit tests", "slow": "timeout",
             "disconnect": "disconnect"}
    specs: list[tuple[str, dict[str, Any]]] = []
    for index, behaviour in enumerate(cases):
        era = "ac"[index % 2]
        # A contest of its own per pair, so that each faulty client meets its own partner.
        pool = ["--contest", f"pool-{behaviour}"]
        specs += [(f"good-{behaviour}", {"era": era, "extra": pool}),
                  (f"bad-{behaviour}", {"era": era, "behaviour": behaviour,
                                        "extra": [*pool, "--delay", "3"]})]
    runs = await run_clients(e2e, url, specs)
    for behaviour, reason in cases.items():
        good = runs[f"good-{behaviour}"]
        assert good.code == 0, good.events[-3:]
        assert good.results == [{"event": "result", "victor": f"good-{behaviour}",
                                 "reason": reason, "won": True}], behaviour
        # The invalid turns were answered to the faulty client only.
        assert not [m for m in good.updates() if m.get("turn", {}).get("valid") is False]
    refusals = [m["turn"] for m in runs["bad-invalid"].updates()
                if m.get("turn", {}).get("valid") is False]
    assert len(refusals) == 3 and all(t["space"] == [5, 5] for t in refusals)
    assert "strike 3 of 3" in refusals[-1]["error"]
    terminations = {row["name"]: row["reason"] for row in e2e.read_db(
        "SELECT bots.name, games.reason FROM games JOIN seats ON seats.game_id = games.id "
        "JOIN bots ON bots.id = seats.bot_id WHERE bots.name LIKE 'bad-%'")}
    assert terminations == {"bad-invalid": "STRIKES", "bad-malformed": "STRIKES",
                            "bad-binary": "STRIKES", "bad-slow": "TIMEOUT",
                            "bad-disconnect": "UNREACHABLE"}


async def test_a_contest_matches_a_pair_five_times_and_keeps_the_table(e2e: E2E) -> None:
    url = await start_listener(e2e, battlebot_match_wait="60")
    cup = ["--contest", "cup", "--games", "5"]
    runs = await run_clients(e2e, url, [("ann", {"era": "a", "extra": cup}),
                                        ("bob", {"era": "c", "extra": cup})])
    assert [len(run.results) for run in runs.values()] == [5, 5]
    wins = {name: sum(r["won"] is True for r in run.results) for name, run in runs.items()}
    # The first player wins; the first seat alternates between the two (3 and 2).
    assert sorted(wins.values()) == [2, 3]
    async with e2e.session.get(f"{url}/games/noughtsandcrosses/contests/cup") as response:
        table = await response.json()
    leader = max(wins, key=lambda name: wins[name])
    other = "bob" if leader == "ann" else "ann"
    assert table["bots"] == [
        {"bot_id": leader, "wins": 3, "losses": 2, "draws": 0, "score": 9},
        {"bot_id": other, "wins": 2, "losses": 3, "draws": 0, "score": 6}]
    assert len(table["games"]) == 5 and {g["contest"] for g in table["games"]} == {"cup"}

    # A sixth game of the pair in that contest is never made: both wait until they give up.
    sixth = [await start_client(e2e, url, name, era=era, secret=runs[name].secret,
                                extra=["--contest", "cup", "--timeout", "4"])
             for name, era in (("ann", "a"), ("bob", "c"))]
    again = [await finish(child, "again") for child in sixth]
    assert [run.code for run in again] == [1, 1]
    assert [run.updates() for run in again] == [[], []]
    assert len(e2e.read_db("SELECT id FROM games")) == 5


async def test_tls_with_a_throwaway_certificate_authority(e2e: E2E) -> None:
    ca, cert, key = throwaway_ca(e2e.tmp_path)
    url = await start_listener(e2e, battlebot_tls_cert=str(cert), battlebot_tls_key=str(key))
    secure = url.replace("http://127.0.0.1", "https://localhost")
    runs = await run_clients(e2e, secure, [
        ("tls-a", {"era": "a", "extra": ["--cafile", str(ca)]}),
        ("tls-c", {"era": "c", "extra": ["--cafile", str(ca)]})])
    assert [run.code for run in runs.values()] == [0, 0]
    assert {run.results[0]["reason"] for run in runs.values()} == {"complete"}
    # Without the CA the certificate is not trusted: nothing is registered.
    untrusting = await finish(await start_client(e2e, secure, "no-ca"), "no-ca")
    assert untrusting.code != 0 and not untrusting.of("registered")


async def test_bad_logins_are_refused_with_a_reason_and_closed(e2e: E2E) -> None:
    url = await start_listener(e2e, battlebot_login_timeout="1", battlebot_match_wait="60")
    waiting = await start_client(e2e, url, "twice", era="c", behaviour="silent")
    await asyncio.sleep(0)  # started; it logs in while the others run
    runs = await run_clients(e2e, url, [
        ("mute", {"era": "a", "behaviour": "nologin", "register": False}),
        ("liar", {"era": "a", "behaviour": "badlogin"}),
        ("liar-c", {"era": "c", "behaviour": "badlogin"})])
    for name in ("mute", "liar", "liar-c"):
        run = runs[name]
        assert run.code == 3, (name, run.events)
        refusal = run.received[-1]
        assert refusal.get("authentication") == "failed" and refusal["error"], (name, run.events)
        assert run.of("closed")[-1]["by"] == "server", name
    assert "no login within 1 s" in runs["mute"].received[-1]["error"]
    assert "wrong login_hash" in runs["liar"].received[-1]["error"]
    assert "wrong password" in runs["liar-c"].received[-1]["error"]
    # A second connection of a connected bot is refused; the first keeps its place.
    first = await e2e.wait_until("the silent client's login", _logged_in(waiting))
    second = await finish(await start_client(e2e, url, "twice", era="c", secret=first,
                                             extra=["--login-only"]), "twice-again")
    assert second.code == 3 and "connected already" in second.received[-1]["error"]
    assert waiting.running
    await e2e.processes.stop(waiting)


def _logged_in(child: Any) -> Any:
    """A wait_until check: the password of a client once it has logged in."""
    lines: list[dict[str, Any]] = []

    async def check() -> tuple[str | None, str]:
        stdout = child.process.stdout
        while True:
            try:
                raw = await asyncio.wait_for(stdout.readline(), 0.2)
            except TimeoutError:
                break
            if not raw:
                break
            lines.append(json.loads(raw))
        secret = next((e["body"]["data"]["registerBot"]["password"] for e in lines
                       if e["event"] == "registered"), None)
        ok = any(e["event"] == "received" and e["message"].get("authentication") == "OK"
                 for e in lines)
        return (secret if ok else None), f"{len(lines)} events"

    return check


async def test_the_ladder_seats_a_connected_client(e2e: E2E) -> None:
    # No lobby fallback within the test: only the ladder seats the client.
    url = await start_listener(e2e, battlebot_match_wait="600", ladder="true",
                               ladder_interval="0.3")
    token = await e2e.add_user("rpc-owner")
    await e2e.start_bot("perfect", "Laddered", token, module="merknera_bots.noughtsandcrosses")
    run = (await run_clients(e2e, url, [("climber", {"era": "c",
                                                     "extra": ["--games", "2"]})]))["climber"]
    assert run.code == 0 and len(run.results) == 2
    games = await e2e.wait_all_finished(2)
    assert {g["id"] for g in games} == {row["id"] for row in e2e.read_db(
        "SELECT id FROM games WHERE origin = 'LADDER' AND reason = 'NORMAL'")}
    assert all({seat["name"] for seat in g["seats"]} == {"climber", "Laddered"} for g in games)


async def test_a_tournament_seats_a_connected_client(e2e: E2E) -> None:
    url = await start_listener(e2e, battlebot_match_wait="600")
    token = await e2e.add_user("rpc-owner")
    await e2e.start_bot("perfect", "Laddered", token, module="merknera_bots.noughtsandcrosses")
    await e2e.start_bot("random", "Entrant", token, module="merknera_bots.noughtsandcrosses")
    await e2e.wait_all_finished(2)  # their registration round robin
    registered = await finish(await start_client(e2e, url, "climber", era="a",
                                                 extra=["--login-only"]), "climber")
    await _round_robin_of_every_bot(e2e)
    # It connects for a game at a time, as Battlebot's clients do.
    run = await finish(await start_client(e2e, url, "climber", era="a",
                                          secret=registered.secret,
                                          extra=["--games", "2"]), "climber")
    assert run.code == 0 and len(run.results) == 2
    played = await e2e.wait_until("the tournament's three games", _tournament_games(e2e))
    assert sorted(sorted(names) for names in played) == sorted(
        [["Entrant", "Laddered"], ["Entrant", "climber"], ["Laddered", "climber"]])


def _tournament_games(e2e: E2E) -> Any:
    async def check() -> tuple[list[list[str]] | None, str]:
        rows = e2e.read_db(
            "SELECT games.id, games.reason, group_concat(bots.name) AS names FROM games "
            "JOIN seats ON seats.game_id = games.id JOIN bots ON bots.id = seats.bot_id "
            "WHERE games.origin = 'TOURNAMENT' GROUP BY games.id")
        done = [row for row in rows if row["reason"] == "NORMAL"]
        found = [row["names"].split(",") for row in done]
        return (found if len(done) == 3 else None), f"{[tuple(r) for r in rows]}"
    return check


@pytest.mark.parametrize("stop", ["SIGKILL", "SIGTERM"])
async def test_a_game_whose_clients_were_cut_off_by_a_stop_ends_without_a_result(
        e2e: E2E, stop: str) -> None:
    url = await start_listener(e2e, battlebot_match_wait="60",
                               battlebot_salt_turn_limit="60")
    for name, behaviour in (("steady", "normal"), ("sleepy", "slow")):
        await start_client(e2e, url, name, era="a", behaviour=behaviour,
                           extra=["--delay", "30"])
    game_id = await _running_game(e2e)
    if stop == "SIGKILL":
        await e2e.kill_platform()
    else:
        # A clean stop cancels the game before the listener closes the clients' sockets,
        # so nobody loses it to a socket the platform itself closed.
        assert e2e.platform is not None
        assert await e2e.processes.stop(e2e.platform.child) == 0
    await start_listener(e2e)

    async def ended() -> tuple[dict[str, Any] | None, str]:
        game = await e2e.game(game_id)
        return (game if game["status"] == "FINISHED" else None), game["status"]

    game = await e2e.wait_until("the game's end", ended)
    assert (game["reason"], game["outcome"]) == ("ABORTED", "NO_RESULT")
    assert "lost when the platform stopped" in game["detail"]
    assert {seat["result"] for seat in game["seats"]} == {"NONE"}


async def test_a_game_ended_elsewhere_lets_its_client_go(e2e: E2E) -> None:
    url = await start_listener(e2e, battlebot_match_wait="0.5",
                               battlebot_salt_turn_limit="60")
    token = await e2e.add_user("rpc-owner")
    await e2e.start_bot("perfect", "Victim", token, module="merknera_bots.noughtsandcrosses")
    stuck = await start_client(e2e, url, "stuck", era="a", behaviour="slow",
                               extra=["--delay", "15"])
    game_id = await _running_game(e2e)
    # A new version of the opponent ends the game without a result...
    await e2e.start_bot("perfect", "Victim", token, module="merknera_bots.noughtsandcrosses",
                        version="2.0.0")
    game = await e2e.game(game_id)
    assert (game["status"], game["reason"]) == ("FINISHED", "SUPERSEDED")
    # ...and its client is let go at once (its socket closed while it still sleeps on its
    # turn), free to log in again.
    secret = json.loads(await _first_line(stuck))["body"]["pass_hash"]
    again = await finish(await start_client(e2e, url, "stuck", era="a", secret=secret,
                                            extra=["--login-only"]), "stuck-again")
    assert again.code == 0 and again.received[-1]["authentication"] == "OK"
    assert stuck.running  # still asleep on its turn: the platform let it go
    await e2e.processes.stop(stuck)


async def test_a_suspended_owners_client_cannot_log_in(e2e: E2E) -> None:
    url = await start_listener(e2e)
    first = await finish(await start_client(e2e, url, "shady", era="c",
                                            extra=["--owner", "mallory", "--login-only"]),
                         "shady")
    assert first.code == 0
    async with e2e.session.post(
            f"{e2e.url}/api/admin/users/{quote('mallory (Battlebot)')}/suspend",
            headers={"Authorization": "Bearer e2e-admin-token"},
            json={"reason": "cheating"}) as suspended:
        assert suspended.status == 200, await suspended.text()
    refused = await finish(await start_client(e2e, url, "shady", era="c", secret=first.secret,
                                              extra=["--login-only"]), "shady-again")
    assert refused.code == 3
    assert "disabled by an admin" in refused.received[-1]["error"] or (
        "suspended" in refused.received[-1]["error"])


async def _first_line(child: Any) -> str:
    """The first line a client process printed (its registration)."""
    line: bytes = await asyncio.wait_for(child.process.stdout.readline(), 30)
    return line.decode()


async def test_a_game_cancelled_while_waiting_for_its_client_does_not_keep_it(
        e2e: E2E) -> None:
    url = await start_listener(e2e, battlebot_match_wait="0.5")
    token = await e2e.add_user("rpc-owner")
    await e2e.start_bot("perfect", "Host", token, module="merknera_bots.noughtsandcrosses")
    late = await finish(await start_client(e2e, url, "late", era="a",
                                           extra=["--login-only"]), "late")
    await _round_robin_of_every_bot(e2e)

    # The tournament's game waits for the client's connection; a new version of its
    # opponent ends it meanwhile (its runner is cancelled while it waits).
    async def waiting() -> tuple[int | None, str]:
        rows = e2e.read_db("SELECT id, status FROM games WHERE origin = 'TOURNAMENT'")
        return (rows[0]["id"] if rows else None), f"{[tuple(row) for row in rows]}"

    game_id = await e2e.wait_until("the tournament's game", waiting)
    await e2e.start_bot("perfect", "Host", token, module="merknera_bots.noughtsandcrosses",
                        version="2.0.0")
    assert (await e2e.game(game_id))["reason"] == "SUPERSEDED"
    # The client that connects now is free for another game (the new version's
    # registration round robin has one for it), not seated in the ended one.
    run = await finish(await start_client(e2e, url, "late", era="a", secret=late.secret),
                       "late-again")
    assert run.code == 0 and len(run.results) == 1
    played = e2e.read_db(
        "SELECT games.id FROM games JOIN seats ON seats.game_id = games.id JOIN bots ON "
        "bots.id = seats.bot_id WHERE bots.name = 'late' AND games.reason = 'NORMAL'")
    assert len(played) == 1 and played[0]["id"] > game_id


async def test_a_client_that_leaves_while_the_other_is_to_move_loses_at_once(
        e2e: E2E) -> None:
    # The mover never moves: were the leaver's departure noticed only at its next turn,
    # the mover would lose on time first, and the client that left would win.
    url = await start_listener(e2e, battlebot_match_wait="60",
                               battlebot_graphql_turn_limit="3")
    async with e2e.session.post(f"{url}/graphql", json={"query": (
            'mutation { registerBot(gameType: NOUGHTS_AND_CROSSES, name: "leaver", '
            'owner: "o") { password } }')}) as registered:
        password = (await registered.json())["data"]["registerBot"]["password"]
    mover = await start_client(e2e, url, "stayer", era="c", behaviour="silent")
    await _first_line(mover)  # registered; it logs in next

    async def logged_in() -> tuple[bool | None, str]:
        rows = e2e.read_db("SELECT status FROM bots WHERE name = 'stayer'")
        return (True if rows and rows[0]["status"] == "ONLINE" else None), f"{rows}"

    await e2e.wait_until("the mover's login", logged_in)
    async with e2e.session.ws_connect(url) as ws:
        await ws.send_json({"name": "leaver", "password": password,
                            "gameType": "NOUGHTS_AND_CROSSES"})
        assert (await ws.receive_json(timeout=30))["authentication"] == "OK"
        first = await ws.receive_json(timeout=30)
        assert first["state"]["waitingFor"] == ["stayer"]  # the earlier connection moves

    async def ended() -> tuple[list[Any] | None, str]:
        rows = e2e.read_db("SELECT reason, detail FROM games WHERE status = 'FINISHED'")
        return ([tuple(row) for row in rows] or None), "no finished game"

    [(reason, detail)] = await e2e.wait_until("the game's end", ended)
    assert reason == "UNREACHABLE" and "leaver" in detail, detail
    results = {row["name"]: row["result"] for row in e2e.read_db(
        "SELECT bots.name, seats.result FROM seats JOIN bots ON bots.id = seats.bot_id")}
    assert results == {"stayer": "WIN", "leaver": "LOSS"}
    await e2e.processes.stop(mover)


async def _round_robin_of_every_bot(e2e: E2E) -> None:
    """A tournament (round robin, one cycle) of every noughts-and-crosses bot, made through
    the admin API."""
    bots = (await e2e.get("/api/bots?game=NOUGHTSANDCROSSES"))["bots"]
    async with e2e.session.post(
            f"{e2e.url}/api/admin/tournaments",
            headers={"Authorization": "Bearer e2e-admin-token"},
            json={"game": "NOUGHTSANDCROSSES", "format": "round-robin", "rounds": 1,
                  "bots": sorted(bot["id"] for bot in bots)}) as made:
        assert made.status == 201, await made.text()


async def _running_game(e2e: E2E) -> int:
    """The id of the first game being played, once there is one."""
    async def running() -> tuple[int | None, str]:
        rows = e2e.read_db("SELECT id, status FROM games")
        found = [row["id"] for row in rows if row["status"] == "RUNNING"]
        return (found[0] if found else None), f"{[tuple(row) for row in rows]}"

    found: int = await e2e.wait_until("a running game", running)
    return found

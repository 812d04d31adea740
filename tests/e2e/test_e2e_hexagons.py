"""The MebiPenny 2011 hexagons server's clients end to end: the platform with its hexagons
listener, clients written from the protocol notes (``tests/support/hexagons_client.py``, with their
own board geometry) and a reference JSON-RPC Hexagons bot, all real processes, and the
SQLite file the platform writes.

Each client merges the Game Deltas it gets into its own copy of the Game, and reports
anything the server told it that its geometry forbids; every copy must end equal to what
``GET /<id>`` shows.  Boards are 5x4 (17 points, 36 lines, 5 hexagon centres) and every
player has 1 s a move.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.e2e.harness import E2E
from tests.support.hexagons import (
    HexRun,
    call,
    create_game,
    finish_all,
    start_client,
    start_listener,
    view,
)

TEXT = "text/plain"
WRAPPER = "<script>parent.update(%s);</script>"
DISQUALIFIED = "disqualified"


def scores(game: dict[str, Any]) -> dict[str, Any]:
    """Each player's score, by name."""
    return {player["name"]: player["score"] for player in game["players"]}


def by_name(game: dict[str, Any]) -> dict[str, Any]:
    """The Game with its players sorted by name."""
    return {**game, "players": sorted(game["players"], key=lambda p: str(p["name"]))}


def hexagon_counts(game: dict[str, Any]) -> Counter[str]:
    """How many hexagons each player owns."""
    return Counter(hexagon["owner"]["name"] for hexagon in game["hexagons"])


def check_played_out(run: HexRun, final: dict[str, Any]) -> None:
    """The client played to the end: its merged copy is the server's Game, it found nothing
    inconsistent, and its last answer was a 200 without a turn token."""
    assert run.code == 0, (run.name, run.events[-3:])
    assert run.inconsistencies == [], (run.name, run.inconsistencies)
    assert run.end["reason"] == "completed", (run.name, run.end)
    assert run.game == final, run.name
    last = run.last_answer
    assert last["status"] == 200 and last["body"]["state"] == "completed", (run.name, last)
    assert "X-Turn-Token" not in last["headers"], (run.name, last)
    # Every earlier answer of a join or a move gave the turn (a token) while the game went on.
    for answer in run.answers("join")[:-1] + run.answers("move")[:-1]:
        if answer["status"] == 200:
            assert answer["headers"].get("X-Turn-Token"), (run.name, answer)


async def platform_game(e2e: E2E, handle: str) -> dict[str, Any]:
    """The platform's game known to the hexagons server as ``handle`` (finished), as the
    admin sees it."""
    rows = e2e.read_db("SELECT id, origin FROM games WHERE handle = ? AND game = 'HEXAGONS'",
                       [handle])
    assert len(rows) == 1, f"{len(rows)} games with the handle {handle}"
    assert rows[0]["origin"] == "MATCH"
    game_id = int(rows[0]["id"])

    async def check() -> tuple[dict[str, Any] | None, str]:
        detail = await e2e.game(game_id)
        return (detail if detail["status"] == "FINISHED" else None), detail["status"]

    return await e2e.wait_until(f"game {game_id} ({handle}) finished", check)


def seat_results(detail: dict[str, Any]) -> dict[str, str]:
    return {seat["name"]: seat["result"] for seat in detail["seats"]}


async def test_two_clients_play_a_game_to_its_end_and_it_is_a_platform_game(e2e: E2E) -> None:
    url = await start_listener(e2e)
    # The game answers each move after a delay_time of 0.02 s.
    amy = await start_client(e2e, url, "amy", create="5x4", behaviour="greedy",
                             extra=["--delay-time", "0.02"])
    handle = (await amy.event("created"))["id"]
    assert len(handle) == 8 and int(handle, 16) >= 0

    # Before its second player joins, the game waits: listed, shown, no moves yet.
    listing = await call(e2e, "GET", f"{url}/")
    assert listing.status == 200 and listing.json() == [{"id": handle, "state": "initiating"}]
    early = await call(e2e, "POST", f"{url}/{handle}/moves",
                       [{"row": 0, "col": 0}, {"row": 0, "col": 1}], {"X-Turn-Token": "x"})
    assert (early.status, early.text) == (403, "game not yet started")
    assert early.headers["Content-Type"].startswith(TEXT)

    watcher = await start_client(e2e, url, "watcher", game=handle, behaviour="observer")
    wrapped = await start_client(e2e, url, "wrapped", game=handle, behaviour="observer",
                                 wrapper=WRAPPER)
    await watcher.event("observed")
    await wrapped.event("observed")
    # From another address: two players of one address rate nobody (the README's Guests).
    bob = await start_client(e2e, url, "bob", game=handle, source="127.0.0.2")
    runs = await finish_all([amy, bob, watcher, wrapped])

    final = await view(e2e, url, handle)
    assert final["state"] == "completed" and (final["rows"], final["cols"]) == (5, 4)
    assert sorted(scores(final)) == ["amy", "bob"]
    for name in ("amy", "bob"):
        check_played_out(runs[name], final)
    # Scores count hexagons; a game ends only once one is claimed at least.
    assert final["hexagons"], final
    assert scores(final) == {name: hexagon_counts(final)[name] for name in ("amy", "bob")}
    # Every line an owner, every owner a player with its score now.
    assert all(item["owner"] == {"name": item["owner"]["name"],
                                 "score": scores(final)[item["owner"]["name"]]}
               for item in final["lines"] + final["hexagons"])
    drawn_by = Counter(line["owner"]["name"] for line in final["lines"])
    assert sum(len(runs[name].of("move-sent")) for name in ("amy", "bob")) == len(final["lines"])
    assert {name: len(runs[name].of("move-sent")) for name in ("amy", "bob")} == drawn_by

    # Each join was held until its player's turn: the first mover's saw an empty board,
    # the other's the first mover's line.
    first = final["lines"][0]["owner"]["name"]
    second = "bob" if first == "amy" else "amy"
    first_join = runs[first].answers("join")[0]["body"]
    second_join = runs[second].answers("join")[0]["body"]
    assert first_join["lines"] == [] and first_join["state"] == "in play"
    assert [line["owner"]["name"] for line in second_join["lines"]] == [first]
    assert second_join["lines"][0]["endpoints"] == final["lines"][0]["endpoints"]

    # The observers: the full Game first, then a delta after every change, to the end.
    for name in ("watcher", "wrapped"):
        run = runs[name]
        assert run.code == 0 and run.inconsistencies == [], (name, run.events[-3:])
        stream = run.answers("observe")[0]
        assert stream["status"] == 200
        assert stream["headers"]["Content-Type"] == "application/x-multi-json"
        assert stream["headers"]["X-Observer-Token"]
        documents = [event["document"] for event in run.of("observed")]
        assert documents[0]["state"] == "initiating" and documents[0]["rows"] == 5
        assert all("rows" not in d and "cols" not in d for d in documents[1:]), name
        assert [d["state"] for d in documents[1:]].count("completed") == 1
        assert documents[-1]["state"] == "completed"
        assert sum(len(d["lines"]) for d in documents) == len(final["lines"])
        # A delta lists only the players whose score changed: one who joined before the
        # observer came stays where its first line put it, whatever seat it got.
        assert by_name(run.game) == by_name(final), name
    wrapped_lines = [event["raw"] for event in runs["wrapped"].of("observed")]
    assert all(line.startswith("<script>parent.update({") and line.endswith("});</script>")
               for line in wrapped_lines)
    # An observer's token: GET shows what changed since its last line (nothing).
    token = runs["watcher"].answers("observe")[0]["headers"]["X-Observer-Token"]
    since = await call(e2e, "GET", f"{url}/{handle}", headers={"X-Observer-Token": token})
    assert since.json() == {"lines": [], "hexagons": [], "players": [], "state": "completed"}

    odd = await call(e2e, "POST", f"{url}/{handle}/observers", {"wrapper": "no place"})
    assert (odd.status, odd.text) == (403, "invalid observer data")

    # After the end: moves are refused with 410, a third player too; listed as completed.
    token = runs["amy"].of("turn")[-1]["token"]
    late = await call(e2e, "POST", f"{url}/{handle}/moves",
                      [{"row": 0, "col": 0}, {"row": 0, "col": 1}], {"X-Turn-Token": token})
    assert (late.status, late.text) == (410, "game finished")
    third = await call(e2e, "POST", f"{url}/{handle}/players", {"name": "carol"})
    assert (third.status, third.text) == (410, "game already started")
    listing = await call(e2e, "GET", f"{url}/")
    assert listing.json() == [{"id": handle, "state": "completed"}]

    # The game is the platform's: stored with its handle, both guests seated, listed.
    detail = await platform_game(e2e, handle)
    assert detail["game"] == "HEXAGONS" and detail["reason"] == "NORMAL", detail["detail"]
    final_scores = scores(final)
    expected = (dict.fromkeys(final_scores, "DRAW")
                if final_scores["amy"] == final_scores["bob"] else
                {name: "WIN" if score == max(final_scores.values()) else "LOSS"
                 for name, score in final_scores.items()})
    assert seat_results(detail) == expected
    assert [seat["name"] for seat in sorted(detail["seats"], key=lambda s: s["seat"])] == [
        player["name"] for player in final["players"]]
    listed = await e2e.games()
    assert [(g["id"], g["game"], g["status"]) for g in listed] == [
        (detail["id"], "HEXAGONS", "FINISHED")]
    async with e2e.session.get(f"{e2e.url}/games/{detail['id']}") as page:
        assert page.status == 200
        text = await page.text()
        assert "amy" in text and "bob" in text
        assert "played at the hexagons listener" in text and "not rated" not in text
    bots = {b["name"]: b for b in (await e2e.get("/api/bots?game=HEXAGONS"))["bots"]}
    assert {name: (bot["protocol"], bot["owner"]) for name, bot in bots.items()} == {
        "amy": ("guest", "(guests)"), "bob": ("guest", "(guests)")}

    async def ranked() -> tuple[list[str] | None, str]:
        board = (await e2e.get("/api/leaderboard?game=HEXAGONS"))["bots"]
        names = sorted(bot["name"] for bot in board)
        return (names if names == ["amy", "bob"] else None), f"leaderboard {names}"

    assert await e2e.wait_until("both guests on the leaderboard", ranked) == ["amy", "bob"]

    # A game nobody made, and a game that was asked for badly.
    unknown = await call(e2e, "GET", f"{url}/0123abcd")
    assert (unknown.status, unknown.text) == (404, "no such game")
    assert unknown.headers["Content-Type"].startswith(TEXT)
    for path, body in (("players", {"name": "carol"}), ("moves", []), ("observers", None)):
        unknown = await call(e2e, "POST", f"{url}/0123abcd/{path}", body)
        assert (unknown.status, unknown.text) == (404, "no such game"), path
    bad = await call(e2e, "POST", f"{url}/", {"rows": 4, "cols": 4})
    assert bad.status == 403 and bad.text.startswith("invalid game data")


async def test_bad_moves_disqualify_a_wrong_token_does_not_and_a_vanished_player_loses(
        e2e: E2E) -> None:
    url = await start_listener(e2e)
    cases = ("illegal", "malformed", "wrong-token", "vanish", "first")
    handles = {case: await create_game(e2e, url) for case in cases}
    # One watches the game whose player vanishes.
    watcher = await start_client(e2e, url, "watcher", game=handles["vanish"],
                                 behaviour="observer")
    await watcher.event("observed")
    clients = [watcher]
    for case in cases:
        # Each misbehaves at its second move (there is a line on the board by then, and its
        # opponent has a move held), but "first" sends an illegal line at its first.
        behaviour, after = ("illegal", 1) if case == "first" else (case, 2)
        clients.append(await start_client(e2e, url, f"bad-{case}", game=handles[case],
                                          behaviour=behaviour, after=after))
        clients.append(await start_client(e2e, url, f"good-{case}", game=handles[case]))
    runs = await finish_all(clients)
    finals = {case: await view(e2e, url, handles[case]) for case in cases}
    details = {case: await platform_game(e2e, handles[case]) for case in cases}

    refusals = {"illegal": "invalid move: line already placed. disqualified!",
                "malformed": "invalid move: invalid line data. disqualified!"}
    for case, refusal in refusals.items():
        bad, good, final = runs[f"bad-{case}"], runs[f"good-{case}"], finals[case]
        assert bad.code == 0, (case, bad.events[-3:])
        sent = bad.of("move-sent")[-1]
        assert sent["kind"] == case and sent["number"] == 2
        # Refused at once, in the original's words, as plain text.
        assert bad.end["reason"] == "refused"
        last = bad.last_answer
        assert (last["request"], last["status"], last["body"]) == ("move", 403, refusal)
        assert last["headers"]["Content-Type"].startswith(TEXT)
        assert "X-Turn-Token" not in last["headers"]
        # The opponent's held request is answered with the final delta, which shows it.
        check_played_out(good, final)
        assert scores(final) == {f"bad-{case}": DISQUALIFIED, f"good-{case}": 0}
        assert {"name": f"bad-{case}", "score": DISQUALIFIED} in good.last_answer["body"]["players"]
        assert all(line["owner"]["score"] == DISQUALIFIED for line in final["lines"]
                   if line["owner"]["name"] == f"bad-{case}")
        assert len(bad.of("move-sent")) == 2 and len(final["lines"]) == 1 + len(
            good.of("move-sent"))
        detail = details[case]
        assert detail["reason"] == "STRIKES", (case, detail["detail"])
        assert seat_results(detail) == {f"bad-{case}": "LOSS", f"good-{case}": "WIN"}
        faults = [move for move in detail["moves"] if move["fault"]]
        assert [move["fault"] for move in faults] == ["DISQUALIFIED"], (case, faults)

    # A wrong or missing token is refused without a disqualification; the game goes on.
    bad, good, final = runs["bad-wrong-token"], runs["good-wrong-token"], finals["wrong-token"]
    wrong = [event for event in bad.of("move-sent") if event["kind"] == "wrong-token"]
    assert [event["token"] is None for event in wrong] == [False, True]
    refused = [answer for answer in bad.answers("move") if answer["status"] != 200]
    assert [(answer["status"], answer["body"]) for answer in refused] == [
        (403, "invalid/missing turn token")] * 2
    for run in (bad, good):
        check_played_out(run, final)
    assert all(isinstance(score, int) for score in scores(final).values()), final["players"]
    assert details["wrong-token"]["reason"] == "NORMAL"
    assert not [move for move in details["wrong-token"]["moves"] if move["fault"]]

    # A player that never moves loses on the turn limit, shown disqualified.
    bad, good, final = runs["bad-vanish"], runs["good-vanish"], finals["vanish"]
    assert bad.code == 0 and [e["number"] for e in bad.of("vanish")] == [2]
    assert len(bad.of("move-sent")) == 1 and bad.of("end") == []
    check_played_out(good, final)
    assert scores(final) == {"bad-vanish": DISQUALIFIED, "good-vanish": 0}
    assert {"name": "bad-vanish", "score": DISQUALIFIED} in good.last_answer["body"]["players"]
    assert details["vanish"]["reason"] == "TIMEOUT", details["vanish"]["detail"]
    assert seat_results(details["vanish"]) == {"bad-vanish": "LOSS", "good-vanish": "WIN"}
    # The observer saw it happen, to the end.
    watched = runs["watcher"]
    assert watched.code == 0 and watched.inconsistencies == [], watched.events[-3:]
    assert watched.of("observed")[0]["document"]["players"] == []  # it came first
    assert watched.game == final
    assert watched.of("observed")[-1]["document"]["state"] == "completed"

    # An illegal first line: refused with the reason for it; whoever was waiting, in its
    # join or in a move, is answered with the end.
    bad, good, final = runs["bad-first"], runs["good-first"], finals["first"]
    check_played_out(good, final)
    assert scores(final) == {"bad-first": DISQUALIFIED, "good-first": 0}
    assert bad.of("move-sent")[-1]["number"] == 1
    if final["lines"]:  # the good player moved first; its line was sent again
        assert bad.last_answer["body"] == "invalid move: line already placed. disqualified!"
        assert len(good.answers("move")) == 1
    else:  # the bad player moved first: the other's join was held until the end
        assert bad.last_answer["body"] == (
            'invalid move: endpoints {"row": 1, "col": 0} and {"row": 1, "col": 2} are not '
            "adjacent. disqualified!")
        assert good.answers("move") == [] and len(good.answers("join")) == 1
    assert bad.last_answer["status"] == 403
    assert details["first"]["reason"] == "STRIKES"


async def test_match_pairs_two_waiting_clients_in_a_new_random_game(e2e: E2E) -> None:
    # No Hexagons bot is online: the clients wait for each other however long it takes.
    url = await start_listener(e2e, hexagons_match_wait="0.5")
    runs = await finish_all([await start_client(e2e, url, name, match=True)
                             for name in ("mia", "max")])
    matched = {name: run.of("matched") for name, run in runs.items()}
    assert [len(events) for events in matched.values()] == [1, 1]
    handle = matched["mia"][0]["id"]
    assert matched["max"][0]["id"] == handle
    for run in runs.values():
        answer = run.answers("match")[0]
        assert (answer["status"], answer["headers"]["Location"]) == (201, f"/{handle}")
    final = await view(e2e, url, handle)
    for run in runs.values():
        check_played_out(run, final)
    assert sorted(scores(final)) == ["max", "mia"]
    # The original's random boards: 5 to 13 rows (odd), 3 columns fewer to 3 more.
    assert final["rows"] in (5, 7, 9, 11, 13) and abs(final["cols"] - final["rows"]) <= 3
    detail = await platform_game(e2e, handle)
    assert detail["reason"] == "NORMAL" and sorted(seat_results(detail)) == ["max", "mia"]


async def test_a_lone_match_client_plays_a_json_rpc_bot_whose_name_no_guest_may_take(
        e2e: E2E) -> None:
    url = await start_listener(e2e, hexagons_match_wait="0.5")
    token = await e2e.add_user("rpc-owner")
    await e2e.start_bot("good", "Hexer", token, module="merknera_bots.hexagons")
    handle = await create_game(e2e, url)
    loner = await start_client(e2e, url, "loner", match=True)
    impostor = await start_client(e2e, url, "Hexer", game=handle)
    nobody = await call(e2e, "POST", f"{url}/{handle}/players", {"name": "anonymous"})
    runs = await finish_all([loner, impostor])

    # The name of another owner's bot is refused, saying why; so is "anonymous".
    refused = runs["Hexer"]
    assert refused.code == 2 and refused.end["reason"] == "refused"
    answer = refused.answers("join")[0]
    assert answer["status"] == 403 and answer["headers"]["Content-Type"].startswith(TEXT)
    assert answer["body"] == ('invalid player data: the name "Hexer" belongs to a bot of '
                              "rpc-owner; choose another name")
    assert nobody.status == 403 and nobody.text.startswith("invalid player data: ")
    assert "anonymous" in nobody.text

    # Alone in the queue, the client got a game with the online JSON-RPC bot.
    run = runs["loner"]
    mixed = run.of("matched")[0]["id"]
    final = await view(e2e, url, mixed)
    check_played_out(run, final)
    assert sorted(scores(final)) == ["Hexer", "loner"]
    detail = await platform_game(e2e, mixed)
    assert detail["reason"] == "NORMAL", detail["detail"]
    assert sorted(seat_results(detail)) == ["Hexer", "loner"]
    hexer_seat = next(s["seat"] for s in detail["seats"] if s["name"] == "Hexer")
    hexer_moves = [move for move in detail["moves"] if move["seat"] == hexer_seat]
    assert hexer_moves and all(move["request"]["method"] == "Hexagons.NextMove"
                               and move["fault"] is None for move in hexer_moves)
    assert len(hexer_moves) + len(run.of("move-sent")) == len(final["lines"])
    bots = {b["name"]: b for b in (await e2e.get("/api/bots?game=HEXAGONS"))["bots"]}
    assert bots["loner"]["protocol"] == "guest" and bots["Hexer"]["owner"] == "rpc-owner"
    assert "Hexer" in {p["name"] for p in final["players"]}
    # The refused join made no guest.
    assert sorted(bots) == ["Hexer", "loner"]

"""Three nodes on one PostgreSQL database, one of them killed (SIGKILL) in the middle of a
tournament: every game finishes exactly once, no finished result is lost or changed, the
ratings are what a rebuild gives, and every node serves the same leaderboard.

The nodes are real ``merknera serve`` processes on the throwaway cluster, with six
reference tic-tac-toe bots (real processes) that register at the first node; leases last
3 s here (15 by default) so that the take-over is quick.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from tests.e2e.harness import ADMIN_TOKEN, E2E, LISTENING, PLATFORM_OPTIONS, PlatformProcess
from tests.support.postgres import Cluster

LEASE = "3"
BOTS = 6
ROUNDS = 2
"""Round-robin cycles: six entrants, five rounds a cycle, three games a round."""
TOURNAMENT_GAMES = 3 * 5 * ROUNDS
REGISTRATION_GAMES = BOTS * (BOTS - 1)
"""Merknera's round robin at registration: each newcomer plays each bot twice."""


async def start_node(e2e: E2E, url: str, label: str) -> PlatformProcess:
    args = ["-m", "merknera", "serve", "--db", url, "--host", "127.0.0.1", "--port", "0",
            "--lease-seconds", LEASE]
    for key, value in PLATFORM_OPTIONS.items():
        args += [f"--{key}", value]
    child = await e2e.processes.start(label, *args)
    match = await e2e.processes.first_line(child, LISTENING)
    return PlatformProcess(child, match.group(1))


async def get(e2e: E2E, node: PlatformProcess, path: str) -> Any:
    """GET ``path`` from ``node`` as the admin (``/api/nodes`` shows the nodes to the admin
    only)."""
    async with e2e.session.get(node.url + path,
                               headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
        assert response.status == 200, f"GET {node.url}{path}: {response.status}"
        return await response.json()


async def finished_games(e2e: E2E, node: PlatformProcess) -> dict[int, Any]:
    games = (await get(e2e, node, "/api/games?limit=500&status=FINISHED"))["games"]
    return {game["id"]: (game["reason"], [(seat["name"], seat["result"])
                                           for seat in game["seats"]]) for game in games}


async def test_three_nodes_finish_a_tournament_after_one_is_killed(
        e2e: E2E, postgres: Cluster) -> None:
    url = postgres.new_database()
    e2e.db = url  # type: ignore[assignment]  # the harness passes it on as --db
    token = await e2e.add_user("alice")
    nodes = [await start_node(e2e, url, f"node{number}") for number in range(3)]
    e2e.platform = nodes[0]

    async def three_nodes() -> tuple[Any | None, str]:
        seen = await get(e2e, nodes[1], "/api/nodes")
        coordinators = [node for node in seen["nodes"] if node["coordinator"]]
        ok = len(seen["nodes"]) == 3 and len(coordinators) == 1
        return (seen if ok else None), str(seen)

    listed = await e2e.wait_until("three live nodes, one coordinating", three_nodes)
    assert {node["address"] for node in listed["nodes"]} == {node.url for node in nodes}

    await e2e.start_bots(token, [("perfect" if n % 2 else "random", f"bot{n}", 0.2)
                                 for n in range(BOTS)])
    await e2e.wait_all_finished(REGISTRATION_GAMES)
    out = await e2e.processes.run(
        "tournament", "-m", "merknera", "tournament", "create", "--game", "TICTACTOE",
        "--format", "round-robin", "--rounds", str(ROUNDS), "--db", url)
    tournament_id = int(re.findall(r"\d+", out)[0])

    async def some_rounds() -> tuple[int | None, str]:
        detail = await get(e2e, nodes[1], f"/api/tournaments/{tournament_id}")
        return (detail["round"] if detail["round"] >= 3 else None), str(detail["round"])

    await e2e.wait_until("the tournament's third round", some_rounds)

    async def coordinator_playing() -> tuple[Any | None, str]:
        seen = await get(e2e, nodes[1], "/api/nodes")
        found = [node for node in seen["nodes"] if node["coordinator"] and node["games"]]
        return (found[0] if found else None), str(seen)

    # The coordinator (ladder, tournaments, pinger) while it plays games: both its duties
    # and its games must move.
    coordinator = await e2e.wait_until("the coordinator playing a game", coordinator_playing,
                                       interval=0.02)
    victim = next(node for node in nodes if node.url == coordinator["address"])
    survivors = [node for node in nodes if node is not victim]
    before = await finished_games(e2e, survivors[0])
    await e2e.processes.kill_hard(victim.child)
    e2e.platform = survivors[0]

    async def tournament_over() -> tuple[Any | None, str]:
        detail = await get(e2e, survivors[0], f"/api/tournaments/{tournament_id}")
        return (detail if detail["status"] == "FINISHED" else None), detail["status"]

    await e2e.wait_until("the tournament's end on the other nodes", tournament_over,
                         patience=120)
    games = await e2e.wait_all_finished(REGISTRATION_GAMES + TOURNAMENT_GAMES)
    assert {game["reason"] for game in games} == {"NORMAL"}, games
    after = await finished_games(e2e, survivors[0])
    assert {game_id: after[game_id] for game_id in before} == before  # none lost or changed

    # Each game's log: one row a move, numbered without gaps, no fault (a game taken over
    # went on from its stored moves, and no move was stored twice).
    for game in games:
        detail = await e2e.game(game["id"])
        seqs = [move["seq"] for move in detail["moves"]]
        assert seqs == list(range(1, len(seqs) + 1)), (game["id"], seqs)
        assert all(move.get("fault") is None for move in detail["moves"]), detail["moves"]

    # Ratings changed once per result: what a rebuild from the results gives.
    rebuilt = await e2e.processes.run("rebuild", "-m", "merknera", "ratings", "rebuild",
                                      "--db", url)
    assert "The stored ratings were already the same." in rebuilt, rebuilt
    boards = await asyncio.gather(*(get(e2e, node, "/api/leaderboard?game=TICTACTOE")
                                    for node in survivors))
    assert boards[0] == boards[1] and len(boards[0]["bots"]) == BOTS

    async def two_nodes() -> tuple[Any | None, str]:
        seen = await get(e2e, survivors[1], "/api/nodes")
        ok = (len(seen["nodes"]) == 2 and sum(node["coordinator"] for node in seen["nodes"]) == 1)
        return (seen if ok else None), str(seen)

    listed = await e2e.wait_until("the killed node gone from the list", two_nodes)
    assert {node["address"] for node in listed["nodes"]} == {node.url for node in survivors}
    # The games the killed node was playing were finished by the others.
    taken = coordinator["games"]
    database = url.rsplit("/", 1)[1]
    held = ", ".join(str(int(game_id)) for game_id in taken)
    players = postgres.psql(f"SELECT DISTINCT node FROM games WHERE id IN ({held})",  # noqa: S608
                            database=database).split()
    assert players and coordinator["id"] not in players
    assert set(players) <= {node["id"] for node in listed["nodes"]}

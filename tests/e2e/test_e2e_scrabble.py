"""Scrabble end to end: the platform and four reference Scrabble bots as real processes.

Each bot starts with an empty asset cache, so its first NewGame is answered PREPARING; it
downloads the three files from the platform's /assets/ URLs, checks their SHA1 and calls
Scrabble.Ready.  Two best-move and two random bots register one after another, which
schedules every pair both ways, two tables of three and one of four: 15 games, all of which
must finish normally with real words on the board.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from merknera.assets import default_directory
from tests.e2e.harness import E2E

BOTS = (("best", "best-1"), ("best", "best-2"), ("random", "random-1"), ("random", "random-2"))
ASSETS = default_directory() / "scrabble"
WORDS = frozenset((ASSETS / "dictionary-english.txt").read_text("ascii").split())


def words_on(board: list[str]) -> list[str]:
    """Every run of two or more tiles across and down (blanks are lower case)."""
    lines = [*board, *("".join(row[col] for row in board) for col in range(len(board)))]
    return [run.upper() for line in lines for run in line.split(".") if len(run) >= 2]


async def test_scrabble_bots_download_the_assets_and_play_tables_of_two_to_four(
        e2e: E2E) -> None:
    token = await e2e.add_user("e2e")
    await e2e.start_platform()
    for seed, (strategy, name) in enumerate(BOTS):
        cache = e2e.tmp_path / f"cache-{name}"
        await e2e.start_bot(strategy, name, token, seed=seed, module="merknera_bots.scrabble",
                            extra=("--cache", str(cache)))
    summaries = await e2e.wait_all_finished(15)
    games: list[dict[str, Any]] = [await e2e.game(summary["id"]) for summary in summaries]

    sizes = Counter(len(game["seats"]) for game in games)
    assert sizes == {2: 12, 3: 2, 4: 1}
    for game in games:
        assert game["game"] == "SCRABBLE"
        assert game["reason"] == "NORMAL", (game["id"], game["detail"])
        assert [m for m in game["moves"] if m["fault"]] == [], game["id"]
        board = game["final_state"]["board"]
        words = words_on(board)
        assert len(words) >= 5, (game["id"], board)
        assert not [w for w in words if w not in WORDS], (game["id"], board)
        scores = [seat["score"] for seat in sorted(game["seats"], key=lambda s: s["seat"])]
        assert scores == game["final_state"]["scores"]
        assert max(scores) > 0

    # Every bot went through PREPARING: its cache holds the three files, by hash, and the
    # platform logged its Scrabble.Ready calls.
    manifest = {hashlib.sha1((ASSETS / name).read_bytes()).hexdigest()  # noqa: S324
                for name in ("board-standard.json", "dictionary-english.txt",
                             "letters-english.json")}
    bots = {bot["name"]: bot for bot in (await e2e.get("/api/bots?game=SCRABBLE"))["bots"]}
    for _, name in BOTS:
        cached = {path.name for path in (e2e.tmp_path / f"cache-{name}").rglob("*")
                  if path.is_file()}
        for sha1 in manifest:
            assert any(sha1 in entry for entry in cached), (name, sha1, cached)
        async with e2e.session.get(f"{e2e.url}/api/bots/{bots[name]['id']}/log?limit=1000",
                                   headers={"Authorization": f"Bearer {token}"}) as response:
            assert response.status == 200
            log = (await response.json())["log"]
        readies = [line for line in log if "Scrabble.Ready" in line["message"]]
        assert readies, f"{name} never called Scrabble.Ready"

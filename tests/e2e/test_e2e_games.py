"""Every other arena's game end to end: the platform and two reference bots per game (the
good one and the random one) as real processes, all at once.  Each pair plays both
seatings; every game must finish normally, without a fault, with a full move log."""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.e2e.harness import E2E

BOTS = {
    "SQUELCH": ("merknera_bots.squelch", "good"),
    "HEXAGONS": ("merknera_bots.hexagons", "good"),
    "NOUGHTSANDCROSSES": ("merknera_bots.noughtsandcrosses", "perfect"),
    "NUMBERWANG": ("merknera_bots.numberwang", "good"),
    "KALAHA": ("merknera_bots.kalaha", "good"),
}


async def test_every_game_with_its_reference_bots(e2e: E2E) -> None:
    token = await e2e.add_user("e2e")
    await e2e.start_platform()
    for index, (mnemonic, (module, strong)) in enumerate(sorted(BOTS.items())):
        for strategy in (strong, "random"):
            await e2e.start_bot(strategy, f"{mnemonic.lower()}-{strategy}", token,
                                seed=index, module=module)
    summaries = await e2e.wait_all_finished(2 * len(BOTS))
    games: list[dict[str, Any]] = [await e2e.game(summary["id"]) for summary in summaries]
    assert Counter(game["game"] for game in games) == dict.fromkeys(BOTS, 2)
    for game in games:
        assert game["reason"] == "NORMAL", (game["game"], game["detail"])
        moves = game["moves"]
        assert [m for m in moves if m["fault"]] == [], (game["game"], game["id"])
        assert [m["seq"] for m in moves] == list(range(1, len(moves) + 1))
        bot_moves = [m for m in moves if m["seat"] >= 0]
        assert bot_moves and all(m["request"] and m["reply"] and m["latency_ms"] is not None
                                 for m in bot_moves), game["id"]
        assert game["outcome"] in ("WIN", "DRAW")
    # The strong bots do not lose to random ones where the game allows no luck.
    for game in games:
        if game["game"] in ("NOUGHTSANDCROSSES", "NUMBERWANG"):
            strong = next(s for s in game["seats"] if not s["name"].endswith("-random"))
            assert strong["result"] != "LOSS", (game["game"], game["id"])

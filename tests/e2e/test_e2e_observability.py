"""A real ``merknera serve`` as an operator watches it: its metrics (Prometheus' text
format, read by Prometheus' own parser) follow the games two reference bots play, its
health checks answer, and its stderr is one JSON object a line with the access log on,
or UTC-stamped text without the access log by default."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.e2e.harness import E2E
from tests.support import metric_samples, sample

GAMES = 2
"""Two bots play each other twice (one game per seating)."""

UTC_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


async def get(e2e: E2E, path: str) -> tuple[int, str]:
    async with e2e.session.get(e2e.url + path) as response:
        return response.status, await response.text()


async def test_metrics_follow_the_games_and_the_log_is_json_lines(e2e: E2E) -> None:
    token = await e2e.add_user("e2e")
    await e2e.start_platform(log_format="json", log_access="true")
    status, text = await get(e2e, "/metrics")
    assert status == 200
    before = metric_samples(text)
    assert sample(before, "merknera_games_finished_total", game="TICTACTOE",
                  termination="NORMAL") is None
    await e2e.start_bots(token, [("perfect", "Polly", 0.0), ("random", "Rita", 0.0)])
    await e2e.wait_all_finished(GAMES)
    assert await get(e2e, "/healthz") == (200, '{"status": "ok"}')
    assert await get(e2e, "/readyz") == (200, '{"status": "ready"}')

    async def rated() -> tuple[dict[Any, float] | None, str]:
        status, text = await get(e2e, "/metrics")
        found = metric_samples(text)
        done = sample(found, "merknera_rating_queue") == 0
        return (found if status == 200 and done else None), text[-300:]

    after = await e2e.wait_until("the results rated", rated)
    moves = len(e2e.read_db("SELECT id FROM moves WHERE fault IS NULL AND seat >= 0"))
    assert moves >= 2 * 5  # a game of tic-tac-toe is five moves at least
    assert sample(after, "merknera_games_finished_total", game="TICTACTOE",
                  termination="NORMAL") == GAMES
    assert sample(after, "merknera_moves_total") == moves
    assert sample(after, "merknera_bot_call_seconds_count", protocol="jsonrpc") == moves
    assert sample(after, "merknera_games_running", game="TICTACTOE") == 0
    # This scrape's own connection, at least, is open on the main listener.
    assert (sample(after, "merknera_open_connections", listener="main") or 0) >= 1
    assert (sample(after, "merknera_store_writes_total") or 0) > 0
    await e2e.processes.stop(e2e.platform.child)  # type: ignore[union-attr]

    lines = e2e.platform_log().splitlines()
    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    assert entries
    for entry in entries:
        assert {"time", "level", "logger", "message"} <= set(entry), entry
        assert UTC_STAMP.match(entry["time"]), entry
    access = [entry for entry in entries if entry["logger"] == "merknera.access"]
    scrapes = [entry for entry in access if entry["first_request_line"].startswith(
        "GET /metrics ")]
    assert scrapes and all(entry["response_status"] == 200 for entry in scrapes), access
    assert all(entry["remote_address"] == "127.0.0.1" for entry in access)
    assert any(entry["first_request_line"].startswith("POST /rpc ") for entry in access)


async def test_text_lines_are_utc_and_the_access_log_is_off_by_default(e2e: E2E) -> None:
    await e2e.start_platform()
    assert await get(e2e, "/healthz") == (200, '{"status": "ok"}')
    assert (await get(e2e, "/metrics"))[0] == 200
    await e2e.processes.stop(e2e.platform.child)  # type: ignore[union-attr]
    lines = e2e.platform_log().splitlines()
    assert lines
    for line in lines:
        stamp, _, rest = line.partition(" ")
        assert UTC_STAMP.match(stamp) and rest.split(" ")[0] in (
            "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), line
    assert not any("merknera.access" in line or "/healthz" in line for line in lines), lines

"""The log lines: stamped in UTC with a ``Z`` as text, or one JSON object a line naming the
game and the bot a line is about (from its ``extra``, or from the context a game's
runner runs in).

The lines of a real ``merknera serve`` (JSON, the access log on and off):
``tests/e2e/test_e2e_observability.py``.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sys

from merknera.config import LogSettings
from merknera.logcontext import BOT_ID, about_game
from merknera.logformat import TEXT_FORMAT, JsonFormatter, UtcFormatter, formatter


def record(message: str, *args: object, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord("merknera.test", logging.WARNING, __file__, 1, message, args,
                             None)
    made.created, made.msecs = 1_700_000_000.25, 250.0  # 2023-11-14T22:13:20.250Z
    for key, value in extra.items():
        setattr(made, key, value)
    return made


def test_text_lines_are_stamped_in_utc() -> None:
    line = UtcFormatter(TEXT_FORMAT).format(record("game %d ended", 7))
    assert line == "2023-11-14T22:13:20.250Z WARNING merknera.test: game 7 ended"
    assert isinstance(formatter(LogSettings()), UtcFormatter)
    assert isinstance(formatter(LogSettings(format="json")), JsonFormatter)


def test_a_json_line_has_the_time_level_logger_message_and_plain_extras() -> None:
    line = JsonFormatter().format(record(
        "bot %s is %s", "Polly", "online", bot_id=4, response_status=200,
        request_header={"User-Agent": "probe"}, unwritable=object()))
    assert "\n" not in line
    assert json.loads(line) == {
        "time": "2023-11-14T22:13:20.250Z", "level": "WARNING", "logger": "merknera.test",
        "message": "bot Polly is online", "bot_id": 4, "response_status": 200,
        "request_header": {"User-Agent": "probe"}}


def test_a_json_line_carries_its_traceback_on_one_line() -> None:
    try:
        raise ValueError("bad\nvalue")
    except ValueError:
        failed = logging.LogRecord("merknera.test", logging.ERROR, __file__, 1, "failed",
                                   None, sys.exc_info())
    entry = json.loads(JsonFormatter().format(failed))
    assert entry["message"] == "failed"
    assert "ValueError: bad\nvalue" in entry["exception"]


async def test_a_line_logged_in_a_games_context_names_the_game() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("merknera.test.context")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        async def runner() -> None:
            logger.warning("in the game")
            BOT_ID.set(9)
            logger.warning("about a bot", extra={"game_id": 12})

        await asyncio.create_task(runner(), context=about_game(11))
        logger.warning("outside")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(line["message"], line.get("game_id"), line.get("bot_id")) for line in lines] == [
        ("in the game", 11, None), ("about a bot", 12, 9), ("outside", None, None)]

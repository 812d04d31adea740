"""What a log line is about, where the code that logs it does not say: the game (and the
bot) of the task that logs it.

The scheduler starts each game's runner in a context of its own whose :data:`GAME_ID` is
the game's (:func:`about_game`), so that every line logged while the game is played, and
by the tasks it starts, names it; a line may also name its game or bot itself, with
``extra={"game_id": ..., "bot_id": ...}``.  :mod:`merknera.logformat` writes them.
"""

from __future__ import annotations

import contextvars

GAME_ID: contextvars.ContextVar[int | None] = contextvars.ContextVar("game_id", default=None)
"""The game the running task plays (None outside a game's runner)."""

BOT_ID: contextvars.ContextVar[int | None] = contextvars.ContextVar("bot_id", default=None)
"""The bot the running task serves (None where no one bot is)."""


def about_game(game_id: int) -> contextvars.Context:
    """A copy of the current context in which :data:`GAME_ID` is ``game_id``: run a game's
    task in it (``asyncio.create_task(..., context=...)``)."""
    context = contextvars.copy_context()
    context.run(GAME_ID.set, game_id)
    return context

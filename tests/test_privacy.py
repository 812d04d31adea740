"""What a bot answered is its owner's: the public sees an excerpt of a faulty reply.

A bot's endpoint may be any service that answers HTTP (one on the platform's own network,
say); publishing what it answered would make the platform a window into that service.
"""

from __future__ import annotations

import json

from aiohttp import web
from pytest_aiohttp import AiohttpServer

from merknera.store import users
from tests.conftest import ArenaFactory
from tests.support import ScriptedBot

ADMIN = "the-admin-token"
PAGE = "".join(f"INTERNAL-{number:04d} " for number in range(1000))
"""What the "bot" answers: a page of a service that is not a bot (15 KB)."""


def internal_service() -> web.Application:
    async def answer(_request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    app = web.Application()
    app.router.add_post("/{tail:.*}", answer)
    return app


async def test_a_faulty_reply_is_shown_whole_only_to_its_owner(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(admin_token=ADMIN)
    _, bob = await users.create_user(arena.platform.db, "bob")
    service = await aiohttp_server(internal_service())
    await arena.register("probe", str(service.make_url("/admin/export")))
    honest = await aiohttp_server(ScriptedBot().app())
    await arena.register("honest", str(honest.make_url("/rpc")), token=bob)
    await arena.settle()

    async def game_as(token: str | None) -> tuple[dict[str, object], str]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = await arena.client.get("/api/games/1", headers=headers)
        assert response.status == 200
        text = await response.text()
        return json.loads(text), text

    public, public_text = await game_as(None)
    assert public["reason"] == "STRIKES"
    faulty = [move for move in public["moves"]  # type: ignore[attr-defined]
              if move["fault"] is not None]
    assert [move["fault"] for move in faulty] == ["MALFORMED_REPLY"] * 3
    for move in public["moves"]:  # type: ignore[attr-defined]
        assert move["request"] is None and move["reply"] is None
    assert faulty[0]["reply_excerpt"] == PAGE[:117] + "..."
    # Nothing of the page past its first lines is anywhere in what anybody may read.
    for text in (public_text, await (await arena.client.get("/api/games/1/replay")).text(),
                 await (await arena.client.get("/games/1")).text(),
                 await (await arena.client.get("/api/games")).text()):
        assert "INTERNAL-0020" not in text
    # bob, whose bot played it, sees his own calls, not the prober's.
    as_bob, _ = await game_as(bob)
    seats = {seat["name"]: seat["seat"] for seat in as_bob["seats"]}  # type: ignore[attr-defined]
    for move in as_bob["moves"]:  # type: ignore[attr-defined]
        if move["seat"] == seats["honest"]:
            assert move["request"]["method"] == "TicTacToe.NextMove"
        else:
            assert move["reply"] is None
    # The bot's owner and the admin see the page whole.
    for token in (arena.token, ADMIN):
        _, seen_text = await game_as(token)
        assert "INTERNAL-0999" in seen_text
    wrong = await arena.client.get("/api/games/1", headers={"Authorization": "Bearer nope"})
    assert wrong.status == 403

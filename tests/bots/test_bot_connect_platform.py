"""Reference bots with ``--connect`` against the real platform (``merknera serve``), as
processes: connected bots play HTTP bots and each other to the end, a Scrabble bot says
Ready on its socket, a bot whose socket is cut or whose platform restarts connects again and
its games go on, and the two closes that stop a connected bot (4000, 1008) end its process.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.e2e.harness import E2E, PATIENCE, BotProcess, Processes
from tests.support import free_port
from tests.support.tls import throwaway_ca

CONNECT = ("--connect",)
REGISTERED = re.compile(r"registered on wss?://")


@pytest.fixture
async def e2e(tmp_path: Path) -> AsyncIterator[E2E]:
    """The end-to-end harness; every process it started is stopped afterwards (their logs
    are printed, which pytest shows for a failed test)."""
    processes = Processes(tmp_path)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            yield E2E(tmp_path, processes, session, tmp_path / "merknera.db")
    finally:
        await processes.close()
        print(f"\n--- the processes (files in {tmp_path}) ---\n{processes.report()}")


@pytest.fixture
def trusted_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A throwaway certificate authority that the processes started after this fixture
    trust (``SSL_CERT_FILE``); the platform's certificate and key, signed by it."""
    ca, cert, key = throwaway_ca(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    return cert, key


def _stderr(bot: BotProcess) -> str:
    return bot.child.stderr_path.read_text("utf-8", errors="replace")


def _registrations(bot: BotProcess) -> int:
    """How many times a connected bot registered on a socket, by its log."""
    return len(REGISTERED.findall(_stderr(bot)))


def _seat_names(game: dict[str, Any]) -> list[str]:
    return [seat["name"] for seat in sorted(game["seats"], key=lambda s: s["seat"])]


async def _finished_games(e2e: E2E, count: int) -> list[dict[str, Any]]:
    summaries = await e2e.wait_all_finished(count)
    return list(await asyncio.gather(*(e2e.game(summary["id"]) for summary in summaries)))


def _check_clean_tictactoe(e2e: E2E, games: list[dict[str, Any]],
                           perfect: set[str]) -> None:
    """Every game legal, replaying to its result, ended normally with no fault; perfect
    bots never lose, and draw among themselves."""
    for game in games:
        e2e.check_tictactoe_game(game)
        names = _seat_names(game)
        assert game["reason"] == "NORMAL", (game["id"], names, game["reason"], game["detail"])
        assert [m for m in game["moves"] if m["fault"] is not None] == [], game["id"]
        for seat in game["seats"]:
            if seat["name"] in perfect:
                assert seat["result"] != "LOSS", (game["id"], names, game["final_state"])
        if set(names) <= perfect:
            assert game["outcome"] == "DRAW", (game["id"], names)


async def test_connected_tictactoe_bots_play_http_bots_and_each_other(e2e: E2E) -> None:
    token = await e2e.add_user("owner")
    await e2e.start_platform()
    bots = [
        await e2e.start_bot("perfect", "sock-perfect", token, seed=1, extra=CONNECT),
        await e2e.start_bot("random", "http-random", token, seed=2),
        await e2e.start_bot("random", "sock-random", token, seed=3, extra=CONNECT),
        await e2e.start_bot("perfect", "http-perfect", token, seed=4),
    ]
    connected = [bot for bot in bots if bot.name.startswith("sock-")]
    assert [bot.port for bot in connected] == [0, 0]  # nothing listens: READY 0 <name>

    games = await _finished_games(e2e, 12)  # two per pair of the four bots
    assert Counter(tuple(_seat_names(g)) for g in games) == Counter(
        (a.name, b.name) for a in bots for b in bots if a is not b)
    _check_clean_tictactoe(e2e, games, {"sock-perfect", "http-perfect"})

    # The announcements came on the sockets too: a Complete for each game, with its result.
    for bot in connected:
        expected = {game["id"]: seat["result"] == "WIN" for game in games
                    for seat in game["seats"] if seat["name"] == bot.name}

        async def all_completes(bot: BotProcess = bot, expected: dict[int, bool] = expected
                                ) -> tuple[bool | None, str]:
            heard = {c["gameid"]: c["winner"] for c in e2e.completes_received(bot)}
            return (True if heard == expected else None), f"{bot.name} heard {heard}"

        await e2e.wait_until(f"{bot.name}'s 6 Complete calls", all_completes)
        assert _registrations(bot) == 1, _stderr(bot)
    assert "Traceback" not in e2e.platform_log()


async def test_a_connected_scrabble_bot_says_ready_on_its_socket(e2e: E2E) -> None:
    token = await e2e.add_user("owner")
    await e2e.start_platform()
    sock = await e2e.start_bot("random", "sock-scrabble", token, seed=1,
                               module="merknera_bots.scrabble",
                               extra=("--cache", str(e2e.tmp_path / "cache-sock"), *CONNECT))
    await e2e.start_bot("random", "http-scrabble", token, seed=2,
                        module="merknera_bots.scrabble",
                        extra=("--cache", str(e2e.tmp_path / "cache-http")))
    games = await _finished_games(e2e, 2)
    for game in games:
        assert game["reason"] == "NORMAL", (game["id"], game["detail"])
        assert [m for m in game["moves"] if m["fault"]] == [], game["id"]
        assert max(seat["score"] for seat in game["seats"]) > 0, game["id"]
    # Its cache was empty, so it answered PREPARING, fetched the files and said Ready, on
    # its socket (its log says which way), for both games; the platform took both.
    said = re.findall(r"game (\d+): Ready on the socket", _stderr(sock))
    assert sorted(map(int, said)) == sorted(game["id"] for game in games), _stderr(sock)
    bots = {bot["name"]: bot for bot in (await e2e.get("/api/bots?game=SCRABBLE"))["bots"]}
    async with e2e.session.get(f"{e2e.url}/api/bots/{bots['sock-scrabble']['id']}/log",
                               headers={"Authorization": f"Bearer {token}"}) as response:
        assert response.status == 200
        log = (await response.json())["log"]
    assert len([line for line in log if "Scrabble.Ready" in line["message"]]) == 2, log


class Relay:
    """A TCP relay to the platform whose connections the test can cut (the bot's socket
    dies as a network's would, while the platform stays up)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def cut(self) -> None:
        """Reset every connection under way."""
        for writer in self._open:
            writer.transport.abort()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self.cut()
            await self._server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._open |= {writer, up_writer}

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.transport.abort()

        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        finally:
            self._open -= {writer, up_writer}


async def _turn_of(e2e: E2E, name: str) -> tuple[int | None, str]:
    """A game under way, with moves made, in which it is ``name``'s turn to move."""
    for summary in await e2e.games():
        if summary["status"] == "FINISHED":
            continue
        game = await e2e.game(summary["id"])
        played = sum(1 for move in game["moves"] if move["move"] is not None)
        seat = _seat_names(game).index(name)
        if played >= 1 and played % 2 == seat:
            return game["id"], f"game {game['id']}: {played} moves, {name}'s turn"
    return None, "no game at that point yet"


async def test_a_cut_connection_is_made_again_and_its_game_goes_on(e2e: E2E) -> None:
    token = await e2e.add_user("owner")
    await e2e.start_platform()
    port = int(e2e.url.rsplit(":", 1)[1].rstrip("/"))
    relay = Relay(port)
    await relay.start()
    try:
        await e2e.start_bot("random", "http-random", token, seed=1, delay=0.2)
        args = ["-m", "merknera_bots.tictactoe", "--connect", "--strategy", "perfect",
                "--platform", f"http://127.0.0.1:{relay.port}", "--token", token,
                "--name", "sock-slow", "--delay", "1"]
        child = await e2e.processes.start("bot-sock-slow", *args)
        await e2e.processes.first_line(child, re.compile(r"^READY 0 sock-slow$"))
        sock = BotProcess(child, "sock-slow", 0, "perfect")

        # Cut while the connected bot is thinking about a move (its --delay): the call is
        # unanswered when its socket dies, and is sent again on the next one.
        game_id = await e2e.wait_until("the connected bot's turn", lambda: _turn_of(
            e2e, "sock-slow"), interval=0.05)
        relay.cut()
        games = await _finished_games(e2e, 2)
    finally:
        await relay.close()
    _check_clean_tictactoe(e2e, games, {"sock-slow"})
    assert game_id in [game["id"] for game in games]
    assert relay.connections >= 2
    assert _registrations(sock) >= 2, _stderr(sock)
    assert sock.child.running


async def test_a_restarted_platform_is_connected_to_again_and_its_games_go_on(
        e2e: E2E) -> None:
    token = await e2e.add_user("owner")
    port = str(free_port())
    await e2e.start_platform(port=port)
    await e2e.start_bot("random", "http-random", token, seed=1, delay=0.2)
    sock = await e2e.start_bot("perfect", "sock-slow", token, delay=0.3, extra=CONNECT)
    await e2e.wait_until("the connected bot's turn", lambda: _turn_of(e2e, "sock-slow"),
                         interval=0.05)
    await e2e.kill_platform()
    await e2e.start_platform(port=port)  # the same store, on the same port
    games = await _finished_games(e2e, 2)
    _check_clean_tictactoe(e2e, games, {"sock-slow"})
    assert _registrations(sock) >= 2, _stderr(sock)
    # It printed READY once, for its first registration, and stops cleanly.
    assert await e2e.processes.stop(sock.child, signal.SIGTERM) == 0
    assert sock.child.process.stdout is not None
    assert await sock.child.process.stdout.read() == b""


async def test_a_newer_connection_of_the_bot_stops_the_older_with_0(e2e: E2E) -> None:
    token = await e2e.add_user("owner")
    await e2e.start_platform()
    older = await e2e.start_bot("perfect", "twice", token, extra=CONNECT)
    newer = await e2e.start_bot("perfect", "twice", token, extra=CONNECT)
    assert await asyncio.wait_for(older.child.process.wait(), PATIENCE) == 0
    assert "a newer connection of this bot replaced this one" in _stderr(older)
    assert newer.child.running


async def test_a_refused_registration_on_the_socket_exits_2_with_the_reason(e2e: E2E) -> None:
    await e2e.start_platform()
    child = await e2e.processes.start(
        "bot-nobody", "-m", "merknera_bots.tictactoe", "--connect", "--platform", e2e.url,
        "--token", "not-a-token")
    assert await asyncio.wait_for(child.process.wait(), PATIENCE) == 2
    assert child.process.stdout is not None
    assert await child.process.stdout.read() == b""
    stderr = child.stderr_tail()
    assert 'registration failed: User with Token "not-a-token" is not currently registered' \
        in stderr, stderr


async def test_connected_bots_use_wss_with_an_https_platform(
        trusted_ca: tuple[Path, Path], e2e: E2E) -> None:
    cert, key = trusted_ca
    token = await e2e.add_user("owner")
    platform = await e2e.start_platform(tls_cert=str(cert), tls_key=str(key))
    assert platform.url.startswith("https://"), platform.url
    bots = [await e2e.start_bot("perfect", "wss-perfect", token, extra=CONNECT),
            await e2e.start_bot("random", "wss-random", token, seed=1, extra=CONNECT)]
    for bot in bots:
        assert f"registered on wss://{platform.url.removeprefix('https://')}/rpc/ws" in \
            _stderr(bot), _stderr(bot)

    async def finished() -> tuple[list[Any] | None, str]:
        # Read from the store: this test's own HTTP client does not trust the authority.
        rows = e2e.read_db("SELECT id, status, reason FROM games ORDER BY id")
        done = len(rows) == 2 and all(row["status"] == "FINISHED" for row in rows)
        return (list(rows) if done else None), f"games {[tuple(row) for row in rows]}"

    games = await e2e.wait_until("two games finished", finished)
    assert [row["reason"] for row in games] == ["NORMAL", "NORMAL"]
    assert e2e.read_db("SELECT COUNT(*) FROM moves WHERE fault IS NOT NULL")[0][0] == 0


async def test_connected_squelch_bots_play_a_match_with_its_announcements(e2e: E2E) -> None:
    token = await e2e.add_user("owner")
    await e2e.start_platform()
    sock = await e2e.start_bot("good", "sock-squelch", token, seed=1,
                               module="merknera_bots.squelch", extra=CONNECT)
    await e2e.start_bot("random", "http-squelch", token, seed=2, module="merknera_bots.squelch")
    games = await _finished_games(e2e, 2)
    assert {(game["status"], game["reason"]) for game in games} == {("FINISHED", "NORMAL")}
    for game in games:
        detail = await e2e.game(game["id"])
        assert not [move for move in detail["moves"] if move.get("fault")], detail["moves"]
    # Squelch's announcements went down the socket: each game's end and the match's, which
    # the bot logs as it hears them.
    heard = _stderr(sock)
    assert len(re.findall(r"match \S+: game \S+ (?:won|lost)", heard)) >= 2, heard
    assert len(re.findall(r"match \S+ over: wins by bot", heard)) == 2, heard
    assert "Traceback" not in e2e.platform_log()

"""A game's replays and live streams are cut from one log of its frames, built once and
extended as the game goes on, off the event loop and within bounds: the answers
are those one Replayer per request gave; a request takes its place before it waits for
anything or reads a move log, and waits within the place's time; work the platform cannot
take on now is refused with 503 (or 429 for a client that has its share) and
``Retry-After``; a build past its time limit keeps what it built; a log's size is what its
frames take; a game's calls are decoded off the loop, paged, bounded per answer and sent a
piece at a time to a client that reads them.

The platform is served as ``merknera serve`` serves it, on a real SQLite store; the games
are written to the store as a runner writes them (leased to another node, so that this
one leaves them be), their moves announced on the event bus as a runner announces them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gzip
import json
import random
import socket
import threading
import time
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import aiohttp
import pytest

from merknera.app import Platform
from merknera.config import Config
from merknera.events import GameFinished, MovePlayed
from merknera.games import REGISTRY
from merknera.protocol.faults import FaultKind
from merknera.server import running
from merknera.store import bots as bot_store
from merknera.store import games, results, users
from merknera.store.db import Connection, Row
from merknera.store.games import GameStatus
from merknera.store.results import move_log
from merknera.web import api, replay
from merknera.web import replays as replays_module
from merknera.web.replay import States
from merknera.web.replays import INLINE_ROWS, Replays
from merknera.work import READS, UNLIMITED, Deadline, TimeLimitError, Work
from tests.support import until
from tests.web.replay_support import streamed, whole_replay

PATIENCE = 30.0
"""Seconds to wait for what must happen well within that (a guard against a hang)."""
HEXAGONS = REGISTRY["HEXAGONS"]


@dataclasses.dataclass
class Served:
    """The platform serving HTTP on a real port, and a client of it."""

    config: Config
    platform: Platform
    session: aiohttp.ClientSession
    token: str

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.config.listeners.port}{path}"

    async def get(self, path: str, token: str | None = None,
                  session: aiohttp.ClientSession | None = None) -> tuple[int, Any, Any]:
        """Status, headers and JSON body of a GET (from ``session``'s address if given)."""
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        async with (session or self.session).get(self.url(path), headers=headers) as answer:
            return answer.status, answer.headers, json.loads(await answer.text())


@contextlib.asynccontextmanager
async def serving(config: Config, **changes: Any) -> AsyncIterator[Served]:
    """The platform served with ``config`` (changed by ``changes``), its request rate
    raised for the tests' bursts."""
    changed = config.replace(port=0, request_burst=100000, request_rate=100000.0, **changes)
    async with AsyncExitStack() as stack:
        live, platform = await stack.enter_async_context(running(changed))
        session = await stack.enter_async_context(aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=PATIENCE)))
        _, token = await users.create_user(platform.db, "owner")
        yield Served(live, platform, session, token)


@pytest.fixture
async def served(config: Config) -> AsyncIterator[Served]:
    async with serving(config) as found:
        yield found


def another_address() -> aiohttp.ClientSession:
    """A client from another address of the loopback network (a client of its own to the
    platform's limits)."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0)),
        timeout=aiohttp.ClientTimeout(total=PATIENCE))


@dataclasses.dataclass
class Played:
    """A Hexagons game of two random players, written move by move as a runner writes
    them."""

    served: Served
    game_id: int
    state: Any
    chooser: random.Random
    seq: int = 0

    @classmethod
    async def start(cls, served: Served, size: int = 7, seed: int = 3) -> Played:
        db = served.platform.db
        user = await users.find_user_by_token(db, served.token)
        assert user is not None

        def seat_bots(conn: Connection) -> int:
            ids = [bot_store.insert(conn, name=f"{name}{seed}", version="1", game="HEXAGONS",
                                    user_id=user.id, secret="s",
                                    meta=bot_store.BotMetadata("http://127.0.0.1:9/rpc")).id
                   for name in ("Honeycomb", "Hexed")]
            return games.create(conn, "HEXAGONS", seed, ids, {"rows": size, "cols": size},
                                lease=("another node", time.time() + 3600))

        game_id = await db.transaction(seat_bots)
        await games.mark_running(db, game_id, [0, 1])
        state = HEXAGONS.new({"rows": size, "cols": size}, [f"Honeycomb{seed}", f"Hexed{seed}"],
                             random.Random(seed))
        return cls(served, game_id, state, random.Random(seed + 1))

    async def play(self, count: int, request: str | None = None,
                   reply: str | None = None) -> None:
        """``count`` more moves (each call with the bodies given), each announced as its
        row is written."""
        platform = self.served.platform
        for _ in range(count):
            seat = HEXAGONS.to_move(self.state)
            assert seat is not None, "the game is over"
            move = self.chooser.choice(list(HEXAGONS.legal_moves(self.state, seat)))
            self.state = HEXAGONS.apply(self.state, seat, move)
            self.seq += 1
            wire = HEXAGONS.move_to_wire(move)
            assert await games.record_moves(platform.db, self.game_id, [games.LoggedCall(
                self.seq, seat, move=wire, latency_ms=1.5, request=request, reply=reply)])
            platform.events.publish(MovePlayed(self.game_id, self.seq, seat, wire))

    async def fault(self, reply: str) -> None:
        """A faulty reply of the seat to move (which changes nothing)."""
        seat = HEXAGONS.to_move(self.state)
        assert seat is not None
        self.seq += 1
        assert await games.record_moves(self.served.platform.db, self.game_id, [
            games.LoggedCall(self.seq, seat, fault=FaultKind.INVALID_MOVE,
                             fault_detail="not a move", reply=reply)])

    async def finish(self) -> None:
        """Play to the end and record the result."""
        while HEXAGONS.to_move(self.state) is not None:
            await self.play(1)
        outcome = HEXAGONS.outcome(self.state)
        assert outcome is not None
        platform = self.served.platform
        assert await games.finish(platform.db, self.game_id, outcome,
                                  HEXAGONS.state_to_json(self.state))
        platform.events.publish(GameFinished(
            self.game_id, "HEXAGONS", ("Honeycomb (1)", "Hexed (1)"),
            tuple(outcome.result_for(seat) for seat in (0, 1)), outcome.termination,
            outcome.detail))

    async def expected(self, states: States) -> Any:
        """The whole replay as one Replayer makes it from the store now."""
        header, rows = await self.stored()
        return whole_replay(header, rows, states)

    async def stored(self) -> tuple[replay.GameHeader, list[Row]]:
        db = self.served.platform.db
        header = await db.read(functools.partial(
            replay.load_header, game_id=self.game_id, games=self.served.platform.games))
        assert header is not None
        return header, await db.read(functools.partial(move_log, game_id=self.game_id))


@dataclasses.dataclass
class Stream:
    """A live stream read as it comes: its frames (decoded) and its end."""

    frames: list[Any] = dataclasses.field(default_factory=list)
    seqs: list[int] = dataclasses.field(default_factory=list)
    end: Any = None
    status: int = 0
    arrived: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    async def read(self, served: Served, path: str) -> None:
        async with served.session.get(served.url(path)) as answer:
            self.status = answer.status
            event: dict[str, str] = {}
            async for raw in answer.content:
                line = raw.decode("utf-8").rstrip("\n")
                if line:
                    name, _, value = line.partition(": ")
                    event[name] = value
                    continue
                if event.get("event") == "frame":
                    self.frames.append(json.loads(event["data"]))
                    self.seqs.append(int(event["id"]))
                elif event.get("event") == "end":
                    self.end = json.loads(event["data"])
                event = {}
                self.arrived.set()

    async def until_seq(self, seq: int) -> None:
        async with asyncio.timeout(PATIENCE):
            while not self.seqs or self.seqs[-1] < seq:
                self.arrived.clear()
                await self.arrived.wait()


async def test_a_running_games_replays_and_streams_share_one_log_built_once(
        served: Served) -> None:
    replays = served.platform.replays
    game = await Played.start(served)
    await game.play(40)
    base = f"/api/games/{game.game_id}"
    status, _, delta = await served.get(f"{base}/replay")
    assert status == 200
    assert delta == await game.expected(States.DELTA)
    assert delta["status"] == "RUNNING" and delta["reveal"] is False
    status, _, full = await served.get(f"{base}/replay?states=full")
    assert status == 200 and full == await game.expected(States.FULL)
    assert (replays.built, replays.applied) == (1, 40)

    # Two streams: patches resumed after move 10, and every state whole from the start.
    patched, whole = Stream(), Stream()
    readers = [asyncio.create_task(patched.read(served, f"{base}/live?after=10")),
               asyncio.create_task(whole.read(served, f"{base}/live?states=full"))]
    await patched.until_seq(40)
    await whole.until_seq(40)
    await game.play(25)
    await patched.until_seq(65)
    await whole.until_seq(65)
    header, rows = await game.stored()
    assert patched.seqs == list(range(11, 66)) and whole.seqs == list(range(1, 66))
    assert patched.frames == streamed(header, rows, 10, States.DELTA)
    assert whole.frames == streamed(header, rows, 0, States.FULL)
    status, _, delta = await served.get(f"{base}/replay")
    assert delta == await game.expected(States.DELTA)
    # One log, each row applied to it once, whoever asked.
    assert (replays.built, replays.applied) == (1, 65)

    await game.finish()
    await asyncio.wait_for(asyncio.gather(*readers), PATIENCE)
    header, rows = await game.stored()
    for stream, after, states in ((patched, 10, States.DELTA), (whole, 0, States.FULL)):
        assert stream.status == 200 and stream.end == {"status": "FINISHED", "error": None}
        assert stream.frames == streamed(header, rows, after, states)
    # Over: the replay shows everything, from a log of its own built once.
    for _ in range(2):
        status, _, delta = await served.get(f"{base}/replay")
        assert delta == await game.expected(States.DELTA) and delta["reveal"] is True
        status, _, full = await served.get(f"{base}/replay?states=full")
        assert full == await game.expected(States.FULL)
    assert (replays.built, replays.applied) == (2, 2 * game.seq)


class Blocked:
    """Every worker of the platform's :class:`~merknera.work.Work` busy with a job that
    waits until :meth:`release` (and, with ``waiting``, every place in its line taken)."""

    def __init__(self, served: Served) -> None:
        self.work = served.platform.work
        self.event = threading.Event()
        self.jobs: list[asyncio.Task[bool]] = []

    async def take(self, count: int) -> None:
        held = self.work.held
        self.jobs += [asyncio.create_task(self.work.run(self._wait)) for _ in range(count)]
        await until(lambda: self.work.held == held + count, PATIENCE)

    def _wait(self, _: Deadline) -> bool:
        return self.event.wait(PATIENCE)

    async def release(self) -> None:
        self.event.set()
        assert all(await asyncio.gather(*self.jobs))


def refused(answer: tuple[int, Any, Any], status: int) -> str:
    """The words of a refusal with ``status`` and a ``Retry-After`` of whole seconds."""
    got, headers, body = answer
    assert got == status, (got, body)
    assert int(headers["Retry-After"]) >= 1, headers
    words: str = body["error"]
    return words


PADDED = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {
    "line": [], "pad": [{} for _ in range(20000)]}}, separators=(",", ":"))
"""A reply a bot padded with what the game ignores, to 60 KB (a reply may be 64 KiB)."""


async def test_work_the_platform_cannot_take_on_now_is_refused_with_retry_after(
        served: Served) -> None:
    work = served.platform.work
    game = await Played.start(served)
    await game.play(40, reply=PADDED)
    base = f"/api/games/{game.game_id}"
    owner = served.token  # sees the calls' bodies: megabytes to decode
    blocked = Blocked(served)
    await blocked.take(work.workers + work.waiting)
    try:
        for path in (f"{base}/replay", f"{base}/replay?states=full", f"{base}/live"):
            assert "as many such answers" in refused(await served.get(path), 503), path
        assert "as many such answers" in refused(await served.get(base, owner), 503)
        # Small work is done at once, never refused: the log without its bodies.
        status, _, anybody = await served.get(base)
        assert status == 200 and len(anybody["moves"]) == 40
    finally:
        await blocked.release()
    status, _, delta = await served.get(f"{base}/replay")
    assert status == 200 and delta == await game.expected(States.DELTA)
    # ... and a few moves more of a log built already.
    await game.play(3)
    blocked = Blocked(served)
    await blocked.take(work.workers + work.waiting)
    try:
        status, _, delta = await served.get(f"{base}/replay")
        assert status == 200 and delta == await game.expected(States.DELTA)
    finally:
        await blocked.release()

    # One client may have only its share of such work under way: the next is 429.  Those
    # under way wait for a worker as long as the test may take.
    work.wait_limit = PATIENCE
    blocked = Blocked(served)
    await blocked.take(work.workers)
    waiting = [asyncio.create_task(served.get(base, owner)) for _ in range(work.per_client)]
    try:
        await until(lambda: work.held == work.workers + work.per_client, PATIENCE)
        assert "your address is waiting" in refused(await served.get(base, owner), 429)
    finally:
        await blocked.release()
    for answer in await asyncio.gather(*waiting):
        assert answer[0] == 200, answer
        assert answer[2]["moves"][0]["reply"] == json.loads(PADDED)


async def test_a_games_calls_are_paged_and_their_bodies_shown_to_their_owner_only(
        served: Served) -> None:
    game = await Played.start(served, size=5)
    await game.play(5, request='{"jsonrpc": "2.0", "method": "Hexagons.NextMove"}',
                    reply=PADDED)
    await game.fault("not JSON " + "x" * 500)
    await game.play(5)
    base = f"/api/games/{game.game_id}"
    _, _, anybody = await served.get(base)
    _, _, owner = await served.get(base, served.token)
    assert [move["seq"] for move in anybody["moves"]] == list(range(1, 12))
    assert all(move["request"] is None and move["reply"] is None
               for move in anybody["moves"])
    assert owner["moves"][0]["reply"] == json.loads(PADDED)
    assert owner["moves"][5]["reply"] == "not JSON " + "x" * 500
    # The start of a faulty reply is for anybody, once the game is over.
    assert owner["moves"][5]["reply_excerpt"] == ("not JSON " + "x" * 500)[:117] + "..."
    assert anybody["moves"][5]["reply_excerpt"] is None  # it runs: hidden
    assert {key: value for key, value in anybody.items() if key != "moves"} == {
        key: (None if key == "seed" else value) for key, value in owner.items()
        if key != "moves"}
    for viewer in (None, served.token):
        whole = (await served.get(base, viewer))[2]["moves"]
        pages = []
        for after in range(0, 11, 4):
            status, _, page = await served.get(f"{base}?after={after}&limit=4", viewer)
            assert status == 200 and len(page["moves"]) == min(4, 11 - after)
            pages += page["moves"]
        assert pages == whole
    status, _, _ = await served.get(f"{base}?limit=0")
    assert status == 400


async def test_a_build_past_its_time_limit_keeps_its_frames_and_goes_on_from_there(
        served: Served) -> None:
    game = await Played.start(served)
    await game.play(40)
    header, _ = await game.stored()
    # Every job's time is up at once: each applies one row, then stops.
    work = Work(time_limit=0.0)
    replays = Replays(work)
    refusals = 0
    try:
        while True:
            try:
                async with work.place("a") as place:
                    made = await replays.replay(served.platform.db, header, States.DELTA,
                                                place)
            except TimeLimitError:
                refusals += 1
                continue
            break
        with pytest.raises(TimeLimitError):  # every state whole: in one job or not at all
            async with work.place("a") as place:
                await replays.replay(served.platform.db, header, States.FULL, place)
    finally:
        work.close()
    assert json.loads(made.plain) == await game.expected(States.DELTA)
    assert gzip.decompress(made.gzipped) == made.plain
    # One row a job while more than a few are left, then those at once on the loop (small
    # enough to need no worker); each row applied once.
    assert refusals == 40 - INLINE_ROWS
    assert (replays.built, replays.applied) == (1, 40)


async def test_calls_too_long_to_decode_at_once_are_refused_and_read_a_page_at_a_time(
        served: Served) -> None:
    game = await Played.start(served, size=5)
    await game.play(5, reply=PADDED)
    base = f"/api/games/{game.game_id}"
    work = served.platform.work
    work.time_limit = 0.0  # no job may take any time: what a worker makes runs out of it
    words = refused(await served.get(base, served.token), 503)
    assert "ask for fewer at a time (limit, after)" in words
    for after in range(5):  # one call's bodies are few enough to decode at once
        status, _, page = await served.get(f"{base}?after={after}&limit=1", served.token)
        assert status == 200 and page["moves"][0]["reply"] == json.loads(PADDED)


# -- places, memory, pieces ------------------------------------------------------------------


async def test_a_request_takes_its_place_before_it_waits_for_a_games_frames(
        served: Served) -> None:
    work = served.platform.work
    work.wait_limit = PATIENCE  # the places below wait for as long as the test needs
    work.per_client = 2
    game = await Played.start(served)
    await game.play(40)
    base = f"/api/games/{game.game_id}"
    blocked = Blocked(served)
    await blocked.take(work.workers)
    # The first request builds the game's log: it holds the log while it waits for the
    # worker.  The client's next one waits for the log, in its place.
    first = asyncio.create_task(served.get(f"{base}/replay"))
    await until(lambda: work.held == work.workers + 1, PATIENCE)
    second = asyncio.create_task(served.get(f"{base}/replay?states=full"))
    await until(lambda: work.placed == work.workers + 2, PATIENCE)
    try:
        # A third has no place: refused at once, whatever it would have waited for; what
        # needs none (a short game's calls, no bodies) is answered all the same.
        for path in (f"{base}/replay", f"{base}/live"):
            assert "your address is waiting" in refused(await served.get(path), 429), path
        assert (await served.get(base))[0] == 200
        # Another address waits for the log within its place's time, and no longer.
        work.wait_limit = 0.0
        async with another_address() as other:
            for path in (f"{base}/replay", f"{base}/live"):
                answer = await served.get(path, session=other)
                assert "as many such answers" in refused(answer, 503), path
    finally:
        work.wait_limit = PATIENCE
        await blocked.release()
    status, _, delta = await first
    assert status == 200 and delta == await game.expected(States.DELTA)
    status, _, full = await second
    assert status == 200 and full == await game.expected(States.FULL)
    assert (work.placed, work.held) == (0, 0)


async def test_a_request_cancelled_while_its_job_runs_holds_the_log_until_the_job_ends(
        served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    game = await Played.start(served)
    await game.play(40)
    header, _ = await game.stored()
    started, release = threading.Event(), threading.Event()
    extend = replay.FrameLog.extend

    def held_extend(log: replay.FrameLog, rows: list[Row],
                    deadline: Deadline = UNLIMITED) -> bool:
        started.set()
        release.wait(PATIENCE)
        return extend(log, rows, deadline)

    monkeypatch.setattr(replay.FrameLog, "extend", held_extend)
    replays, work, db = served.platform.replays, served.platform.work, served.platform.db
    shared = replays.shared(header, reveal=False)

    async def catch_up() -> None:
        async with work.place("a client") as place:
            await replays.catch_up(shared, db, place)

    request = asyncio.create_task(catch_up())
    await until(started.is_set, PATIENCE)  # its 40 rows are being applied by the worker
    request.cancel()
    for _ in range(10):  # the loop turns: a cancellation is taken at the next one
        await asyncio.sleep(0)
    # Nobody else may extend the log while the job still does; the place and the worker
    # are the job's until it ends.
    assert not request.done() and shared.lock.locked()
    assert (work.placed, work.held) == (1, 1)
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await request
    assert not shared.lock.locked() and (work.placed, work.held) == (0, 0)
    assert (shared.log.count, replays.applied) == (40, 40)


async def test_a_logs_size_is_what_its_frames_take_and_the_budget_lets_logs_go(
        served: Served) -> None:
    played = []
    for seed in (3, 4, 5):
        game = await Played.start(served, size=9, seed=seed)
        await game.finish()
        played.append(game)
    header, rows = await played[0].stored()
    # What a finished game's log holds, as the allocator counts it: the frames are kept as
    # long as the log, so each must take what the log counts, not a buffer with room to
    # spare.
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        log = replay.FrameLog(header, reveal=True)
        assert log.extend(rows)
        log.encoded(GameStatus.FINISHED)
        log.seal()
        taken = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert taken <= 1.5 * log.size, (taken, log.size)

    work, db = served.platform.work, served.platform.db

    async def asked(replays: Replays, game: Played) -> None:
        header, _ = await game.stored()
        async with work.place(None) as place:
            made = await replays.replay(db, header, States.DELTA, place)
        assert json.loads(made.plain) == await game.expected(States.DELTA)

    replays = Replays(work, budget=int(2.5 * log.size))
    running = await Played.start(served, size=9, seed=9)
    await running.play(30)
    followed = replays.shared((await running.stored())[0], reveal=False)
    with replays.following(followed):
        for game in played:
            await asked(replays, game)
            assert replays.size <= replays.budget or replays.logs == 1
        # The least recently used log went, but for the one a live stream follows.
        assert (replays.logs, replays.built) == (3, 4)
        assert replays.shared(followed.log.header, reveal=False) is followed
    await asked(replays, played[0])  # let go: built again
    assert replays.built == 5 and replays.size <= replays.budget
    few = Replays(work, most=1)
    for game in played[:2]:
        await asked(few, game)
    assert (few.logs, few.built) == (1, 2)


async def test_an_owners_calls_are_read_in_a_place_taken_first_and_bounded_per_answer(
        served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    work = served.platform.work
    work.wait_limit = PATIENCE
    reads: list[int] = []
    read_game = results.read_game

    def counted(conn: Connection, **kwargs: Any) -> Any:
        reads.append(kwargs["game_id"])
        return read_game(conn, **kwargs)

    monkeypatch.setattr(api, "read_game", counted)
    game = await Played.start(served, size=5)
    await game.play(5, reply=PADDED)
    base, owner = f"/api/games/{game.game_id}", served.token
    # One answer carries so many characters of bodies; asked for more, the owner is told
    # how many calls fit.
    monkeypatch.setattr(api, "ANSWER_BODY_CHARS", 2 * len(PADDED) + 100)
    words = refused_without_retry(await served.get(base, owner), 422)
    assert words == (f"the 5 calls of game {game.game_id} after move 0 asked for carry "
                     f"{5 * len(PADDED):,} characters of bodies, more than the "
                     f"{2 * len(PADDED) + 100:,} one answer may carry: ask for 2 at a time "
                     "(limit), then those after them (after)")
    pages = [(await served.get(f"{base}?after={after}&limit=2", owner)) for after in (0, 2, 4)]
    assert [len(page["moves"]) for status, _, page in pages if status == 200] == [2, 2, 1]
    assert all(move["reply"] == json.loads(PADDED) for _, _, page in pages
               for move in page["moves"])
    status, _, anybody = await served.get(base)  # no bodies: nothing to bound
    assert status == 200 and len(anybody["moves"]) == 5

    # The place first: a request refused its place has read nothing (the calls asked for
    # below are made long enough to need one).
    monkeypatch.setattr(api, "INLINE_BODY_CHARS", len(PADDED))
    blocked = Blocked(served)
    await blocked.take(work.workers)
    reads.clear()
    waiting = [asyncio.create_task(served.get(f"{base}?limit=2", owner))
               for _ in range(work.per_client)]
    try:
        await until(lambda: work.held == work.workers + work.per_client, PATIENCE)
        assert len(reads) == work.per_client
        answer = await served.get(f"{base}?limit=2", owner)
        assert "your address is waiting" in refused(answer, 429)
        assert len(reads) == work.per_client
    finally:
        await blocked.release()
    for answer in await asyncio.gather(*waiting):
        assert answer[0] == 200 and len(answer[2]["moves"]) == 2

    # A turn to read is waited for within the place's time.
    async with contextlib.AsyncExitStack() as turns:
        for _ in range(READS):
            taken = await turns.enter_async_context(work.place(None))
            await turns.enter_async_context(taken.reading())
        work.wait_limit = 0.0
        async with another_address() as other:
            answer = await served.get(f"{base}?limit=2", owner, session=other)
            assert "as many such answers" in refused(answer, 503)
            # What needs no turn (no bodies to read) is answered all the same.
            assert (await served.get(base, session=other))[0] == 200
    work.wait_limit = PATIENCE
    assert (await served.get(f"{base}?limit=2", owner))[0] == 200


def refused_without_retry(answer: tuple[int, Any, Any], status: int) -> str:
    """The words of a refusal with ``status`` (one that asking again will not change)."""
    got, headers, body = answer
    assert got == status, (got, body)
    assert "Retry-After" not in headers, headers
    words: str = body["error"]
    return words


async def test_every_state_whole_of_a_running_game_is_made_for_a_few_frames_only(
        served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replays_module, "FULL_RUNNING_FRAMES", 10)
    game = await Played.start(served)
    await game.play(10)
    base = f"/api/games/{game.game_id}"
    status, _, full = await served.get(f"{base}/replay?states=full")
    assert status == 200 and full == await game.expected(States.FULL)
    await game.play(5)
    words = refused_without_retry(await served.get(f"{base}/replay?states=full"), 409)
    assert words.startswith(f"game {game.game_id} is running and has 15 frames: its replay "
                            "with every state whole (states=full) is made for at most 10 "
                            "while it runs"), words
    # Live, every state whole still comes, a piece at a time; and once over, the replay.
    whole = Stream()
    reader = asyncio.create_task(whole.read(served, f"{base}/live?states=full"))
    await whole.until_seq(15)
    await game.finish()
    await asyncio.wait_for(reader, PATIENCE)
    header, rows = await game.stored()
    assert whole.frames == streamed(header, rows, 0, States.FULL)
    status, _, full = await served.get(f"{base}/replay?states=full")
    assert status == 200 and full == await game.expected(States.FULL)


async def test_a_long_answer_its_client_does_not_read_is_cut_off(config: Config) -> None:
    async with serving(config, stream_send_timeout=0.5) as served:
        game = await Played.start(served)
        await game.play(40, reply=PADDED)  # 2.4 MB of bodies for their owner
        work, loop = served.platform.work, asyncio.get_running_loop()
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.setblocking(False)
            await loop.sock_connect(sock, ("127.0.0.1", served.config.listeners.port))
            await loop.sock_sendall(sock, (
                f"GET /api/games/{game.game_id} HTTP/1.1\r\nHost: merknera\r\n"
                f"Authorization: Bearer {served.token}\r\n\r\n").encode())
            await until(lambda: work.started == 1, PATIENCE)  # its answer is being made
            # The answer is written a piece at a time while the client takes it; one that
            # takes none within the send timeout has its connection cut, and its place is
            # given back.
            await until(lambda: work.placed == 0, PATIENCE)
            received = b""
            async with asyncio.timeout(PATIENCE):
                while chunk := await loop.sock_recv(sock, 65536):
                    received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:")))
        assert 0 < len(body) < length


async def test_a_full_replay_asked_for_while_the_game_ran_is_not_kept_as_the_finished_ones(
        served: Served) -> None:
    game = await Played.start(served, size=5)
    await game.play(10)
    replays, work, db = served.platform.replays, served.platform.work, served.platform.db
    header, _ = await game.stored()  # read by a request while the game runs
    shared = replays.shared(header, reveal=False)  # a live stream's log of the game
    async with work.place(None) as place:
        await replays.catch_up(shared, db, place)
    await game.finish()
    async with work.place(None) as place:  # the stream's last look: the log is sealed
        await replays.catch_up(shared, db, place, final=True)
    async with work.place("a client") as place:  # the request goes on
        made = await replays.replay(db, header, States.FULL, place)
    assert json.loads(made.plain)["status"] == "RUNNING"
    for _ in range(2):
        status, _, full = await served.get(f"/api/games/{game.game_id}/replay?states=full")
        assert status == 200 and full == await game.expected(States.FULL)
        assert (full["status"], full["reveal"]) == ("FINISHED", True)


async def test_a_streams_events_are_cut_and_written_a_piece_at_a_time(
        served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replays_module, "PIECE", 1500)
    work = served.platform.work
    game = await Played.start(served)
    await game.play(40)
    base = f"/api/games/{game.game_id}"
    patched, whole = Stream(), Stream()
    readers = [asyncio.create_task(patched.read(served, f"{base}/live?after=5")),
               asyncio.create_task(whole.read(served, f"{base}/live?states=full"))]
    await patched.until_seq(40)
    await whole.until_seq(40)
    # Every state whole of 40 frames: a job for each piece of them (but the last few,
    # made at once), not one job for all after the one that built the log.
    assert work.started > 2
    await game.finish()
    await asyncio.wait_for(asyncio.gather(*readers), PATIENCE)
    header, rows = await game.stored()
    assert patched.frames == streamed(header, rows, 5, States.DELTA)
    assert whole.frames == streamed(header, rows, 0, States.FULL)

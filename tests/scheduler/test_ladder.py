"""The ladder: who it pairs (pure), and passes against real bot servers; the fault rule."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import itertools
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from pytest_aiohttp import AiohttpServer

from merknera.games import JSON
from merknera.ratings import DEFAULT, Rating, update
from merknera.scheduler import ladder
from merknera.scheduler.ladder import (
    Candidate,
    History,
    choose_pairs,
    choose_pairs_reading,
    meeting_shares,
    teaching,
)
from merknera.store import Database, bots, competition, games, users
from merknera.store.db import Connection
from merknera_bots import tictactoe
from tests.conftest import ArenaFactory
from tests.support import Arena, ScriptedBot, play_first_empty, until


def test_new_bots_are_paired_first_with_close_or_uncertain_opponents() -> None:
    veteran = [Candidate(i, 20.0 + i, 1.0, 50) for i in range(1, 7)]
    newcomer = Candidate(99, 25.0, 8.3, 0)
    pairs = choose_pairs([*veteran, newcomer], slots=1)
    assert len(pairs) == 1 and 99 in pairs[0]
    # among veterans, the closest rating is chosen
    pairs = choose_pairs([Candidate(1, 30.0, 1.0, 10), Candidate(2, 10.0, 1.0, 10),
                          Candidate(3, 29.0, 1.0, 10)], slots=1)
    assert set(pairs[0]) == {1, 3}
    assert teaching(Candidate(1, 30, 1, 0), Candidate(3, 29, 1, 0)) > teaching(
        Candidate(1, 30, 1, 0), Candidate(2, 10, 1, 0))


def test_each_bot_at_most_once_and_slots_respected() -> None:
    bots = [Candidate(i, 25.0, 8.0, 0) for i in range(10)]
    pairs = choose_pairs(bots, slots=3)
    assert len(pairs) == 3
    ids = [b for pair in pairs for b in pair]
    assert len(ids) == len(set(ids))
    assert len(choose_pairs(bots, slots=99)) == 5
    assert choose_pairs(bots[:1], slots=5) == []
    assert choose_pairs(bots, slots=0) == []


def test_recent_opponents_count_for_less() -> None:
    a = Candidate(1, 25.0, 2.0, 5, recent=((2,),))
    pairs = choose_pairs([a, Candidate(2, 25.0, 2.0, 5), Candidate(3, 24.0, 2.0, 5)], slots=1)
    assert set(pairs[0]) == {1, 3}


def test_meeting_shares_weigh_the_latest_games_most() -> None:
    decay = ladder.MEETING_DECAY
    total = 1 + decay + decay**2
    assert meeting_shares(((2,), (3, 4), (2,))) == pytest.approx(
        {2: (1 + decay**2) / total, 3: decay / total, 4: decay / total})
    assert meeting_shares(()) == {}
    # Only the window counts: a bot met before it is forgotten.
    window = ladder.MEETING_GAMES
    assert meeting_shares(((2,),) * window + ((3,),) * 5) == {2: 1.0}


def test_a_game_teaches_most_between_uncertain_or_close_ratings() -> None:
    """The order of :func:`teaching` is the order of the rating model's own expected
    narrowing (the drop of the two variances, over both results, by the real update)."""
    pairs = [((25, 25 / 3), (25, 25 / 3)), ((25, 25 / 3), (30, 1)), ((30, 3), (20, 3)),
             ((30, 2), (29, 2)), ((25, 1), (25, 1)), ((30, 1), (10, 1))]

    def narrowing(a: tuple[float, float], b: tuple[float, float]) -> float:
        p = ladder.win_probability(Candidate(1, *a, 0), Candidate(2, *b, 0))
        before = a[1] ** 2 + b[1] ** 2
        drops = [before - sum(r.sigma**2 for r in update([Rating(*a), Rating(*b)], ranks))
                 for ranks in ([0, 1], [1, 0])]
        return p * drops[0] + (1 - p) * drops[1]

    taught = [teaching(Candidate(1, *a, 0), Candidate(2, *b, 0)) for a, b in pairs]
    assert taught == sorted(taught, reverse=True)
    expected = [narrowing(a, b) for a, b in pairs]
    assert expected == sorted(expected, reverse=True)
    for a, b in pairs:
        assert teaching(Candidate(1, *a, 0), Candidate(2, *b, 0)) == pytest.approx(
            teaching(Candidate(2, *b, 0), Candidate(1, *a, 0)), rel=1e-12)


def test_an_opponent_with_a_large_share_is_chosen_only_when_alone() -> None:
    # Bot 1 met bot 2 in half its latest games (bot 4, offline now, in the others): bot 3,
    # far below, teaches much less but is chosen all the same; with bot 3 busy (absent),
    # bot 2 is.
    recent = ((2,), (4,)) * 5
    assert meeting_shares(recent)[2] >= ladder.MAX_SHARE
    one = Candidate(1, 30.0, 1.0, 10, recent)
    twin, far = Candidate(2, 30.0, 1.0, 10), Candidate(3, 10.0, 1.0, 10)
    assert teaching(one, far) < teaching(one, twin) / 5
    assert set(choose_pairs([one, twin, far], slots=1)[0]) == {1, 3}
    assert set(choose_pairs([one, twin], slots=1)[0]) == {1, 2}


async def register(arena: Arena, aiohttp_server: AiohttpServer, name: str,
                   bot: ScriptedBot | None = None) -> ScriptedBot:
    bot = bot or ScriptedBot()
    server = await aiohttp_server(bot.app())
    await arena.register(name, str(server.make_url("/rpc")))
    return bot


async def test_a_pass_pairs_free_online_bots_and_skips_busy_and_disabled(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(max_games_per_bot=1)
    playing = asyncio.Event()  # the ladder's games wait for it: still busy at the 2nd pass
    playing.set()

    async def when_playing(params: dict[str, Any], request_id: Any) -> JSON:
        await playing.wait()
        return await play_first_empty(params, request_id)

    for name in ("a", "b", "c", "d", "e"):
        await register(arena, aiohttp_server, name, ScriptedBot(next_move=when_playing))
    await arena.settle()
    db = arena.platform.db
    await arena.platform.discipline.disable(
        await db.fetchval("SELECT id FROM bots WHERE name = 'e'"), "ADMIN", "testing")
    playing.clear()
    created = await arena.platform.ladder.pass_once()
    assert len(created) == 2  # four free online bots, one game each
    seated = await db.fetchall(
        "SELECT bots.name FROM seats JOIN bots ON bots.id = seats.bot_id "
        "JOIN games ON games.id = seats.game_id WHERE games.origin = 'LADDER'")
    names = [row[0] for row in seated]
    assert sorted(names) == ["a", "b", "c", "d"]
    # every bot has its one game now: a second pass adds nothing
    assert await arena.platform.ladder.pass_once() == []
    playing.set()
    await arena.settle()
    reasons = await db.fetchall("SELECT reason FROM games WHERE origin = 'LADDER'")
    assert {row[0] for row in reasons} == {"NORMAL"}


async def test_the_ladder_runs_by_itself_and_can_be_paused(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(ladder=True, ladder_interval=0.05)
    for name in ("a", "b"):
        await register(arena, aiohttp_server, name)
    arena.platform.set_ladder_paused(True)
    await arena.settle()
    db = arena.platform.db
    before: int = await db.fetchval("SELECT COUNT(*) FROM games WHERE origin = 'LADDER'")
    arena.platform.set_ladder_paused(False)

    async def three_more() -> bool:  # made by the ladder's own timer
        made: int = await db.fetchval("SELECT COUNT(*) FROM games WHERE origin = 'LADDER'")
        return made >= before + 3

    await until(three_more, within=20.0)
    arena.platform.set_ladder_paused(True)
    assert arena.platform.ladder_state() == "PAUSED"


async def timing_out(params: dict[str, Any], _id: Any) -> JSON:
    await asyncio.sleep(5)
    return {"position": 0}


async def test_a_bot_whose_games_keep_faulting_is_disabled_and_can_come_back(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(fault_window=2, fault_share=0.5, move_timeout=0.3)
    await register(arena, aiohttp_server, "good")
    bad_bot = ScriptedBot(next_move=timing_out)
    bad_server = await aiohttp_server(bad_bot.app())
    url = str(bad_server.make_url("/rpc"))
    await arena.register("bad", url)
    await arena.settle()
    db = arena.platform.db

    async def disabled() -> bool:  # the rule runs after the game's event
        status: str = await db.fetchval("SELECT status FROM bots WHERE name = 'bad'")
        return status == "DISABLED"

    await until(disabled)
    reason = await db.fetchval("SELECT disabled_reason FROM bots WHERE name = 'bad'")
    assert reason.startswith("2 of its last 2 games had faults of its own")
    log = [row[0] for row in await db.fetchall(
        "SELECT message FROM bot_log JOIN bots ON bots.id = bot_log.bot_id "
        "WHERE bots.name = 'bad' ORDER BY bot_log.id")]
    assert any(line.startswith("Disabled by the fault rule: 2 of its last 2") for line in log)
    again = await arena.register("bad", url)
    assert "already registered" in str(again["result"])
    assert await db.fetchval("SELECT status FROM bots WHERE name = 'bad'") == "ONLINE"
    # Its old games no longer count: one more fault would not disable it at once.
    bad_id = await db.fetchval("SELECT id FROM bots WHERE name = 'bad'")
    assert await db.read(functools.partial(bots.recent_faults, bot_id=bad_id, window=2)) == []


async def test_offline_bots_are_not_paired(make_arena: ArenaFactory,
                                           aiohttp_server: AiohttpServer) -> None:
    arena = await make_arena(max_games_per_bot=5)
    for name in ("a", "b"):
        await register(arena, aiohttp_server, name)
    await arena.register("gone", "http://127.0.0.1:9/rpc")  # NewGame cannot reach it
    await arena.settle()
    db = arena.platform.db
    assert await db.fetchval("SELECT status FROM bots WHERE name = 'gone'") == "OFFLINE"
    created = await arena.platform.ladder.pass_once()
    assert len(created) == 1
    names = {row[0] for row in await db.fetchall(
        "SELECT bots.name FROM seats JOIN bots ON bots.id = seats.bot_id "
        "WHERE seats.game_id = ?", (created[0],))}
    assert names == {"a", "b"}


def test_first_seats_even_out_over_passes() -> None:
    """Two equal bots paired pass after pass take turns at moving first."""
    firsts = {1: 0, 2: 0}
    history: list[int] = []
    for _ in range(20):
        recent = {bot: sum(1 for first in history[-10:] if first == bot) for bot in firsts}
        (first, _second), = choose_pairs(
            [Candidate(bot, 25.0, 8.0, 0, first_seats=recent[bot]) for bot in firsts], 1)
        firsts[first] += 1
        history.append(first)
    assert abs(firsts[1] - firsts[2]) <= 2
    assert max(len(list(run)) for _, run in itertools.groupby(history)) <= 2


async def test_the_ladder_reads_ratings_first_seats_and_last_opponents(
        db: Database) -> None:
    """The ladder's reads, on each store: busy bots left out, unrated bots at the default
    rating, first seats from the last ten games only, the other seats of the latest games
    newest first, as many games as the window holds (a wrong window, a game out of order
    or a seat counted twice changes these numbers)."""
    user, _ = await users.create_user(db, "owner")

    def fill(conn: Connection) -> dict[str, int]:
        ids = {name: bots.insert(conn, name=name, version="1", game="TICTACTOE",
                                 user_id=user.id, secret="s",
                                 meta=bots.BotMetadata("http://127.0.0.1:9/rpc")).id
               for name in "abcdefgu"}
        a, b, c, d, e, f, g = (ids[name] for name in "abcdefg")
        played: list[tuple[int, ...]] = [(a, b)] * 3  # a's oldest: not in its last ten
        played += [(a, b), (b, a), (a, b), (b, a), (a, b), (b, a), (a, b)]
        played += [(c, a), (d, a, e), (a, f)]
        for seats in played:
            game_id = games.create(conn, "TICTACTOE", 1, seats)
            conn.execute("UPDATE games SET status = 'FINISHED', outcome = 'NO_RESULT', "
                         "reason = 'ABORTED', finished_at = '2030-01-01' WHERE id = ?",
                         (game_id,))
        games.create(conn, "TICTACTOE", 1, (f, g))  # not finished: f and g are busy
        conn.execute("INSERT INTO ratings (bot_id, game, mu, sigma, rated_games, "
                     "updated_at) VALUES (?, 'TICTACTOE', 30.0, 2.0, 12, '2030-01-01')",
                     (a,))
        return ids

    ids = await db.transaction(fill)
    a, b, c, d, e, f, g, u = (ids[name] for name in "abcdefgu")
    mu, sigma = DEFAULT.mu, DEFAULT.sigma

    async def contenders(cap: int) -> set[competition.Contender]:
        return set(await db.read(functools.partial(
            competition.contenders, bot_ids=list(ids.values()), cap=cap)))

    C = competition.Contender  # noqa: N806
    assert await contenders(cap=1) == {
        C(a, 30.0, 2.0, 12, 5), C(b, mu, sigma, 0, 3), C(c, mu, sigma, 0, 1),
        C(d, mu, sigma, 0, 1), C(e, mu, sigma, 0, 0), C(u, mu, sigma, 0, 0)}
    assert await contenders(cap=2) == await contenders(cap=1) | {
        C(f, mu, sigma, 0, 1), C(g, mu, sigma, 0, 0)}
    # a played 13 games, more than the window holds: its oldest are left out
    assert 10 < competition.RECENT_GAMES < 13
    assert await db.read(functools.partial(
            competition.recent_opponents, bot_ids=list(ids.values()))) == {
        a: ((f,), (d, e), (c,), *((b,),) * 10)[:competition.RECENT_GAMES],
        b: ((a,),) * 10, c: ((a,),), d: ((a, e),), e: ((a, d),), f: ((g,), (a,)),
        g: ((f,),), u: ()}


def reader(known: list[Candidate],
           asked: list[int]) -> Callable[[list[int]], dict[int, History]]:
    """read_recent for choose_pairs_reading: the opponents in ``known``, noting who was
    asked about."""
    def read(bot_ids: list[int]) -> dict[int, History]:
        asked.extend(bot_ids)
        return {bot_id: known[bot_id].recent for bot_id in bot_ids}
    return read


@pytest.mark.parametrize("read_ahead", [0, 1, 2, ladder.READ_AHEAD])
def test_reading_opponents_on_demand_gives_the_same_pairs(
        read_ahead: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """choose_pairs_reading pairs exactly as choose_pairs does with every bot's opponents
    known, whether its first read covers enough bots or not (a short one must be caught and
    read again): many bots and few slots, few bots, clusters of equal ratings."""
    monkeypatch.setattr(ladder, "READ_AHEAD", read_ahead)
    for seed in range(400):
        rng = random.Random(seed)
        size = rng.choice([2, 3, 7, 20, 60, 300])
        clustered = rng.random() < 0.5
        known = [Candidate(bot_id, rng.choice([20.0, 25.0]) if clustered else rng.gauss(25, 5),
                           rng.choice([1.0, 8.0]) if clustered else rng.uniform(1, 8),
                           rng.randint(0, 2 if clustered else 50),
                           tuple((other,) for other in rng.sample(range(size), min(size, 3))),
                           rng.randint(0, 10))
                 for bot_id in range(size)]
        slots = rng.randint(1, size // 2 + 2)
        unknown = [dataclasses.replace(bot, recent=()) for bot in known]
        pairs = choose_pairs_reading(unknown, slots, reader(known, []))
        assert pairs == choose_pairs(known, slots), seed


def test_a_pass_reads_the_opponents_of_the_bots_it_reaches_only() -> None:
    rng = random.Random(1)
    known = [Candidate(bot_id, rng.gauss(25, 5), rng.uniform(1, 8), rng.randint(0, 50),
                       tuple((other,) for other in rng.sample(range(1000), 3)))
             for bot_id in range(1000)]
    asked: list[int] = []
    unknown = [dataclasses.replace(bot, recent=()) for bot in known]
    assert choose_pairs_reading(unknown, 32, reader(known, asked)) == choose_pairs(known, 32)
    assert len(asked) == ladder.READ_AHEAD * 32


REFERENCE_BOTS = (("Perfect Polly", "perfect"), ("Perfect Pete", "perfect"),
                  ("Random Rita", "random"), ("Random Rob", "random"))
PASSES = 24


async def test_the_reference_bots_spread_their_games(
        make_arena: ArenaFactory, aiohttp_server: AiohttpServer) -> None:
    """The tic-tac-toe reference bots of ``make run``, pass after pass: the two perfect
    ones draw every game between them, so their ratings stay the closest, yet neither
    plays most of its games against the other while the random ones are there (once
    they met in nearly every game)."""
    arena = await make_arena(max_games_per_bot=1)
    for seed, (name, strategy) in enumerate(REFERENCE_BOTS):
        server = await aiohttp_server(tictactoe.make_bot(strategy, seed=seed).make_app())
        await arena.register(name, str(server.make_url("/rpc")))
    await arena.settle()
    for _ in range(PASSES):
        assert len(await arena.platform.ladder.pass_once()) == 2
        await arena.settle()
    met = await arena.platform.db.fetchall(
        "SELECT mine.name, theirs.name FROM seats AS me "
        "JOIN seats AS other ON other.game_id = me.game_id AND other.bot_id != me.bot_id "
        "JOIN bots AS mine ON mine.id = me.bot_id JOIN bots AS theirs ON theirs.id = other.bot_id "
        "JOIN games ON games.id = me.game_id WHERE games.origin = 'LADDER'")
    opponents = {name: Counter[str]() for name, _ in REFERENCE_BOTS}
    for name, other in met:
        opponents[name][other] += 1
    for name, counts in opponents.items():
        assert counts.total() == PASSES
        assert max(counts.values()) <= PASSES / 2, (name, counts)
    # they still meet: the closest ratings are worth some games
    assert opponents["Perfect Pete"]["Perfect Polly"] >= PASSES / 6

"""Places in play: the total, each owner's fair share, and who is served first."""

from __future__ import annotations

import asyncio

import pytest

from merknera.scheduler import slots as slots_module
from merknera.scheduler.slots import Place, Slots


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_an_owner_holds_no_more_than_its_share_while_others_play() -> None:
    slots = Slots(total=4, per_owner=2)
    await slots.acquire({1})
    await slots.acquire({1})
    third = asyncio.ensure_future(slots.acquire({1}))
    others = asyncio.ensure_future(slots.acquire({2}))
    await settle()
    # The third game of owner 1 waits; owner 2's game, which came later, goes ahead.
    assert not third.done() and others.done()
    assert (slots.in_use, slots.held_by(1), slots.held_by(2)) == (3, 2, 1)
    slots.release({1})
    await settle()
    assert third.done() and slots.held_by(1) == 2


async def test_a_game_counts_against_every_owner_seated() -> None:
    slots = Slots(total=10, per_owner=1)
    await slots.acquire({1, 2})
    waiting = [asyncio.ensure_future(slots.acquire({owner})) for owner in (1, 2, 3)]
    await settle()
    assert [task.done() for task in waiting] == [False, False, True]
    slots.release({1, 2})
    await settle()
    assert all(task.done() for task in waiting)


async def test_waiters_that_fit_are_served_in_the_order_they_came() -> None:
    slots = Slots(total=1, per_owner=1)
    await slots.acquire({9})
    order: list[int] = []

    async def play(owner: int) -> None:
        await slots.acquire({owner})
        order.append(owner)
        slots.release({owner})

    tasks = [asyncio.ensure_future(play(owner)) for owner in (3, 1, 2)]
    await settle()
    slots.release({9})
    await asyncio.gather(*tasks)
    assert order == [3, 1, 2]
    assert slots.in_use == 0


async def test_a_cancelled_waiter_gives_its_turn_away() -> None:
    slots = Slots(total=1, per_owner=1)
    await slots.acquire({1})
    cancelled = asyncio.ensure_future(slots.acquire({2}))
    later = asyncio.ensure_future(slots.acquire({3}))
    await settle()
    cancelled.cancel()
    await settle()
    slots.release({1})
    await settle()
    assert later.done() and (slots.in_use, slots.held_by(2), slots.held_by(3)) == (1, 0, 1)


def test_a_share_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Slots(total=4, per_owner=0)


async def test_a_game_of_two_owners_is_not_starved_by_games_of_either(
        monkeypatch: pytest.MonkeyPatch) -> None:
    slots = Slots(total=10, per_owner=1)
    await slots.acquire({1})
    await slots.acquire({2})
    both = asyncio.ensure_future(slots.acquire({1, 2}))
    later = asyncio.ensure_future(slots.acquire({1}))
    await settle()
    slots.release({1})  # owner 1 is free, owner 2 is not: the later game of 1 goes first
    await settle()
    assert later.done() and not both.done()
    slots.release({1})
    monkeypatch.setattr(slots_module, "PATIENCE", 0.0)  # now it has waited long enough
    again = asyncio.ensure_future(slots.acquire({1}))
    await settle()
    assert not again.done()  # owner 1's free place is kept for the game of both
    slots.release({2})
    await settle()
    assert both.done() and not again.done()
    slots.release({1, 2})
    await settle()
    assert again.done()


async def test_a_place_given_up_while_its_runner_waits_goes_to_another_game() -> None:
    slots = Slots(total=1, per_owner=1)
    place = Place(slots, {1})
    await place.take()
    other = asyncio.ensure_future(slots.acquire({2}))
    async with place.given_up():
        await settle()
        assert other.done() and slots.held_by(1) == 0
        slots.release({2})
    assert slots.held_by(1) == 1  # taken back once the wait is over
    place.give_up()
    place.give_up()  # nothing more to give back
    assert slots.in_use == 0


async def test_a_wait_that_raised_takes_no_place_back() -> None:
    slots = Slots(total=1, per_owner=1)
    place = Place(slots, {1})
    await place.take()
    with pytest.raises(asyncio.CancelledError):
        async with place.given_up():
            raise asyncio.CancelledError
    assert slots.in_use == 0


async def test_a_game_whose_bots_are_all_held_clients_needs_no_place() -> None:
    slots = Slots(total=1, per_owner=1)
    await slots.acquire({2})
    place = Place(slots, ())
    async with asyncio.timeout(1.0):
        await place.take()  # at once, although every place is taken
    assert slots.in_use == 1

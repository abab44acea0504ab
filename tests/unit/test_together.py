"""`fetcher.together.Together`: items handed in while a group is worked on go together into
the next group; one handed in with nothing running starts at once (the fetch process's
batch finishes: fetcher/worker.py)."""

from __future__ import annotations

import asyncio

import pytest

from fetcher.together import Together
from tests.unit.test_coalesce import Runs, settle


async def test_items_handed_in_during_a_group_go_together_into_the_next() -> None:
    runs = Runs()
    together = Together(runs)
    first = asyncio.ensure_future(together.run(1))
    await settle()
    assert runs.started == [[1]]  # at once: nothing was running
    later = [asyncio.ensure_future(together.run(item)) for item in (2, 3, 4)]
    await settle()
    assert runs.started == [[1]]  # they wait for the group being worked on

    runs.go.set()
    await first
    await asyncio.gather(*later)
    assert runs.started == [[1], [2, 3, 4]]  # one call for the three, in order
    await together.run(5)  # nothing running any more: a group of its own
    assert runs.started[-1] == [5]


async def test_only_items_of_one_key_go_together() -> None:
    runs = Runs()
    together = Together(runs)
    first = asyncio.ensure_future(together.run(1, key=1))
    await settle()
    later = [
        asyncio.ensure_future(together.run(item, key=key)) for item, key in ((2, 2), (3, 1), (4, 2))
    ]
    await settle()
    runs.go.set()
    await asyncio.gather(first, *later)
    assert runs.started == [[1], [2, 4], [3]]


async def test_a_failed_group_fails_each_of_its_callers_and_no_other() -> None:
    runs = Runs()
    together = Together(runs)
    first = asyncio.ensure_future(together.run(1))
    await settle()
    runs.fail = RuntimeError("database gone")
    later = [asyncio.ensure_future(together.run(item)) for item in (2, 3)]
    await settle()
    runs.go.set()
    for caller in (first, *later):
        with pytest.raises(RuntimeError, match="database gone"):
            await caller
    runs.fail = None
    await together.run(4)  # the next group runs as usual
    assert runs.started == [[1], [2, 3], [4]]


async def test_a_caller_cancelled_before_its_group_began_is_left_out() -> None:
    runs = Runs()
    together = Together(runs)
    first = asyncio.ensure_future(together.run(1))
    await settle()
    gone = asyncio.ensure_future(together.run(2))
    kept = asyncio.ensure_future(together.run(3))
    await settle()
    gone.cancel()
    await settle()
    assert gone.cancelled()
    runs.go.set()
    await asyncio.gather(first, kept)
    assert runs.started == [[1], [3]]


async def test_a_caller_cancelled_during_its_group_leaves_once_the_group_is_done() -> None:
    runs = Runs()
    together = Together(runs)
    caller = asyncio.ensure_future(together.run(1))
    await settle()
    caller.cancel()
    await settle()
    assert not caller.done()  # its item is being worked on: it waits for the end of it
    runs.go.set()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert runs.started == [[1]]

"""`fetcher.together.Together`: items handed in while a group is worked on go together into
the next group; one handed in with nothing running starts at once (the fetch process's
batch finishes: fetcher/worker.py)."""

from __future__ import annotations

import asyncio

import pytest

from fetcher.together import Together


async def settle() -> None:
    """Let every task that can go on run until it waits (no time passes)."""
    for _ in range(10):
        await asyncio.sleep(0)


class Groups:
    """Work that waits to be let go, so the test decides who hands items in during it."""

    def __init__(self) -> None:
        self.started: list[list[str]] = []
        self.go = asyncio.Event()
        self.fail: Exception | None = None

    async def __call__(self, items: list[str]) -> None:
        self.started.append(items)
        await self.go.wait()
        if self.fail is not None:
            raise self.fail


async def test_items_handed_in_during_a_group_go_together_into_the_next() -> None:
    groups = Groups()
    together = Together(groups)
    first = asyncio.ensure_future(together.run("a"))
    await settle()
    assert groups.started == [["a"]]  # at once: nothing was running
    later = [asyncio.ensure_future(together.run(item)) for item in "bcd"]
    await settle()
    assert groups.started == [["a"]]  # they wait for the group being worked on

    groups.go.set()
    await first
    await asyncio.gather(*later)
    assert groups.started == [["a"], ["b", "c", "d"]]  # one call for the three, in order
    await together.run("e")  # nothing running any more: a group of its own
    assert groups.started[-1] == ["e"]


async def test_only_items_of_one_key_go_together() -> None:
    groups = Groups()
    together = Together(groups)
    first = asyncio.ensure_future(together.run("a", key=1))
    await settle()
    later = [
        asyncio.ensure_future(together.run(item, key=key))
        for item, key in (("b", 2), ("c", 1), ("d", 2))
    ]
    await settle()
    groups.go.set()
    await asyncio.gather(first, *later)
    assert groups.started == [["a"], ["b", "d"], ["c"]]


async def test_a_failed_group_fails_each_of_its_callers_and_no_other() -> None:
    groups = Groups()
    together = Together(groups)
    first = asyncio.ensure_future(together.run("a"))
    await settle()
    groups.fail = RuntimeError("database gone")
    later = [asyncio.ensure_future(together.run(item)) for item in "bc"]
    await settle()
    groups.go.set()
    for caller in (first, *later):
        with pytest.raises(RuntimeError, match="database gone"):
            await caller
    groups.fail = None
    await together.run("d")  # the next group runs as usual
    assert groups.started == [["a"], ["b", "c"], ["d"]]


async def test_a_caller_cancelled_before_its_group_began_is_left_out() -> None:
    groups = Groups()
    together = Together(groups)
    first = asyncio.ensure_future(together.run("a"))
    await settle()
    gone = asyncio.ensure_future(together.run("b"))
    kept = asyncio.ensure_future(together.run("c"))
    await settle()
    gone.cancel()
    await settle()
    assert gone.cancelled()
    groups.go.set()
    await asyncio.gather(first, kept)
    assert groups.started == [["a"], ["c"]]


async def test_a_caller_cancelled_during_its_group_leaves_once_the_group_is_done() -> None:
    groups = Groups()
    together = Together(groups)
    caller = asyncio.ensure_future(together.run("a"))
    await settle()
    caller.cancel()
    await settle()
    assert not caller.done()  # its item is being worked on: it waits for the end of it
    groups.go.set()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert groups.started == [["a"]]

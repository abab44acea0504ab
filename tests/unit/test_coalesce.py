"""`frontier.coalesce`: `Together`, items handed in while a group is worked on go together
into the next group, and one handed in with nothing running starts at once (the fetch
process's batch finishes: fetcher/worker.py); `Coalesced`, callers that ask at once share a
run, and each gets a run that started after it asked (the queue's folds:
frontier/queue.py)."""

from __future__ import annotations

import asyncio

import pytest

from frontier.coalesce import Coalesced, Together


async def settle() -> None:
    """Let every task that can go on run until it waits (no time passes)."""
    for _ in range(10):
        await asyncio.sleep(0)


class Runs:
    """A run that waits to be let go, so the test decides who asks during it."""

    def __init__(self) -> None:
        self.started: list[list[int]] = []
        self.go: asyncio.Event = asyncio.Event()
        self.fail: Exception | None = None

    async def __call__(self, keys: list[int]) -> int:
        self.started.append(keys)
        await self.go.wait()
        if self.fail is not None:
            raise self.fail
        return len(self.started)


async def test_callers_during_a_run_share_the_next_one_which_covers_their_keys() -> None:
    runs = Runs()
    shared = Coalesced(runs)
    first = asyncio.ensure_future(shared([3]))
    await settle()
    assert runs.started == [[3]]  # at once: nothing was going
    later = [asyncio.ensure_future(shared(keys)) for keys in ([2], [5, 3], [2])]
    await settle()
    assert runs.started == [[3]]  # they wait for the run going to end: it began before them

    runs.go.set()
    assert await first == 1
    assert await asyncio.gather(*later) == [2, 2, 2]  # one run for the three
    assert runs.started == [[3], [2, 3, 5]]


async def test_a_failed_run_fails_its_callers_and_the_next_call_runs_again() -> None:
    runs = Runs()
    shared = Coalesced(runs)
    runs.fail = RuntimeError("database gone")
    runs.go.set()
    with pytest.raises(RuntimeError, match="database gone"):
        await asyncio.gather(shared([1]), shared([1]))
    runs.fail = None
    assert await shared([1]) == 2  # both asked before the failed run began: it was theirs
    assert len(runs.started) == 2


async def test_a_caller_cancelled_while_waiting_leaves_the_run_to_the_others() -> None:
    runs = Runs()
    shared = Coalesced(runs)
    gone = asyncio.ensure_future(shared([1]))
    stays = asyncio.ensure_future(shared([1]))
    await settle()
    gone.cancel()
    runs.go.set()
    assert await stays == 1
    assert gone.cancelled() and runs.started == [[1]]


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

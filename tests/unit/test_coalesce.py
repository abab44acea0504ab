"""`frontier.coalesce.Coalesced`: callers that ask at once share a run, and each gets a
run that started after it asked (the queue's folds: frontier/queue.py)."""

from __future__ import annotations

import asyncio

import pytest

from frontier.coalesce import Coalesced


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

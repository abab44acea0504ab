"""One run shared by the callers that ask for it at about the same time.

`Coalesced(run)` is awaited as `await coalesced(keys)`: it returns once a run of `run`
over (at least) `keys` that started after the call has ended, with that run's result. A
call made while no run is going starts one at once; calls made during a run wait for the
next, which starts when that one ends and covers all their keys together. So however many
callers ask at once, at most one run is going and one more is waiting, and each caller
still gets a run that began after it asked: what it wrote before asking is in it.

The queue's folds use it (`QueueRepository`: a submit folds its batch's host summaries
before it returns, and the poller's many concurrent polls each submit a feed's entries; one
fold a submit made them queue behind each other on host_deltas' rows). A caller cancelled
while waiting leaves the run to the others; a run that fails fails every caller waiting
for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Generic, TypeVar

R = TypeVar("R")


class Coalesced(Generic[R]):
    """`run` is called with the keys (sorted) of the calls it serves."""

    def __init__(self, run: Callable[[list[int]], Awaitable[R]]) -> None:
        self._run = run
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: asyncio.Task[None] | None = None
        self._next: asyncio.Future[R] | None = None  # for the calls since the last start
        self._keys: set[int] = set()

    async def __call__(self, keys: Iterable[int]) -> R:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (tests): nothing carries over
            self._loop, self._runner, self._next, self._keys = loop, None, None, set()
        self._keys.update(keys)
        if self._next is None:
            self._next = loop.create_future()
        waiting = self._next
        if self._runner is None or self._runner.done():
            self._runner = loop.create_task(self._runs())
        return await asyncio.shield(waiting)

    async def _runs(self) -> None:
        """Run for whoever waits, until nobody does."""
        while self._next is not None:
            done, self._next = self._next, None
            keys, self._keys = sorted(self._keys), set()
            try:
                result = await self._run(keys)
            except asyncio.CancelledError:
                done.cancel()
                if self._next is not None:
                    self._next.cancel()
                    self._next = None
                raise
            except Exception as exc:
                done.set_exception(exc)
            else:
                done.set_result(result)

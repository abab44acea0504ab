"""Work handed in by many tasks at about the same time, done in shared runs, as a
database's group commit does.

`Together(work)`: `await together.run(item, key)` returns once a call of `work` over a
group of items holding `item` has ended, with that call's result. An item handed in while
no run is going starts one at once (nothing waits for a group to fill); items handed in
during a run wait for it to end, and then go together into the next. So each caller gets a
run that began after it asked: what it wrote before asking is in it. At most one run is
going and one more group is waiting.

- The fetch process finishes its batches this way (`fetcher.worker`): each finish is
  about ten round trips to PostgreSQL whatever the number of pages, and batches done while
  another's finish runs share the next one (bench/RESULTS.md, tenth session, s10-loop).
- `Coalesced(run)` is the same for callers that each name a set of keys and all want one
  thing done over them: the queue's folds (`QueueRepository`: a submit folds its batch's
  host summaries before it returns, and the poller's many concurrent polls each submit a
  feed's entries; one fold a submit made them queue behind each other on host_deltas' rows).

A caller cancelled before its run began is left out of it; one cancelled during its run
waits for that run to end, so that it knows what was done (a batch's pages stored and
completed). A run that fails fails every caller in it, and no other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(slots=True)
class _Waiting(Generic[T, R]):
    item: T
    key: Hashable
    done: asyncio.Future[R]


class Together(Generic[T, R]):
    """Only items of one `key` go into a group, in the order they came."""

    def __init__(self, work: Callable[[list[T]], Awaitable[R]]) -> None:
        self._work = work
        self._waiting: list[_Waiting[T, R]] = []
        self._runner: asyncio.Task[None] | None = None

    async def run(self, item: T, key: Hashable = None) -> R:
        loop = asyncio.get_running_loop()
        if self._runner is not None and self._runner.get_loop() is not loop:
            # a new event loop (tests): what the old one left can never run
            self._runner, self._waiting = None, []
        entry: _Waiting[T, R] = _Waiting(item, key, loop.create_future())
        self._waiting.append(entry)
        if self._runner is None:
            self._runner = loop.create_task(self._run_groups())
        try:
            return await asyncio.shield(entry.done)
        except asyncio.CancelledError:
            if entry in self._waiting:  # not taken yet: it is not done at all
                self._waiting.remove(entry)
                raise
            # Taken into the group being worked on: let that end first.
            while not entry.done.done():
                try:
                    await asyncio.shield(entry.done)
                except asyncio.CancelledError:
                    continue
            if not entry.done.cancelled():
                entry.done.exception()  # seen: the caller leaves cancelled either way
            raise

    async def _run_groups(self) -> None:
        try:
            while self._waiting:
                key = self._waiting[0].key
                group = [w for w in self._waiting if w.key == key]
                self._waiting = [w for w in self._waiting if w.key != key]
                try:
                    result = await self._work([w.item for w in group])
                except asyncio.CancelledError:
                    for w in group:
                        w.done.cancel()
                    raise
                except BaseException as exc:
                    for w in group:
                        if not w.done.done():
                            w.done.set_exception(exc)
                else:
                    for w in group:
                        if not w.done.done():
                            w.done.set_result(result)
        finally:
            self._runner = None
            for w in self._waiting:  # only when cancelled: nobody will take these
                w.done.cancel()
            self._waiting = []


class Coalesced(Generic[R]):
    """`await coalesced(keys)`: `run` is called with the keys (sorted) of the calls its
    run serves, and each of them gets its result."""

    def __init__(self, run: Callable[[list[int]], Awaitable[R]]) -> None:
        self._together: Together[frozenset[int], R] = Together(
            lambda sets: run(sorted(frozenset().union(*sets)))
        )

    async def __call__(self, keys: Iterable[int]) -> R:
        return await self._together.run(frozenset(keys))

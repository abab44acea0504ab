"""`Together`: work handed in by many tasks, done in groups, as a database's group commit
does: an item that arrives while a group is being worked on waits for it, and goes with
every other item that arrived meanwhile into the next group (one call of `work` for all of
them). An item that arrives with nothing running starts at once: nothing waits for a group
to fill.

The fetch process finishes its batches this way (`fetcher.worker`): each finish is about
ten round trips to PostgreSQL (the keys, the near-duplicates, the document write, the
completion, the fetch_log rows) whatever the number of pages, and batches done while
another's finish runs share the next one (bench/RESULTS.md, tenth session, s10-loop).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class _Waiting(Generic[T]):
    item: T
    key: Hashable
    done: asyncio.Future[None]


class Together(Generic[T]):
    """`await together.run(item, key)` returns once `work` has done a group holding `item`
    (or raises what that call raised). Only items of one `key` go into a group, in the
    order they came."""

    def __init__(self, work: Callable[[list[T]], Awaitable[None]]) -> None:
        self._work = work
        self._waiting: list[_Waiting[T]] = []
        self._runner: asyncio.Task[None] | None = None

    async def run(self, item: T, key: Hashable = None) -> None:
        entry = _Waiting(item, key, asyncio.get_running_loop().create_future())
        self._waiting.append(entry)
        if self._runner is None:
            self._runner = asyncio.create_task(self._run_groups())
        try:
            await asyncio.shield(entry.done)
        except asyncio.CancelledError:
            if entry in self._waiting:  # not taken yet: it is not done at all
                self._waiting.remove(entry)
                raise
            # Taken into the group being worked on: let that end first, so that the
            # caller, cleaning up, knows what was done (its pages stored and completed).
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
                    await self._work([w.item for w in group])
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
                            w.done.set_result(None)
        finally:
            self._runner = None
            for w in self._waiting:  # only when cancelled: nobody will take these
                w.done.cancel()
            self._waiting = []

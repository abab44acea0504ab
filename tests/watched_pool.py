"""A parse pool (`frontier.parse_pool`) that shows the event loop kept turning while each
parse was awaited: nothing is timed, a ticker counts the loop's turns."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from frontier.parse_pool import ParseLimits, ParsePool

T = TypeVar("T")


class WatchedPool(ParsePool):
    """A parse pool that counts the event loop's turns while each parse is awaited."""

    def __init__(self, limits: ParseLimits) -> None:
        super().__init__(limits)
        self.turns = 0
        self.turns_per_parse: list[int] = []
        self.in_flight = 0

    async def tick(self) -> None:
        while True:
            self.turns += 1
            await asyncio.sleep(0.001)

    async def run(self, job: Callable[..., T], *args: Any) -> T:
        before = self.turns
        self.in_flight += 1
        try:
            return await super().run(job, *args)
        finally:
            self.in_flight -= 1
            self.turns_per_parse.append(self.turns - before)


@asynccontextmanager
async def watching() -> AsyncIterator[WatchedPool]:
    """A watched pool with generous limits, its ticker running."""
    async with WatchedPool(ParseLimits(timeout_s=120, cpu_s=120)) as pool:
        ticker = asyncio.create_task(pool.tick())
        try:
            yield pool
        finally:
            ticker.cancel()

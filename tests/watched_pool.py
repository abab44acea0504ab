"""A parse pool (`frontier.parse_pool`) that shows the event loop kept serving while each
parse was awaited: nothing is timed, a callback scheduled once the parse has started must
run before the parse is done (a parse on the event loop itself would be done first)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from frontier.parse_pool import ParseLimits, ParsePool

T = TypeVar("T")


class WatchedPool(ParsePool):
    """A parse pool that notes, for each parse, whether the event loop ran something else
    while it was in flight."""

    def __init__(self, limits: ParseLimits) -> None:
        super().__init__(limits)
        self.served_during_parse: list[bool] = []
        self.in_flight = 0

    async def run(self, job: Callable[..., T], *args: Any) -> T:
        self.in_flight += 1
        parse = asyncio.ensure_future(super().run(job, *args))
        served: list[bool] = []
        # Runs once the parse task has taken its first step (and handed the work over).
        asyncio.get_running_loop().call_soon(lambda: served.append(not parse.done()))
        try:
            return await parse
        finally:
            self.in_flight -= 1
            self.served_during_parse.append(served == [True])


@asynccontextmanager
async def watching() -> AsyncIterator[WatchedPool]:
    """A watched pool with generous limits."""
    async with WatchedPool(ParseLimits(timeout_s=120, cpu_s=120)) as pool:
        yield pool


def modules_loaded(prefix: str) -> list[str]:
    """A parse job: the modules named `prefix...` that its process had imported when the job
    began (this module imports none of the services')."""
    return sorted(name for name in sys.modules if name.startswith(prefix))

"""How every long-running process runs its asyncio code: on uvloop where it is installed
(every platform but Windows, where pip skips it), else on the standard event loop.

uvloop is the libuv event loop that asyncpg's authors wrote; aiohttp and asyncpg run on it
unchanged. The fetch process spends part of its CPU in the event loop's own Python
(scheduling callbacks, socket readiness); uvloop does that in C, for less CPU per page
on `bench.fetch` (bench/RESULTS.md, "Extraction at the speed of the fetch").
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

try:
    import uvloop
except ImportError:  # Windows: no uvloop wheel; the standard loop does the same work
    uvloop = None  # type: ignore[assignment]

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, on uvloop when it is installed."""
    if uvloop is None:
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)

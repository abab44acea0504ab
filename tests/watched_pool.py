"""A parse pool (`frontier.parse_pool`) that shows the event loop kept serving while each
parse was awaited: nothing is timed, a callback scheduled once the parse has started must
run before the parse is done (a parse on the event loop itself would be done first). And
parse jobs for the tests of the pool itself (a worker imports this module to run them)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
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


# -- parse jobs for the pool's own tests (tests/unit/test_parse_pool.py) ------------------

_HOARD: list[bytearray] = []  # what `hoard` keeps in its worker, as a leaking parser would


def burn(cpu_s: float) -> int:
    """A parse job: use `cpu_s` of CPU, then answer with the worker's pid."""
    started = time.process_time()
    while time.process_time() - started < cpu_s:
        pass
    return os.getpid()


def spin(pid_file: str) -> None:
    """A parse job that never ends: write the worker's pid to `pid_file`, then use CPU."""
    Path(pid_file).write_text(str(os.getpid()))
    while True:
        pass


def outlive(pid: int) -> int:
    """A parse job: wait (up to a minute) for process `pid` to end, then answer with the
    worker's pid."""
    with contextlib.suppress(ProcessLookupError):  # already gone
        ended = os.pidfd_open(pid)
        try:
            select.select([ended], [], [], 60)
        finally:
            os.close(ended)
    return os.getpid()


def hoard() -> None:
    """A parse job that takes all the memory its worker may have, keeps it, and fails."""
    while True:
        _HOARD.append(bytearray(1024 * 1024))


def allocate(mib: int) -> int:
    """A parse job: hold `mib` MiB for a moment, then answer with the worker's pid."""
    held = bytearray(mib * 1024 * 1024)
    return os.getpid() + 0 * len(held)

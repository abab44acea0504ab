"""Waiting on a condition with a deadline while a child process runs. Between two checks
the test waits on the child exiting (at most `tick_s`), so a child that dies fails the
test at once, with its log, instead of at the deadline."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def wait_until(
    check: Callable[[], Awaitable[T]],
    process: asyncio.subprocess.Process,
    *,
    deadline_s: float = 60.0,
    tick_s: float = 0.2,
    what: str = "condition",
) -> T:
    """Call `check` until it returns something truthy and return that; the child must
    stay alive meanwhile."""
    deadline = time.monotonic() + deadline_s
    last: T | None = None
    while time.monotonic() < deadline:
        last = await check()
        if last:
            return last
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), tick_s)
        assert process.returncode is None, f"the child exited ({process.returncode}) " \
                                           f"while waiting for {what}"  # fmt: skip
    raise AssertionError(f"{what} not met in {deadline_s} s (last: {last!r})")

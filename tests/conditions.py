"""Waiting on a condition with a deadline, never a bare sleep. While child processes run,
the wait between two checks is a wait on any of them exiting (at most `tick_s`), so a child
that dies fails the test at once, with the tail of its log, instead of at the deadline."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def _tail(log: Path | None) -> str:
    return "\n" + log.read_text(errors="replace")[-4000:] if log else ""


async def wait_until(
    check: Callable[[], T | Awaitable[T]],
    *processes: asyncio.subprocess.Process,
    deadline_s: float = 60.0,
    tick_s: float = 0.2,
    what: str = "condition",
    log: Path | None = None,
) -> T:
    """Call `check` (plain or async) until it returns something truthy and return that;
    every child in `processes` must stay alive meanwhile."""
    deadline = time.monotonic() + deadline_s
    last: T | None = None
    while time.monotonic() < deadline:
        result = check()
        last = await result if inspect.isawaitable(result) else result
        if last:
            return last
        if not processes:
            await asyncio.sleep(min(tick_s, 0.05))  # a pause between checks, not a wait for it
            continue
        exits = [asyncio.ensure_future(p.wait()) for p in processes]
        _, pending = await asyncio.wait(exits, timeout=tick_s)
        for waiter in pending:
            waiter.cancel()
        dead = [p.returncode for p in processes if p.returncode is not None]
        assert not dead, f"a child exited ({dead}) while waiting for {what}{_tail(log)}"
    raise AssertionError(f"{what} not met in {deadline_s} s (last: {last!r}){_tail(log)}")

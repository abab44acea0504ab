"""The processes' event loop (frontier.event_loop) and in-process extraction's one
thread (fetcher.extract_thread.InProcessExtraction): what the fetch process's CPU per page
was cut by (bench/RESULTS.md, "Extraction at the speed of the fetch")."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from fetcher.extract_thread import InProcessExtraction
from frontier import event_loop
from tests.conditions import wait_until


def test_run_returns_the_result_on_uvloop_where_installed() -> None:
    uvloop = pytest.importorskip("uvloop")

    async def main() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert event_loop.run(main()).startswith("uvloop")
    assert isinstance(uvloop.new_event_loop(), asyncio.AbstractEventLoop)


def test_run_raises_what_the_coroutine_raises() -> None:
    async def main() -> None:
        raise LookupError("from the coroutine")

    with pytest.raises(LookupError, match="from the coroutine"):
        event_loop.run(main())


async def test_in_process_extraction_parses_one_page_at_a_time_off_the_event_loop() -> None:
    release = threading.Event()
    lock = threading.Lock()
    seen: dict[str, Any] = {"active": 0, "peak": 0, "entered": 0, "threads": set()}

    def job(page: int) -> int:
        with lock:
            seen["active"] += 1
            seen["entered"] += 1
            seen["peak"] = max(seen["peak"], seen["active"])
            seen["threads"].add(threading.current_thread().name)
        release.wait(timeout=30)  # held until the test has seen the first page start
        with lock:
            seen["active"] -= 1
        return page

    extraction = InProcessExtraction(job=job)  # type: ignore[arg-type]
    try:
        pages = [asyncio.ensure_future(extraction.extract(page)) for page in range(4)]
        await wait_until(lambda: seen["entered"] >= 1, what="the first page started")
        release.set()
        assert await asyncio.gather(*pages) == [0, 1, 2, 3]
    finally:
        extraction.close()
    assert seen["peak"] == 1  # asyncio's default executor would run several at once
    (thread,) = seen["threads"]
    assert thread.startswith("extract") and thread != threading.main_thread().name

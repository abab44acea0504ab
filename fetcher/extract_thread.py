"""Extraction in one thread of the fetch process (`FRONTIER_EXTRACT_PROCESSES=0`), with the
interface of the pool (`fetcher.extract_pool`): `async extract(...)`, `close()`."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fetcher.extract_job import TIMEOUT_S, Extraction, Job, extract_page, over_time


class InProcessExtraction:
    """Extraction in one thread of the fetch process: the event loop stays free, but one
    process uses one core for parsing. One thread, not asyncio's default executor (a
    thread per page in flight, up to six here): parsing holds the GIL, so more threads
    parse no faster, and each page's hand-over of the GIL between them and the event
    loop cost more CPU per page in all (bench/RESULTS.md, "Extraction at the speed of
    the fetch"). Pages wait their turn in the executor's queue.

    Its only bound is time: a page not parsed within `timeout_s` of its turn raises
    `ExtractionOverLimit`, so its claim ends rather than outlive its lease. A thread cannot
    be stopped: the parse goes on until it is done, the pages behind it wait for it, and
    neither its CPU nor its memory is bounded. Pages from sites not trusted belong in the
    pool (docs/fetching.md, "Extraction: every core")."""

    def __init__(self, job: Job = extract_page, *, timeout_s: float = TIMEOUT_S) -> None:
        self._job = job
        self.timeout_s = timeout_s
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="extract")
        # The page the thread parses and when it took it (written by the thread, read by
        # the watch on the event loop), and each page's waiter: one watch for the thread,
        # not a timer (and its tasks) a page, which cost a small page a tenth more CPU.
        self._parsing: tuple[asyncio.Future[Extraction], float] | None = None
        self._watch: asyncio.TimerHandle | None = None
        self._waiting = 0

    async def extract(self, *args: Any) -> Extraction:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Extraction] = loop.create_future()

        def parse() -> Extraction:
            self._parsing = (waiter, time.monotonic())  # its turn: its time counts
            try:
                return self._job(*args)
            finally:
                self._parsing = None

        parsed = loop.run_in_executor(self._thread, parse)
        parsed.add_done_callback(lambda done: _settle(waiter, done))
        self._waiting += 1
        if self._watch is None:
            self._watch = loop.call_later(self.timeout_s, self._check, loop)
        try:  # a page cancelled or late stays the thread's until parsed
            return await waiter
        finally:
            self._waiting -= 1

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        """Fail the page being parsed if its time is up; look again when the next page's
        could be, while pages wait."""
        self._watch = None
        now = time.monotonic()
        due = now + self.timeout_s  # the soonest the next page's time can be up
        parsing = self._parsing
        if parsing is not None and not parsing[0].done():
            waiter, since = parsing
            if now >= since + self.timeout_s:
                waiter.set_exception(over_time(self.timeout_s))
            else:
                due = since + self.timeout_s
        if self._waiting:
            self._watch = loop.call_later(max(due - time.monotonic(), 0.01), self._check, loop)

    def close(self) -> None:
        self._thread.shutdown(wait=False)


def _settle(waiter: asyncio.Future[Extraction], done: asyncio.Future[Extraction]) -> None:
    """Pass a parse's result or error on to its waiter, unless the watch failed it."""
    if waiter.done():
        return  # over its time limit, or cancelled
    if done.cancelled():
        waiter.cancel()
    elif (error := done.exception()) is not None:
        waiter.set_exception(error)
    else:
        waiter.set_result(done.result())

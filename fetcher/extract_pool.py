"""Article extraction off the event loop, on every core (docs/fetching.md, "Extraction").

`extract_page` is the job: a page's body in, its `Extraction` out (the article, the
canonical identity, the content hash and word count), decoding included, so the fetch
process does no parsing. Its arguments are the body bytes and small values, and so is its
result: that is all that crosses to a worker.

Two ways to run it, with one interface (`async extract(...)`, `close()`):

- `InProcessExtraction`: a thread of the fetch process (`FRONTIER_EXTRACT_PROCESSES=0`).
- `ExtractionPool`: N worker processes (`spawn`: a fresh interpreter each, never a fork of
  a process holding sockets and database connections), all started with the first page
  handed to the pool and warmed up as they start (trafilatura and lxml imported and run
  there once, not per page). Not before: a fetch process that finds nothing to do starts
  none, and one that starts does not spend its first second competing with four
  interpreters for the cores while it sends its first requests. At most `in_flight` pages are
  handed to the pool at once; the others wait in their batch, so the memory the pool
  holds does not grow with the fetch concurrency.

A worker that dies (killed, or a page that crashes the parser) breaks a
`ProcessPoolExecutor` and fails every page then in flight with `BrokenProcessPool`. The
pool is replaced at once, and each of those pages is extracted again *alone*, one at a
time, in a one-process pool of its own: an innocent page passes there, and a page that
kills the process while alone `CRASHES_ALLOWED` times raises `ExtractionCrashed` (the
pipeline ends it `failed` with that reason). No page is lost, and none loops forever.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from fetcher.canonical import canonical_identity
from fetcher.decisions import decode_html
from fetcher.extract import Extracted, canonical_href, extract
from frontier.errors import FrontierError

log = logging.getLogger(__name__)

CRASHES_ALLOWED = 2  # times a page may kill the process extracting it alone
PARENT_CHECK_S = 1.0  # how often a worker looks whether its fetch process still runs
WARM_UP_HTML = (
    "<html lang='en'><head><title>warm-up</title></head><body><article><h1>Warm-up</h1>"
    "<p>The extraction worker parses one page when it starts, so that the first real page "
    "does not pay for loading the parser and its tables.</p></article></body></html>"
)


class ExtractionCrashed(FrontierError):
    """A page killed the process extracting it each time it was tried alone."""


@dataclass(frozen=True, slots=True)
class Extraction:
    """What extraction of one page yields, computed where it ran."""

    extracted: Extracted
    canonical: str | None  # the trusted canonical identity, when not the page's own
    content_hash: str | None
    word_count: int
    pid: int  # the process that extracted it


Job = Callable[..., Extraction]


def extract_page(
    body: bytes,
    content_type: str | None,
    url: str,
    selectors: Mapping[str, Any] | None,
    meta: Mapping[str, Any] | None,
) -> Extraction:
    """Decode the body and extract the article and the identity its document belongs
    under when the page names a trusted canonical other than itself (`fetcher.canonical`)."""
    html, _encoding = decode_html(body, content_type)
    extracted = extract(html, url, selectors=selectors, discovery_meta=meta)
    return Extraction(
        extracted,
        canonical_identity(url, canonical_href(html)),
        extracted.content_hash,
        extracted.word_count,
        os.getpid(),
    )


class InProcessExtraction:
    """Extraction in one thread of the fetch process: the event loop stays free, but one
    process uses one core for parsing. One thread, not asyncio's default executor (a
    thread per page in flight, up to six here): parsing holds the GIL, so more threads
    parse no faster, and each page's hand-over of the GIL between them and the event
    loop cost 22% more CPU per page in all (bench/RESULTS.md, "Extraction at the speed of
    the fetch"). Pages wait their turn in the executor's queue."""

    def __init__(self, job: Job = extract_page) -> None:
        self._job = job
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="extract")

    async def extract(self, *args: Any) -> Extraction:
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._job, *args)

    def close(self) -> None:
        self._thread.shutdown(wait=False)


class ExtractionPool:
    """`processes` worker processes; `job` (a module-level function, default
    `extract_page`) runs in them. Start it inside the event loop that uses it."""

    def __init__(
        self, processes: int, *, in_flight: int | None = None, job: Job = extract_page
    ) -> None:
        if processes < 1:
            raise ValueError("an extraction pool needs at least one process")
        self.processes = processes
        self._job = job
        # Two per worker: one being parsed, one waiting in the pipe, so a worker never
        # idles between pages; more would only hold bodies in memory.
        self._slots = asyncio.Semaphore(in_flight or processes * 2)
        self._context = multiprocessing.get_context("spawn")
        self._pool: ProcessPoolExecutor | None = None  # started with the first page
        self._alone: ProcessPoolExecutor | None = None  # for pages in flight at a crash
        self._alone_lock = asyncio.Lock()
        self._alone_waiting = 0
        self.replaced = 0  # pools replaced after a worker died

    def _start(self, processes: int) -> ProcessPoolExecutor:
        pool = ProcessPoolExecutor(
            processes,
            mp_context=self._context,
            initializer=_warm_up,
            initargs=(os.getpid(),),
        )
        # Each submission while no worker is idle starts one: all of them start now and
        # warm up together (the result is not awaited).
        for _ in range(processes):
            pool.submit(os.getpid)
        return pool

    def worker_pids(self) -> set[int]:
        """The processes of the pool now (for tests and the benchmark)."""
        if self._pool is None:
            return set()
        return {p.pid for p in self._workers(self._pool) if p.pid is not None}

    async def extract(self, *args: Any) -> Extraction:
        """Run the job on `args` in a worker; raises what the job raises, or
        `ExtractionCrashed` for a page that kills the workers."""
        async with self._slots:
            if self._pool is None:
                self._pool = self._start(self.processes)
            pool = self._pool
            try:
                return await asyncio.wrap_future(pool.submit(self._job, *args))
            except BrokenProcessPool:
                self._replace(pool)
        # A worker died while this page was in flight: it, or another page then in
        # flight, killed it. Alone, it is known which.
        return await self._extract_alone(args)

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        if self._pool is not broken:
            return  # another page in flight already replaced it
        log.warning("an extraction worker process died; starting %d new ones", self.processes)
        broken.shutdown(wait=False, cancel_futures=True)
        self._pool = self._start(self.processes)
        self.replaced += 1

    async def _extract_alone(self, args: tuple[Any, ...]) -> Extraction:
        self._alone_waiting += 1
        try:
            async with self._alone_lock:
                for _ in range(CRASHES_ALLOWED):
                    if self._alone is None:
                        self._alone = self._start(1)
                    alone = self._alone
                    try:
                        future: Future[Extraction] = alone.submit(self._job, *args)
                        return await asyncio.wrap_future(future)
                    except BrokenProcessPool:
                        alone.shutdown(wait=False, cancel_futures=True)
                        self._alone = None
                raise ExtractionCrashed(
                    f"the page killed the extraction process each of the {CRASHES_ALLOWED} "
                    "times it was extracted alone"
                )
        finally:
            self._alone_waiting -= 1
            if not self._alone_waiting and self._alone is not None:
                self._alone.shutdown(wait=False)  # an idle process holds memory
                self._alone = None

    def close(self) -> None:
        """Stop every worker and wait for them to exit (no orphan processes)."""
        for pool in (self._pool, self._alone):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self._alone = None

    @staticmethod
    def _workers(pool: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
        # The executor keeps its processes private; reading them is the only way to name
        # them (concurrent.futures offers no accessor).
        processes = getattr(pool, "_processes", None) or {}
        return list(processes.values())


def _warm_up(parent: int) -> None:
    """A worker's start: load the parser and its tables once, and exit when the fetch
    process is gone (killed with SIGKILL, it cannot stop its pool; an orphan worker would
    wait on its pipe forever). SIGINT and SIGTERM are for the fetch process, which stops
    its workers itself once its pages are done: Ctrl-C reaches the whole process group,
    and a worker dying with a page would only have it extracted again."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    extract(WARM_UP_HTML, "http://warm-up.invalid/")
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)

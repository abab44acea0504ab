"""Article extraction off the event loop, on every core (docs/fetching.md, "Extraction").

`extract_page` is the job: a page's body in, its `Extraction` out (the article, the
canonical identity, the content hash and word count), decoding included, so the fetch
process does no parsing. Its arguments are the body bytes and small values, and so is its
result: that is all that crosses to a worker.

Two ways to run it, with one interface (`async extract(...)`, `close()`):

- `InProcessExtraction`: a thread of the fetch process (`FRONTIER_EXTRACT_PROCESSES=0`).
- `ExtractionPool`: N worker processes (a fresh interpreter each, never a fork of a
  process holding sockets and database connections), all started with the first page
  handed to the pool and warmed up as they start (trafilatura and lxml imported and run
  there once, not per page). Not before: a fetch process that finds nothing to do starts
  none, and one that starts does not spend its first second competing with four
  interpreters for the cores while it sends its first requests.

Each worker owns one socket pair with the fetch process, whose end the event loop itself
reads and writes (no thread of the fetch process in between): a page goes over as one
frame (8 bytes of length, then the pickled job and arguments) and its `Extraction`, or
the exception the job raised, comes back as one, in the order the pages went. A page goes
to the worker with the fewest pages in flight, at most `PAGES_PER_WORKER` each; the others
wait for a slot, so the memory the pool holds does not grow with the fetch concurrency. A
page whose caller is cancelled keeps its slot until its answer is read, and dropped.

A worker that dies (killed, or a page that crashes the parser) ends its pipe: it is
replaced (at once if pages were in flight on it, else when the next page comes), and each
page then in flight *on it* is extracted again *alone*, one at a time, in a one-process
worker of its own: an innocent page passes there, and a page that kills the process while
alone `CRASHES_ALLOWED` times raises `ExtractionCrashed` (the pipeline ends it `failed`
with that reason). The pages on the other workers go on. No page is lost, and none loops
forever.

Every page has a time and a memory limit (docs/fetching.md, "Extraction: every core").
Time: the fetch process watches the page each worker is parsing (from the moment the
worker took it, once warmed up) and kills the worker at `timeout_s`; a worker parses on
one thread, one page at a time, so this bounds the page's CPU time too. Memory: a
worker's address space is capped at `memory_mb` (`RLIMIT_AS`, set once as it starts),
and a page during which it came within an eighth of the cap is over it, even where the
parser caught the `MemoryError` itself and returned what it had (trafilatura and
`fetcher.extract` catch `Exception`); the worker answers and exits. Either way the page
raises `ExtractionOverLimit` (the pipeline ends it `failed` with that reason) and is not
tried again: it is the page the worker was parsing, and the same bytes cost the same
again; the worker is replaced, and a page queued behind it on the worker (if it was not
set aside before: below) goes back to the pool after the time limit (the culprit is
known), or is extracted again alone after the memory limit, as after a crash.

No page waits behind a slow one: a page still parsed `SLOW_PAGE_S` after its worker took
it sets that worker aside with it (`ExtractionPool._slow`). A new worker takes its place
(within twice the pool's processes); the page queued behind it in its pipe goes to the
worker with the fewest in flight; the slow page keeps its limits and its worker is killed
once it is answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import pickle
import subprocess
import time
import weakref
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from fetcher.extract_job import (
    MEMORY_MB,
    TIMEOUT_S,
    Extraction,
    ExtractionCrashed,
    Job,
    extract_page,
)
from fetcher.extract_pipe import WorkerDied, WorkerPipe, nothing, result_of
from fetcher.extract_worker import framed, worker_environment

log = logging.getLogger(__name__)

CRASHES_ALLOWED = 2  # times a page may kill the process extracting it alone
# Four per worker: one being parsed, three waiting in its pipe, so a worker never idles
# between pages while the fetch process's event loop is busy elsewhere (a group's store,
# a burst of responses): with two, bench.fetch's pool run made fewer pages a second on
# standard pages, and spent more CPU a page, in each of four pairs alternated
# (bench/RESULTS.md, fourteenth session). More only hold bodies in memory. Not one, though
# one page a worker leaves none queued behind another: one alone does not spare the pages
# of a pool whose every worker has a hostile page (setting workers aside does,
# SLOW_PAGE_S, and hands on the pages queued behind a slow one too), and it cost
# bench.fetch's pool more CPU a page (bench/RESULTS.md, "A page behind a hostile one").
PAGES_PER_WORKER = 4
# A page still parsed after this long is slow: its worker is set aside with it, and the
# pages queued behind it go to other workers (`ExtractionPool._slow`). A normal page takes
# milliseconds, bench.fetch's pages and the real articles of tests/corpus/articles alike
# (the slowest, a page over a MiB, well under this), while a page of `<br>` tags runs to
# its limit (bench/RESULTS.md). Low, as it is what a page behind a hostile one
# may wait (plus a worker's start); not so low that a worker is started for a large page.
# Not a setting: nothing to tune for the operator, who sets the limits.
SLOW_PAGE_S = 1.0
CLOSE_WAIT_S = 10.0  # how long `close()` lets workers finish their page before killing them


class ExtractionPool:
    """`processes` worker processes; `job` (a module-level function, default
    `extract_page`) runs in them. Start it inside the event loop that uses it.

    Not `concurrent.futures.ProcessPoolExecutor`, which this pool was built on: for each
    page, its manager thread and its call queue's feeder thread took the GIL from the event
    loop's thread, and the result came back through `call_soon_threadsafe`. On
    `bench.fetch`, handing pages over that way cost the fetch process several times the
    CPU a page of pipes read by the event loop, on uvloop and asyncio's loop alike, and
    fewer pages a second (bench/RESULTS.md)."""

    def __init__(
        self,
        processes: int,
        *,
        job: Job = extract_page,
        preload: str | None = None,
        timeout_s: float = TIMEOUT_S,
        memory_mb: int = MEMORY_MB,
        slow_page_s: float = SLOW_PAGE_S,
    ) -> None:
        """`preload`: the memory allocator the workers run on (a shared library, given to
        them as `LD_PRELOAD`; `fetcher.allocators`), or None for the C library's.
        `timeout_s` and `memory_mb`: the limits of each page (the module's docstring).
        `slow_page_s`: when a worker is set aside with its page (not a setting: tests that
        hold pages in their workers on purpose turn it off with `math.inf`)."""
        if processes < 1:
            raise ValueError("an extraction pool needs at least one process")
        self.processes = processes
        self._job = job
        self._environment = worker_environment(preload)
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.slow_page_s = slow_page_s
        self._workers: list[WorkerPipe] = []  # started with the first page
        self._held: list[WorkerPipe] = []  # set aside, each with its slow page
        self._slots = asyncio.Semaphore(processes * PAGES_PER_WORKER)
        self._alone: WorkerPipe | None = None  # for pages in flight on a worker that died
        self._alone_lock = asyncio.Lock()
        self._alone_waiting = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._started: list[subprocess.Popen[bytes]] = []  # started and not yet reaped
        # A pool never closed leaves no worker behind the interpreter's exit: killed.
        self._kill = weakref.finalize(self, _kill, self._started)
        self.replaced = 0  # workers replaced after they died, or set aside
        self.set_aside = 0  # workers set aside with a slow page

    def worker_pids(self) -> set[int]:
        """The processes of the pool now (for tests and the benchmark)."""
        return {w.process.pid for w in [*self._workers, *self._held] if w.alive}

    @property
    def in_flight(self) -> int:
        """Pages handed to the workers and not answered yet (a cancelled page counts until
        its answer is read), slow pages on workers set aside included."""
        return sum(w.in_flight for w in [*self._workers, *self._held])

    async def extract(self, *args: Any) -> Extraction:
        """Run the job on `args` in a worker; raises what the job raises,
        `ExtractionOverLimit` for a page over its time or memory limit, or
        `ExtractionCrashed` for a page that kills the workers."""
        if not self._workers and not self._closed:
            self._loop = asyncio.get_running_loop()
            self._workers = [self._start_worker() for _ in range(self.processes)]
        await self._slots.acquire()
        try:
            if self._closed:
                raise RuntimeError("the extraction pool is closed")
            # Pickled once a slot is taken: a page waiting for one holds no copy of its body.
            request = framed(pickle.dumps((self._job, args), pickle.HIGHEST_PROTOCOL))
        except BaseException:
            self._slots.release()
            raise
        for dead in [w for w in self._workers if not w.alive]:
            self._replace(dead)  # one that died with no page in flight
        # The fewest in flight: with every slot but this one taken, still below
        # PAGES_PER_WORKER, unless workers were set aside without a new one in their place
        # (`_slow`): the others then take more, the pool's slots being the bound.
        worker = min(self._workers, key=attrgetter("in_flight"))
        try:
            return result_of(await worker.send(request))  # the worker frees the slot
        except WorkerDied as died:
            if self._closed:
                raise RuntimeError("the extraction pool is closed") from None
            if died.culprit_known:  # killed for the page before it: this one is innocent
                return await self.extract(*args)
        # The worker died while this page was in flight on it: it, or another page then on
        # that worker, killed it. Alone, it is known which.
        return await self._extract_alone(request)

    def _start_worker(self) -> WorkerPipe:
        return self._start(self._lost, self._slots.release, self._slow)

    def _start(
        self,
        on_exit: Callable[[WorkerPipe], None],
        on_answer: Callable[[], None],
        on_slow: Callable[[WorkerPipe], bool] | None = None,
    ) -> WorkerPipe:
        """A worker; without `on_slow`, one never set aside (the one for pages alone)."""
        self._started[:] = [p for p in self._started if p.poll() is None]  # reaps those gone
        limits = (self.timeout_s, self.slow_page_s if on_slow else math.inf, self.memory_mb)
        worker = WorkerPipe(self._environment, limits, on_exit, on_answer, on_slow or _never)
        self._started.append(worker.process)
        return worker

    def _slow(self, slow: WorkerPipe) -> bool:
        """A page has been parsed `slow_page_s` on a worker of the pool: the worker is set
        aside with it, and the pages queued behind it go to the other workers, those with
        the fewest in flight, keeping their slots. So no page waits behind a slow one
        longer than `slow_page_s`. The slow page keeps its limits; its worker is killed
        once it is answered (its pipe holds the frames handed back).

        A new worker takes its place at once, and the slow page's slot is free at once,
        while the pool's processes stay within twice their number (and so does their
        memory). Past that, the pool goes on with fewer workers until a worker set aside
        ends; and when every worker has a slow page, there is nowhere to move a page: the
        worker is not set aside (False), and is looked at again after `slow_page_s`."""
        if self._closed or slow not in self._workers:
            return False
        replace = len(self._workers) + len(self._held) < 2 * self.processes
        if not replace and len(self._workers) == 1:
            return False
        log.warning(
            "extraction worker process %s: a page parsed for over %g s, set aside with it",
            slow.process.pid,
            self.slow_page_s,
        )
        queued = slow.set_aside(frees_its_slot=not replace)
        self._held.append(slow)
        self.set_aside += 1
        if replace:
            self._replace(slow)
        else:
            self._workers.remove(slow)
        for waiter, frame in queued:
            if waiter.cancelled():
                self._slots.release()  # nobody waits for its answer: not sent again
            else:
                min(self._workers, key=_least_busy).send(frame, waiter)
        if replace:
            self._slots.release()  # the slow page's: its worker's answer frees none
        return True

    def _lost(self, dead: WorkerPipe) -> None:
        """A worker died: replaced now if pages were in flight on it (they are extracted
        again alone, and those waiting for a slot need it), else when the next page comes,
        so that a worker that cannot even start is not started again in a loop. One set
        aside was replaced when it was, or is now if the pool has fewer than its number."""
        if dead in self._held:
            self._held.remove(dead)
            if not self._closed and len(self._workers) < self.processes:
                self._workers.append(self._start_worker())
                self.replaced += 1
            return
        if self._closed or dead not in self._workers:
            return
        log.warning(
            "extraction worker process %s died with %d pages in flight",
            dead.process.pid,
            dead.pages_lost,
        )
        if dead.pages_lost:
            self._replace(dead)

    def _replace(self, dead: WorkerPipe) -> None:
        self._workers[self._workers.index(dead)] = self._start_worker()
        self.replaced += 1

    async def _extract_alone(self, request: bytes) -> Extraction:
        self._alone_waiting += 1
        try:
            async with self._alone_lock:
                for _ in range(CRASHES_ALLOWED):
                    if self._closed:
                        raise RuntimeError("the extraction pool is closed")
                    if self._alone is None or not self._alone.alive:
                        self._alone = self._start(_ignore, nothing)
                    try:
                        return result_of(await self._alone.send(request))
                    except WorkerDied:
                        self._alone = None
                raise ExtractionCrashed(
                    f"the page killed the extraction process each of the {CRASHES_ALLOWED} "
                    "times it was extracted alone"
                )
        finally:
            self._alone_waiting -= 1
            if not self._alone_waiting and self._alone is not None:
                self._alone.hang_up()  # an idle process holds memory: it exits
                self._alone = None

    def close(self) -> None:
        """Stop every worker and wait for them to exit (no orphan processes): each reads the
        end of its pipe once its page is done. Callable from any thread (`frontier fetch`
        calls it from one of its own, so that the event loop runs meanwhile)."""
        self._closed = True
        workers = [*self._workers, *self._held, *([self._alone] if self._alone else [])]
        for worker in workers:
            worker.hang_up()
        if self._loop is not None and _running_loop() is self._loop:
            for worker in workers:
                worker.abort()  # on the loop's thread: its transport can close now
        deadline = time.monotonic() + CLOSE_WAIT_S
        for process in list(self._started):
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(0.0, deadline - time.monotonic()))
        self._kill()  # any still running: killed


def _ignore(_worker: WorkerPipe) -> None:
    pass


def _never(_worker: WorkerPipe) -> bool:
    return False


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _least_busy(worker: WorkerPipe) -> tuple[int, bool]:
    """The fewest pages in flight first, and of those, one warmed up."""
    return worker.in_flight, not worker.ready


def _kill(processes: list[subprocess.Popen[bytes]]) -> None:
    """Kill and reap the processes still running (at the end of `close()`, and at exit
    for a pool never closed)."""
    for process in processes:
        if process.poll() is None:
            process.kill()
    for process in processes:
        process.wait()
    processes.clear()

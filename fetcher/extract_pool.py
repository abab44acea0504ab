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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
import weakref
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, cast

from fetcher.canonical import canonical_claim
from fetcher.decisions import decode_html
from fetcher.extract import Extracted, canonical_href, extract
from frontier.errors import FrontierError

log = logging.getLogger(__name__)

CRASHES_ALLOWED = 2  # times a page may kill the process extracting it alone
PARENT_CHECK_S = 1.0  # how often a worker looks whether its fetch process still runs
# Two per worker: one being parsed, one waiting in its pipe, so a worker never idles
# between pages; more would only hold bodies in memory.
PAGES_PER_WORKER = 2
CLOSE_WAIT_S = 10.0  # how long `close()` lets workers finish their page before killing them
FRAME = struct.Struct(">Q")  # a frame: the length of the pickle that follows
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
    names_itself: bool = False  # the page's canonical link names the page itself


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
    claim = canonical_claim(url, canonical_href(html))
    return Extraction(
        extracted,
        None if claim == url else claim,
        extracted.content_hash,
        extracted.word_count,
        os.getpid(),
        names_itself=claim == url,
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
    `extract_page`) runs in them. Start it inside the event loop that uses it.

    Not `concurrent.futures.ProcessPoolExecutor`, which this pool was built on: for each
    page, its manager thread and its call queue's feeder thread took the GIL from the event
    loop's thread, and the result came back through `call_soon_threadsafe`. Measured with
    two workers on two cores, 4,000 pages of `bench.fetch`'s two page sets, 32 in flight:
    handing pages over that way cost the fetch process 0.32-0.37 ms of CPU a page on uvloop
    (0.42-0.46 on asyncio's loop), against 0.11-0.13 (0.13-0.15) with the pipes read by the
    event loop; 17-27% more pages a second on uvloop."""

    def __init__(
        self, processes: int, *, job: Job = extract_page, preload: str | None = None
    ) -> None:
        """`preload`: the memory allocator the workers run on (a shared library, given to
        them as `LD_PRELOAD`; `fetcher.allocators`), or None for the C library's."""
        if processes < 1:
            raise ValueError("an extraction pool needs at least one process")
        self.processes = processes
        self._job = job
        self._environment = _worker_environment(preload)
        self._workers: list[_Worker] = []  # started with the first page
        self._slots = asyncio.Semaphore(processes * PAGES_PER_WORKER)
        self._alone: _Worker | None = None  # for pages in flight on a worker that died
        self._alone_lock = asyncio.Lock()
        self._alone_waiting = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._started: list[subprocess.Popen[bytes]] = []  # started and not yet reaped
        # A pool never closed leaves no worker behind the interpreter's exit: killed.
        self._kill = weakref.finalize(self, _kill, self._started)
        self.replaced = 0  # workers replaced after they died

    def worker_pids(self) -> set[int]:
        """The processes of the pool now (for tests and the benchmark)."""
        return {w.process.pid for w in self._workers if w.alive}

    @property
    def in_flight(self) -> int:
        """Pages handed to the workers and not answered yet (a cancelled page counts until
        its answer is read)."""
        return sum(w.in_flight for w in self._workers)

    async def extract(self, *args: Any) -> Extraction:
        """Run the job on `args` in a worker; raises what the job raises, or
        `ExtractionCrashed` for a page that kills the workers."""
        if not self._workers and not self._closed:
            self._loop = asyncio.get_running_loop()
            self._workers = [self._start_worker() for _ in range(self.processes)]
        await self._slots.acquire()
        try:
            if self._closed:
                raise RuntimeError("the extraction pool is closed")
            # Pickled once a slot is taken: a page waiting for one holds no copy of its body.
            request = _frame(pickle.dumps((self._job, args), pickle.HIGHEST_PROTOCOL))
        except BaseException:
            self._slots.release()
            raise
        for dead in [w for w in self._workers if not w.alive]:
            self._replace(dead)  # one that died with no page in flight
        # The fewest in flight: with every slot but this one taken, still below
        # PAGES_PER_WORKER.
        worker = min(self._workers, key=attrgetter("in_flight"))
        try:
            return _result(await worker.send(request))  # the worker frees the slot
        except _WorkerDied:
            if self._closed:
                raise RuntimeError("the extraction pool is closed") from None
        # The worker died while this page was in flight on it: it, or another page then on
        # that worker, killed it. Alone, it is known which.
        return await self._extract_alone(request)

    def _start_worker(self) -> _Worker:
        return self._start(self._lost, self._slots.release)

    def _start(self, on_exit: Callable[[_Worker], None], on_answer: Callable[[], None]) -> _Worker:
        self._started[:] = [p for p in self._started if p.poll() is None]  # reaps those gone
        worker = _Worker(self._environment, on_exit, on_answer)
        self._started.append(worker.process)
        return worker

    def _lost(self, dead: _Worker) -> None:
        """A worker died: replaced now if pages were in flight on it (they are extracted
        again alone, and those waiting for a slot need it), else when the next page comes,
        so that a worker that cannot even start is not started again in a loop."""
        if self._closed or dead not in self._workers:
            return
        log.warning(
            "extraction worker process %s died with %d pages in flight",
            dead.process.pid,
            dead.pages_lost,
        )
        if dead.pages_lost:
            self._replace(dead)

    def _replace(self, dead: _Worker) -> None:
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
                        self._alone = self._start(_ignore, _nothing)
                    try:
                        return _result(await self._alone.send(request))
                    except _WorkerDied:
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
        workers = [*self._workers, *([self._alone] if self._alone else [])]
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


class _WorkerDied(Exception):
    """The worker a page was in flight on died (not raised to callers: the page is
    extracted again alone)."""


class _RemoteTraceback(Exception):
    """Where in the worker an exception was raised: its `__cause__`, as with
    `concurrent.futures`."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


class _Worker(asyncio.Protocol):
    """One worker process and the fetch process's end of its socket pair, as an asyncio
    protocol: frames written by the event loop (its transport buffers what the pipe does
    not take at once), answers read in the order the pages went. The pipe's end, when the
    worker dies, is `connection_lost`."""

    def __init__(
        self,
        environment: Mapping[str, str],
        on_exit: Callable[[_Worker], None],
        on_answer: Callable[[], None],
    ) -> None:
        self._on_exit = on_exit  # the worker died, or hung up
        self._on_answer = on_answer  # a page left the worker (its slot is free)
        self._waiting: deque[asyncio.Future[bytearray]] = deque()  # one a page in flight
        self._received = bytearray()
        self._transport: asyncio.Transport | None = None
        self._unsent: list[bytes] = []  # frames sent before the transport is connected
        self.alive = True
        self.pages_lost = 0  # in flight when it died
        ours, theirs = socket.socketpair()
        with theirs:  # the worker's own: when it dies, the pipe ends
            try:
                self.process = subprocess.Popen(
                    _worker_command(theirs.fileno()),
                    env=environment,
                    stdin=subprocess.DEVNULL,
                    pass_fds=(theirs.fileno(),),
                )
            except BaseException:
                ours.close()
                raise
        self._socket = ours
        loop = asyncio.get_running_loop()
        self._connecting = loop.create_task(loop.create_unix_connection(lambda: self, sock=ours))
        self._connecting.add_done_callback(self._connect_failed)

    @property
    def in_flight(self) -> int:
        return len(self._waiting)

    def send(self, frame: bytes) -> asyncio.Future[bytearray]:
        """Hand a page's frame to the worker; the future is its answer's pickle, or
        `_WorkerDied`."""
        answer = asyncio.get_running_loop().create_future()
        self._waiting.append(answer)
        if self._transport is None:
            self._unsent.append(frame)
        else:
            self._transport.write(frame)
        return answer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        if self._unsent:
            self._transport.writelines(self._unsent)
            self._unsent.clear()

    def data_received(self, data: bytes) -> None:
        self._received += data
        while len(self._received) >= FRAME.size:
            end = FRAME.size + FRAME.unpack_from(self._received)[0]
            if len(self._received) < end:
                return
            answer = self._received[FRAME.size : end]
            del self._received[:end]
            waiter = self._waiting.popleft()
            self._on_answer()
            if not waiter.cancelled():  # a cancelled page's answer is read and dropped
                waiter.set_result(answer)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.alive:
            return  # lost as its connection failed, then told by the transport too
        self.alive = False
        waiting, self._waiting = self._waiting, deque()
        self.pages_lost = len(waiting)
        for waiter in waiting:
            self._on_answer()
            if not waiter.done():
                waiter.set_exception(_WorkerDied())
        self._on_exit(self)

    def _connect_failed(self, connecting: asyncio.Task[Any]) -> None:
        if not connecting.cancelled():
            if connecting.exception() is None:
                return
            log.error(
                "no pipe to extraction worker %s: %r", self.process.pid, connecting.exception()
            )
        self._socket.close()  # the worker reads the end, and exits
        self.connection_lost(None)

    def hang_up(self) -> None:
        """End the pipe, from any thread: the worker exits once its page is done, and the
        event loop then sees the end (`connection_lost`)."""
        with contextlib.suppress(OSError):  # already closed: the worker is gone
            self._socket.shutdown(socket.SHUT_RDWR)

    def abort(self) -> None:
        """Close the transport at once (on the event loop's thread)."""
        if self._transport is not None:
            self._transport.abort()


def _frame(payload: bytes) -> bytes:
    return FRAME.pack(len(payload)) + payload


def _result(answer: bytearray) -> Extraction:
    ok, value, where = pickle.loads(answer)
    if ok:
        return value
    value.__cause__ = _RemoteTraceback(where)
    raise value


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _ignore(_worker: _Worker) -> None:
    pass


def _nothing() -> None:
    pass


def _kill(processes: list[subprocess.Popen[bytes]]) -> None:
    """Kill and reap the processes still running (at the end of `close()`, and at exit
    for a pool never closed)."""
    for process in processes:
        if process.poll() is None:
            process.kill()
    for process in processes:
        process.wait()
    processes.clear()


def _worker_environment(preload: str | None) -> dict[str, str]:
    """A worker's environment: the fetch process's, with the allocator to preload."""
    environment = dict(os.environ)
    if preload:
        environment["LD_PRELOAD"] = " ".join(filter(None, (preload, os.environ.get("LD_PRELOAD"))))
    return environment


# A worker: a fresh interpreter with the fetch process's import path (as multiprocessing's
# `spawn` gives its children: a job pickled by reference imports there what it imported
# here), serving the socket it inherits. Not `spawn` itself, which cannot give a child an
# environment of its own (the allocator to preload is the workers', not the fetch
# process's). Arguments: the socket's descriptor, the fetch process, then the path.
_WORKER_CODE = (
    "import sys; sys.path[:] = sys.argv[3:]; "
    "from fetcher.extract_pool import serve_inherited; "
    "serve_inherited(int(sys.argv[1]), int(sys.argv[2]))"
)


def _worker_command(pipe: int) -> list[str]:
    return [sys.executable, "-c", _WORKER_CODE, str(pipe), str(os.getpid()), *sys.path]


# -- in the worker process -----------------------------------------------------------------


def serve_inherited(pipe: int, parent: int) -> None:
    """A worker process's entry point (`_worker_command`)."""
    _serve(socket.socket(fileno=pipe), parent)


def _serve(pipe: socket.socket, parent: int) -> None:
    """A worker's life: warm up, then answer each frame read from the pipe with one
    frame, until the fetch process hangs up (or is gone)."""
    _warm_up(parent)
    pipe.setblocking(True)
    with pipe:
        while (request := _receive(pipe)) is not None:
            answer = _run(request)
            try:
                pipe.sendall(_frame(answer))
            except OSError:
                return  # the fetch process hung up while the page was parsed


def _receive(pipe: socket.socket) -> bytearray | None:
    """The next frame's pickle, or None once the fetch process hung up or died."""
    header = _read_exactly(pipe, FRAME.size)
    return None if header is None else _read_exactly(pipe, FRAME.unpack(header)[0])


def _read_exactly(pipe: socket.socket, size: int) -> bytearray | None:
    data = bytearray(size)
    view = memoryview(data)
    while view:
        try:
            received = pipe.recv_into(view)
        except OSError:  # reset: the fetch process died with frames unread
            return None
        if not received:
            return None
        view = view[received:]
    return data


def _run(request: bytearray) -> bytes:
    """The pickled answer to one frame: (True, the job's result, None), or (False, the
    exception it raised, where)."""
    outcome: tuple[bool, Any, str | None]
    try:
        job, args = pickle.loads(request)
        outcome = (True, job(*args), None)
    except BaseException as exc:  # whatever the job raises is the caller's, as with an executor
        outcome = (False, exc, traceback.format_exc())
    try:
        return pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # a result or an exception that does not pickle
        return pickle.dumps((False, exc, traceback.format_exc()), pickle.HIGHEST_PROTOCOL)


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

"""Parsing what outsiders send (feeds, sitemaps, robots.txt) off the event loop, under a
time, CPU and memory limit (docs/RELIABILITY.md, "Hostile servers").

`await ParsePool(limits).run(job, *args)` runs `job(*args)` (a module-level function whose
arguments and result pickle, and that leaves nothing behind in its process) in a parse
worker: a long-lived process forked from multiprocessing's fork server, a fresh
interpreter, never a fork of a process holding sockets or database connections, that has
imported the parsers once. A worker runs one job at a time, and at most `processes` run at
once; a job takes an idle worker, or starts one, and hands it back when answered. The job
and its answer cross one pipe per worker, in a thread of the pool: the event loop only
waits on a future, so it goes on serving (the API, the fetcher, SIGTERM) whatever is being
parsed.

Every job has its own limits, and each fails it with `ParseLimitExceeded` naming it:

- wall-clock: the parent kills the worker once `timeout_s` has passed since the job was
  handed over (its start included, for a job that starts one);
- CPU: before each job the worker sets its soft RLIMIT_CPU to the CPU it has used so far,
  rounded up to the second, plus `cpu_s` (RLIMIT_CPU counts a process's whole life, and a
  limit set once would leave a job after a costly one less than its budget); the kernel
  kills it with SIGXCPU past it;
- memory: RLIMIT_AS, set once as the worker starts, is the job's: a job that runs out
  (`MemoryError`) is answered so, and the worker exits, as it does after any job during
  which its address space came within an eighth of the cap (a parser may catch the
  `MemoryError` itself): the next job has a fresh worker, not one whose heap a hostile
  document left full or fragmented.

A worker killed (the deadline, a cancelled job, a limit) or dead (a crash) is never used
again, and fails only the job it ran: no job is queued behind another in one process, so
there is never an innocent job in flight on it. Not `concurrent.futures.ProcessPoolExecutor`,
which breaks as a whole when it loses a worker, failing the jobs on its others. An idle
worker that died (killed from outside) refuses the job handed to it (its pipe is closed),
and the job goes to another. A cancelled job
(the poll cancelled, the service stopping) kills its worker at once; `close()` kills those
running and stops the idle ones.

Long-lived, not a process forked per job (as from issue 35 until the seventh session): the
fork, the child's start-up and its exit cost more than the parse of a feed, and cut
`bench.poll`'s rate several times over (bench/RESULTS.md). Not the extraction
pool's machinery (`fetcher.extract_pool`): the core imports no service, and what that pool
is built around (two pages in flight a worker, workers set aside behind a slow page, a page
tried again alone after a crash, a fresh interpreter started per worker with an allocator
of its own) is what a pool of one job a worker does not need; what both share is a
length-prefixed pickle over a pipe, which `multiprocessing.connection` gives here, and
the reading of a worker's peak address space (`frontier.address_space`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import multiprocessing
import multiprocessing.forkserver
import os
import pickle
import resource
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, NamedTuple, Self, TypeVar

from frontier.address_space import address_space_peak
from frontier.errors import FrontierError

if TYPE_CHECKING:  # not imported at run time: the fork server imports this module
    from frontier.settings import Settings

T = TypeVar("T")

# What the fork server imports once (the parsers' modules, this module, whose `_serve`
# each worker runs, and the main module as multiprocessing does by default), so that no
# worker pays for it: a worker that had to import this module (and then, so, the
# settings and pydantic) took an order of magnitude longer to start. These modules import
# only what a parse needs (not the settings, the HTTP client or pydantic): the fork server
# starts with every `frontier poll --once`, and its first parse waits for its imports
# (tests/unit/test_parse_pool.py holds them to it). Like every multiprocessing
# start method but fork, this needs a main script guarded by `if __name__ == "__main__"`
# (console scripts are; `python -m` is not imported again).
# Not "__main__" (multiprocessing's default): every job is a module's function, and a
# fetch or serve process's __main__ is the whole command line.
PRELOAD = ("frontier.parse_pool", "frontier.robots")
# The services' parsers (the poller's feed, sitemap and WordPress ones) are not named
# here: the core imports no service. A service (or a plugin kind) registers the module of
# its parse jobs in this entry-point group (pyproject.toml), and every pool preloads them:
# a module of parse jobs alone, not the kind's, which brings the client and the models.
# Such a module must import cleanly: the fork server skips a missing one (ImportError), but
# any other error at its import stops the fork server, and so every parse.
PRELOAD_GROUP = "frontier.parse_preload"


def preload_modules() -> list[str]:
    """The modules the fork server imports once: the core's, then the registered ones."""
    registered = sorted({point.module for point in entry_points(group=PRELOAD_GROUP)})
    return list(dict.fromkeys([*PRELOAD, *registered]))


class ParseLimitExceeded(FrontierError):
    """A parse ran past its wall-clock, CPU or memory limit (the message names which)."""


@dataclass(frozen=True, slots=True)
class ParseLimits:
    timeout_s: float = 30.0  # wall-clock, enforced by the parent (kill)
    cpu_s: int = 20  # CPU a job may use (the worker's RLIMIT_CPU, set for each job)
    memory_mb: int = 1024  # RLIMIT_AS of a worker
    processes: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))

    @classmethod
    def from_settings(cls, settings: Settings) -> ParseLimits:
        return cls(
            timeout_s=settings.parse_timeout_s,
            cpu_s=settings.parse_cpu_s,
            memory_mb=settings.parse_memory_mb,
            processes=settings.parse_processes or cls().processes,
        )


class _Worker:
    """A parse worker process and the parent's end of its pipe. Killed from the event
    loop's thread, reaped by the pool's: one at a time (both read the exit status the fork
    server sends, and a process reaped is never signalled: its pid may be another's)."""

    def __init__(self, process: multiprocessing.process.BaseProcess, pipe: Connection) -> None:
        self.process = process
        self.pipe = pipe
        self.pid = process.pid
        self._lock = threading.Lock()
        self._reaped = False

    def kill(self) -> None:
        with self._lock:
            if not self._reaped and self.process.exitcode is None:
                with contextlib.suppress(OSError):
                    self.process.kill()

    def reap(self) -> int | None:
        """Wait for the process to end (it has, or was killed, or reads the end of its
        pipe) and free what it held; its exit code."""
        self.pipe.close()
        with self._lock:
            self.process.join()
            exitcode = self.process.exitcode
            self.process.close()
            self._reaped = True
        return exitcode


class _Call:
    """One job's worker, killable from the event loop's thread while the pool's thread
    starts it or waits for its answer, until the job is done (answered: the worker is
    then free, and handed back)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.worker: _Worker | None = None  # until the pool's thread has one for the job
        self.killed = False
        self._done = False

    def started(self, worker: _Worker) -> None:
        """The job's worker (an idle one, or started for it): killed if the job was."""
        with self._lock:
            self.worker = worker
            if self.killed:
                worker.kill()

    def kill(self) -> None:
        with self._lock:
            if self._done:
                return
            self.killed = True
            if self.worker is not None:
                self.worker.kill()

    def done(self) -> bool:
        """The job is answered: True if its worker is free (not killed meanwhile)."""
        with self._lock:
            self._done = True
            return not self.killed


class _Outcome(NamedTuple):
    answered: bool  # False: the worker ended without an answer (`exitcode`)
    ok: bool = False
    value: Any = None
    exitcode: int | None = None


class ParsePool:
    """Run parse jobs in worker processes under `limits`; start and use it in one event
    loop, `close()` it when done (or use it as an async context manager)."""

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()
        self._context = multiprocessing.get_context("forkserver")
        # Process-wide (multiprocessing has one fork server): the parsers, imported once.
        self._context.set_forkserver_preload(preload_modules())
        self._threads = ThreadPoolExecutor(self.limits.processes, thread_name_prefix="parse")
        self._slots = asyncio.Semaphore(self.limits.processes)
        # Each waits for a job: taken and handed back by the pool's threads.
        self._idle: list[_Worker] = []
        self._closed = False
        self._running: set[_Call] = set()
        self.pids: list[int] = []  # the process that ran each job, in order (for tests)

    def warm(self) -> None:
        """Start the fork server now, if it is not running: it imports the parsers while
        the caller goes on (a `frontier poll --once` claims and sends its first requests
        meanwhile), instead of when the first job asks for a worker and waits for it."""
        multiprocessing.forkserver.ensure_running()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self.close()

    async def run(self, job: Callable[..., T], *args: Any) -> T:
        """`job(*args)` in a worker process; what it returns or raises, or
        `ParseLimitExceeded` when it runs past a limit."""
        async with self._slots:
            call = _Call()
            self._running.add(call)
            loop = asyncio.get_running_loop()
            expired: list[bool] = []
            deadline = loop.call_later(self.limits.timeout_s, _expire, call, expired)
            try:
                outcome = await loop.run_in_executor(self._threads, self._call, call, job, args)
            except BaseException:  # cancelled: the worker is not left running
                call.kill()
                raise
            finally:
                deadline.cancel()
                self._running.discard(call)
        if expired and not outcome.answered:
            raise ParseLimitExceeded(
                f"parse took longer than the limit of {self.limits.timeout_s:g} s"
                " (FRONTIER_PARSE_TIMEOUT_S)"
            )
        if not outcome.answered:
            raise ParseLimitExceeded(self._death(outcome.exitcode))
        if outcome.ok:
            return outcome.value
        raise outcome.value

    def _call(self, call: _Call, job: Callable[..., Any], args: tuple[Any, ...]) -> _Outcome:
        """In a thread of the pool: take an idle worker or start one, hand the job over,
        read its answer; reap the worker if it ended."""
        try:
            request = pickle.dumps((job, args), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # arguments that do not pickle: the caller's error
            return _Outcome(answered=True, ok=False, value=exc)
        while True:
            idle = self._idle.pop() if self._idle else None  # the last to answer: warmest
            if idle is None and call.killed:
                return _Outcome(answered=False)
            worker = idle or self._start_worker()
            call.started(worker)
            try:
                worker.pipe.send_bytes(request)
            except OSError:  # it died, killed while idle (then another takes the job), or now
                exitcode = worker.reap()
                if idle is None or call.killed:
                    return _Outcome(answered=False, exitcode=exitcode)
                continue
            break
        assert worker.pid is not None
        self.pids.append(worker.pid)
        try:
            ok, value, retiring = pickle.loads(worker.pipe.recv_bytes())
        except (EOFError, OSError):  # it died (a limit, a crash) or was killed (the deadline)
            return _Outcome(answered=False, exitcode=worker.reap())
        if retiring:
            call.done()
            worker.reap()
        else:
            self._hand_back(call, worker)
        return _Outcome(answered=True, ok=ok, value=value)

    def _hand_back(self, call: _Call, worker: _Worker) -> None:
        """The job is answered: its worker waits for the next, unless it was killed
        meanwhile (the deadline, the job cancelled) or the pool is closing."""
        if call.done() and not self._closed:
            self._idle.append(worker)
        else:
            worker.kill()
            worker.reap()

    def _start_worker(self) -> _Worker:
        ours, theirs = self._context.Pipe(duplex=True)
        limits = (self.limits.cpu_s, self.limits.memory_mb * 1024 * 1024)
        process = self._context.Process(
            target=_serve, args=(theirs, limits), name="frontier-parse", daemon=True
        )
        try:
            process.start()
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()  # the worker's own: when it dies, the pipe ends
        return _Worker(process, ours)

    def _death(self, exitcode: int | None) -> str:
        if exitcode == -signal.SIGXCPU:
            return (
                f"parse used more than the CPU limit of {self.limits.cpu_s} s"
                " (FRONTIER_PARSE_CPU_S)"
            )
        if exitcode is None or exitcode >= 0:
            return f"the parse process ended without an answer (exit {exitcode})"
        return (
            f"the parse process died ({signal.Signals(-exitcode).name}) under the memory "
            f"limit of {self.limits.memory_mb} MiB (FRONTIER_PARSE_MEMORY_MB)"
        )

    def close(self) -> None:
        """Kill the jobs still running, stop the idle workers, and wait for every worker
        to be reaped."""
        self._closed = True
        for call in list(self._running):
            call.kill()
        self._threads.shutdown(wait=True, cancel_futures=True)
        idle, self._idle = self._idle, []
        for worker in idle:
            worker.reap()  # it reads the end of its pipe (closed first), and exits


def _expire(call: _Call, expired: list[bool]) -> None:
    """The job's wall-clock time is over: its worker is killed."""
    expired.append(True)
    call.kill()


# -- in the worker -------------------------------------------------------------------------


def _serve(pipe: Connection, limits: tuple[int, int]) -> None:
    """A worker's life: cap its memory, then answer each job read from the pipe with
    `(ok, the result or the exception, retiring)` until the parent hangs up (or is gone),
    or a job leaves the worker near its memory limit (retiring: it exits after answering)."""
    cpu_s, memory_bytes = limits
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    _, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
    near = memory_bytes - memory_bytes // 8
    peak = address_space_peak()
    with pipe:
        while True:
            try:
                request = pipe.recv_bytes()
            except (EOFError, OSError):
                return  # the parent hung up, or is gone
            # This job's CPU: the worker's so far (whole seconds, as the limit counts) + cpu_s.
            usage = resource.getrusage(resource.RUSAGE_SELF)
            soft = math.ceil(usage.ru_utime + usage.ru_stime) + cpu_s
            if cpu_hard != resource.RLIM_INFINITY:
                soft = min(soft, cpu_hard)
            resource.setrlimit(resource.RLIMIT_CPU, (soft, cpu_hard))
            answer, retiring = _answer(request, memory_bytes)
            del request
            retiring = retiring or peak() > near
            try:
                pipe.send_bytes(_answer_bytes(answer, retiring, memory_bytes))
            except OSError:
                return  # the parent hung up while the job ran
            del answer
            if retiring:
                return


def _answer(request: bytes, memory_bytes: int) -> tuple[tuple[bool, Any], bool]:
    """The job's outcome, and whether it ran out of memory (the worker then retires)."""
    try:
        job, args = pickle.loads(request)
        return (True, job(*args)), False
    except MemoryError:  # not kept: its traceback holds the document's trees
        return (False, ParseLimitExceeded(_over_memory(memory_bytes))), True
    except BaseException as exc:  # the caller's, as with an executor
        return (False, exc), False


def _answer_bytes(answer: tuple[bool, Any], retiring: bool, memory_bytes: int) -> bytes:
    try:
        return pickle.dumps((*answer, retiring), pickle.HIGHEST_PROTOCOL)
    except MemoryError:
        over = ParseLimitExceeded(_over_memory(memory_bytes))
        return pickle.dumps((False, over, True), pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # a result or an exception that does not pickle
        unusable = ParseLimitExceeded(f"parse result unusable: {exc!r}")
        return pickle.dumps((False, unusable, retiring), pickle.HIGHEST_PROTOCOL)


def _over_memory(memory_bytes: int) -> str:
    return (
        f"parse needed more than the memory limit of {memory_bytes // (1024 * 1024)} MiB"
        " (FRONTIER_PARSE_MEMORY_MB)"
    )

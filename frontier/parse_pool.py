"""Parsing what outsiders send (feeds, sitemaps, robots.txt) off the event loop, under a
time, CPU and memory limit (docs/RELIABILITY.md, "Hostile servers").

`await ParsePool(limits).run(job, *args)` runs `job(*args)` (a module-level function whose
arguments and result pickle) in a process of its own, forked from multiprocessing's fork
server: a fresh interpreter, never a fork of a process holding sockets or database
connections, that has imported the parsers once, so a parse costs a fork and not an
interpreter start. The child sets its own RLIMIT_CPU and RLIMIT_AS before the job; the
parent kills it once `timeout_s` of wall-clock time has passed. Each limit fails the job
with `ParseLimitExceeded` naming it. The fork, the hand-over of the body and the answer's
pickle happen in a thread of the pool: the event loop only waits on a future, so it goes
on serving (the API, the fetcher, SIGTERM) whatever is being parsed. A cancelled job
(the poll cancelled, the service stopping) kills its process at once; `close()` kills
those still running.

One process per job, not `concurrent.futures.ProcessPoolExecutor` (whose workers are
reused): a worker it loses, killed at the deadline or by its CPU limit, breaks the whole
executor and fails the innocent parses in flight on its other workers; and RLIMIT_CPU
counts a process's whole life, not one job. A fresh process per job makes both limits
exact. At most `processes` jobs run at once; the others wait for a slot. So no job is ever
queued behind another on one process, as a page can be on an extraction worker (which
takes two at a time, and sets a worker aside when its page is slow: fetcher.extract_pool):
a job waits only while every process runs one.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import resource
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from frontier.errors import FrontierError
from frontier.settings import Settings

T = TypeVar("T")

# What the fork server imports once (the parsers' modules, this module, whose `_child`
# each child runs, and the main module as multiprocessing does by default), so that no
# child pays for it: a child that had to import this module (and so frontier.settings
# and pydantic) took an order of magnitude longer to start. Like every multiprocessing
# start method but fork, this needs a main script guarded by `if __name__ == "__main__"`
# (console scripts are; `python -m` is not imported again).
# Not "__main__" (multiprocessing's default): every job is a module's function, and a
# fetch or serve process's __main__ is the whole command line.
PRELOAD = ("frontier.parse_pool", "frontier.robots")
# The services' parsers (the poller's feed, sitemap and WordPress ones) are not named
# here: the core imports no service. A service (or a plugin kind) registers the module of
# its parse jobs in this entry-point group (pyproject.toml), and every pool preloads them.
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
    cpu_s: int = 20  # RLIMIT_CPU of the child
    memory_mb: int = 1024  # RLIMIT_AS of the child
    processes: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))

    @classmethod
    def from_settings(cls, settings: Settings) -> ParseLimits:
        return cls(
            timeout_s=settings.parse_timeout_s,
            cpu_s=settings.parse_cpu_s,
            memory_mb=settings.parse_memory_mb,
            processes=settings.parse_processes or cls().processes,
        )


class _Job:
    """One job's process, killable from the event loop's thread while the pool's thread
    starts it or waits for its answer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: multiprocessing.process.BaseProcess | None = None
        self.killed = False

    def started(self, process: multiprocessing.process.BaseProcess) -> None:
        with self._lock:
            self._process = process
            if self.killed:
                process.kill()

    def kill(self) -> None:
        with self._lock:
            self.killed = True
            if self._process is not None and self._process.exitcode is None:
                with contextlib.suppress(OSError, ValueError):
                    self._process.kill()


class ParsePool:
    """Run parse jobs in child processes under `limits`; start and use it in one event
    loop, `close()` it when done (or use it as an async context manager)."""

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()
        self._context = multiprocessing.get_context("forkserver")
        # Process-wide (multiprocessing has one fork server): the parsers, imported once.
        self._context.set_forkserver_preload(preload_modules())
        self._threads = ThreadPoolExecutor(self.limits.processes, thread_name_prefix="parse")
        self._slots = asyncio.Semaphore(self.limits.processes)
        self._running: set[_Job] = set()
        self.pids: list[int] = []  # the processes that ran jobs (for tests)

    async def __aenter__(self) -> ParsePool:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self.close()

    async def run(self, job: Callable[..., T], *args: Any) -> T:
        """`job(*args)` in a child process; what it returns or raises, or
        `ParseLimitExceeded` when it runs past a limit."""
        async with self._slots:
            handle = _Job()
            self._running.add(handle)
            loop = asyncio.get_running_loop()
            waiting = loop.run_in_executor(self._threads, self._run, handle, job, args)
            try:
                ok, value, exitcode = await asyncio.wait_for(
                    asyncio.shield(waiting), self.limits.timeout_s
                )
            except TimeoutError:
                handle.kill()
                raise ParseLimitExceeded(
                    f"parse took longer than the limit of {self.limits.timeout_s:g} s"
                    " (FRONTIER_PARSE_TIMEOUT_S)"
                ) from None
            except BaseException:  # cancelled: the process is not left running
                handle.kill()
                raise
            finally:
                self._running.discard(handle)
        if ok:
            return value
        if value is not None:
            raise value
        raise ParseLimitExceeded(self._death(exitcode))

    def _run(
        self, handle: _Job, job: Callable[..., Any], args: tuple[Any, ...]
    ) -> tuple[bool, Any, int | None]:
        """In a thread of the pool: start the child, read its answer, reap it."""
        reader, writer = self._context.Pipe(duplex=False)
        limits = (self.limits.cpu_s, self.limits.memory_mb * 1024 * 1024)
        process = self._context.Process(
            target=_child, args=(writer, limits, job, args), name="frontier-parse", daemon=True
        )
        with reader:
            try:
                if handle.killed:
                    return False, None, None
                process.start()
            finally:
                writer.close()
            handle.started(process)
            assert process.pid is not None
            self.pids.append(process.pid)
            try:
                ok, value = reader.recv()
            except (EOFError, OSError):  # it died (a limit) or was killed (the deadline)
                ok, value = False, None
        process.join()
        exitcode = process.exitcode
        process.close()
        return ok, value, exitcode

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
        """Kill the jobs still running and wait for their processes to be reaped."""
        for handle in list(self._running):
            handle.kill()
        self._threads.shutdown(wait=True, cancel_futures=True)


# -- in the child --------------------------------------------------------------------------


def _child(
    answer: Connection, limits: tuple[int, int], job: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    cpu_s, memory_bytes = limits
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    try:
        outcome: tuple[bool, Any] = (True, job(*args))
    except MemoryError:
        outcome = (False, ParseLimitExceeded(_over_memory(memory_bytes)))
    except BaseException as exc:  # the caller's, as with an executor
        outcome = (False, exc)
    try:
        answer.send(outcome)
    except MemoryError:
        answer.send((False, ParseLimitExceeded(_over_memory(memory_bytes))))
    except Exception as exc:  # a result or an exception that does not pickle
        answer.send((False, ParseLimitExceeded(f"parse result unusable: {exc!r}")))


def _over_memory(memory_bytes: int) -> str:
    return (
        f"parse needed more than the memory limit of {memory_bytes // (1024 * 1024)} MiB"
        " (FRONTIER_PARSE_MEMORY_MB)"
    )

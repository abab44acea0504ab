"""The fetch process's end of one extraction worker's pipe (`WorkerPipe`, an asyncio
protocol): the worker process started, pages handed to it as frames, answers read back in
order, the page at the head timed (slow, then over its time limit: the worker killed), and
the pipe's end when the worker dies. The pool (`fetcher.extract_pool`) decides what to do
with each worker; the other side of the pipe is `fetcher.extract_worker`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import pickle
import socket
import subprocess
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, cast

from fetcher.extract_job import (
    Extraction,
    over_time,
)
from fetcher.extract_worker import FRAME, worker_command

log = logging.getLogger(__name__)


class WorkerDied(Exception):
    """The worker a page was in flight on died (not raised to callers: the page is
    extracted again). `culprit_known`: it was killed for another page, over its time
    limit, so this one goes back to the pool rather than to be extracted alone."""

    def __init__(self, *, culprit_known: bool = False) -> None:
        super().__init__()
        self.culprit_known = culprit_known


class RemoteTraceback(Exception):
    """Where in the worker an exception was raised: its `__cause__`, as with
    `concurrent.futures`."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


class WorkerPipe(asyncio.Protocol):
    """One worker process and the fetch process's end of its socket pair, as an asyncio
    protocol: frames written by the event loop (its transport buffers what the pipe does
    not take at once), answers read in the order the pages went. The pipe's end, when the
    worker dies, is `connection_lost`.

    The page at the head of the queue is the one the worker parses: from the moment the
    worker is ready (it says so with an empty frame once warmed up) or answered the page
    before, it has `timeout_s`, then the worker is killed. At `slow_page_s`, `on_slow` is
    told (the pool may set the worker aside: `set_aside`). One timer a worker, not one a
    page: when it fires for a page answered since, it is set again for the page now parsed."""

    def __init__(
        self,
        environment: Mapping[str, str],
        limits: tuple[float, float, int],
        on_exit: Callable[[WorkerPipe], None],
        on_answer: Callable[[], None],
        on_slow: Callable[[WorkerPipe], bool],
    ) -> None:
        """`limits`: `timeout_s`, `slow_page_s` and `memory_mb` (`ExtractionPool`)."""
        self._on_exit = on_exit  # the worker died, or hung up
        self._on_answer = on_answer  # a page left the worker (its slot is free)
        self._on_slow = on_slow  # a page is slow: True if the worker was set aside
        # One a page in flight: its answer and its frame (to hand it to another worker).
        self._waiting: deque[tuple[asyncio.Future[bytearray], bytes]] = deque()
        self._received = bytearray()
        self._transport: asyncio.Transport | None = None
        self._unsent: list[bytes] = []  # frames sent before the transport is connected
        self._timeout_s, self._slow_page_s, memory_mb = limits
        self.held = False  # set aside with a slow page, its only one: killed once answered
        self.ready = False  # warmed up: the time of the page at the head counts
        self._head_since = 0.0  # when the worker took the page at the head of the queue
        self._clock: asyncio.TimerHandle | None = None
        self._killed_for: asyncio.Future[bytearray] | None = None  # the page over the time
        self.alive = True
        self.pages_lost = 0  # in flight when it died
        ours, theirs = socket.socketpair()
        with theirs:  # the worker's own: when it dies, the pipe ends
            try:
                self.process = subprocess.Popen(
                    worker_command(theirs.fileno(), memory_mb),
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

    def send(
        self, frame: bytes, answer: asyncio.Future[bytearray] | None = None
    ) -> asyncio.Future[bytearray]:
        """Hand a page's frame to the worker; the future (`answer`, for a page handed back
        by a worker set aside) is its answer's pickle, or `WorkerDied`."""
        if answer is None:
            answer = asyncio.get_running_loop().create_future()
        self._waiting.append((answer, frame))
        if len(self._waiting) == 1:
            self._next_page()
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
            if not self.ready:  # the first frame: warmed up
                self.ready = True
                self._next_page()
                continue
            waiter, _frame = self._waiting.popleft()
            if self.held:  # its one page: what follows answers pages handed back, unread
                self._received.clear()
                self.process.kill()  # connection_lost follows
            else:
                self._next_page()
            self._on_answer()
            if not waiter.cancelled():  # a cancelled page's answer is read and dropped
                waiter.set_result(answer)

    def _next_page(self) -> None:
        """The worker takes the page at the head of the queue (if any) now."""
        if not self.ready or not self._waiting:
            return
        loop = asyncio.get_running_loop()
        self._head_since = loop.time()
        if self._clock is None:
            first = min(self._timeout_s, self._slow_page_s)
            self._clock = loop.call_at(self._head_since + first, self._check_time)

    def _check_time(self) -> None:
        self._clock = None
        if not self.alive or not self._waiting:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        over = self._head_since + self._timeout_s
        if now >= over:
            log.warning(
                "extraction worker process %s: a page over the %g s time limit, killed",
                self.process.pid,
                self._timeout_s,
            )
            self._killed_for = self._waiting[0][0]  # not the next, if its answer is here
            self.process.kill()  # its pipe ends: connection_lost
            return
        # Else the page it was set for was answered (the next one's times), or the page is
        # slow: the pool is told, and told again later if it did not set the worker aside.
        slow = self._head_since + self._slow_page_s
        if not self.held and now >= slow and not self._on_slow(self):
            slow = now + self._slow_page_s
        self._clock = loop.call_at(over if self.held else min(over, slow), self._check_time)

    def set_aside(self, *, frees_its_slot: bool) -> list[tuple[asyncio.Future[bytearray], bytes]]:
        """Keep only the page being parsed, and return the pages queued behind it (their
        answers and frames) for other workers. Their frames, already in the pipe, are never
        read: the worker is killed once its page is answered, or at its time limit. Its
        answer frees its slot if `frees_its_slot`, else the pool has freed it already."""
        self.held = True
        if not frees_its_slot:
            self._on_answer = nothing
        queued = [self._waiting.pop() for _ in range(len(self._waiting) - 1)]
        return queued[::-1]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.alive:
            return  # lost as its connection failed, then told by the transport too
        self.alive = False
        if self._clock is not None:
            self._clock.cancel()
        waiting, self._waiting = self._waiting, deque()
        self.pages_lost = len(waiting)
        for waiter, _frame in waiting:
            self._on_answer()
            if not waiter.done():  # the page parsed when it was killed is over the limit
                over = waiter is self._killed_for
                waiter.set_exception(
                    over_time(self._timeout_s)
                    if over
                    else WorkerDied(culprit_known=self._killed_for is not None)
                )
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


def result_of(answer: bytearray) -> Extraction:
    ok, value, where = pickle.loads(answer)
    if ok:
        return value
    value.__cause__ = RemoteTraceback(where)
    raise value


def nothing() -> None:
    pass

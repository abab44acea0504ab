"""An extraction worker process (`fetcher.extract_pool` starts them): its command and
environment, and its life on the other side of the pipe: cap its memory, warm up, then
answer each frame (8 bytes of length, then the pickled job and arguments) with one frame,
until the fetch process hangs up or is gone, or a page goes over the memory limit."""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import resource
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from typing import Any

from fetcher.allocators import preloading
from fetcher.extract import extract
from fetcher.extract_job import ExtractionOverLimit
from frontier.address_space import address_space_peak

PARENT_CHECK_S = 1.0  # how often a worker looks whether its fetch process still runs
FRAME = struct.Struct(">Q")  # a frame: the length of the pickle that follows
READY = FRAME.pack(0)  # an empty frame: what a worker sends once warmed up
WARM_UP_HTML = (
    "<html lang='en'><head><title>warm-up</title></head><body><article><h1>Warm-up</h1>"
    "<p>The extraction worker parses one page when it starts, so that the first real page "
    "does not pay for loading the parser and its tables.</p></article></body></html>"
)


def framed(payload: bytes) -> bytes:
    return FRAME.pack(len(payload)) + payload


def worker_environment(preload: str | None) -> dict[str, str]:
    """A worker's environment: the fetch process's, with the allocator to preload."""
    return preloading(preload, os.environ) if preload else dict(os.environ)


# A worker: a fresh interpreter with the fetch process's import path (as multiprocessing's
# `spawn` gives its children: a job pickled by reference imports there what it imported
# here), serving the socket it inherits. Not `spawn` itself, which cannot give a child an
# environment of its own (the allocator to preload is the workers', not the fetch
# process's). Arguments: the socket's descriptor, the fetch process, the memory limit
# (MiB), then the path. The cyclic collector is off until the worker has warmed up (`_serve`
# freezes what the imports and the warm-up built, as `frontier_cli.modules_frozen` does).
_WORKER_CODE = (
    "import gc, sys; gc.disable(); sys.path[:] = sys.argv[4:]; "
    "from fetcher.extract_worker import serve_inherited; "
    "serve_inherited(*map(int, sys.argv[1:4]))"
)


def worker_command(pipe: int, memory_mb: int) -> list[str]:
    return [
        sys.executable,
        "-c",
        _WORKER_CODE,
        str(pipe),
        str(os.getpid()),
        str(memory_mb),
        *sys.path,
    ]


# -- in the worker process -----------------------------------------------------------------


def serve_inherited(pipe: int, parent: int, memory_mb: int) -> None:
    """A worker process's entry point (`worker_command`)."""
    _serve(socket.socket(fileno=pipe), parent, memory_mb)


def _serve(pipe: socket.socket, parent: int, memory_mb: int) -> None:
    """A worker's life: cap its memory, warm up, say it is ready, then answer each frame
    read from the pipe with one frame, until the fetch process hangs up (or is gone), or a
    page goes over the memory limit: then its answer says so, and the worker exits."""
    limit = memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _warm_up(parent)
    # The parsers, their tables and the language model live as long as the worker: left
    # out of the collector's passes (30 ms of a worker's start, bench/RESULTS.md, ninth
    # session); the collector runs again from here (it is off from the worker's start).
    gc.freeze()
    gc.enable()
    peak = address_space_peak()
    # Made now: a worker out of memory may not be able to make it.
    over = pickle.dumps((False, ExtractionOverLimit(f"over the {memory_mb} MiB memory limit"), ""))
    pipe.setblocking(True)
    with pipe:
        try:
            pipe.sendall(READY)
        except OSError:
            return  # the fetch process was done before this worker was ready (no traceback)
        while (request := _receive(pipe)) is not None:
            answer = _run(request)
            if answer is None or peak() > limit - limit // 8:
                with contextlib.suppress(OSError):
                    pipe.sendall(framed(over))
                return
            try:
                pipe.sendall(framed(answer))
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


def _run(request: bytearray) -> bytes | None:
    """The pickled answer to one frame: (True, the job's result, None), or (False, the
    exception it raised, where); None when it ran out of memory."""
    outcome: tuple[bool, Any, str | None]
    try:
        job, args = pickle.loads(request)
        outcome = (True, job(*args), None)
    except MemoryError:  # not kept: its traceback holds the page's trees
        return None
    except BaseException as exc:  # whatever the job raises is the caller's, as with an executor
        outcome = (False, exc, traceback.format_exc())
    try:
        return pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL)
    except MemoryError:
        return None
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

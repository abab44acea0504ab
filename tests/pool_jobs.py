"""Extraction jobs for the process-pool tests, importable by the pool's worker processes:
each wraps the real job (`fetcher.extract_job.extract_page`) and marks the stored title
with the pid of the process that ran it; `crashing` also kills its own process with
SIGKILL for some pages, as a parser crash or an operator's `kill -9` would; `gated` holds
each page until the test opens a `Gate`; `stalling` never ends some pages; `failing`
raises for some pages; `echoed` returns the body it was given; `collector_state` tells the
worker's cyclic collector's state in the title."""

from __future__ import annotations

import fcntl
import gc
import hashlib
import os
import signal
from dataclasses import replace
from pathlib import Path
from typing import Any

from fetcher.extract import Extracted
from fetcher.extract_job import Extraction, extract_page

# A directory: which pages already killed a worker once (`crashing`); which pages started
# in which process (`gated`), and its gate.
MARKERS = "POOL_TEST_MARKERS"


def tagged(*args: Any) -> Extraction:
    """The real extraction, its title ending with ` [pid N]`."""
    done = extract_page(*args)
    title = f"{done.extracted.title} [pid {os.getpid()}]"
    return replace(done, extracted=replace(done.extracted, title=title))


def collector_state(*args: Any) -> Extraction:
    """The real extraction, titled with whether the worker's cyclic collector runs and how
    many objects it left out of its passes (`gc.freeze`): `enabled True frozen N`."""
    done = extract_page(*args)
    state = f"enabled {gc.isenabled()} frozen {gc.get_freeze_count()}"
    return replace(done, extracted=replace(done.extracted, title=state))


def pid_in(title: str) -> int:
    return int(title.rsplit("[pid ", 1)[1].rstrip("]"))


def crashing(*args: Any) -> Extraction:
    """A page whose path holds `crash-once` kills its worker the first time it is
    extracted; one whose path holds `poison` kills it every time."""
    url = args[2]
    if "poison" in url:
        os.kill(os.getpid(), signal.SIGKILL)
    if "crash-once" in url:
        marker = Path(os.environ[MARKERS]) / url.rsplit("/", 1)[1]
        try:  # created atomically: of two workers on such a page at once, one dies
            marker.touch(exist_ok=False)
        except FileExistsError:
            pass
        else:
            os.kill(os.getpid(), signal.SIGKILL)
    return tagged(*args)


class Gate:
    """A lock file in the `MARKERS` directory: while the test holds it closed, each page of
    `gated` waits (blocked on the lock, not polling) once it has marked itself started."""

    def __init__(self, markers: Path) -> None:
        self._file = (markers / "gate").open("w")
        fcntl.flock(self._file, fcntl.LOCK_EX)

    def open(self) -> None:
        fcntl.flock(self._file, fcntl.LOCK_UN)

    def close(self) -> None:
        self._file.close()


def gated(*args: Any) -> Extraction:
    """`tagged`, once the gate is open; marks the page started in its process first."""
    markers = Path(os.environ[MARKERS])
    (markers / f"started {os.getpid()} {args[2].rsplit('/', 1)[1]}").touch()
    with (markers / "gate").open() as gate:
        fcntl.flock(gate, fcntl.LOCK_SH)
    return tagged(*args)


def started(markers: Path) -> dict[int, set[str]]:
    """The pages `gated` started, by the pid of the process that runs them (the last
    segment of their path)."""
    pages: dict[int, set[str]] = {}
    for marker in markers.glob("started *"):
        _, pid, page = marker.name.split(" ")
        pages.setdefault(int(pid), set()).add(page)
    return pages


def stalling(*args: Any) -> Extraction:
    """A page whose path holds `stall` never ends, as a hostile page's parse may take
    seconds to minutes (bench.hostile_documents: a `<br>` page of a few MiB): its worker
    waits for the signal that kills it, whatever the machine's speed; the others are
    `tagged`."""
    if "stall" in args[2]:
        while True:
            signal.pause()
    return tagged(*args)


class PageRefused(Exception):
    """What `failing` raises."""


def failing(*args: Any) -> Extraction:
    """A page whose path holds `fail` raises `PageRefused`; the others are `tagged`."""
    if "fail" in args[2]:
        raise PageRefused(f"no article at {args[2]}")
    return tagged(*args)


def echoed(body: bytes, *_args: Any) -> Extraction:
    """The body as the extracted text, with its SHA-256 and length: a big page both ways."""
    text = body.decode()
    return Extraction(
        Extracted(body=text), None, hashlib.sha256(body).hexdigest(), len(body), os.getpid()
    )

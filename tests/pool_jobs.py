"""Extraction jobs for the process-pool tests, importable by the pool's worker processes:
each wraps the real job (`fetcher.extract_pool.extract_page`) and marks the stored title
with the pid of the process that ran it; `crashing` also kills its own process with
SIGKILL for some pages, as a parser crash or an operator's `kill -9` would."""

from __future__ import annotations

import os
import signal
from dataclasses import replace
from pathlib import Path
from typing import Any

from fetcher.extract_pool import Extraction, extract_page

MARKERS = "POOL_TEST_MARKERS"  # a directory: which pages already killed a worker once


def tagged(*args: Any) -> Extraction:
    """The real extraction, its title ending with ` [pid N]`."""
    done = extract_page(*args)
    title = f"{done.extracted.title} [pid {os.getpid()}]"
    return replace(done, extracted=replace(done.extracted, title=title))


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
        if not marker.exists():
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
    return tagged(*args)

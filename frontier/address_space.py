"""The peak of a process's address space, read cheaply after each job by the worker
processes that parse what outsiders send under an RLIMIT_AS (`frontier.parse_pool`,
`fetcher.extract_worker`): a job during which it came near the cap leaves the worker to a
fresh one, even where the parser caught the `MemoryError` itself."""

from __future__ import annotations

import os
from collections.abc import Callable


def address_space_peak() -> Callable[[], int]:
    """The largest the process's address space has been, in bytes (`VmPeak`, read from
    /proc: a few microseconds), or 0 where there is no /proc."""
    try:
        status = os.open("/proc/self/status", os.O_RDONLY)
    except OSError:
        return lambda: 0

    def peak() -> int:
        text = os.pread(status, 4096, 0)
        start = text.index(b"VmPeak:") + 7
        return int(text[start : text.index(b"kB", start)]) * 1024

    return peak

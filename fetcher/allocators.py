"""The memory allocator the processes that extract run on (`FRONTIER_EXTRACT_ALLOCATOR`).

Parsing a page builds and frees an lxml tree of thousands of small nodes, several times a
page (trafilatura copies it for each reading), through the C library's `malloc`: under
`perf`, glibc's malloc and free took a large share of an extraction worker's CPU. With
gperftools' tcmalloc preloaded, `bench.fetch`'s small pages cost the fetch process and its
workers less CPU a page and went faster (jemalloc: no gain; bench/RESULTS.md, "the
extraction workers on tcmalloc"). The workers are processes the pool starts itself, so the
allocator is given to them alone (`LD_PRELOAD`): the fetch process, which then only fetches
and stores, gained nothing from it. A fetch process that extracts in a thread of its own
(`FRONTIER_EXTRACT_PROCESSES=0`) does the parsing itself, so it runs on the allocator too:
an allocator is chosen before the process starts, so it starts itself again on it
(`frontier_cli.fetch`; bench/RESULTS.md, nineteenth session).

- `auto` (the default): tcmalloc when the system has it (Debian and Ubuntu:
  `libtcmalloc-minimal4`, which `make` and the image install), else the C library's;
- `system`: the C library's;
- a path: that allocator's shared library (`frontier.settings` checks it exists).
"""

from __future__ import annotations

import ctypes.util
from collections.abc import Mapping

AUTO = "auto"
SYSTEM = "system"
TCMALLOC = "tcmalloc_minimal"  # gperftools' allocator without its heap profiler


def preload_for(setting: str) -> str | None:
    """The library the workers preload for `setting`, or None for the C library's
    allocator. `auto` looks for tcmalloc once, where the fetch process starts."""
    if setting == SYSTEM:
        return None
    if setting == AUTO:
        return ctypes.util.find_library(TCMALLOC)  # its soname, which the loader finds
    return setting


def preloading(preload: str, environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` with `preload` first in `LD_PRELOAD` (what is preloaded there stays)."""
    environment = dict(environ)
    environment["LD_PRELOAD"] = " ".join(filter(None, (preload, environ.get("LD_PRELOAD"))))
    return environment


def preloaded(preload: str, environ: Mapping[str, str]) -> bool:
    """Whether a process started with `environ` preloads `preload`."""
    return preload in environ.get("LD_PRELOAD", "").split()

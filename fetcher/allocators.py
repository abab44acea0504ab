"""The memory allocator the extraction workers run on (`FRONTIER_EXTRACT_ALLOCATOR`).

Parsing a page builds and frees an lxml tree of thousands of small nodes, several times a
page (trafilatura copies it for each reading), through the C library's `malloc`: under
`perf`, glibc's malloc and free took a large share of an extraction worker's CPU. With
gperftools' tcmalloc preloaded, `bench.fetch`'s small pages cost the fetch process and its
workers less CPU a page and went faster (jemalloc: no gain; bench/RESULTS.md, "the
extraction workers on tcmalloc"). The workers are processes the pool starts itself, so the
allocator is given to them alone (`LD_PRELOAD`), never to the fetch process.

- `auto` (the default): tcmalloc when the system has it (Debian and Ubuntu:
  `libtcmalloc-minimal4`, which `make` and the image install), else the C library's;
- `system`: the C library's;
- a path: that allocator's shared library (`frontier.settings` checks it exists).
"""

from __future__ import annotations

import ctypes.util

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

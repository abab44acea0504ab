"""The parse pool's long-lived workers keep every job's limits its own (issue 34, taking
back issue 35's per-parse process): a job after a costly one in the same worker has its
whole CPU budget; a job killed at its deadline fails no other; a worker that ran out of
memory, or died while idle, is replaced and the next job passes. Each fails on a pool that
keeps its workers naively (a CPU limit set once, a worker kept after `MemoryError`, a
process pool that breaks when it loses a worker, an idle worker taken without a look)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from frontier.parse_pool import ParseLimitExceeded, ParseLimits, ParsePool
from tests.conditions import wait_until
from tests.watched_pool import allocate, burn, hoard, outlive, spin

GENEROUS = 120.0  # a wall-clock limit no test job comes near, on a loaded machine
ROOT = Path(__file__).resolve().parents[2]


def cpu_used_s(pid: int) -> float:
    """The CPU process `pid` has used (utime + stime of /proc/<pid>/stat), 0 if gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_job_after_a_costly_one_in_the_same_worker_has_its_whole_cpu_budget() -> None:
    async with ParsePool(ParseLimits(cpu_s=1, timeout_s=GENEROUS, processes=1)) as pool:
        first = await pool.run(burn, 0.6)
        second = await pool.run(burn, 0.6)  # 1.2 s of the worker's life: over a limit set once
        assert second == first  # the same worker
        with pytest.raises(ParseLimitExceeded, match=r"CPU limit of 1 s \(FRONTIER_PARSE_CPU_S\)"):
            await pool.run(burn, 60)  # and the limit holds for each job
        assert await pool.run(burn, 0) != first  # killed by it, replaced


async def test_a_job_killed_at_its_deadline_fails_no_job_running_beside_it(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    async with ParsePool(ParseLimits(timeout_s=4, cpu_s=600, processes=2)) as pool:
        hung = asyncio.ensure_future(pool.run(spin, str(pid_file)))
        pid = int(await wait_until(lambda: pid_file.exists() and pid_file.read_text()))
        # The job beside it starts once the hung one has run a while, so that its own
        # deadline comes after the hung one's: it waits for the hung one's worker to die.
        await wait_until(lambda: cpu_used_s(pid) >= 0.3, what="the hung job running")
        beside = await pool.run(outlive, pid)
        with pytest.raises(ParseLimitExceeded, match="longer than the limit of 4 s"):
            await hung
    assert beside != pid and gone(pid)


async def test_a_worker_that_ran_out_of_memory_is_replaced_and_the_next_job_passes() -> None:
    # A cap well above a fresh worker's own address space, whatever the dependencies'
    # versions map (the floors' venv's workers start near 140 MiB): room for 32 MiB more.
    async with ParsePool(ParseLimits(memory_mb=384, timeout_s=GENEROUS, processes=1)) as pool:
        with pytest.raises(ParseLimitExceeded, match="memory limit of 384 MiB"):
            await pool.run(hoard)
        [hoarder] = pool.pids
        # A worker still holding the hoard would have no room for this
        assert await pool.run(allocate, 32) != hoarder
        assert gone(hoarder)


async def test_an_idle_worker_killed_from_outside_is_replaced_and_close_stops_the_rest() -> None:
    async with ParsePool(ParseLimits(timeout_s=GENEROUS, processes=1)) as pool:
        first = await pool.run(burn, 0)
        os.kill(first, signal.SIGKILL)
        await wait_until(lambda: gone(first), what="the idle worker gone")
        second = await pool.run(burn, 0)
        assert second != first
    assert gone(second)  # the idle worker stopped and reaped by close()


# What the fork server imports (the core's preload and pyproject.toml's registered parsers),
# in a fresh interpreter: which of the heavy modules came with them.
PRELOADED = """
import sys, tomllib
from pathlib import Path
from frontier.parse_pool import PRELOAD
toml = tomllib.loads(Path("pyproject.toml").read_text())
for name in [*PRELOAD, *toml["project"]["entry-points"]["frontier.parse_preload"].values()]:
    __import__(name)
print(" ".join(m for m in ("aiohttp", "pydantic", "frontier.settings") if m in sys.modules))
"""

WARMED = """
import os
from multiprocessing import forkserver
from pathlib import Path
from frontier.parse_pool import ParsePool
pool = ParsePool()
pool.warm()
# The fork server's pid as multiprocessing keeps it, set as it starts one (None before),
# not its command line: a child's is the parent's until it has exec'd.
pid = forkserver._forkserver._forkserver_pid
tasks = Path(f"/proc/{os.getpid()}/task").glob("*/children")
print(pid is not None and pid in [int(c) for t in tasks for c in t.read_text().split()])
pool.close()
"""


def python(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_the_fork_server_imports_the_parsers_without_the_http_client_or_the_settings() -> None:
    """Every `frontier poll --once` starts a fork server, and its first parse waits for it:
    the parsers' modules bring neither aiohttp nor pydantic (the WordPress kind's module
    did, and this module the settings)."""
    assert python(PRELOADED) == ""


def test_a_warmed_pool_has_its_fork_server_running_before_its_first_job() -> None:
    assert python(WARMED) == "True"

"""A `frontier fetch` process that extracts in a thread of its own runs on the extraction
allocator (tcmalloc where the system has it, as `make` installs it): it starts itself again
with it preloaded, the same PID and command line, before it logs anything; one with
extraction workers keeps the C library's (its workers get the allocator)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from fetcher.allocators import preload_for
from frontier.settings import Settings
from tests.conditions import wait_until
from tests.processes import frontier_env, frontier_output, frontier_process, read_log

TCMALLOC = preload_for("auto")
DEFAULT_AGENT = str(Settings.model_fields["user_agent"].default)
pytestmark = pytest.mark.skipif(TCMALLOC is None, reason="tcmalloc is not installed")
STARTED = "FRONTIER_USER_AGENT is the default"  # what a fetch process logs as it starts


async def mapped_by_fetch(dsn: str, tmp_path: Path, extract_processes: str) -> str:
    """The shared objects mapped into a `frontier fetch` process once its claim loop runs
    (its heartbeat: SIGTERM is its own by then, where after its first log line it could
    still kill it), read by the PID it was started with; it is then stopped, and must exit
    0."""
    beat = tmp_path / "fetch.heartbeat"
    async with frontier_process(
        dsn,
        tmp_path,
        "fetch",
        FRONTIER_EXTRACT_PROCESSES=extract_processes,
        FRONTIER_USER_AGENT=DEFAULT_AGENT,
        FRONTIER_FETCH_HEARTBEAT_FILE=str(beat),
    ) as child:
        await wait_until(beat.exists, child, what="its claim loop's first heartbeat")
        maps = Path(f"/proc/{child.pid}/maps").read_text()
        child.send_signal(signal.SIGTERM)
        assert await child.wait() == 0
    return maps


async def test_a_fetch_process_extracting_in_a_thread_runs_on_tcmalloc(
    fresh_dsn: str, tmp_path: Path
) -> None:
    assert "libtcmalloc" in await mapped_by_fetch(fresh_dsn, tmp_path, "0")
    assert read_log(tmp_path, "fetch").count(STARTED) == 1  # one process's log, not two


async def test_a_fetch_process_with_extraction_workers_keeps_the_c_librarys(
    fresh_dsn: str, tmp_path: Path
) -> None:
    assert "libtcmalloc" not in await mapped_by_fetch(fresh_dsn, tmp_path, "1")


async def test_the_restarted_process_keeps_its_command_line(fresh_dsn: str) -> None:
    env = frontier_env(fresh_dsn, FRONTIER_EXTRACT_PROCESSES="0")
    code, out, err = await frontier_output("fetch", "--until-idle", "--workers", "3", env=env)
    assert code == 0, err
    assert out.splitlines() == ["fetch: 0 pages (none); 0 released"]  # printed once, then idle

"""Issue 34, item 10: a running `frontier fetch` keeps its heartbeat file fresh
(FRONTIER_FETCH_HEARTBEAT_FILE), idle as it is here, which the container health check
reads (deploy/healthcheck.py; its verdicts: tests/unit/test_fetch_heartbeat.py)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from fetcher.heartbeat import BEAT_EVERY_S
from tests.conditions import wait_until
from tests.processes import frontier_process


async def test_an_idle_fetcher_keeps_touching_its_heartbeat(fresh_dsn: str, tmp_path: Path) -> None:
    beat = tmp_path / "fetch.heartbeat"
    async with frontier_process(
        fresh_dsn, tmp_path, "fetch", FRONTIER_FETCH_HEARTBEAT_FILE=str(beat)
    ) as fetch:
        await wait_until(beat.exists, fetch, what="the first heartbeat")
        os.utime(beat, (1.0, 1.0))  # as if it were long ago: the next beat must renew it
        await wait_until(
            lambda: beat.stat().st_mtime > 1.0,
            fetch,
            deadline_s=6 * BEAT_EVERY_S,
            what="a later heartbeat",
        )
        fetch.send_signal(signal.SIGTERM)
        assert await fetch.wait() == 0

"""`frontier serve` as a process: SIGTERM is a graceful stop with exit code 0 (uvicorn's own
signal handling would re-raise the signal and kill it before the pool is closed)."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx

from tests.conditions import wait_until
from tests.processes import free_port, frontier_process, read_log


async def test_sigterm_stops_serve_gracefully_with_exit_0(fresh_dsn: str, tmp_path: Path) -> None:
    port = free_port()
    async with (
        frontier_process(fresh_dsn, tmp_path, "serve", "--port", str(port)) as api,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client,
    ):

        async def healthy() -> bool:
            try:
                return (await client.get("/healthz")).status_code == 200
            except httpx.TransportError:
                return False

        await wait_until(healthy, api, what="the API answering /healthz")
        api.send_signal(signal.SIGTERM)
        assert await api.wait() == 0
    assert "Traceback" not in read_log(tmp_path, "serve")

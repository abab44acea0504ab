"""Benchmark the bulk import endpoint: 1,000,000 URLs in one streamed request to
`POST /api/v1/import`, against the `frontier import` CLI on the same file.

Run ``python -m bench.api_import [--quick]`` (``--quick``: 100,000 URLs over 10,000 hosts).
The URL file is `bench.submit`'s (duplicates and tracking parameters included). On one
throwaway embedded server (see `bench.server`):

1. `frontier serve` runs as a child process on a fresh database; the file is streamed to
   it as a chunked text/plain body (never held whole on either side); the server's peak
   RSS (VmHWM) is read before it is stopped;
2. `GET /api/v1/stats` is timed 20 times at the resulting frontier size (median, p95);
3. `frontier import FILE --json` runs on another fresh database for the reference rate.

The last line printed is one JSON object: ``{"urls": N, "api_urls_per_s": ...,
"cli_urls_per_s": ..., "ratio_vs_cli": ..., "server_peak_rss_mib": ...,
"stats_ms_median": ..., "stats_ms_p95": ...}``. Targets: ratio_vs_cli >= 0.5,
server_peak_rss_mib <= 300, stats well under 200 ms.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from bench.server import emit_result, log, median, percentile, running_server
from bench.submit import build_urls, time_import

TOKEN = "bench-token-0123456789abcdef0123456789"
CHUNK = 1 << 16


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def vm_hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def file_chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            yield chunk


def wait_ready(base: str, process: subprocess.Popen[bytes], deadline_s: float = 60) -> None:
    """Poll /healthz until the server answers (a benchmark, not a test: polling is fine)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"frontier serve exited {process.returncode}")
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError("frontier serve did not start in time")


def run_api(dsn: str, path: Path, workdir: Path, lines: int) -> dict[str, float]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    env.update(
        FRONTIER_DATABASE_URL=dsn,
        FRONTIER_API_TOKEN=TOKEN,
        FRONTIER_API_IMPORT_MAX_BYTES=str(4 << 30),
    )
    command = [sys.executable, "-m", "frontier", "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, cwd=workdir, stderr=subprocess.DEVNULL)
    try:
        wait_ready(base, process)
        log(f"POST /api/v1/import: {lines:,} lines, streamed")
        start = time.perf_counter()
        response = httpx.post(
            base + "/api/v1/import",
            content=file_chunks(path),
            timeout=None,
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/plain"},
        )
        wall = time.perf_counter() - start
        response.raise_for_status()
        summary = response.json()
        log(
            f"API import {wall:.2f}s = {lines / wall:,.0f} lines/s (accepted "
            f"{summary['accepted']:,}, duplicate {summary['duplicate']:,})"
        )
        timings = []
        with httpx.Client(base_url=base, timeout=30) as client:
            for _ in range(20):
                t0 = time.perf_counter()
                client.get("/api/v1/stats").raise_for_status()
                timings.append((time.perf_counter() - t0) * 1000)
        rss = vm_hwm_mib(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)
    log(
        f"stats median {median(timings):.1f} ms, p95 {percentile(timings, 95):.1f} ms; "
        f"server peak RSS {rss:.0f} MiB"
    )
    return {
        "wall": wall,
        "accepted": summary["accepted"],
        "rss": rss,
        "stats_median": median(timings),
        "stats_p95": percentile(timings, 95),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 URLs instead of 1M")
    args = parser.parse_args(argv)
    count, hosts = (100_000, 10_000) if args.quick else (1_000_000, 100_000)
    log(f"generating {count:,} URLs over {hosts:,} hosts")
    with tempfile.TemporaryDirectory(prefix="frontier-bench-api-") as tmp:
        workdir = Path(tmp)
        path = workdir / "urls.txt"
        path.write_text("\n".join(build_urls(count, hosts)) + "\n", encoding="utf-8")
        with running_server() as server:
            dsn = server.migrated_database("bench_api_import")
            server.checkpoint()
            api = run_api(dsn, path, workdir, count)
            server.drop_database("bench_api_import")
            dsn = server.migrated_database("bench_api_cli")
            server.checkpoint()
            log(f"frontier import: {count:,} lines")
            cli_wall, cli_summary, cli_rss = time_import(dsn, path, workdir)
            server.drop_database("bench_api_cli")
    if cli_summary["accepted"] != api["accepted"]:
        raise RuntimeError(f"API accepted {api['accepted']}, CLI {cli_summary['accepted']}")
    log(f"CLI import {cli_wall:.2f}s = {count / cli_wall:,.0f} lines/s")
    emit_result(
        {
            "urls": count,
            "hosts": hosts,
            "accepted": api["accepted"],
            "api_urls_per_s": round(count / api["wall"]),
            "cli_urls_per_s": round(count / cli_wall),
            "ratio_vs_cli": round(cli_wall / api["wall"], 3),
            "server_peak_rss_mib": round(api["rss"], 1),
            "cli_peak_rss_mib": round(cli_rss, 1),
            "stats_ms_median": round(api["stats_median"], 2),
            "stats_ms_p95": round(api["stats_p95"], 2),
        }
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark the API under abuse (issue 19): a 2 GiB body to every write endpoint, with and
without a token, and 10,000 idle half-open connections.

Run ``python -m bench.api_abuse [--quick] [--runs N]`` (``--quick``: a 256 MiB body and
2,000 connections). Each run starts `frontier serve` as a child process on a fresh
database of a throwaway embedded server (see `bench.server`), then:

1. for each write endpoint, with and without the token, with a Content-Length and chunked:
   streams a body of spaces (made by a generator, never held) over a raw socket, watching
   for the answer between chunks, and times the answer; the server's peak RSS (VmHWM) is
   read at the end of the run;
2. opens N connections that send half a request head and stop, asks /healthz through
   them all, then counts how many the server closed at its header deadline.

The last line of standard output is one JSON object with the medians over the runs.
Targets: every answer under 1 s, peak RSS under 300 MB, /healthz answering.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from bench.api_import import free_port, vm_hwm_mib, wait_ready
from bench.server import emit_result, log, median, running_server
from frontier.safe_http import raise_open_file_limit

TOKEN = "bench-abuse-token"
CHUNK = 256 * 1024
ANSWER_DEADLINE_S = 30.0


def spaces(total: int) -> Iterator[bytes]:
    block = b" " * CHUNK
    sent = 0
    while sent < total:
        piece = block[: min(CHUNK, total - sent)]
        sent += len(piece)
        yield piece


def send_big_body(
    port: int, method: str, path: str, total: int, *, token: bool, chunked: bool
) -> dict[str, Any]:
    """Send a `total`-byte body and stop at the answer; returns its status and time."""
    head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}")
    if token:
        head.append(f"Authorization: Bearer {TOKEN}")
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    start = time.perf_counter()
    sent = 0
    answer = b""
    try:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        for piece in spaces(total):
            if select.select([sock], [], [], 0)[0]:
                break  # the server answered before the body was all sent
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            sent += len(piece)
        else:
            if chunked:
                sock.sendall(b"0\r\n\r\n")
    except OSError:
        pass  # the server closed while we sent; its answer may still be readable
    sock.settimeout(ANSWER_DEADLINE_S)
    try:
        answer = sock.recv(65_536)
    except OSError:
        answer = b""
    elapsed = time.perf_counter() - start
    sock.close()
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0
    return {"status": status, "seconds": elapsed, "sent_mib": sent / (1 << 20)}


def half_open(port: int, count: int, base: str) -> dict[str, Any]:
    """`count` connections that send half a request head; /healthz meanwhile; then how
    many the server closed at its header deadline."""
    socks = []
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        socks.append(sock)
    poller = select.poll()
    for sock in socks:
        poller.register(sock, select.POLLOUT)
    waiting, end = {sock.fileno() for sock in socks}, time.monotonic() + 60
    while waiting and time.monotonic() < end:  # SYNs past the backlog are retried
        for fileno, _ in poller.poll(1000):
            waiting.discard(fileno)
            poller.unregister(fileno)
    opened = 0
    for sock in socks:
        try:
            sock.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            opened += 1
        except OSError:
            pass
    log(f"{opened:,} half-open connections")
    healthz: list[float] = []
    ok = 0
    for _ in range(5):
        t0 = time.perf_counter()
        with contextlib.suppress(httpx.TransportError):
            ok += httpx.get(base + "/healthz", timeout=5).status_code == 200
        healthz.append(time.perf_counter() - t0)
    time.sleep(12)  # past the default 10 s header deadline
    closed = 0
    for sock in socks:
        try:
            closed += sock.recv(1) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        sock.close()
    return {
        "opened": opened,
        "healthz_ok": ok,
        "healthz_max_s": max(healthz),
        "closed_at_deadline": closed,
    }


def one_run(dsn: str, workdir: Path, body: int, connections: int) -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    env.update(FRONTIER_DATABASE_URL=dsn, FRONTIER_API_TOKEN=TOKEN)
    errors = workdir / "serve.log"
    with errors.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "frontier", "serve", "--port", str(port)],
            env=env,
            cwd=workdir,
            stderr=stderr,
        )
    try:
        wait_ready(base, process)
        baseline = vm_hwm_mib(process.pid)
        source = httpx.post(
            base + "/api/v1/sources",
            json={"name": "abuse"},
            headers={"Authorization": f"Bearer {TOKEN}"},
        ).json()["id"]
        targets = [
            ("POST", "/api/v1/sources"),
            ("PATCH", f"/api/v1/sources/{source}"),
            ("POST", "/api/v1/import"),
            ("POST", f"/api/v1/sources/{source}/fire"),
            ("DELETE", f"/api/v1/sources/{source}x"),
            ("GET", "/healthz"),
        ]
        cases: dict[str, dict[str, Any]] = {}
        for method, path in targets:
            for token in (False, True):
                for chunked in (False, True):
                    if token and chunked and path == "/api/v1/import":
                        continue  # a real import up to FRONTIER_API_IMPORT_MAX_BYTES
                    name = (
                        f"{method} {path.replace(source, '{id}')} "
                        f"{'token' if token else 'no-token'} "
                        f"{'chunked' if chunked else 'length'}"
                    )
                    cases[name] = send_big_body(
                        port, method, path, body, token=token, chunked=chunked
                    )
                    log(f"{name}: {cases[name]}")
        peak = vm_hwm_mib(process.pid)
        idle = half_open(port, connections, base)
        log(f"half-open: {idle}")
        peak = max(peak, vm_hwm_mib(process.pid))
    finally:
        process.terminate()
        process.wait(timeout=30)
    tracebacks = errors.read_text(errors="replace").count("Traceback")
    return {
        "cases": cases,
        "baseline_rss_mib": baseline,
        "peak_rss_mib": peak,
        "idle": idle,
        "tracebacks": tracebacks,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="256 MiB, 2,000 connections")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    body, connections = (256 << 20, 2_000) if args.quick else (2 << 30, 10_000)
    raise_open_file_limit()  # our side holds the connections too
    runs = []
    with (
        tempfile.TemporaryDirectory(prefix="frontier-bench-abuse-") as tmp,
        running_server() as server,
    ):
        for number in range(args.runs):
            dsn = server.migrated_database(f"bench_abuse_{number}")
            runs.append(one_run(dsn, Path(tmp), body, connections))
            server.drop_database(f"bench_abuse_{number}")
    slowest = [max(c["seconds"] for c in run["cases"].values()) for run in runs]
    statuses = sorted({f"{name}: {case['status']}" for name, case in runs[0]["cases"].items()})
    for line in statuses:
        log(line)
    emit_result(
        {
            "body_mib": body >> 20,
            "connections": connections,
            "runs": args.runs,
            "slowest_answer_s": round(median(slowest), 3),
            "answers_5xx_or_none": sum(
                not 200 <= c["status"] < 500 for run in runs for c in run["cases"].values()
            ),
            "max_sent_mib": round(
                max(c["sent_mib"] for run in runs for c in run["cases"].values()), 1
            ),
            "peak_rss_mib": round(median([run["peak_rss_mib"] for run in runs]), 1),
            "baseline_rss_mib": round(median([run["baseline_rss_mib"] for run in runs]), 1),
            "half_open_opened": round(median([run["idle"]["opened"] for run in runs])),
            "healthz_ok_of_5": round(median([run["idle"]["healthz_ok"] for run in runs])),
            "healthz_max_s": round(median([run["idle"]["healthz_max_s"] for run in runs]), 3),
            "closed_at_deadline": round(
                median([run["idle"]["closed_at_deadline"] for run in runs])
            ),
            "server_tracebacks": sum(run["tracebacks"] for run in runs),
        }
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

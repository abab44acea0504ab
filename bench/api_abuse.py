"""Benchmark the API under abuse (issues 19 and 35): a 2 GiB body to every write endpoint,
with and without a token, 10,000 idle half-open connections, and hostile feeds and sitemaps
polled by the server itself.

Run ``python -m bench.api_abuse [--quick] [--runs N]`` (``--quick``: a 256 MiB body and
2,000 connections). Each run starts `frontier serve` as a child process on a fresh
database of a throwaway embedded server (see `bench.server`), then:

1. for each write endpoint, with and without the token, with a Content-Length and chunked:
   streams a body of spaces (made by a generator, never held) over a raw socket, watching
   for the answer between chunks, and times the answer; the server's peak RSS (VmHWM) is
   read at the end of the run;
2. opens N connections that send half a request head and stop, asks /healthz through
   them all, then counts how many the server closed at its header deadline;
3. serves hostile documents on loopback (`bench.hostile_documents`: a sitemap index naming
   two gzip sitemaps that inflate to 50 MiB of empty elements each, and a 2 MiB feed that
   is not well-formed), fires a source for each through the API (the server parses them)
   and asks /healthz every 0.1 s until both fires have answered: the slowest answer.

The last line of standard output is one JSON object with the medians over the runs.
Targets: every answer under 1 s, peak RSS under 300 MB, /healthz answering, and within
1 s at every check while the hostile documents are parsed.
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
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from bench.api_import import free_port, vm_hwm_mib, wait_ready
from bench.hostile_documents import empty_elements_sitemap, malformed_feed, sitemap_index
from bench.server import emit_result, log, median, running_server
from frontier.safe_http import raise_open_file_limit

TOKEN = "bench-abuse-token-0123456789abcdef"
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


def hostile_site() -> ThreadingHTTPServer:
    """A loopback server of hostile documents, in a thread of its own."""
    documents: dict[str, bytes] = {
        "/big-1.xml.gz": empty_elements_sitemap(50 << 20),
        "/big-2.xml.gz": empty_elements_sitemap(50 << 20),
        "/feed.xml": malformed_feed(2 << 20),
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = documents.get(self.path, b"")
            self.send_response(200 if body else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    documents["/index.xml"] = sitemap_index(
        origin + "/big-1.xml.gz", origin + "/big-2.xml.gz"
    ).encode()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def hostile_polls(base: str) -> dict[str, Any]:
    """Fire a hostile sitemap source and a hostile feed source; meanwhile, ask /healthz
    every 0.1 s. Returns the slowest /healthz answer and what the fires answered."""
    site = hostile_site()
    origin = f"http://127.0.0.1:{site.server_address[1]}"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    sources = {
        "hostile-sitemap": {"sitemap_url": origin + "/index.xml"},
        "hostile-feed": {"feed_url": origin + "/feed.xml"},
    }
    ids = [
        httpx.post(base + "/api/v1/sources", json={"name": name, **urls}, headers=auth).json()["id"]
        for name, urls in sources.items()
    ]
    checks: list[float] = []
    try:
        with ThreadPoolExecutor(len(ids)) as threads:
            fires = [
                threads.submit(
                    httpx.post, f"{base}/api/v1/sources/{i}/fire", headers=auth, timeout=600
                )
                for i in ids
            ]
            started = time.perf_counter()
            while not all(f.done() for f in fires):
                asked = time.perf_counter()
                try:
                    httpx.get(base + "/healthz", timeout=600)
                except httpx.HTTPError:
                    checks.append(float("inf"))
                else:
                    checks.append(time.perf_counter() - asked)
                time.sleep(0.1)
            answers = [f.result() for f in fires]
    finally:
        site.shutdown()
    return {
        "healthz_checks": len(checks),
        "healthz_max_s": round(max(checks, default=0.0), 3),
        "polls_s": round(time.perf_counter() - started, 1),
        "fires": [
            {
                "status": a.status_code,
                "outcome": a.json().get("outcome"),
                "error": a.json().get("error"),
            }
            for a in answers
        ],
    }


def one_run(dsn: str, workdir: Path, body: int, connections: int) -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    env.update(
        FRONTIER_DATABASE_URL=dsn,
        FRONTIER_API_TOKEN=TOKEN,
        FRONTIER_ALLOW_PRIVATE_NETWORKS="true",  # the hostile documents are on loopback
    )
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
        hostile = hostile_polls(base)
        log(f"hostile polls: {hostile}")
    finally:
        process.terminate()
        process.wait(timeout=30)
    tracebacks = errors.read_text(errors="replace").count("Traceback")
    return {
        "cases": cases,
        "baseline_rss_mib": baseline,
        "peak_rss_mib": peak,
        "idle": idle,
        "hostile": hostile,
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
            "hostile_healthz_max_s": round(
                median([run["hostile"]["healthz_max_s"] for run in runs]), 3
            ),
            "hostile_polls_s": round(median([run["hostile"]["polls_s"] for run in runs]), 1),
            "server_tracebacks": sum(run["tracebacks"] for run in runs),
        }
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

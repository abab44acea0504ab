"""Benchmark the API under abuse (issues 19 and 35): a 2 GiB body to every write endpoint,
with and without a token, 10,000 idle half-open connections, hostile feeds and sitemaps
polled by the server itself, and hostile pages fetched beside it.

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
   and asks /healthz every 0.1 s until both fires have answered: the slowest answer;
4. serves hostile pages on loopback (nothing but `<br>` tags: two of 3 MiB, over the
   time limit, and one of 9.9 MiB, over the memory limit) beside 20 articles on four
   hosts with no delay, submits them all, and runs `frontier fetch --until-idle` on the
   database `frontier serve` reads, with `FRONTIER_EXTRACT_TIMEOUT_S` 8 and the default
   memory limit (1024 MiB), asking /healthz every 0.1 s meanwhile: the slowest answer;
   for the normal pages, the longest time from a page's request (the site's clock) to the
   end of its extraction (`fetch_log.elapsed_ms`) and to its fetch_log row (written once
   it is stored and completed), and the longest from the fetch process's start to that
   row; each hostile page's status, error and requests; the fetch process tree's peak RSS.
   This phase is the same with and without `--quick` (about 20 s).

The last line of standard output is one JSON object with the medians over the runs.
Targets: every answer under 1 s, peak RSS under 300 MB, /healthz answering, and within
1 s at every check while the hostile documents are parsed and the hostile pages
extracted; every normal page stored within the extraction limit of its request; every
hostile page `failed` with the limit named, requested once.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.api_import import free_port, vm_hwm_mib, wait_ready
from bench.fetch import news_page_html, submit_urls
from bench.hostile_documents import (
    empty_elements_sitemap,
    line_breaks,
    malformed_feed,
    sitemap_index,
)
from bench.server import emit_result, log, median, run_measured, running_server
from frontier.safe_http.limits import raise_open_file_limit

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


class LoopbackSite:
    """A server of fixed documents on a loopback address, in a thread of its own, that
    notes when each path was asked (epoch seconds, the clock PostgreSQL's `now()` reads).
    `content_type`: the header of every answer, or None for none."""

    def __init__(
        self,
        documents: dict[str, bytes],
        address: str = "127.0.0.1",
        content_type: str | None = None,
    ) -> None:
        self.documents = documents
        self.hits: list[tuple[str, float]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.hits.append((self.path, time.time()))
                body = site.documents.get(self.path, b"")
                self.send_response(200 if body else 404)
                if content_type and body:
                    self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: object) -> None:
                pass

        self.server = ThreadingHTTPServer((address, 0), Handler)
        self.origin = f"http://{address}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def hostile_site() -> LoopbackSite:
    """A loopback server of hostile feeds and sitemaps."""
    site = LoopbackSite(
        {
            "/big-1.xml.gz": empty_elements_sitemap(50 << 20),
            "/big-2.xml.gz": empty_elements_sitemap(50 << 20),
            "/feed.xml": malformed_feed(2 << 20),
        }
    )
    site.documents["/index.xml"] = sitemap_index(
        site.origin + "/big-1.xml.gz", site.origin + "/big-2.xml.gz"
    ).encode()
    return site


def healthz_while(base: str, work: list[Future[Any]]) -> list[float]:
    """Ask /healthz every 0.1 s until all of `work` is done: how long each answer took
    (infinity for none)."""
    checks: list[float] = []
    while not all(f.done() for f in work):
        asked = time.perf_counter()
        try:
            httpx.get(base + "/healthz", timeout=600)
        except httpx.HTTPError:
            checks.append(float("inf"))
        else:
            checks.append(time.perf_counter() - asked)
        time.sleep(0.1)
    return checks


def hostile_polls(base: str) -> dict[str, Any]:
    """Fire a hostile sitemap source and a hostile feed source; meanwhile, ask /healthz
    every 0.1 s. Returns the slowest /healthz answer and what the fires answered."""
    site = hostile_site()
    auth = {"Authorization": f"Bearer {TOKEN}"}
    sources = {
        "hostile-sitemap": {"sitemap_url": site.origin + "/index.xml"},
        "hostile-feed": {"feed_url": site.origin + "/feed.xml"},
    }
    ids = [
        httpx.post(base + "/api/v1/sources", json={"name": name, **urls}, headers=auth).json()["id"]
        for name, urls in sources.items()
    ]
    try:
        with ThreadPoolExecutor(len(ids)) as threads:
            fires = [
                threads.submit(
                    httpx.post, f"{base}/api/v1/sources/{i}/fire", headers=auth, timeout=600
                )
                for i in ids
            ]
            started = time.perf_counter()
            checks = healthz_while(base, fires)
            answers = [f.result() for f in fires]
    finally:
        site.close()
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


# The hostile pages' phase: one page (path -> MiB of `<br>`) on each of the first hosts,
# beside ARTICLES normal articles on every host; under these limits the 3 MiB pages are
# over the time limit (tens of seconds to extract) and the 9.9 MiB one over the memory
# limit (it takes the address space within about 3 s, under the 10 MiB body cap).
PAGE_HOSTS = ("127.0.0.61", "127.0.0.62", "127.0.0.63", "127.0.0.64")
HOSTILE_PAGES = {"/br-3mib-a": 3.0, "/br-3mib-b": 3.0, "/br-9.9mib": 9.9}
ARTICLES = 5  # a host
EXTRACT_TIMEOUT_S = 8
EXTRACT_MEMORY_MB = 1024  # the default


def hostile_pages(base: str, dsn: str, workdir: Path) -> dict[str, Any]:
    """Serve hostile `<br>` pages beside normal articles on loopback hosts, submit them
    all, and run `frontier fetch --until-idle` with the extraction limits above on the
    database `frontier serve` reads; meanwhile, ask /healthz every 0.1 s. Returns the
    slowest /healthz answer, how long each normal page took from its request to its
    fetch_log row (written once it is stored and completed) and from the fetch process's
    start, what became of the hostile pages and how often each was asked, and the fetch
    process's peak RSS (it and its extraction workers)."""
    sites = [
        LoopbackSite(
            {f"/s/{p}": news_page_html(h, p).encode() for p in range(ARTICLES)},
            address,
            "text/html; charset=utf-8",
        )
        for h, address in enumerate(PAGE_HOSTS)
    ]
    hostile = set()
    for site, (path, mib) in zip(sites, HOSTILE_PAGES.items(), strict=False):
        site.documents[path] = line_breaks(mib)
        hostile.add(site.origin + path)
    urls = [site.origin + path for site in sites for path in site.documents]
    submit_urls(dsn, urls)
    env = frontier_env(
        dsn,
        FRONTIER_EXTRACT_TIMEOUT_S=str(EXTRACT_TIMEOUT_S),
        FRONTIER_EXTRACT_MEMORY_MB=str(EXTRACT_MEMORY_MB),
    )
    command = [sys.executable, "-m", "frontier", "fetch", "--until-idle"]
    try:
        with ThreadPoolExecutor(1) as thread:
            started = time.time()
            fetch = thread.submit(run_measured, command, env=env, cwd=workdir)
            checks = healthz_while(base, [fetch])
            run = fetch.result()
    finally:
        for site in sites:
            site.close()
    if run.returncode:
        raise RuntimeError(f"the fetch process failed:\n{run.stderr[-3000:]}")
    asked: dict[str, list[float]] = {}
    for site in sites:
        for path, at in site.hits:
            asked.setdefault(site.origin + path, []).append(at)
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT u.url, u.status::text, u.last_error, extract(epoch FROM l.at)::float8, "
            "l.elapsed_ms FROM url_frontier u LEFT JOIN LATERAL (SELECT at, elapsed_ms "
            "FROM fetch_log WHERE url = u.url AND kind = 'page' ORDER BY at DESC LIMIT 1) l "
            "ON true WHERE u.url = ANY(%s)",
            [urls],
        ).fetchall()
    # A normal page's times: from its request (the site's clock) to its fetch_log row, written
    # once its batch is stored and completed; and to the end of its extraction (elapsed_ms).
    stored = sorted(
        (at - min(asked[url]), elapsed_ms / 1000, at - started, url)
        for url, status, _, at, elapsed_ms in rows
        if url not in hostile and status == "fetched"
    )
    for held, extracted, after_start, url in stored[-5:]:
        log(
            f"{url}: stored {held:.2f} s after its request (extracted after {extracted:.2f} s), "
            f"{after_start:.2f} s after the fetch process started"
        )
    return {
        "healthz_checks": len(checks),
        "healthz_max_s": round(max(checks, default=0.0), 3),
        "extract_timeout_s": EXTRACT_TIMEOUT_S,
        "extract_memory_mb": EXTRACT_MEMORY_MB,
        "normal_pages": len(urls) - len(hostile),
        "normal_stored": len(stored),
        "request_to_stored_max_s": round(max((page[0] for page in stored), default=math.nan), 2),
        "request_to_extracted_max_s": round(max((page[1] for page in stored), default=math.nan), 2),
        "start_to_stored_max_s": round(max((page[2] for page in stored), default=math.nan), 2),
        "fetch_wall_s": round(run.wall_s, 1),
        "fetch_tree_peak_rss_mib": round(run.tree_peak_rss_mib, 1),
        "hostile": {
            url.rsplit("/", 1)[1]: f"{status}: {error}; requests: {len(asked.get(url, []))}"
            for url, status, error, _, _ in rows
            if url in hostile
        },
    }


def frontier_env(dsn: str, **settings: str) -> dict[str, str]:
    """The environment of a `frontier` child process on `dsn`: ours without its FRONTIER_
    settings, private networks allowed (the hostile documents are on loopback), and
    `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    env.update(FRONTIER_DATABASE_URL=dsn, FRONTIER_ALLOW_PRIVATE_NETWORKS="true", **settings)
    return env


def one_run(dsn: str, workdir: Path, body: int, connections: int) -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = frontier_env(dsn, FRONTIER_API_TOKEN=TOKEN)
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
        pages = hostile_pages(base, dsn, workdir)
        log(f"hostile pages: {pages}")
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
        "pages": pages,
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
            "pages_healthz_max_s": round(
                median([run["pages"]["healthz_max_s"] for run in runs]), 3
            ),
            "pages_extract_timeout_s": EXTRACT_TIMEOUT_S,
            "pages_extract_memory_mb": EXTRACT_MEMORY_MB,
            "pages_normal_stored": f"{min(r['pages']['normal_stored'] for r in runs)} of "
            f"{runs[0]['pages']['normal_pages']}",
            **{
                f"pages_{figure}": round(median([run["pages"][figure] for run in runs]), 2)
                for figure in (
                    "request_to_stored_max_s",
                    "request_to_extracted_max_s",
                    "start_to_stored_max_s",
                    "fetch_wall_s",
                    "fetch_tree_peak_rss_mib",
                )
            },
            "pages_hostile": {
                page: sorted({run["pages"]["hostile"][page] for run in runs})
                for page in runs[0]["pages"]["hostile"]
            },
            "server_tracebacks": sum(run["tracebacks"] for run in runs),
        }
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

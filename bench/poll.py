"""Benchmark the poller: the real `frontier poll --once` over many feeds on a local server.

Run ``python -m bench.poll [--quick]``. 10,000 feeds (1,000 with ``--quick``) spread over
50 loopback hosts (127.0.0.1 .. 127.0.0.50; 20 with ``--quick``) on one aiohttp server in
a thread: half the sources hold an ETag the server answers with 304, the other half get a
20-item RSS feed with HTML bodies and links unique to the feed. The politeness delay is 0, as
in bench.fetch: a poll takes its host's slot like any request, and with the default delay of
1 s the 50 feeds of a host would take 50 s whatever the poller's speed.

1. ``python -m frontier poll --once --json`` runs as a child process on a fresh database
   (sources inserted beforehand); its wall time (interpreter start-up included) gives
   feeds/s, its VmHWM the peak RSS; the summaries and the frontier are checked. The CPU a
   feed of the poller alone, of the poller with its parse workers and their fork server
   (which it never waits for), and of PostgreSQL's processes, which move much less with
   other load than the wall time does; with ``--statements``, pg_stat_statements' count of
   the statements a feed (the round trips) and the most frequent of them.
2. A naive sequential loop over the same feeds: one httpx client, conditional GET with the
   same ETags, `feedparser.parse` on each body; feeds/s.

The last line is one JSON object: ``{"feeds": N, "hosts": H, "poller_feeds_per_s": ...,
"poller_peak_rss_mib": ..., "poller_cpu_ms_per_feed": ..., "poller_tree_cpu_ms_per_feed": ...,
"postgres_cpu_ms_per_feed": ..., "naive_feeds_per_s": ..., "speedup_vs_naive": ...}``.
Targets: at least 200 feeds/s and at most 300 MB RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
from aiohttp import web

from bench.server import SERVER_SETTINGS, emit_result, log, run_measured, running_server

ROOT = Path(__file__).resolve().parents[1]

ETAG = '"bench-v1"'
ITEMS = 20


def feed_body(feed: int, host: str) -> bytes:
    items = []
    for i in range(ITEMS):
        items.append(
            f"<item><title>Story {i} of feed {feed}</title>"
            f"<link>http://{host}/news/{feed}/story-{i}.html</link>"
            f"<guid>http://{host}/news/{feed}/story-{i}.html</guid>"
            f"<pubDate>Sun, 01 Mar 2026 {i % 24:02d}:00:00 GMT</pubDate>"
            "<description><![CDATA[<p>The <b>council</b> voted on the <a href='/budget'>"
            "budget</a> tonight, with a long debate about the river bridge, the school "
            "and the library. <img src='/img/1.jpg'> More details follow.</p>]]>"
            "</description></item>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
        f"<title>Feed {feed}</title><link>http://{host}/</link>{''.join(items)}"
        "</channel></rss>"
    ).encode()


class FeedServer:
    """An aiohttp server on several loopback addresses, in a thread of its own."""

    def __init__(self, hosts: int) -> None:
        self.addresses = [f"127.0.0.{i}" for i in range(1, hosts + 1)]
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    async def _handle(self, request: web.Request) -> web.Response:
        feed = int(request.match_info["n"])
        if request.headers.get("If-None-Match") == ETAG:
            return web.Response(status=304, headers={"ETag": ETAG})
        return web.Response(body=feed_body(feed, request.host), content_type="application/rss+xml")

    def add_routes(self, app: web.Application) -> None:
        """What the server answers (bench.freshness adds articles and robots.txt)."""
        app.router.add_get("/feed/{n}.xml", self._handle)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        self.add_routes(app)
        runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(runner.setup())
        first = web.TCPSite(runner, self.addresses[0], 0, backlog=1024)
        self._loop.run_until_complete(first.start())
        self.port = runner.addresses[0][1]
        for address in self.addresses[1:]:
            site = web.TCPSite(runner, address, self.port, backlog=1024)
            self._loop.run_until_complete(site.start())
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> FeedServer:
        self._thread.start()
        self._ready.wait(30)
        return self

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)

    def url(self, feed: int) -> str:
        return f"http://{self.addresses[feed % len(self.addresses)]}:{self.port}/feed/{feed}.xml"


def insert_sources(dsn: str, urls: list[str]) -> None:
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "INSERT INTO sources (name, feed_url) SELECT 'feed-' || n, u "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS t(u, n)",
            (urls,),
        )
        conn.execute(
            "INSERT INTO feed_state (source_id, feed_url, last_etag) "
            "SELECT id, feed_url, CASE WHEN split_part(name, '-', 2)::int %% 2 = 1 "
            "THEN %s END FROM sources WHERE name LIKE 'feed-%%'",
            (ETAG,),
        )


STATEMENT_SETTINGS = {"shared_preload_libraries": "pg_stat_statements"}


def reset_statements(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        conn.execute("SELECT pg_stat_statements_reset()")


def statements(dsn: str, feeds: int) -> dict[str, Any]:
    """The poller's statements since `reset_statements`: calls a feed in all (round trips,
    less the transactions' BEGIN/COMMIT, which are counted apart), and the most frequent
    ones with their calls and execution time a feed (the query's first 60 characters)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT query, calls, total_exec_time FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND query NOT LIKE '%%pg_stat_statements%%' ORDER BY calls DESC"
        ).fetchall()
    return {
        "calls_per_feed": round(sum(r[1] for r in rows) / feeds, 2),
        "exec_ms_per_feed": round(sum(r[2] for r in rows) / feeds, 3),
        "top": [
            {
                "query": " ".join(r[0].split())[:60],
                "calls_per_feed": round(r[1] / feeds, 3),
                "exec_ms_per_feed": round(r[2] / feeds, 4),
            }
            for r in rows[:15]
        ],
    }


def naive_loop(urls: list[str]) -> float:
    """Feeds/s of one sequential httpx client plus feedparser over the same feeds."""
    import feedparser
    import httpx

    started = time.perf_counter()
    with httpx.Client(timeout=30) as client:
        for n, url in enumerate(urls, start=1):
            headers = {"If-None-Match": ETAG} if n % 2 == 1 else {}
            response = client.get(url, headers=headers)
            if response.status_code == 200:
                feedparser.parse(response.content, response_headers=dict(response.headers))
    return len(urls) / (time.perf_counter() - started)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 feeds over 20 hosts")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument(
        "--profile",
        metavar="FILE",
        type=Path,
        help="run the poller under cProfile, writing its stats to FILE",
    )
    parser.add_argument(
        "--statements",
        action="store_true",
        help="count the poller's statements with pg_stat_statements (a server restart)",
    )
    args = parser.parse_args(argv)
    feeds, hosts = (1_000, 20) if args.quick else (10_000, 50)
    server = FeedServer(hosts).start()
    urls = [server.url(i) for i in range(feeds)]
    result: dict[str, Any] = {"feeds": feeds, "hosts": hosts, "concurrency": args.concurrency}
    try:
        settings = {**SERVER_SETTINGS, **(STATEMENT_SETTINGS if args.statements else {})}
        with running_server(settings) as pg:
            dsn = pg.migrated_database("bench_poll")
            insert_sources(dsn, urls)
            if args.statements:
                reset_statements(dsn)
            pg.checkpoint()
            server_cpu = pg.cpu_s()
            # PYTHONPATH: the child runs this checkout's frontier, not whichever is installed.
            env = {
                "PATH": os.environ.get("PATH", ""),
                "PYTHONPATH": str(ROOT),
                "FRONTIER_DATABASE_URL": dsn,
                "FRONTIER_ALLOW_PRIVATE_NETWORKS": "true",
                "FRONTIER_POLL_CONCURRENCY": str(args.concurrency),
                "FRONTIER_DEFAULT_DELAY_MS": "0",
                "FRONTIER_SEED_DEFAULT_SOURCES": "false",
            }
            log(f"frontier poll --once over {feeds} feeds on {hosts} hosts")
            with tempfile.TemporaryDirectory() as workdir:
                profile = (
                    ["-m", "cProfile", "-o", str(args.profile.resolve())] if args.profile else []
                )
                done = run_measured(
                    [sys.executable, *profile, "-m", "frontier", "poll", "--once", "--json"],
                    env=env,
                    cwd=Path(workdir),
                )
            server_cpu_after = pg.cpu_s()
            if done.returncode not in (0, 1):
                raise RuntimeError(f"poll failed ({done.returncode}): {done.stderr[-2000:]}")
            summaries = json.loads(done.stdout)
            with psycopg.connect(dsn) as conn:
                row = conn.execute("SELECT count(*) FROM url_frontier").fetchone()
            inserted = row[0] if row else 0
            result.update(
                polled=len(summaries),
                failed=sum(1 for s in summaries if not s["ok"]),
                not_modified=sum(1 for s in summaries if s["outcome"] == "not_modified"),
                urls_inserted=inserted,
                poller_wall_s=round(done.wall_s, 2),
                poller_feeds_per_s=round(feeds / done.wall_s, 1),
                poller_peak_rss_mib=round(done.peak_rss_mib, 1),
                # its own (and its waited children's), then with its parse workers'
                poller_cpu_ms_per_feed=round(1000 * done.cpu_s / feeds, 3),
                poller_tree_cpu_ms_per_feed=round(
                    1000 * (done.cpu_s + done.descendants_cpu_s) / feeds, 3
                ),
            )
            if server_cpu is not None and server_cpu_after is not None:
                result["postgres_cpu_ms_per_feed"] = round(
                    1000 * (server_cpu_after - server_cpu) / feeds, 3
                )
            if args.statements:
                result["statements"] = statements(dsn, feeds)
            log(
                f"poller: {result['poller_feeds_per_s']} feeds/s, "
                f"{result['poller_peak_rss_mib']} MiB, {inserted} URLs"
            )
        log("naive sequential httpx + feedparser loop")
        naive = naive_loop(urls)
        result["naive_feeds_per_s"] = round(naive, 1)
        result["speedup_vs_naive"] = round(result["poller_feeds_per_s"] / naive, 2)
    finally:
        server.stop()
    emit_result(result)


if __name__ == "__main__":
    main()

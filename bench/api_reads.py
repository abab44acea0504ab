"""Benchmark the read endpoints of issue 16: `GET /api/v1/documents` (first page, a deep
keyset page, filters, full-text search) and `GET /api/v1/urls/{...}` on a frontier of
1,000,000 URLs with 1,000,000 stored documents (PostgreSQL sink), and what the search
index costs the sink's writes.

Run ``python -m bench.api_reads [--quick]`` (``--quick``: 50,000 URLs and documents). On
one throwaway embedded server (see `bench.server`):

1. the rows are built in the database with generate_series (no API, no Python loop):
   url_frontier (80 % fetched, 10 % pending, 10 % dead; 20 sources; 10,000 hosts),
   host_state, one fetch-log row per URL, and one document per URL whose body is 150 words
   drawn Zipf-like from a 20,000-word vocabulary (5,000 distinct bodies), so a search
   for a common word matches nearly every document and a rare one about 1 in 400;
2. the sink's write cost: `PostgresSink.write` of 2,000 new 500-word documents in batches
   of 100, without the GIN search index and then with it (docs/s both ways);
3. `frontier serve` runs as a child; each request is sent once to warm up, then timed 3
   times; the median is reported (target: under 200 ms each). `/metrics` and the
   dashboard's overview are timed too (they read counters and the host summaries).

The last line printed is one JSON object of the figures (ms per request, docs/s).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.api_import import free_port, wait_ready
from bench.server import emit_result, log, median, running_server
from frontier.db import Database
from frontier.sinks import RawDocument
from frontier.sinks.postgres import PostgresSink

HOSTS = 10_000
SOURCES = 20
BODIES = 5_000
VOCABULARY = 20_000
RUNS = 3
SEARCH_INDEX = "raw_content_search_idx"

LOAD = """
SET LOCAL session_replication_role = replica;  -- no triggers, no FK checks while loading
SET LOCAL work_mem = '512MB';
INSERT INTO sources (name, feed_url)
SELECT 'source-' || s, 'https://feeds.example/' || s FROM generate_series(1, {sources}) s;
CREATE TEMP TABLE bench_sources AS
    SELECT row_number() OVER (ORDER BY name) - 1 AS k, id, name
    FROM sources WHERE name LIKE 'source-%';
CREATE TEMP TABLE bench_bodies AS
SELECT b AS k,
       (SELECT string_agg('w' || (1 + floor(power(random(), 3) * {vocabulary}))::int, ' ')
        FROM generate_series(1, 150) WHERE b IS NOT NULL) AS body
FROM generate_series(0, {bodies} - 1) b;
CREATE TEMP TABLE bench_urls AS
SELECT i,
       'https://host' || (i % {hosts}) || '.example/story/' || i AS url,
       'host' || (i % {hosts}) || '.example' AS host,
       CASE WHEN i % 10 < 8 THEN 'fetched' WHEN i % 10 = 8 THEN 'pending' ELSE 'dead' END
           AS status,
       now() - make_interval(secs => ({size} - i) * 2) AS at
FROM generate_series(1, {size}) i;
INSERT INTO url_frontier (url_hash, url, host, source_id, origin, priority, status,
                          next_fetch_at, last_fetched_at, fetch_count, dead_reason,
                          http_status, discovered_at, created_at, updated_at)
SELECT encode(sha256(convert_to(u.url, 'UTF8')), 'hex'), u.url, u.host, s.id, 'feed', 5,
       u.status, CASE WHEN u.status = 'pending' THEN now() + interval '1 hour' ELSE u.at END,
       CASE WHEN u.status <> 'pending' THEN u.at END,
       CASE WHEN u.status <> 'pending' THEN 1 ELSE 0 END,
       CASE WHEN u.status = 'dead' THEN 'not_found' END,
       CASE WHEN u.status = 'fetched' THEN 200 WHEN u.status = 'dead' THEN 404 END,
       u.at, u.at, u.at
FROM bench_urls u JOIN bench_sources s ON s.k = u.i % {sources};
INSERT INTO host_state (host, pending_count, pending_priority, pending_due_at,
                        robots_status, robots_fetched_at)
SELECT 'host' || h || '.example', count(*) FILTER (WHERE u.status = 'pending'), 5,
       now() + interval '1 hour', 'allow_all', now()
FROM generate_series(0, {hosts} - 1) h
JOIN bench_urls u ON u.i % {hosts} = h
GROUP BY h;
INSERT INTO fetch_log (kind, source_id, url, outcome, http_status, elapsed_ms, at)
SELECT 'page', s.id, u.url,
       CASE WHEN u.status = 'dead' THEN 'not_found' ELSE 'ok' END,
       CASE WHEN u.status = 'dead' THEN 404 ELSE 200 END, 50, u.at
FROM bench_urls u JOIN bench_sources s ON s.k = u.i % {sources}
WHERE u.status <> 'pending';
INSERT INTO raw_content (url_hash, url, source_id, source_name, host, origin, title, body,
                         word_count, extractor, http_status, fetched_at, published_at,
                         language)
SELECT encode(sha256(convert_to(u.url, 'UTF8')), 'hex'), u.url, s.id, s.name, u.host, 'feed',
       'Story ' || u.i || ' w' || (1 + u.i % 500), b.body, 150, 'generic', 200, u.at,
       u.at - interval '1 hour', 'en'
FROM bench_urls u
JOIN bench_sources s ON s.k = u.i % {sources}
JOIN bench_bodies b ON b.k = u.i % {bodies};
INSERT INTO frontier_counts (source_id, origin, status, n)
SELECT s.id, 'feed', u.status, count(*)
FROM bench_urls u JOIN bench_sources s ON s.k = u.i % {sources}
GROUP BY 1, 3;
"""

# The loaded documents' search vectors (the sink writes them with each document).
VECTORS = """
INSERT INTO raw_content_search (url_hash, search)
SELECT url_hash, to_tsvector('simple'::regconfig,
                             left(coalesce(title, '') || ' ' || coalesce(body, ''), 100000))
FROM raw_content
ON CONFLICT (url_hash) DO NOTHING
"""

INDEXES = """
SELECT indexname, indexdef FROM pg_indexes
WHERE tablename IN ('raw_content', 'raw_content_search', 'fetch_log', 'url_frontier')
  AND indexdef NOT LIKE '%UNIQUE%'
ORDER BY indexname
"""


def load(dsn: str, size: int) -> dict[str, float]:
    """Build the rows with indexes dropped, then recreate them (the GIN index last, timed)."""
    figures: dict[str, float] = {}
    with psycopg.connect(dsn) as conn:
        definitions = conn.execute(INDEXES).fetchall()
        for name, _ in definitions:
            conn.execute(f'DROP INDEX "{name}"')
        start = time.perf_counter()
        conn.execute(
            LOAD.format(
                size=size, hosts=HOSTS, sources=SOURCES, bodies=BODIES, vocabulary=VOCABULARY
            )
        )
        figures["load_s"] = time.perf_counter() - start
        log(f"{size:,} URLs, documents and fetch-log rows inserted in {figures['load_s']:.1f}s")
        conn.commit()
        for name, definition in definitions:
            if name == SEARCH_INDEX:
                continue
            conn.execute(definition)
        conn.commit()
        search = dict(definitions)[SEARCH_INDEX]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    log("indexes (but the search index) rebuilt; vacuumed and analysed")
    figures["docs_per_s_without_search_index"] = asyncio.run(write_rate(dsn, "a"))
    start = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(VECTORS)  # as migration 0024 computes those of documents stored before it
        conn.execute(search)
        conn.execute("ANALYZE raw_content_search")
    figures["search_index_build_s"] = time.perf_counter() - start
    log(f"search vectors and their GIN index built in {figures['search_index_build_s']:.1f}s")
    figures["docs_per_s_with_search_index"] = asyncio.run(write_rate(dsn, "b"))
    return figures


async def write_rate(dsn: str, label: str, count: int = 2_000, batch: int = 100) -> float:
    """Documents per second through `PostgresSink.write`, in batches, 500 words each."""
    words = [f"w{(i * 7919) % VOCABULARY + 1}" for i in range(500)]
    now = datetime.now(UTC)
    docs = [
        RawDocument(
            url_hash=f"{label}{i:063x}", url=f"https://new.example/{label}/{i}", final_url=None,
            source_id=None, source_name=None, host="new.example", origin="manual",
            title=f"New story {i}", body=" ".join(words[i % 50 :] + words[: i % 50]),
            summary=None, author=None, published_at=None, image_url=None, language="en",
            content_hash=None, word_count=500, extractor="generic", http_status=200,
            fetched_at=now - timedelta(days=400),  # off the first pages the reads time
        )
        for i in range(count)
    ]  # fmt: skip
    db = await Database.connect(dsn, min_size=1, max_size=2)
    try:
        sink = PostgresSink(db)
        start = time.perf_counter()
        for offset in range(0, count, batch):
            await sink.write(docs[offset : offset + batch])
        rate = count / (time.perf_counter() - start)
    finally:
        await db.close()
    log(f"sink writes ({label}): {rate:,.0f} docs/s")
    return rate


def probes(dsn: str, size: int) -> dict[str, str]:
    """The requests to time, with keys and cursors read from the loaded database."""
    with psycopg.connect(dsn) as conn:
        middle = conn.execute(
            "SELECT fetched_at, url_hash FROM raw_content ORDER BY fetched_at DESC, url_hash "
            "DESC OFFSET %s LIMIT 1",
            (size // 2,),
        ).fetchone()
        assert middle is not None
        fetched = conn.execute(
            "SELECT url_hash, url FROM url_frontier WHERE status = 'fetched' "
            "ORDER BY url_hash LIMIT 1"
        ).fetchone()
        pending = conn.execute(
            "SELECT url_hash FROM url_frontier WHERE status = 'pending' ORDER BY url_hash LIMIT 1"
        ).fetchone()
    micros = (middle[0] - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    deep = f"{micros}.{middle[1]}"
    assert fetched is not None and pending is not None
    # The vocabulary is drawn as power(random(), 3) * 20,000: w1 is in nearly every body,
    # w19999 in about one body in 400.
    common, rare = "w1", "w19999"
    return {
        "documents_first_page": "/api/v1/documents?limit=50",
        "documents_deep_page": f"/api/v1/documents?limit=50&after={deep}",
        "documents_by_source": "/api/v1/documents?limit=50&source=source-7",
        "documents_by_host_deep": f"/api/v1/documents?limit=50&host=host42.example&after={deep}",
        "documents_since": "/api/v1/documents?limit=50&since=1d",
        "documents_search_common": f"/api/v1/documents?limit=50&search={common}",
        "documents_search_common_deep": f"/api/v1/documents?limit=50&search={common}&after={deep}",
        "documents_search_rare": f"/api/v1/documents?limit=50&search={rare}",
        "documents_search_no_match": "/api/v1/documents?limit=50&search=nowhereword",
        "documents_search_two_words": f"/api/v1/documents?limit=50&search={common}+{rare}",
        "documents_search_by_source": f"/api/v1/documents?limit=50&search={rare}&source=source-3",
        "document_by_hash": f"/api/v1/documents/{fetched[0]}",
        "url_story_fetched": f"/api/v1/urls/{fetched[0]}",
        "url_story_pending": f"/api/v1/urls/{pending[0]}",
        # issue 16 items 5-6: read from counters and host summaries, never url_frontier
        "metrics": "/metrics",
        "dashboard_overview": "/",
    }


def time_requests(dsn: str, workdir: Path, requests: dict[str, str]) -> dict[str, float]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    env["FRONTIER_DATABASE_URL"] = dsn
    command = [sys.executable, "-m", "frontier", "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, cwd=workdir, stderr=subprocess.DEVNULL)
    figures: dict[str, float] = {}
    try:
        wait_ready(base, process)
        with httpx.Client(base_url=base, timeout=60) as client:
            for name, path in requests.items():
                client.get(path).raise_for_status()  # warm-up
                timings = []
                for _ in range(RUNS):
                    start = time.perf_counter()
                    response = client.get(path)
                    timings.append((time.perf_counter() - start) * 1000)
                    response.raise_for_status()
                figures[f"{name}_ms"] = round(median(timings), 1)
                log(f"{name}: median {figures[f'{name}_ms']} ms of {RUNS} ({path[:90]})")
    finally:
        process.terminate()
        process.wait(timeout=30)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50,000 rows instead of 1M")
    args = parser.parse_args(argv)
    size = 50_000 if args.quick else 1_000_000
    with (
        tempfile.TemporaryDirectory(prefix="frontier-bench-reads-") as tmp,
        running_server() as server,
    ):
        dsn = server.migrated_database("bench_api_reads")
        figures: dict[str, Any] = {"urls": size, "documents": size}
        figures.update(load(dsn, size))
        server.checkpoint()
        timed = time_requests(dsn, Path(tmp), probes(dsn, size))
        figures.update(timed)
        figures["slowest_ms"] = max(timed.values())
    emit_result(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())

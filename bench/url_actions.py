"""Benchmark `frontier urls requeue|purge` (issue 16 item 3) on a frontier of 1,000,000 URLs
of which 200,000 are dead: the dry run's count, the requeue, and the purge, each walked in
batches of 1,000 (frontier.url_actions), with the longest single batch statement (how long
any row lock is held) and how long a claim waits meanwhile.

Run ``python -m bench.url_actions [--quick]`` (``--quick``: 50,000 URLs). On one throwaway
embedded server (see `bench.server`):

1. the rows are built with generate_series: 10,000 hosts, 80 % of the URLs fetched and
   20 % dead (`max_retries`), with their host_state rows;
2. a dry run counts the dead URLs; a requeue makes them all pending (timed per batch),
   while a second connection claims (and releases) 10 URLs in a loop, whose slowest claim
   is reported; they are marked dead again, then purged.

The last line printed is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

import psycopg

from bench.server import emit_result, log, running_server
from frontier.clock import utcnow
from frontier.db import Database
from frontier.queue import QueueRepository
from frontier.url_actions import UrlActions, parse_filter

HOSTS = 10_000

LOAD = """
SET LOCAL session_replication_role = replica;  -- no triggers while loading
INSERT INTO host_state (host, bucket)
SELECT 'host' || h || '.example', 0 FROM generate_series(0, {hosts} - 1) h;
INSERT INTO url_frontier (url_hash, bucket, url, host, source_id, origin, priority, status,
                          dead_reason, retry_count, last_error, next_fetch_at,
                          last_fetched_at, updated_at)
SELECT encode(sha256(convert_to(u, 'UTF8')), 'hex'), 0, u, 'host' || (i % {hosts}) || '.example',
       (SELECT id FROM sources WHERE name = 'manual'), 'manual', 5,
       CASE WHEN i % 5 = 0 THEN 'dead' ELSE 'fetched' END,
       CASE WHEN i % 5 = 0 THEN 'max_retries' END,
       CASE WHEN i % 5 = 0 THEN 6 ELSE 0 END,
       CASE WHEN i % 5 = 0 THEN 'GET timed out' END,
       now(), now(), now() - interval '1 day'
FROM generate_series(0, {size} - 1) i, LATERAL (SELECT 'https://host' || (i % {hosts})
       || '.example/story/' || i AS u) s;
"""


def load(dsn: str, size: int) -> None:
    started = time.monotonic()
    with psycopg.connect(dsn) as conn, conn.transaction():
        conn.execute(LOAD.format(hosts=HOSTS, size=size))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE url_frontier")
        conn.execute("VACUUM ANALYZE host_state")
    log(f"loaded {size:,} URLs in {time.monotonic() - started:.1f}s")


async def measure(dsn: str) -> dict[str, Any]:
    db = await Database.connect(dsn, min_size=2, max_size=3)
    try:
        actions = UrlActions(db)
        wanted = parse_filter(reason="max_retries", now=utcnow())
        figures: dict[str, Any] = {}

        started = time.monotonic()
        dry = await actions.requeue(wanted, dry_run=True)
        figures["dry_run_s"] = round(time.monotonic() - started, 2)
        figures["dead"] = dry.matched

        batches: list[float] = []
        timed = actions._queue.requeue_in_bucket  # timed batch by batch

        async def requeue_batch(*args: Any, **kwargs: Any) -> int:
            begun = time.monotonic()
            try:
                return await timed(*args, **kwargs)
            finally:
                batches.append(time.monotonic() - begun)

        actions._queue.requeue_in_bucket = requeue_batch  # type: ignore[method-assign]
        claims: list[float] = []
        done = asyncio.Event()

        async def claim_meanwhile() -> None:
            queue = QueueRepository(db)
            while not done.is_set():
                begun = time.monotonic()
                claimed = await queue.claim("bench", 10)
                claims.append(time.monotonic() - begun)
                if claimed:
                    await queue.release("bench", claimed)

        claimer = asyncio.create_task(claim_meanwhile())
        started = time.monotonic()
        result = await actions.requeue(wanted)
        elapsed = time.monotonic() - started
        done.set()
        await claimer
        figures["requeued"] = result.changed
        figures["requeue_s"] = round(elapsed, 2)
        figures["requeue_urls_per_s"] = round(result.changed / elapsed)
        figures["requeue_slowest_batch_ms"] = round(max(batches) * 1000, 1)
        figures["requeue_median_batch_ms"] = round(sorted(batches)[len(batches) // 2] * 1000, 1)
        figures["claim_during_requeue_slowest_ms"] = round(max(claims) * 1000, 1)

        await db.execute(
            "UPDATE url_frontier SET status = 'dead', dead_reason = 'max_retries' "
            "WHERE status = 'pending'"
        )
        await db.execute("UPDATE host_state SET pending_count = 0, pending_due_at = NULL")
        started = time.monotonic()
        purged = await actions.purge(wanted)
        elapsed = time.monotonic() - started
        figures["purged"] = purged.changed
        figures["purge_s"] = round(elapsed, 2)
        figures["purge_urls_per_s"] = round(purged.changed / elapsed)
        return figures
    finally:
        await db.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50,000 URLs instead of 1M")
    args = parser.parse_args(argv)
    size = 50_000 if args.quick else 1_000_000
    with running_server() as server:
        dsn = server.migrated_database("bench_url_actions")
        load(dsn, size)
        server.checkpoint()
        figures: dict[str, Any] = {"urls": size}
        figures.update(asyncio.run(measure(dsn)))
    emit_result(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())

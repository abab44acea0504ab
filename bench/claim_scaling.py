"""Benchmark how the host-first claim scales with the size of the frontier.

Run ``python -m bench.claim_scaling [--quick] [--rounds 3] [--seconds S] [--batch B]
[--sizes 1m,10m] [--dsn postgresql://postgres@/postgres?host=/socket/dir]
[--citus-workers "DSN DSN"] [--buckets N] [--keep]``.

With ``--citus-workers`` (the workers' superuser DSNs, space-separated), ``--dsn`` is a
Citus coordinator: each database is made on every node with the citus extension, and
migration 0018 distributes the schema by bucket (``make test-citus`` builds such a
cluster; ``.ci/with-citus`` runs a command beside one). ``--buckets`` sets N in
``frontier_buckets`` before loading (default 1; every host's bucket is computed as
frontier/buckets.py does); each claimer starts its rotation at its own bucket.

The server is a throwaway embedded PostgreSQL (18) tuned as ``bench.server.SERVER_SETTINGS``
says, or, with ``--dsn`` (a superuser's DSN, URL form), an existing server of any supported
version, where the benchmark creates its own databases and drops them afterwards; the
settings in which it differs from the embedded one are logged, as they change the figures.

With ``--keep`` (and ``--dsn``), each loaded frontier is a database of its own,
``bench_claim_<size>_b<N>[_citus]_kept``, that is not dropped afterwards, and a later run
with ``--keep`` on the same server reuses it (migrated to the newest schema, then reset as
between rounds, below) instead of loading it again: 10M takes 5-10 minutes to load on a
loaded 2-core machine, a round 5 seconds.

Frontiers of 100k, 1M and 10M pending URLs (``--quick``: 100k and 1M, which load in
about 3 and 25 seconds; ``--sizes`` picks any) over 100,000 hosts, Zipf-skewed: the
exponent s is solved numerically so that the top 1% of hosts hold half the URLs, and host
k (k = 1..100,000) gets c_k proportional to k^-s, rounded by largest remainder so the
counts sum to the size (tail hosts may get none); the measured top-1% share is reported.

Loading is done inside PostgreSQL: a temp table of (host, count) is COPYed in, then one
``INSERT ... SELECT ... generate_series`` builds the URLs and their SHA-256 (priorities
spread over 1..10, every URL due, origin ``manual``), with the url_frontier indexes
(primary key included) dropped and rebuilt afterwards from their own catalog definitions,
and with ``session_replication_role = replica`` so the statement triggers and the
foreign-key check stay out of the load. Rows go into the heap in url_hash order, so a
host's URLs are scattered as they are after months of discovery. Then the invariants the
queue keeps are written directly: the frontier_counts row and one host_state row per host
(min_delay_ms 1000, pending_count, pending_priority = the best priority, pending_due_at =
the earliest next_fetch_at); VACUUM ANALYZE; the load time is reported.

After a warm-up run of S seconds (not recorded), each round on that loaded frontier:

1. CHECKPOINT, so none falls inside a measurement.
2. Empty claim: every host's next_allowed_at is set an hour ahead (all rate-limited),
   host_state is vacuumed, and 200 sequential claims that return nothing are timed.
3. Reset: only the rows the previous run changed are put back (status, lease, counters),
   the summaries of the hosts they belong to are recomputed, next_allowed_at goes back to
   -infinity and frontier_counts to its one row; then VACUUM. Every round starts from the
   loaded state, checked.
4. 4 claimers, each its own `Database` over a 1-connection pool and its own
   `QueueRepository` (default_delay_ms 1000), loop ``claim(worker, batch)`` then
   ``complete(worker, [FETCHED, ...])`` for S seconds (10; ``--quick``: 3). claims/s is
   URLs claimed and completed per second of wall time; the latency of each claim statement
   that returned work and of each complete is recorded (p50, p90, p99, max), as are the WAL
   bytes and full-page images written per claim and this process's own CPU share (is the
   client the bottleneck?).

Full-page images: with full_page_writes (and PG 18's default data checksums) the first
change to a page after a checkpoint logs the whole page. In a long run at these sizes
almost every page a claim touches has been logged since the last checkpoint (30 minutes
apart), so the measurement should not pay for them either: the reset in step 3 touches
the pages the next run claims from, after the checkpoint of step 1. A checkpoint right
before the run instead costs about 40% of the throughput at 1M (over 1.5 images and 9 KiB
of WAL per claim instead of almost none and 1.5 KiB).

Batch: the default of 100 URLs per claim was chosen by trying 50, 100, 200 and 500 at 1M.
100 does about the throughput of 50 at half the statements; 200 and 500 add 10-20% more
throughput but double and quintuple the claim latency, holding more host locks for longer.

With a one-second host delay a host can give at most floor(S)+1 claims in S seconds; the
result's ``politeness_bound_per_s`` says what that allows at each size. At 100k the small
hosts run dry (about 6,100 claims/s over 10 seconds, 17,000 over 3), so that size can be
bound by politeness rather than by the database: ``empty_claims_per_run`` above 0 (and a
warning on standard error) says it was.
pgbench ``-N`` with 4 clients runs on the same server as the reference, and an
``EXPLAIN (ANALYZE, BUFFERS)`` of one claim, one complete and one empty claim at the
largest size goes to standard error.

The last line printed is one JSON object, medians over rounds:
``{"claims_per_s": {"100k": .., "1m": .., "10m": ..}, "claim_p50_ms": {...},
"claim_p99_ms": {...}, "empty_claim_ms": {...}, "pgbench_n_tps": ..}`` plus details.
Targets: claims/s at 10M >= 0.8 x at 100k; >= 5,000 claim+complete per second at 1M;
an empty claim under 10 ms at 10M.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from bench.server import (
    BenchServer,
    benchmark_server,
    emit_result,
    log,
    median,
    peak_rss_mib,
    percentile,
)
from frontier import migrate
from frontier.buckets import bucket_of
from frontier.db import Database
from frontier.host_delay import RECOVERY_ANSWERS
from frontier.queue import SQL, QueueRepository
from frontier.queue_values import Outcome, OutcomeKind, QueuePolicy
from frontier.sql.queue_params import CompleteParams, OutcomeColumns

SIZES = {"100k": 100_000, "1m": 1_000_000, "10m": 10_000_000}
QUICK_SIZES = ("100k", "1m")
HOSTS = 100_000
TOP_FRACTION = 0.01  # the top 1% of hosts ...
TOP_SHARE = 0.5  # ... hold half the URLs
DELAY_MS = 1000
CLAIMERS = 4
DEFAULT_BATCH = 100
EMPTY_CLAIMS = 200
LEASE_SECONDS = 300.0


# -- the skew ------------------------------------------------------------------------------


def _weights(exponent: float, hosts: int) -> list[float]:
    return [k**-exponent for k in range(1, hosts + 1)]


def top_share(counts: Sequence[float], fraction: float = TOP_FRACTION) -> float:
    """Share of the total held by the first `fraction` of `counts` (sorted descending)."""
    top = max(1, round(len(counts) * fraction))
    return math.fsum(counts[:top]) / math.fsum(counts)


def solve_exponent(hosts: int, fraction: float = TOP_FRACTION, share: float = TOP_SHARE) -> float:
    """The Zipf exponent s for which the top `fraction` of `hosts` hold `share` of the
    weight; the share grows with s, so bisection finds it."""
    low, high = 0.0, 4.0
    for _ in range(40):
        middle = (low + high) / 2
        if top_share(_weights(middle, hosts), fraction) < share:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def allocate(size: int, exponent: float, hosts: int) -> list[int]:
    """URLs per host, c_k proportional to k^-exponent, summing to `size` exactly (largest
    remainder; ties go to the bigger host)."""
    weights = _weights(exponent, hosts)
    total = math.fsum(weights)
    exact = [size * weight / total for weight in weights]
    counts = [math.floor(value) for value in exact]
    short = size - sum(counts)
    by_remainder = sorted(range(hosts), key=lambda k: (counts[k] - exact[k], k))
    for k in by_remainder[:short]:
        counts[k] += 1
    return counts


def host_name(k: int) -> str:
    return f"www.host{k}.example"


def politeness_bound(counts: Sequence[int], seconds: float) -> float:
    """Claims per second the host delays allow: a host gives at most one URL per delay."""
    per_host = math.floor(seconds * 1000 / DELAY_MS) + 1
    return sum(min(count, per_host) for count in counts) / seconds


# -- loading -------------------------------------------------------------------------------

_INDEX_DEFINITIONS = """
SELECT i.relname, pg_get_indexdef(i.oid), c.conname, pg_get_constraintdef(c.oid)
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
LEFT JOIN pg_constraint c ON c.conindid = x.indexrelid AND c.conrelid = x.indrelid
WHERE x.indrelid = 'url_frontier'::regclass
ORDER BY i.relname
"""

_INSERT_URLS = """
INSERT INTO url_frontier (url_hash, bucket, url, host, source_id, origin, depth, priority,
                          status, next_fetch_at)
SELECT encode(sha256(convert_to(g.url, 'UTF8')), 'hex'), h.bucket, g.url, h.host, %(source)s,
       'manual', 0, 1 + (h.host_no * 7 + i) %% 10, 'pending',
       now() - make_interval(secs => 3600 + (h.host_no * 37 + i * 11) %% 86400)
FROM bench_hosts h
CROSS JOIN LATERAL generate_series(1, h.n) AS i
CROSS JOIN LATERAL (
    SELECT 'https://' || h.host || '/2026/11/' || lpad((1 + i %% 28)::text, 2, '0')
           || '/story-' || i AS url
) g
ORDER BY 1
"""

_FILL_HOST_STATE = """
INSERT INTO host_state (host, bucket, min_delay_ms, pending_count, pending_priority,
                        pending_due_at)
SELECT h.host, h.bucket, %(delay)s, coalesce(s.n, 0), s.priority, s.due_at
FROM bench_hosts h
LEFT JOIN (
    SELECT host, count(*) AS n, max(priority) AS priority, min(next_fetch_at) AS due_at
    FROM url_frontier
    WHERE status = 'pending'
    GROUP BY host
) s USING (host)
"""


@dataclass(slots=True)
class Frontier:
    """A loaded benchmark database."""

    label: str
    database: str
    dsn: str
    size: int
    source_id: Any
    load_s: float


def load_frontier(
    server: BenchServer,
    label: str,
    counts: Sequence[int],
    buckets: int = 1,
    database: str | None = None,
) -> Frontier:
    database = database or f"bench_claim_{label}"
    dsn = server.migrated_database(database)
    size = sum(counts)
    start = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE frontier_buckets SET n = %s", [buckets])
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT id FROM sources WHERE name = 'manual'").fetchone()
        assert row is not None
        source = row[0]
        conn.execute("SET LOCAL session_replication_role = replica")  # no triggers, no FK check
        conn.execute("SET LOCAL work_mem = '1GB'")
        conn.execute("CREATE TEMP TABLE bench_hosts (host_no int, host text, bucket int, n int)")
        with (
            conn.cursor() as cursor,
            cursor.copy("COPY bench_hosts (host_no, host, bucket, n) FROM STDIN") as copy,
        ):
            for k, count in enumerate(counts, start=1):
                copy.write_row((k, host_name(k), bucket_of(host_name(k), buckets), count))
        conn.execute("ANALYZE bench_hosts")
        definitions = conn.execute(_INDEX_DEFINITIONS).fetchall()
        for index, _, constraint, _ in definitions:
            if constraint:
                conn.execute(f'ALTER TABLE url_frontier DROP CONSTRAINT "{constraint}"')
            else:
                conn.execute(f'DROP INDEX "{index}"')
        conn.execute(_INSERT_URLS, {"source": source})
        log(f"{label}: {size:,} URLs inserted in {time.perf_counter() - start:.1f}s; indexing")
        for _, index_definition, constraint, constraint_definition in definitions:
            if constraint:
                conn.execute(
                    f'ALTER TABLE url_frontier ADD CONSTRAINT "{constraint}" '
                    f"{constraint_definition}"
                )
            else:
                conn.execute(index_definition)
        if conn.execute(_INDEX_DEFINITIONS).fetchall() != definitions:
            raise RuntimeError("url_frontier's indexes differ from the migration's after loading")
        conn.execute(
            "INSERT INTO frontier_counts (source_id, origin, status, n) "
            "VALUES (%s, 'manual', 'pending', %s)",
            (source, size),
        )
        conn.execute(_FILL_HOST_STATE, {"delay": DELAY_MS})
    vacuum(dsn, analyze=True)
    load_s = time.perf_counter() - start
    log(f"{label}: loaded {size:,} URLs on {sum(1 for c in counts if c):,} hosts in {load_s:.1f}s")
    return Frontier(label, database, dsn, size, source, load_s)


def kept_frontier(
    server: BenchServer, label: str, counts: Sequence[int], buckets: int = 1
) -> Frontier:
    """The frontier a run with ``--keep`` left on this server, migrated and reset; loaded
    (and kept) when there is none."""
    citus_part = "_citus" if server.citus_workers else ""
    database = f"bench_claim_{label}_b{buckets}{citus_part}_kept"
    if not server.database_exists(database):
        return load_frontier(server, label, counts, buckets, database)
    dsn = server.dsn(database)
    migrate.upgrade(dsn)
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT id FROM sources WHERE name = 'manual'").fetchone()
        assert row is not None
    frontier = Frontier(label, database, dsn, sum(counts), row[0], 0.0)
    log(f"{label}: reusing the kept frontier {database}")
    reset_frontier(frontier)
    check_loaded_state(frontier)
    return frontier


def vacuum(
    dsn: str,
    *,
    analyze: bool = False,
    tables: Sequence[str] = ("url_frontier", "host_state", "frontier_counts"),
) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in tables:
            conn.execute(f"VACUUM {'(ANALYZE) ' if analyze else ''}{table}")


_RESET_URLS = """
UPDATE url_frontier
SET status = 'pending', claimed_by = NULL, lease_until = NULL, fetch_count = 0,
    last_fetched_at = NULL, retry_count = 0, last_error = NULL, dead_reason = NULL,
    http_status = NULL, final_url = NULL, etag = NULL, last_modified = NULL,
    content_hash = NULL
WHERE source_id = %(source)s AND status IN ('fetching', 'fetched', 'failed', 'dead')
RETURNING host
"""

_RESET_HOSTS = """
UPDATE host_state h
SET pending_count = s.n, pending_priority = s.priority, pending_due_at = s.due_at
FROM (
    SELECT bucket, host, count(*) AS n, max(priority) AS priority, min(next_fetch_at) AS due_at
    FROM url_frontier
    WHERE status = 'pending' AND host = ANY (%(hosts)s)
    GROUP BY bucket, host
) s
WHERE h.bucket = s.bucket AND h.host = s.host
"""

_RESET_POLITENESS = """
UPDATE host_state
SET next_allowed_at = '-infinity', last_fetch_at = NULL, backoff_until = NULL,
    consecutive_failures = 0, min_delay_ms = %(delay)s, crawl_delay_ms = NULL,
    lease_owner = NULL, lease_until = NULL, in_flight = 0
WHERE next_allowed_at <> '-infinity' OR last_fetch_at IS NOT NULL
   OR backoff_until IS NOT NULL OR min_delay_ms <> %(delay)s
   OR lease_owner IS NOT NULL OR in_flight <> 0
"""


def reset_frontier(frontier: Frontier) -> None:
    """Put back only what claims and completions changed, then VACUUM."""
    start = time.perf_counter()
    with psycopg.connect(frontier.dsn) as conn:
        hosts = sorted(
            {row[0] for row in conn.execute(_RESET_URLS, {"source": frontier.source_id}).fetchall()}
        )
        conn.execute(_RESET_HOSTS, {"hosts": hosts})
        conn.execute(_RESET_POLITENESS, {"delay": DELAY_MS})
        conn.execute("DELETE FROM frontier_counts")
        conn.execute(
            "INSERT INTO frontier_counts (source_id, origin, status, n) "
            "VALUES (%s, 'manual', 'pending', %s)",
            (frontier.source_id, frontier.size),
        )
    vacuum(frontier.dsn)
    log(f"{frontier.label}: reset {len(hosts):,} hosts in {time.perf_counter() - start:.1f}s")


def check_loaded_state(frontier: Frontier) -> None:
    """The frontier is back to all-pending, and host_state agrees with url_frontier."""
    with psycopg.connect(frontier.dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE status = 'pending'), count(*) FROM url_frontier"
        ).fetchone()
        summary = conn.execute(
            "SELECT coalesce(sum(pending_count), 0), count(*) FILTER (WHERE ready_at IS NOT NULL)"
            " FROM host_state"
        ).fetchone()
    if row != (frontier.size, frontier.size) or summary is None or summary[0] != frontier.size:
        raise RuntimeError(f"{frontier.label}: not in its loaded state: {row} {summary}")


# -- measuring -----------------------------------------------------------------------------


@dataclass(slots=True)
class WorkerStats:
    claimed: int = 0
    empty: int = 0
    claim_s: list[float] = field(default_factory=list)
    complete_s: list[float] = field(default_factory=list)


async def _connect(dsn: str, number: int = 0) -> tuple[Database, QueueRepository]:
    db = await Database.connect(dsn, min_size=1, max_size=1)
    policy = QueuePolicy(default_delay_ms=DELAY_MS)
    return db, QueueRepository(db, policy, rotation_start=number)


async def _cycle(queue: QueueRepository, worker: str, batch: int, stats: WorkerStats) -> None:
    start = time.perf_counter()
    claims = await queue.claim(worker, batch)
    claimed = time.perf_counter()
    if not claims:
        stats.empty += 1
        await asyncio.sleep(0.005)  # as a worker would wait for the next due host
        return
    stats.claim_s.append(claimed - start)
    await queue.complete(worker, [Outcome(claim, OutcomeKind.FETCHED) for claim in claims])
    stats.complete_s.append(time.perf_counter() - claimed)
    stats.claimed += len(claims)


def wal_position(dsn: str) -> tuple[str, int]:
    """The current WAL position and the server's count of full-page images written."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT pg_current_wal_lsn()::text, wal_fpi FROM pg_stat_wal").fetchone()
    assert row is not None
    return row[0], row[1]


def wal_since(dsn: str, start: tuple[str, int]) -> tuple[int, int]:
    """WAL bytes and full-page images since `start` (the image count is flushed by backends
    when they exit, and may miss a little of autovacuum's)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s::pg_lsn)::bigint,"
            " wal_fpi - %s FROM pg_stat_wal",
            start,
        ).fetchone()
    assert row is not None
    return row[0], row[1]


async def measure_claims(dsn: str, batch: int, seconds: float) -> dict[str, Any]:
    """CLAIMERS concurrent claim/complete loops for `seconds`."""
    workers = [await _connect(dsn, number) for number in range(CLAIMERS)]
    wal_start = wal_position(dsn)
    try:
        stats = [WorkerStats() for _ in workers]
        cpu = time.process_time()
        start = time.perf_counter()
        deadline = start + seconds

        async def loop(number: int, queue: QueueRepository) -> None:
            while time.perf_counter() < deadline:
                await _cycle(queue, f"bench-{number}", batch, stats[number])

        await asyncio.gather(*(loop(n, queue) for n, (_, queue) in enumerate(workers)))
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu
    finally:
        for db, _ in workers:
            await db.close()
    await asyncio.sleep(0.5)  # the backends flush their WAL statistics as they exit
    wal_bytes, wal_fpi = wal_since(dsn, wal_start)
    claimed = sum(s.claimed for s in stats)
    claim_s = [t for s in stats for t in s.claim_s]
    complete_s = [t for s in stats for t in s.complete_s]
    return {
        "claims_per_s": claimed / elapsed,
        "claimed": claimed,
        "claim_statements": len(claim_s),
        "empty_claims": sum(s.empty for s in stats),
        "claim_p50_ms": percentile(claim_s, 50) * 1000,
        "claim_p90_ms": percentile(claim_s, 90) * 1000,
        "claim_p99_ms": percentile(claim_s, 99) * 1000,
        "claim_max_ms": max(claim_s, default=0.0) * 1000,
        "complete_p50_ms": percentile(complete_s, 50) * 1000,
        "complete_p90_ms": percentile(complete_s, 90) * 1000,
        "complete_p99_ms": percentile(complete_s, 99) * 1000,
        "complete_max_ms": max(complete_s, default=0.0) * 1000,
        "client_cpu_share": cpu / elapsed,  # of one core, for this benchmark process
        "wal_kib_per_claim": wal_bytes / 1024 / max(claimed, 1),
        "fpi_per_claim": wal_fpi / max(claimed, 1),
    }


def rate_limit_all_hosts(frontier: Frontier) -> None:
    with psycopg.connect(frontier.dsn) as conn:
        conn.execute("UPDATE host_state SET next_allowed_at = now() + interval '1 hour'")
    vacuum(frontier.dsn, tables=("host_state",))


async def measure_empty_claims(dsn: str, count: int = EMPTY_CLAIMS) -> dict[str, float]:
    """`count` sequential claims while every host is rate-limited."""
    db, queue = await _connect(dsn)
    try:
        start = time.perf_counter()
        first = await queue.claim("bench-empty", DEFAULT_BATCH)
        first_s = time.perf_counter() - start
        timings = []
        for _ in range(count):
            start = time.perf_counter()
            claims = await queue.claim("bench-empty", DEFAULT_BATCH)
            timings.append(time.perf_counter() - start)
            if claims or first:
                raise RuntimeError("a claim returned work while every host was rate-limited")
    finally:
        await db.close()
    return {
        "empty_claim_ms": percentile(timings, 50) * 1000,
        "empty_claim_p99_ms": percentile(timings, 99) * 1000,
        "empty_claim_first_ms": first_s * 1000,
    }


class _Rollback(Exception):
    pass


async def explain(dsn: str, batch: int, *, with_complete: bool) -> None:
    """EXPLAIN (ANALYZE, BUFFERS) one claim of bucket 0 (and the complete of what it claimed)
    to standard error, in a transaction that is rolled back."""
    db = await Database.connect(dsn, min_size=1, max_size=1)
    policy = QueuePolicy(default_delay_ms=DELAY_MS)
    analyse = "EXPLAIN (ANALYZE, BUFFERS) "
    try:
        async with db.connection() as conn:
            try:
                async with conn.transaction():
                    # The claim's two statements run inside migration 0040's function: the
                    # plan shown is the call's, with the time both took.
                    claim_args = (
                        0,
                        "bench-explain",
                        batch,
                        None,
                        policy.host_concurrency,
                        LEASE_SECONDS,
                    )
                    plan = await conn.fetch(analyse + SQL["claim"], *claim_args)
                    what = "claim" if with_complete else "empty claim (every host rate-limited)"
                    log(f"EXPLAIN {what}, batch {batch}:\n" + "\n".join(r[0] for r in plan))
                    if with_complete:
                        claims = await conn.fetch(SQL["claim"], *claim_args)
                        hashes = [record["url_hash"] for record in claims]
                        n = len(hashes)
                        nothing: list[Any] = [None] * n
                        params = CompleteParams(
                            "bench-explain",
                            OutcomeColumns(hashes, ["fetched"] * n, [200] * n, *([nothing] * 6)),
                            max_retries=policy.max_retries,
                            now=None,
                            host_failure_threshold=policy.host_failure_threshold,
                            forbidden_attempts=policy.forbidden_attempts,
                            wall_threshold=policy.wall_threshold,
                            recovery_answers=RECOVERY_ANSWERS,
                            fetch_urls=nothing,  # unchanged
                            bucket=0,  # every claim above is in bucket 0
                        )
                        plan = await conn.fetch(analyse + SQL["complete"], *params.args())
                        log(f"EXPLAIN complete ({n} outcomes):\n" + "\n".join(r[0] for r in plan))
                    raise _Rollback
            except _Rollback:
                pass
    finally:
        await db.close()


# -- the run -------------------------------------------------------------------------------


def measure_size(
    server: BenchServer,
    label: str,
    counts: Sequence[int],
    args: argparse.Namespace,
    largest: bool,
) -> dict[str, Any]:
    if args.keep:
        frontier = kept_frontier(server, label, counts, args.buckets)
    else:
        frontier = load_frontier(server, label, counts, args.buckets)
    rounds = []
    try:
        log(f"{label}: warm-up run ({args.seconds:g}s, not recorded)")
        asyncio.run(measure_claims(frontier.dsn, args.batch, args.seconds))
        for number in range(1, args.rounds + 1):
            explaining = largest and number == args.rounds
            # The checkpoint comes before the empty claims and the reset, which touch the
            # pages the next run touches: no checkpoint falls inside a measurement, and
            # the pages claimed have had their full-page image written since the last one,
            # as almost all have in a long steady run (see the module's docstring).
            server.checkpoint()
            rate_limit_all_hosts(frontier)
            if explaining:
                asyncio.run(explain(frontier.dsn, args.batch, with_complete=False))
            empty = asyncio.run(measure_empty_claims(frontier.dsn))
            log(
                f"{label} round {number}: empty claim p50 {empty['empty_claim_ms']:.2f} ms, "
                f"p99 {empty['empty_claim_p99_ms']:.2f} ms, first "
                f"{empty['empty_claim_first_ms']:.2f} ms"
            )
            reset_frontier(frontier)
            check_loaded_state(frontier)
            if explaining:
                asyncio.run(explain(frontier.dsn, args.batch, with_complete=True))
            claims = asyncio.run(measure_claims(frontier.dsn, args.batch, args.seconds))
            log(
                f"{label} round {number}: {claims['claims_per_s']:,.0f} claims/s "
                f"({claims['claimed']:,} in {claims['claim_statements']:,} claims, "
                f"{claims['empty_claims']} empty), claim p50 {claims['claim_p50_ms']:.1f} ms "
                f"p99 {claims['claim_p99_ms']:.1f} ms max {claims['claim_max_ms']:.0f} ms, "
                f"complete p50 {claims['complete_p50_ms']:.1f} ms p99 "
                f"{claims['complete_p99_ms']:.1f} ms max {claims['complete_max_ms']:.0f} ms, "
                f"client CPU {claims['client_cpu_share']:.0%}, WAL "
                f"{claims['wal_kib_per_claim']:.1f} KiB and {claims['fpi_per_claim']:.2f} "
                "full-page images per claim"
            )
            rounds.append(claims | empty)
    finally:
        if not args.keep:
            server.drop_database(frontier.database)

    def mid(key: str) -> float:
        return median([r[key] for r in rounds])

    bound = politeness_bound(counts, args.seconds)
    if mid("empty_claims") or mid("claims_per_s") > 0.9 * bound:
        log(
            f"{label}: claims ran out of ready hosts ({mid('empty_claims'):.0f} empty claims "
            f"per run; the host delays allow {bound:,.0f}/s): this size measured politeness, "
            f"not the database"
        )
    return {
        "claims_per_s": round(mid("claims_per_s")),
        "claim_p50_ms": round(mid("claim_p50_ms"), 2),
        "claim_p99_ms": round(mid("claim_p99_ms"), 2),
        "empty_claim_ms": round(mid("empty_claim_ms"), 3),
        "empty_claim_p99_ms": round(mid("empty_claim_p99_ms"), 3),
        "complete_p50_ms": round(mid("complete_p50_ms"), 2),
        "complete_p99_ms": round(mid("complete_p99_ms"), 2),
        "client_cpu_share": round(mid("client_cpu_share"), 2),
        "wal_kib_per_claim": round(mid("wal_kib_per_claim"), 2),
        "fpi_per_claim": round(mid("fpi_per_claim"), 3),
        "load_s": round(frontier.load_s, 1),
        "top_1pct_share": round(top_share(counts), 4),
        "hosts_with_urls": sum(1 for c in counts if c),
        "largest_host": counts[0],
        "politeness_bound_per_s": round(bound),
        "empty_claims_per_run": mid("empty_claims"),
        "rounds": [{key: round(value, 3) for key, value in r.items()} for r in rounds],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="sizes 100k and 1m only, 3 seconds each"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, help="per measurement (10; --quick: 3)")
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="URLs per claim")
    parser.add_argument("--sizes", help=f"comma-separated, of {', '.join(SIZES)}")
    parser.add_argument(
        "--dsn",
        help="an existing server's superuser DSN (URL form) instead of a throwaway embedded one",
    )
    parser.add_argument(
        "--citus-workers",
        default="",
        help="with --dsn a Citus coordinator's: the workers' superuser DSNs, space-separated",
    )
    parser.add_argument(
        "--buckets", type=int, default=1, help="N of frontier_buckets (frontier/buckets.py)"
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="with --dsn: keep each loaded frontier, and reuse one a run with --keep left",
    )
    args = parser.parse_args(argv)
    if args.keep and not args.dsn:
        parser.error("--keep needs --dsn (a throwaway server keeps nothing)")
    if args.citus_workers and not args.dsn:
        parser.error("--citus-workers needs --dsn (the coordinator's)")
    if not 1 <= args.buckets <= 4096:
        parser.error("--buckets must be between 1 and 4096")
    if args.seconds is None:
        args.seconds = 3.0 if args.quick else 10.0
    labels = args.sizes.split(",") if args.sizes else list(QUICK_SIZES if args.quick else SIZES)
    if unknown := [label for label in labels if label not in SIZES]:
        parser.error(f"unknown sizes {unknown}: use {', '.join(SIZES)}")

    started = time.perf_counter()
    exponent = solve_exponent(HOSTS)
    log(f"Zipf exponent {exponent:.4f}: top 1% of {HOSTS:,} hosts hold {TOP_SHARE:.0%}")
    per_size: dict[str, dict[str, Any]] = {}
    with benchmark_server(args.dsn, citus_workers=args.citus_workers.split()) as server:
        version = server.server_version()
        tps = server.pgbench_tps(max(1, round(args.seconds)))
        log(f"pgbench -N: {tps:,.0f} TPS")
        for label in labels:
            counts = allocate(SIZES[label], exponent, HOSTS)
            log(
                f"{label}: top-1% share {top_share(counts):.4f}, "
                f"{sum(1 for c in counts if c):,} hosts with URLs, largest {counts[0]:,}"
            )
            per_size[label] = measure_size(server, label, counts, args, largest=label == labels[-1])

    result: dict[str, Any] = {
        key: {label: per_size[label][key] for label in labels}
        for key in ("claims_per_s", "claim_p50_ms", "claim_p99_ms", "empty_claim_ms")
    }
    result["pgbench_n_tps"] = round(tps)
    result["server_version"] = version
    result["batch"] = args.batch
    result["buckets"] = args.buckets
    result["citus_workers"] = len(args.citus_workers.split())
    result["claimers"] = CLAIMERS
    result["seconds"] = args.seconds
    result["zipf_exponent"] = round(exponent, 4)
    result["bench_peak_rss_mib"] = round(peak_rss_mib(), 1)
    result["sizes"] = per_size
    log(f"done in {time.perf_counter() - started:.0f}s")
    emit_result(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The queue with several buckets (frontier/buckets.py, migration 0018), on a real
PostgreSQL: every statement names one bucket, the repositories split batches by bucket,
and the claim goes round the buckets; `frontier_rebucket(n)` moves rows to their new
buckets, and SQL's `frontier_bucket` agrees with Python's `bucket_of`."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import asyncpg
import psycopg
import pytest

from frontier.buckets import bucket_of
from frontier.db import Database
from frontier.hosts import HostRepository
from frontier.outbox import OutboxWrites
from frontier.queue import QueueRepository
from frontier.queue_values import (
    Candidate,
    Outcome,
    OutcomeKind,
    QueuePolicy,
    SourceRef,
    claim_hold,
)
from frontier.states import Origin
from frontier.submit_rows import prepare
from frontier.url_actions import UrlActions, parse_filter

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
POLICY = QueuePolicy(default_delay_ms=1000, max_retries=2, lease_seconds=60)
BUCKETS = 4
HOSTS = [f"site{i}.example" for i in range(24)]


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


@pytest.fixture
async def manual(db: Database) -> SourceRef:
    return SourceRef(await db.fetchval("SELECT id FROM sources WHERE name = 'manual'"))


def candidates(source: SourceRef, pages: int = 2) -> list[Candidate]:
    return [
        Candidate(f"https://{host}/p{page}", source, Origin.MANUAL)
        for host in HOSTS
        for page in range(pages)
    ]


def test_sql_and_python_agree_on_every_bucket(fresh_dsn: str) -> None:
    hosts = [*HOSTS, "éxample.org", "xn--xmple-rqa.org:8080", ""]
    with psycopg.connect(fresh_dsn) as conn:
        for n in (1, 2, 7, 64, 4096):
            rows = conn.execute(
                "SELECT h, frontier_bucket(h, %s) FROM unnest(%s::text[]) AS h", [n, hosts]
            ).fetchall()
            assert dict(rows) == {host: bucket_of(host, n) for host in hosts}, n


async def test_every_url_is_claimed_once_over_the_buckets(db: Database, manual: SourceRef) -> None:
    await db.execute("SELECT frontier_rebucket($1)", BUCKETS)
    queue = QueueRepository(db, POLICY, rotation_start=0)
    result = await queue.submit(candidates(manual), now=at(0))
    assert result.inserted == 2 * len(HOSTS)
    placed = await db.fetch("SELECT DISTINCT host, bucket FROM url_frontier")
    assert {r["host"]: r["bucket"] for r in placed} == {h: bucket_of(h, BUCKETS) for h in HOSTS}
    hosts = await db.fetch("SELECT host, bucket, pending_count FROM host_state")
    assert {(r["host"], r["bucket"], r["pending_count"]) for r in hosts} == {
        (h, bucket_of(h, BUCKETS), 2) for h in HOSTS
    }

    # One URL per host per claim, whatever bucket holds the host: the claim goes on to
    # the next bucket until it has its batch or has asked every bucket.
    first = await queue.claim("w1", 100, now=at(1))
    assert sorted(c.host for c in first) == sorted(HOSTS)
    holds = {c.host: claim_hold("w1", c.url_hash) for c in first}
    assert await HostRepository(db).release_slots(holds, now=at(1.2)) == len(HOSTS)
    assert await queue.claim("w1", 100, now=at(1.5)) == []  # every host waits its delay
    second = await queue.claim("w1", 100, now=at(3))
    assert sorted(c.host for c in second) == sorted(HOSTS)
    assert {c.url_hash for c in first}.isdisjoint(c.url_hash for c in second)

    renewed = await queue.renew("w1", first, now=at(3))
    assert renewed == {c.url_hash for c in first}
    # The sinks' outbox rows go with the completion, each in its URL's bucket's statement
    # (on Citus, the transaction's): those of URLs it does not complete are not written.
    rows = [("hook", f"{c.url_hash}.k", c.url_hash, "write", None) for c in first + second]
    done = await queue.complete(
        "w1",
        [Outcome(c, OutcomeKind.FETCHED, http_status=200) for c in first],
        now=at(4),
        outbox=OutboxWrites(tuple(rows)),
    )
    assert done.refused == [] and set(done.applied.values()) == {"fetched"}
    queued = await db.fetch("SELECT url_hash FROM sink_outbox")
    assert sorted(r["url_hash"] for r in queued) == sorted(c.url_hash for c in first)

    # The second batch's leases run out: the reaper returns them in every bucket.
    reaped = await queue.reap(now=at(3 + 61))
    assert (reaped.returned, reaped.dead) == (len(HOSTS), 0)
    statuses = await db.fetch("SELECT status, count(*) AS n FROM url_frontier GROUP BY 1")
    assert {r["status"]: r["n"] for r in statuses} == {
        "fetched": len(HOSTS),
        "pending": len(HOSTS),
    }
    counts = await db.fetch("SELECT host, pending_count FROM host_state WHERE pending_count <> 1")
    assert counts == []


@pytest.mark.citus
async def test_the_answer_path_is_one_delegated_call_per_bucket_on_citus(
    db: Database, fresh_dsn: str, manual: SourceRef
) -> None:
    """Migration 0043: on Citus, a renew, a complete and a reap of a batch over several
    buckets are each one call per bucket, which the coordinator sends whole to the worker
    holding the bucket (function call delegation), and no statement it plans and routes to
    the shards itself (`citus.log_remote_commands` shows what it sends)."""
    await db.execute("SELECT frontier_rebucket($1)", BUCKETS)
    queue = QueueRepository(db, POLICY, rotation_start=0)
    await queue.submit(candidates(manual), now=at(0))
    claims = await queue.claim("w1", 100, now=at(1))
    assert {bucket_of(c.host, BUCKETS) for c in claims} == set(range(BUCKETS))
    conn = await asyncpg.connect(fresh_dsn)
    sent: list[str] = []
    conn.add_log_listener(lambda _, message: sent.append(message.message))
    try:
        await conn.execute("SET citus.log_remote_commands = on")
        logged = QueueRepository(Database(conn), POLICY)
        renewed = await logged.renew("w1", claims, now=at(2))
        outcomes = [Outcome(c, OutcomeKind.FETCHED, http_status=200) for c in claims[1:]]
        done = await logged.complete("w1", outcomes, now=at(3))
        reaped = await logged.reap(now=at(200))  # claims[0]'s lease ran out
    finally:
        await conn.close()
    assert renewed == {c.url_hash for c in claims}
    assert done.refused == [] and len(done.applied) == len(claims) - 1
    assert (reaped.returned, reaped.dead) == (1, 0)
    commands = [m.removeprefix("issuing ") for m in sent if m.startswith("issuing ")]
    to_shards = [c for c in commands if re.search(r"\b(url_frontier|host_state)_\d+\b", c)]
    assert to_shards == []
    calls = [name for c in commands for name in re.findall(r"\bpublic\.frontier_(\w+)\(", c)]
    assert sorted(calls) == sorted(["renew", "complete", "reap"] * BUCKETS)


@pytest.mark.citus
async def test_catalogue_reads_are_not_filtered_for_shards_on_citus(db: Database) -> None:
    """A new connection's asyncpg type introspection reads pg_class once per pg_type row it
    walks. Citus's shard hiding (`citus.override_table_visibility`) filters every row of
    pg_class through `relation_is_a_known_shard`, which made that hundreds of times
    slower on a coordinator; the frontier's connections turn it off (frontier/db.py)."""
    plan = await db.fetch("EXPLAIN SELECT relname FROM pg_class")
    assert "relation_is_a_known_shard" not in "\n".join(row[0] for row in plan)


async def test_claims_start_at_their_own_bucket(db: Database, manual: SourceRef) -> None:
    await db.execute("SELECT frontier_rebucket($1)", BUCKETS)
    await QueueRepository(db, POLICY).submit(candidates(manual, pages=1), now=at(0))
    queue = QueueRepository(db, POLICY, rotation_start=2)
    claims = await queue.claim("w1", 1, now=at(1))
    assert [bucket_of(c.host, BUCKETS) for c in claims] == [2]
    claims = await queue.claim("w1", 1, now=at(1))
    assert [bucket_of(c.host, BUCKETS) for c in claims] == [3]


async def test_host_statements_route_by_bucket(db: Database, manual: SourceRef) -> None:
    await db.execute("SELECT frontier_rebucket($1)", BUCKETS)
    await QueueRepository(db, POLICY).submit(candidates(manual, pages=1), now=at(0))
    hosts = HostRepository(db)
    leased = await hosts.take_leases(dict.fromkeys(HOSTS), "w1", 30, now=at(1))
    assert leased == set(HOSTS)
    assert await hosts.take_leases(dict.fromkeys(HOSTS), "w2", 30, now=at(1)) == set()
    assert await hosts.release_slots(dict.fromkeys(HOSTS, "w1"), now=at(2)) == len(HOSTS)
    free = await db.fetchval(
        "SELECT count(*) FROM host_state WHERE lease_owner IS NULL AND next_allowed_at = $1",
        at(3),  # the default delay, 1000 ms, after the answer
    )
    assert free == len(HOSTS)


async def test_rebucketing_moves_every_row_and_keeps_the_counts(
    db: Database, manual: SourceRef
) -> None:
    await QueueRepository(db, POLICY).submit(candidates(manual), now=at(0))
    before = await db.fetch("SELECT status, sum(n) AS n FROM frontier_counts GROUP BY 1")
    await db.execute("SELECT frontier_rebucket($1)", 7)
    assert await db.fetchval("SELECT n FROM frontier_buckets") == 7
    for table in ("url_frontier", "host_state"):
        rows = await db.fetch(f"SELECT host, bucket FROM {table}")
        assert len(rows) == (2 if table == "url_frontier" else 1) * len(HOSTS)
        assert all(r["bucket"] == bucket_of(r["host"], 7) for r in rows), table
    after = await db.fetch(
        "SELECT status, sum(n) AS n FROM frontier_counts GROUP BY 1 HAVING sum(n) <> 0"
    )
    assert {r["status"]: r["n"] for r in after} == {r["status"]: r["n"] for r in before}
    with pytest.raises(Exception, match="between 1 and 4096"):
        await db.execute("SELECT frontier_rebucket(0)")


async def test_requeue_purge_and_submit_requeue_go_bucket_by_bucket(
    db: Database, manual: SourceRef
) -> None:
    await db.execute("SELECT frontier_rebucket($1)", BUCKETS)
    queue = QueueRepository(db, POLICY)
    await queue.submit(candidates(manual, pages=2), now=at(0))
    claims = await queue.claim("w", 100, now=at(1))  # one URL per host
    assert len(claims) == len(HOSTS)
    await queue.complete("w", [Outcome(c, OutcomeKind.NOT_FOUND) for c in claims], now=at(1))

    requeued = await UrlActions(db, batch=5).requeue(parse_filter(now=at(2)), now=at(2))

    assert (requeued.matched, requeued.changed) == (len(HOSTS), len(HOSTS))
    hosts = await db.fetch("SELECT host, bucket, pending_count, pending_due_at FROM host_state")
    assert {(r["host"], r["bucket"], r["pending_count"]) for r in hosts} == {
        (h, bucket_of(h, BUCKETS), 2) for h in HOSTS
    }
    claims = await queue.claim("w", 100, now=at(3))
    await queue.complete("w", [Outcome(c, OutcomeKind.GONE) for c in claims], now=at(3))
    revived = await queue.submit_prepared(prepare(candidates(manual), 1000), requeue=True)
    assert revived.requeued == len(HOSTS)
    claims = await queue.claim("w", 100, now=at(4))
    await queue.complete("w", [Outcome(c, OutcomeKind.GONE) for c in claims], now=at(4))
    purged = await UrlActions(db, batch=5).purge(parse_filter(reason="gone", now=at(5)))
    assert purged.changed == len(HOSTS)
    assert await db.fetchval("SELECT count(*) FROM url_frontier") == len(HOSTS)

"""The frontier queue against a real PostgreSQL: submit, claim, complete, renew, reap."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from frontier.db import Database
from frontier.hosts import HostRepository
from frontier.queue import QueueRepository
from frontier.queue_values import (
    MAX_REDIRECT_HOPS,
    Candidate,
    Claim,
    Outcome,
    OutcomeKind,
    QueuePolicy,
    SourceRef,
    claim_hold,
)
from frontier.states import Origin
from frontier.stats import StatsRepository
from frontier.submit_rows import prepare
from frontier.urls import normalize_url, url_hash
from tests.conditions import wait_until

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
POLICY = QueuePolicy(default_delay_ms=1000, max_retries=2, lease_seconds=60)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


@pytest.fixture
async def manual(db: Database) -> SourceRef:
    source_id = await db.fetchval("SELECT id FROM sources WHERE name = 'manual'")
    return SourceRef(source_id, priority=5)


@pytest.fixture
def queue(db: Database) -> QueueRepository:
    return QueueRepository(db, POLICY)


def manual_urls(source: SourceRef, *urls: str) -> list[Candidate]:
    return [Candidate(url, source, Origin.MANUAL) for url in urls]


async def row(db: Database, url: str) -> dict:
    record = await db.fetchrow(
        "SELECT * FROM url_frontier WHERE url_hash = $1", url_hash(normalize_url(url))
    )
    assert record is not None, f"{url} is not in the frontier"
    return dict(record)


async def host(db: Database, name: str) -> dict:
    record = await db.fetchrow("SELECT * FROM host_state WHERE host = $1", name)
    assert record is not None
    return dict(record)


async def claim_one(queue: QueueRepository, now: datetime, worker: str = "w1") -> Claim:
    claims = await queue.claim(worker, 10, now=now)
    assert len(claims) == 1, claims
    return claims[0]


# -- submit -------------------------------------------------------------------------


async def test_submit_counts_inserted_known_and_rejected(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    result = await queue.submit(
        manual_urls(
            manual,
            "http://a.example/1",
            "http://A.example/1#frag",
            "ftp://a.example/x",
            "http://b.example/2",
            "not a url",
        ),
        now=T0,
    )
    assert (result.inserted, result.raised, result.known) == (2, 0, 1)
    assert [(r.index, r.url) for r in result.rejected] == [
        (2, "ftp://a.example/x"),
        (4, "not a url"),
    ]
    assert all(r.reason for r in result.rejected)
    again = await queue.submit(manual_urls(manual, "http://a.example/1"), now=T0)
    assert (again.inserted, again.raised, again.known) == (0, 0, 1)
    assert (await host(db, "a.example"))["pending_count"] == 1
    assert (await host(db, "b.example"))["min_delay_ms"] == 1000


async def test_submit_raises_priority_of_pending_urls_only(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    low = SourceRef(manual.id, priority=3)
    high = SourceRef(manual.id, priority=8)
    await queue.submit(manual_urls(low, "http://a.example/p", "http://b.example/f"), now=T0)
    assert (await row(db, "http://a.example/p"))["priority"] == 3

    raised = await queue.submit(manual_urls(high, "http://a.example/p"), now=T0)
    assert (raised.raised, raised.known) == (1, 0)
    assert (await row(db, "http://a.example/p"))["priority"] == 8
    lowered = await queue.submit(manual_urls(low, "http://a.example/p"), now=T0)
    assert (lowered.raised, lowered.known) == (0, 1)
    assert (await row(db, "http://a.example/p"))["priority"] == 8
    assert (await host(db, "a.example"))["pending_priority"] == 8

    # A fetched URL is neither re-queued nor re-prioritised by a submit.
    claims = await queue.claim("w1", 10, now=at(0))
    fetched = next(c for c in claims if c.host == "b.example")
    await queue.complete("w1", [Outcome(fetched, OutcomeKind.FETCHED, http_status=200)], now=at(1))
    again = await queue.submit(manual_urls(high, "http://b.example/f"), now=at(2))
    assert (again.inserted, again.raised, again.known) == (0, 0, 1)
    after = await row(db, "http://b.example/f")
    assert (after["status"], after["priority"]) == ("fetched", 3)


async def test_priority_follows_origin_and_depth(
    queue: QueueRepository, db: Database, manual: SourceRef
) -> None:
    source = SourceRef(manual.id, priority=5)
    await queue.submit(
        [
            Candidate("http://p.example/feed", source, Origin.FEED),
            Candidate("http://p.example/map", source, Origin.SITEMAP),
            Candidate("http://p.example/deep", source, Origin.SPIDER, depth=3),
            Candidate("http://p.example/very-deep", source, Origin.SPIDER, depth=30),
        ],
        now=T0,
    )
    priorities = [
        (await row(db, f"http://p.example/{p}"))["priority"]
        for p in ("feed", "map", "deep", "very-deep")
    ]
    assert priorities == [7, 6, 2, 1]


# -- claim --------------------------------------------------------------------------


async def test_claim_takes_one_url_per_host_and_honours_the_delay(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    await queue.submit(
        manual_urls(manual, "http://a.example/1", "http://a.example/2", "http://b.example/1"),
        now=T0,
    )
    first = await queue.claim("w1", 10, now=at(0))
    assert sorted(c.host for c in first) == ["a.example", "b.example"]
    assert all(c.lease_until == at(60) for c in first)
    # The claim holds the host until its answer is in, however long that takes.
    held = await host(db, "a.example")
    assert held["lease_until"] == at(60)
    assert await queue.claim("w2", 10, now=at(30)) == []

    # The answer came at 2 s: the host's next request waits its delay after it.
    # The hold is the claim's own (another claim of w1 never ends it).
    holds = {c.host: claim_hold("w1", c.url_hash) for c in first}
    assert held["lease_owner"] == holds["a.example"]
    assert await HostRepository(db).release_slots(holds, now=at(2)) == 2
    assert (await host(db, "a.example"))["next_allowed_at"] == at(3)
    assert await queue.claim("w2", 10, now=at(2.999)) == []
    second = await queue.claim("w2", 10, now=at(3))
    assert [c.url for c in second] == ["http://a.example/2"]
    assert await queue.claim("w2", 10, now=at(5)) == []  # nothing left pending
    assert (await host(db, "a.example"))["ready_at"] is None


async def test_a_workers_earlier_claim_never_ends_the_hold_of_its_later_one(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    """A fetcher's batches overlap: one is still being stored when the next claims the
    same host again. The completion of the first must not free the host while the
    second's request is in flight."""
    await queue.submit(manual_urls(manual, "http://a.example/1", "http://a.example/2"), now=T0)
    [first] = await queue.claim("w1", 10, now=at(0))
    released = await HostRepository(db).release_slots(
        {first.host: claim_hold("w1", first.url_hash)}, now=at(0.5)
    )
    assert released == 1  # its answer is in: the host waits its delay after it
    [second] = await queue.claim("w1", 10, now=at(1.5))  # the same worker's next batch
    await queue.complete("w1", [Outcome(first, OutcomeKind.FETCHED, http_status=200)], now=at(2))
    held = await host(db, "a.example")
    assert held["lease_owner"] == claim_hold("w1", second.url_hash)  # still held
    assert await queue.claim("w2", 10, now=at(10)) == []


async def test_claim_prefers_higher_priority_hosts_and_urls(
    queue: QueueRepository, manual: SourceRef
) -> None:
    low, high = SourceRef(manual.id, priority=2), SourceRef(manual.id, priority=9)
    await queue.submit(manual_urls(low, "http://low.example/1", "http://mixed.example/low"), now=T0)
    await queue.submit(
        manual_urls(high, "http://high.example/1", "http://mixed.example/high"), now=T0
    )
    claims = await queue.claim("w1", 2, now=at(0))
    assert sorted(c.url for c in claims) == ["http://high.example/1", "http://mixed.example/high"]


async def test_source_rate_limit_sets_a_new_hosts_delay(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    own = SourceRef(manual.id, rate_limit_ms=0)
    await queue.submit(manual_urls(own, "http://own.example/1", "http://own.example/2"), now=T0)
    assert (await host(db, "own.example"))["delay_ms"] == 0
    await claim_one(queue, at(0))
    await claim_one(queue, at(0))  # delay 0: the host is ready again at once


async def test_a_host_without_a_delay_has_at_most_its_concurrency_in_flight(
    manual: SourceRef, db: Database
) -> None:
    queue = QueueRepository(db, replace(POLICY, host_concurrency=3))
    own = SourceRef(manual.id, rate_limit_ms=0)
    urls = [f"http://own.example/{i}" for i in range(6)]
    await queue.submit(manual_urls(own, *urls), now=T0)
    claims = [c for _ in range(5) for c in await queue.claim("w1", 10, now=at(0))]
    assert len(claims) == 3  # one per claim, three at once: no hold, a cap
    assert (await host(db, "own.example"))["in_flight"] == 3
    await queue.complete("w1", [Outcome(claims[0], OutcomeKind.FETCHED, http_status=200)])
    assert len(await queue.claim("w1", 10, now=at(1))) == 1  # a place came free
    assert await queue.claim("w1", 10, now=at(1)) == []
    await queue.reap(now=at(62))  # the leases of those still in flight ran out
    assert (await host(db, "own.example"))["in_flight"] == 0
    assert len(await queue.claim("w1", 10, now=at(62))) == 1


async def test_future_urls_wait_for_their_time(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    await queue.submit(manual_urls(manual, "http://a.example/1", "http://a.example/2"), now=T0)
    claim = await claim_one(queue, at(0))
    await queue.complete("w1", [Outcome(claim, OutcomeKind.RETRY, error="timeout")], now=at(0))
    retried = await row(db, claim.url)
    assert retried["next_fetch_at"] > at(40)  # about a minute, with jitter
    other = await claim_one(queue, at(2))
    assert other.url != claim.url
    await queue.complete("w1", [Outcome(other, OutcomeKind.FETCHED)], now=at(2))
    assert await queue.claim("w1", 10, now=at(10)) == []
    assert (await host(db, "a.example"))["pending_due_at"] == retried["next_fetch_at"]
    again = await claim_one(queue, retried["next_fetch_at"])
    assert again.url == claim.url and again.retry_count == 1


# -- complete -----------------------------------------------------------------------

DEAD_OUTCOMES = [
    (OutcomeKind.NOT_FOUND, "not_found"),
    (OutcomeKind.GONE, "gone"),
    (OutcomeKind.ROBOTS_BLOCKED, "robots_blocked"),
    (OutcomeKind.DUPLICATE_CONTENT, "duplicate_content"),
    (OutcomeKind.UNSUPPORTED_CONTENT, "unsupported_content"),
    (OutcomeKind.BLOCKED_BY_POLICY, "blocked_by_policy"),
]


@pytest.mark.parametrize(("kind", "reason"), DEAD_OUTCOMES)
async def test_final_outcomes_make_the_url_dead_with_its_reason(
    queue: QueueRepository, manual: SourceRef, db: Database, kind: OutcomeKind, reason: str
) -> None:
    await queue.submit(manual_urls(manual, "http://a.example/x"), now=T0)
    claim = await claim_one(queue, at(0))
    result = await queue.complete("w1", [Outcome(claim, kind, http_status=404)], now=at(1))
    assert result.applied == {claim.url_hash: "dead"} and result.refused == []
    after = await row(db, claim.url)
    assert (after["status"], after["dead_reason"], after["claimed_by"]) == ("dead", reason, None)
    assert (await host(db, "a.example"))["pending_count"] == 0


async def test_fetched_and_not_modified_store_validators(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    await queue.submit(manual_urls(manual, "http://a.example/x", "http://b.example/y"), now=T0)
    claims = {c.host: c for c in await queue.claim("w1", 10, now=at(0))}
    await queue.complete(
        "w1",
        [
            Outcome(
                claims["a.example"],
                OutcomeKind.FETCHED,
                http_status=200,
                content_hash="ab" * 32,
                etag='"v1"',
                last_modified="Mon, 01 Jan 2026",
            ),
            Outcome(claims["b.example"], OutcomeKind.NOT_MODIFIED, http_status=304),
        ],
        now=at(1),
    )
    a = await row(db, "http://a.example/x")
    assert (a["status"], a["etag"], a["content_hash"], a["last_fetched_at"]) == (
        "fetched",
        '"v1"',
        "ab" * 32,
        at(1),
    )
    b = await row(db, "http://b.example/y")
    assert (b["status"], b["http_status"], b["last_fetched_at"]) == ("fetched", 304, at(1))


async def test_retry_backs_off_then_dies_after_max_retries(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    await queue.submit(manual_urls(manual, "http://a.example/x"), now=T0)
    now = at(0)
    for attempt in range(1, POLICY.max_retries + 2):
        claim = await claim_one(queue, now)
        await queue.complete(
            "w1",
            [Outcome(claim, OutcomeKind.RETRY, http_status=503, error="server error")],
            now=now,
        )
        after = await row(db, claim.url)
        assert after["retry_count"] == attempt
        if attempt <= POLICY.max_retries:
            assert after["status"] == "pending"
            assert after["next_fetch_at"] >= now + timedelta(seconds=40)
            now = after["next_fetch_at"]
    assert (after["status"], after["dead_reason"]) == ("dead", "max_retries")
    assert after["last_error"] == "server error"


async def test_rate_limit_defers_without_counting_and_backs_off_the_host(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    await queue.submit(manual_urls(manual, "http://a.example/x", "http://a.example/y"), now=T0)
    claim = await claim_one(queue, at(0))
    await queue.complete(
        "w1",
        [Outcome(claim, OutcomeKind.RATE_LIMITED, http_status=429, retry_after_s=120)],
        now=at(1),
    )
    after = await row(db, claim.url)
    assert (after["status"], after["retry_count"]) == ("pending", 0)
    state = await host(db, "a.example")
    assert state["backoff_until"] == at(121)
    assert state["delay_ms"] == 2000  # doubled
    assert state["ready_at"] == at(121)
    assert await queue.claim("w1", 10, now=at(120)) == []
    assert len(await queue.claim("w1", 10, now=at(121))) == 1


async def test_deferral_returns_the_attempt(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    await queue.submit(manual_urls(manual, "http://a.example/x"), now=T0)
    claim = await claim_one(queue, at(0))
    assert claim.fetch_count == 1
    await queue.release("w1", [claim])
    after = await row(db, claim.url)
    assert (after["status"], after["fetch_count"], after["retry_count"]) == ("pending", 0, 0)


async def test_repeated_failures_back_off_the_whole_host(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    urls = [f"http://flaky.example/{i}" for i in range(POLICY.host_failure_threshold + 1)]
    await queue.submit(manual_urls(manual, *urls), now=T0)
    now = at(0)
    for _ in range(POLICY.host_failure_threshold):
        claim = await claim_one(queue, now)
        await queue.complete("w1", [Outcome(claim, OutcomeKind.RETRY, error="reset")], now=now)
        now += timedelta(seconds=1)
    state = await host(db, "flaky.example")
    assert state["consecutive_failures"] == POLICY.host_failure_threshold
    assert state["backoff_until"] is not None and state["backoff_until"] > now
    assert await queue.claim("w1", 10, now=now) == []


async def test_redirect_submits_the_target_and_kills_the_original(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    high = SourceRef(manual.id, priority=8)
    await queue.submit([Candidate("http://a.example/old", high, Origin.FEED)], now=T0)
    claim = await claim_one(queue, at(0))
    result = await queue.complete(
        "w1",
        [
            Outcome(
                claim,
                OutcomeKind.REDIRECT,
                http_status=301,
                redirect_to="https://b.example/new?utm_source=x",
            )
        ],
        now=at(1),
    )
    assert result.redirects.inserted == 1
    old = await row(db, "http://a.example/old")
    assert (old["status"], old["dead_reason"], old["final_url"]) == (
        "dead",
        "redirect",
        "https://b.example/new",
    )
    new = await row(db, "https://b.example/new")
    assert (new["status"], new["origin"], new["priority"], new["source_id"]) == (
        "pending",
        "feed",
        10,
        manual.id,
    )
    assert new["discovery_meta"] == {"redirect_hops": 1, "redirected_from": "http://a.example/old"}


async def test_redirect_chains_stop_after_the_hop_limit(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    await queue.submit(manual_urls(manual, "http://r.example/0"), now=T0)
    now = at(0)
    for hop in range(MAX_REDIRECT_HOPS + 1):
        claim = await claim_one(queue, now)
        result = await queue.complete(
            "w1", [Outcome(claim, OutcomeKind.REDIRECT, redirect_to=f"/{hop + 1}")], now=now
        )
        now += timedelta(seconds=2)
    assert result.redirects.inserted == 0  # the sixth hop is not followed
    assert await queue.claim("w1", 10, now=now) == []
    last = await row(db, f"http://r.example/{MAX_REDIRECT_HOPS}")
    assert (last["status"], last["final_url"]) == (
        "dead",
        f"http://r.example/{MAX_REDIRECT_HOPS + 1}",
    )


async def test_a_redirect_to_itself_is_retried_not_lost(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    await queue.submit(manual_urls(manual, "http://a.example/x"), now=T0)
    claim = await claim_one(queue, at(0))
    loop = Outcome(claim, OutcomeKind.REDIRECT, redirect_to="/x?utm_campaign=loop")
    await queue.complete("w1", [loop], now=at(0))
    after = await row(db, claim.url)
    assert (after["status"], after["retry_count"], after["last_error"]) == (
        "pending",
        1,
        "redirects to itself",
    )


# -- leases -------------------------------------------------------------------------


async def test_reaped_claims_are_claimable_again_and_stale_completions_refused(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    await queue.submit(manual_urls(manual, "http://a.example/x", "http://b.example/y"), now=T0)
    abandoned = await queue.claim("crashed", 10, now=at(0))
    assert len(abandoned) == 2
    assert (await queue.reap(now=at(59))).returned == 0  # leases still valid
    reaped = await queue.reap(now=at(61))
    assert (reaped.returned, reaped.dead) == (2, 0)
    assert (await row(db, "http://a.example/x"))["retry_count"] == 1

    again = await queue.claim("w2", 10, now=at(62))
    assert sorted(c.url_hash for c in again) == sorted(c.url_hash for c in abandoned)
    stale = await queue.complete(
        "crashed", [Outcome(c, OutcomeKind.FETCHED) for c in abandoned], now=at(63)
    )
    assert stale.applied == {} and sorted(stale.refused) == sorted(c.url_hash for c in abandoned)
    assert (await row(db, "http://a.example/x"))["claimed_by"] == "w2"


async def test_renewed_leases_survive_the_reaper(queue: QueueRepository, manual: SourceRef) -> None:
    await queue.submit(manual_urls(manual, "http://a.example/x"), now=T0)
    claim = await claim_one(queue, at(0))
    assert await queue.renew("w1", [claim], now=at(50)) == {claim.url_hash}
    assert await queue.renew("other", [claim], now=at(50)) == set()
    assert (await queue.reap(now=at(100))).returned == 0
    assert (await queue.reap(now=at(111))).returned == 1


@pytest.mark.single_server  # on Citus the triggers run on the workers, out of these statistics
async def test_a_renew_writes_no_count(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    """Migration 0040: an update that moves no URL between counts (a renew moves a lease)
    writes nothing to frontier_counts, so its insert trigger never fires."""
    await queue.submit(manual_urls(manual, "http://a.example/x"), now=T0)
    claim = await claim_one(queue, at(0))
    async with db.transaction() as tx:
        await tx.execute("SET LOCAL track_functions = 'pl'")
        assert await QueueRepository(tx, POLICY).renew("w1", [claim], now=at(50))
        calls = dict(await tx.fetch("SELECT funcname, calls FROM pg_stat_xact_user_functions"))
    assert calls == {"frontier_renew": 1, "url_frontier_count_updated": 1}  # migration 0043


async def test_stats_follow_the_queue(
    queue: QueueRepository, manual: SourceRef, db: Database
) -> None:
    await queue.submit(manual_urls(manual, *[f"http://s{i}.example/" for i in range(5)]), now=T0)
    claims = await queue.claim("w1", 2)
    await queue.complete("w1", [Outcome(claims[0], OutcomeKind.GONE)])
    stats = await StatsRepository(db).stats()
    assert stats.total == 5
    assert stats.by_status == {"pending": 3, "fetching": 1, "fetched": 0, "failed": 0, "dead": 1}
    assert stats.by_origin["manual"] == 5 and stats.by_source == {"manual": 5}
    assert stats.claims_last_minute == 2
    assert stats.due_now == 3
    assert stats.hosts.known == 5
    await StatsRepository(db).compact(now=datetime.now(UTC) + timedelta(hours=1))
    assert (await StatsRepository(db).stats()).by_status == stats.by_status
    assert await db.fetchval("SELECT count(*) FROM frontier_counts") == 3  # one per status


# -- concurrency --------------------------------------------------------------------


async def test_concurrent_claimers_never_share_a_url_or_crowd_a_host(
    fresh_dsn: str, manual: SourceRef, db: Database
) -> None:
    delay_ms, hosts, per_host = 50, 20, 4
    policy = QueuePolicy(default_delay_ms=delay_ms, lease_seconds=60)
    await QueueRepository(db, policy).submit(
        manual_urls(
            manual, *[f"http://h{h}.example/{i}" for h in range(hosts) for i in range(per_host)]
        )
    )
    total = hosts * per_host
    seen: list[tuple[str, str, datetime]] = []

    async def claimer(name: str) -> None:
        pool = await Database.connect(fresh_dsn, max_size=1)
        queue = QueueRepository(pool, policy)
        deadline = asyncio.get_running_loop().time() + 60
        try:
            while len(seen) < total and asyncio.get_running_loop().time() < deadline:
                claims = await queue.claim(name, 5)
                for claim in claims:
                    seen.append((claim.url_hash, claim.host, claim.lease_until))
                if claims:
                    await queue.complete(name, [Outcome(c, OutcomeKind.FETCHED) for c in claims])
        finally:
            await pool.close()

    await asyncio.gather(*(claimer(f"w{i}") for i in range(4)))
    assert len(seen) == total
    assert len({url for url, _, _ in seen}) == total  # no URL claimed twice
    by_host: dict[str, list[datetime]] = {}
    for _, name, lease_until in seen:
        by_host.setdefault(name, []).append(lease_until)  # lease_until = claim time + lease
    for name, times in by_host.items():
        times.sort()
        gaps = [(b - a).total_seconds() * 1000 for a, b in itertools.pairwise(times)]
        assert min(gaps) >= delay_ms, f"{name} was claimed {min(gaps):.1f} ms apart"


async def test_batches_sharing_urls_wait_for_each_other_without_deadlock(
    db: Database, queue: QueueRepository, manual: SourceRef
) -> None:
    """A submit locks its URLs in url_hash order whatever order it was given them in (the
    caller sorts, the statement keeps that order): a batch that meets a URL another
    transaction holds waits before it holds any later one, so that transaction can go on
    inserting later URLs and commit, and nobody deadlocks."""
    first, second = sorted(
        ["https://a.example/one", "https://a.example/two"], key=lambda u: url_hash(u)
    )
    deadlocks = "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
    before = await db.fetchval(deadlocks)
    async with db.transaction() as holder:
        await queue.submit_prepared(prepare(manual_urls(manual, first), 0), db=holder)
        # Given `second` first, the other batch must still wait on `first` before `second`.
        other = asyncio.create_task(queue.submit(manual_urls(manual, second, first)))
        waiting = (
            # On Citus the wait is on a worker's shard: its view of the cluster's lock waits.
            "SELECT count(*) FROM citus_lock_waits"
            if await db.fetchval("SELECT count(*) FROM pg_extension WHERE extname = 'citus'")
            else "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND wait_event = 'transactionid'"
        )
        await wait_until(lambda: db.fetchval(waiting), what="the other batch waiting")
        await queue.submit_prepared(prepare(manual_urls(manual, second), 0), db=holder)
    result = await asyncio.wait_for(other, 30)
    assert (result.inserted, result.known) == (0, 2)
    assert await db.fetchval("SELECT count(*) FROM url_frontier") == 2
    assert await db.fetchval(deadlocks) == before


async def test_a_url_requeued_while_its_host_is_claimed_stays_in_the_hosts_summary(
    fresh_dsn: str, manual: SourceRef, db: Database
) -> None:
    """A claim recomputes its hosts' pending summaries from their URLs. Two claimers take
    turns on one host and give every claim back (deferred, due at once), so one's complete
    keeps landing while the other's claim runs. At every moment, a pending URL's host has
    a pending due time (otherwise the host never comes ready again and the URL is lost):
    an auditor checks it in one snapshot the whole time."""
    policy = QueuePolicy(default_delay_ms=0, host_concurrency=2, lease_seconds=60)
    own = SourceRef(manual.id, rate_limit_ms=0)
    await QueueRepository(db, policy).submit(
        manual_urls(own, "http://busy.example/a", "http://busy.example/b")
    )
    rounds, done = 300, asyncio.Event()
    orphans: list[int] = []

    async def claimer(name: str) -> None:
        pool = await Database.connect(fresh_dsn, max_size=1)
        queue = QueueRepository(pool, policy)
        try:
            for _ in range(rounds):
                claims = await queue.claim(name, 1)
                await queue.complete(name, [Outcome(c, OutcomeKind.DEFERRED) for c in claims])
        finally:
            await pool.close()

    async def auditor() -> None:
        while not done.is_set():
            orphans.append(
                await db.fetchval(
                    "SELECT count(*) FROM url_frontier u JOIN host_state h"
                    " ON h.bucket = u.bucket AND h.host = u.host"
                    " WHERE u.status = 'pending' AND h.pending_due_at IS NULL"
                )
            )

    audit = asyncio.create_task(auditor())
    try:
        await asyncio.gather(claimer("w1"), claimer("w2"))
    finally:
        done.set()
        await audit
    assert orphans and max(orphans) == 0, f"orphaned pending URLs seen: {max(orphans)}"
    claims = await QueueRepository(db, policy).claim("w3", 10)
    claims += await QueueRepository(db, policy).claim("w3", 10)
    assert {c.url for c in claims} == {"http://busy.example/a", "http://busy.example/b"}


async def test_the_queue_functions_name_the_shards_at_the_call_only_on_citus(
    db: Database,
) -> None:
    """Migration 0049: on a single server the claim and answer functions run static
    statements (prepared once a session); on Citus they keep `EXECUTE format(...)`, which
    names the bucket's shards at the call."""
    citus = await db.fetchval("SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'")
    names = ["frontier_claim", "frontier_complete", "frontier_reap", "frontier_renew"]
    rows = await db.fetch(
        "SELECT proname::text AS name, prosrc FROM pg_proc WHERE proname = ANY ($1::text[])",
        names,
    )
    assert sorted(r["name"] for r in rows) == names
    assert {r["name"]: "EXECUTE format(" in r["prosrc"] for r in rows} == dict.fromkeys(
        names, citus
    )

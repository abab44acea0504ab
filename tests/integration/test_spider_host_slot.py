"""Requesters without a claim hold a host as the fetchers' claims do (`HostRepository.
take_slot` and `release_slots`, issue 31): the statements on a pinned clock, then a real
crawl against a host that is backing off or held by a fetcher."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from frontier.db import Database
from frontier.hosts import SLOT_BACKOFF, SLOT_DELAY, SLOT_HELD, HostRepository, HostSlot
from frontier.settings import Settings
from frontier.sources import SourceRepository
from frontier.states import IngestionMode
from spider.service import crawl_in_child, job_for
from tests.local_site import LocalSite

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOST = "news.example"
LEASE_S = 60.0


async def take(db: Database, at: datetime, owner: str = "spider-1") -> HostSlot:
    return await HostRepository(db).take_slot(
        HOST, owner, new_host_delay_ms=300, lease_s=LEASE_S, now=at
    )


async def release(db: Database, at: datetime, owner: str = "spider-1") -> int:
    return await HostRepository(db).release_slots({HOST: owner}, now=at)


async def next_allowed(db: Database) -> datetime:
    value: datetime = await db.fetchval(
        "SELECT next_allowed_at FROM host_state WHERE host = $1", HOST
    )
    return value


async def test_a_host_is_held_until_its_answer_and_waits_the_delay_after_it(
    db: Database,
) -> None:
    assert await take(db, T0) == HostSlot(True, held=True, delay_ms=300)
    row = await db.fetchrow(
        "SELECT min_delay_ms, lease_owner FROM host_state WHERE host = $1", HOST
    )
    assert (row["min_delay_ms"], row["lease_owner"]) == (300, "spider-1")  # as a submit would

    # While the request is in flight nobody else may send one, however long it takes.
    busy = await take(db, T0 + timedelta(seconds=5), owner="poller-1")
    assert (busy.taken, busy.reason) == (False, SLOT_HELD)
    assert busy.wait_s == pytest.approx(LEASE_S - 5)  # at most until the lease expires
    assert await release(db, T0 + timedelta(seconds=5), owner="poller-1") == 0  # not its hold

    # The answer came at T0 + 7 s: the next request waits the delay after it.
    assert await release(db, T0 + timedelta(seconds=7)) == 1
    assert await next_allowed(db) == T0 + timedelta(seconds=7, milliseconds=300)
    early = await take(db, T0 + timedelta(seconds=7, milliseconds=100), owner="poller-1")
    assert (early.taken, early.reason) == (False, SLOT_DELAY)
    assert early.wait_s == pytest.approx(0.2)
    assert (await take(db, T0 + timedelta(seconds=7, milliseconds=300), owner="poller-1")).held

    # robots.txt's Crawl-delay, once a fetcher stored it, is the host's delay.
    await db.execute("UPDATE host_state SET crawl_delay_ms = 2000 WHERE host = $1", HOST)
    assert await release(db, T0 + timedelta(seconds=8), owner="poller-1") == 1
    assert await next_allowed(db) == T0 + timedelta(seconds=10)


async def test_a_host_without_a_delay_is_not_held(db: Database) -> None:
    await db.execute("INSERT INTO host_state (host, min_delay_ms) VALUES ($1, 0)", HOST)
    assert await take(db, T0) == HostSlot(True, held=False, delay_ms=0)
    assert await take(db, T0, owner="spider-2") == HostSlot(True, held=False, delay_ms=0)  # now


async def test_a_free_host_without_a_delay_is_taken_without_writing_its_row(
    db: Database,
) -> None:
    """Nothing to hold, nothing written: no row version, no transaction id, so no WAL flush
    at each poll of such a host; a backing-off one is still refused."""
    await db.execute("INSERT INTO host_state (host, min_delay_ms) VALUES ($1, 0)", HOST)
    before = await db.fetchval("SELECT xmin::text FROM host_state WHERE host = $1", HOST)

    async with db.transaction() as tx:
        taken = await take(tx, T0 + timedelta(seconds=1))
        xid = await tx.fetchval("SELECT pg_current_xact_id_if_assigned()::text")
    assert taken == HostSlot(True, held=False, delay_ms=0)
    assert xid is None  # a transaction that wrote nothing: its commit flushes no WAL

    after = await db.fetchval("SELECT xmin::text FROM host_state WHERE host = $1", HOST)
    assert after == before
    await db.execute("UPDATE host_state SET backoff_until = $2 WHERE host = $1", HOST, T0)
    late = await take(db, T0 - timedelta(seconds=2))
    assert (late.taken, late.reason, late.wait_s) == (False, SLOT_BACKOFF, pytest.approx(2))


async def test_a_host_backing_off_or_held_by_a_fetcher_is_not_free(db: Database) -> None:
    assert (await take(db, T0)).taken
    assert await release(db, T0) == 1
    await db.execute(
        "UPDATE host_state SET backoff_until = $2, lease_owner = 'fetcher-1', lease_until = $3 "
        "WHERE host = $1",
        HOST,
        T0 + timedelta(minutes=10),
        T0 + timedelta(minutes=1),
    )
    backing_off = await take(db, T0 + timedelta(seconds=5))
    assert (backing_off.taken, backing_off.reason) == (False, SLOT_BACKOFF)
    assert backing_off.wait_s == pytest.approx(595)

    await db.execute("UPDATE host_state SET backoff_until = NULL WHERE host = $1", HOST)
    held = await take(db, T0 + timedelta(seconds=5))
    assert (held.taken, held.reason) == (False, SLOT_HELD)
    assert held.wait_s == pytest.approx(55)

    # A holder that died: its lease expires, and the host is free again.
    assert (await take(db, T0 + timedelta(minutes=1))).held


async def add_source(db: Database, site: LocalSite) -> None:
    site.serve("/robots.txt", "", status=404)
    site.serve("/", '<a href="/2024/01/01/a-story">a story</a>')
    await SourceRepository(db).add(
        "slotted",
        base_url=site.url("/"),
        mode=IngestionMode.SPIDER,
        rate_limit_ms=0,
        article_patterns=[r"/\d{4}/\d{2}/\d{2}/"],
    )


@pytest.mark.parametrize("holder", ["backoff", "lease"])
async def test_the_spider_waits_for_a_short_backoff_or_a_fetchers_hold(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite, holder: str
) -> None:
    await add_source(db, local_site)
    host = f"{local_site.address}:{local_site.port}"
    started = time.monotonic()
    if holder == "backoff":
        await db.execute(
            "INSERT INTO host_state (host, min_delay_ms, backoff_until) "
            "VALUES ($1, 0, now() + interval '1.5 s')",
            host,
        )
    else:
        await db.execute(
            "INSERT INTO host_state (host, min_delay_ms, lease_owner, lease_until) "
            "VALUES ($1, 0, 'a-fetcher', now() + interval '1.5 s')",
            host,
        )

    result = await crawl_in_child(job_for(settings, fresh_dsn, "slotted"))

    assert result.exit_code == 0, result.summary
    assert local_site.requests[0].at >= started + 1.5  # not one request before it ended
    assert [seen.path for seen in local_site.requests] == ["/robots.txt", "/"]


async def test_a_host_backing_off_for_long_is_not_requested_by_the_spider(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite
) -> None:
    await add_source(db, local_site)
    await db.execute(
        "INSERT INTO host_state (host, backoff_until) VALUES ($1, now() + interval '1 hour')",
        f"{local_site.address}:{local_site.port}",
    )

    result = await crawl_in_child(job_for(settings, fresh_dsn, "slotted"))

    assert local_site.requests == []  # not even robots.txt
    assert result.summary.host_backoff >= 1 and result.summary.start_pages_failed == 1
    assert result.exit_code == 1  # the start page could not be used: the run failed
    assert "backs off" in result.summary.render()

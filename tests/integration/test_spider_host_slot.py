"""The spider takes the fetchers' host slot (`HostRepository.take_slot`, issue 14 item 8):
the statement on a pinned clock, then a real crawl against a host that is backing off or
leased to a fetcher."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from frontier.db import Database
from frontier.hosts import SLOT_BACKOFF, SLOT_DELAY, SLOT_LEASE, HostRepository, HostSlot
from frontier.settings import Settings
from frontier.sources import SourceRepository
from frontier.states import IngestionMode
from spider.service import crawl_in_child, job_for
from tests.local_site import LocalSite

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOST = "news.example"


async def take(db: Database, at: datetime, *, delay_ms: int = 300) -> HostSlot:
    return await HostRepository(db).take_slot(
        HOST, new_host_delay_ms=delay_ms, margin_ms=100, now=at
    )


async def next_allowed(db: Database) -> datetime:
    value: datetime = await db.fetchval(
        "SELECT next_allowed_at FROM host_state WHERE host = $1", HOST
    )
    return value


async def test_a_slot_is_taken_only_when_due_and_creates_the_host_row(db: Database) -> None:
    assert await take(db, T0) == HostSlot(True, margin_ms=30)  # used within 30 ms of asking
    row = await db.fetchrow("SELECT min_delay_ms FROM host_state WHERE host = $1", HOST)
    assert row["min_delay_ms"] == 300  # as a submit would create it
    # The delay plus the fetchers' margin (a tenth of the delay, at most 100 ms).
    assert await next_allowed(db) == T0 + timedelta(milliseconds=330)

    early = await take(db, T0 + timedelta(milliseconds=100))
    assert (early.taken, early.reason) == (False, SLOT_DELAY)
    assert early.wait_s == pytest.approx(0.230)
    assert await next_allowed(db) == T0 + timedelta(milliseconds=330)  # unchanged

    assert (await take(db, T0 + timedelta(milliseconds=330))).taken
    # robots.txt's Crawl-delay, once a fetcher stored it, is the host's delay.
    await db.execute("UPDATE host_state SET crawl_delay_ms = 2000 WHERE host = $1", HOST)
    assert (await take(db, T0 + timedelta(seconds=1))).taken
    assert await next_allowed(db) == T0 + timedelta(seconds=3, milliseconds=100)


async def test_a_host_backing_off_or_leased_to_a_fetcher_is_not_free(db: Database) -> None:
    assert (await take(db, T0)).taken
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
    leased = await take(db, T0 + timedelta(seconds=5))
    assert (leased.taken, leased.reason) == (False, SLOT_LEASE)
    assert leased.wait_s == pytest.approx(55)
    assert await next_allowed(db) == T0 + timedelta(milliseconds=330)  # nothing taken

    assert (await take(db, T0 + timedelta(minutes=1))).taken  # the lease expired


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
async def test_the_spider_waits_for_a_short_backoff_or_a_fetchers_lease(
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

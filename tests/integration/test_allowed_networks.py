"""FRONTIER_ALLOWED_NETWORKS at real servers: with 127.0.0.2 allowed (a site there, the
stand-in for an intranet host), a fetch, a poll and a spider crawl reach it, while
127.0.0.1 (another loopback address: Linux answers on all of 127.0.0.0/8) stays refused
and its server sees no request, robots.txt included. A host name entry (localhost) lets
requests for that name through, not its address asked for directly."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fetcher.config import FetcherConfig
from fetcher.worker import Fetcher
from frontier.db import Database
from frontier.queue_values import QueuePolicy
from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import BlockedAddress
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings
from frontier.sinks.postgres import PostgresSink
from frontier.sources import SourceRepository
from frontier.states import IngestionMode
from poller.policy import PollPolicy
from poller.scheduler import Poller
from spider.service import crawl_in_child, job_for
from tests.fetch_harness import UA, article, frontier_row, submit
from tests.integration.test_poll import rss
from tests.local_site import LocalSite

T0 = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)  # after any row's default now()


@pytest.fixture
def guarded(settings: Settings) -> Settings:
    """The test settings with the guard on and only 127.0.0.2 allowed."""
    return settings.model_copy(
        update={"allow_private_networks": False, "allowed_networks": "127.0.0.2/32"}
    )


async def test_a_fetch_reaches_the_allowed_address_only(
    db: Database, guarded: Settings, local_site: LocalSite, partner_site: LocalSite
) -> None:
    for site in (local_site, partner_site):
        site.serve("/robots.txt", "", status=404)
        site.serve("/story", article(f"story at {site.address}"))
    await submit(db, partner_site.url("/story"), local_site.url("/story"))
    config = FetcherConfig(user_agent=UA, worker_id="w-allowed", concurrency=4)
    async with SafeClient(HttpLimits.from_settings(guarded)) as client:
        fetcher = Fetcher(db, client, PostgresSink(db), config, QueuePolicy(default_delay_ms=0))
        await fetcher.run(until_idle=True)

    assert (await frontier_row(db, partner_site.url("/story")))["status"] == "fetched"
    refused = await frontier_row(db, local_site.url("/story"))
    assert (refused["status"], refused["dead_reason"]) == ("dead", "blocked_by_policy")
    assert "FRONTIER_ALLOWED_NETWORKS" in refused["last_error"]
    assert [seen.path for seen in partner_site.requests] == ["/robots.txt", "/story"]
    assert local_site.requests == []  # neither robots.txt nor the page


async def test_a_poll_reaches_the_allowed_address_only(
    db: Database, guarded: Settings, local_site: LocalSite, partner_site: LocalSite
) -> None:
    sources = SourceRepository(db)
    for name, site in (("intranet", partner_site), ("loopback", local_site)):
        site.serve("/feed.xml", rss(site.url("/p/1")), content_type="application/rss+xml")
        await sources.add(name, feed_url=site.url("/feed.xml"))
    async with SafeClient(HttpLimits.from_settings(guarded)) as client:
        policy = PollPolicy(concurrency=4, per_host=2, lease_s=60)
        summaries = {s.source: s for s in await Poller(db, client, policy).run_once(now=T0)}

    assert summaries["intranet"].ok and summaries["intranet"].items_new == 1
    assert not summaries["loopback"].ok and "not a public address" in summaries["loopback"].error
    assert len(partner_site.hits("/feed.xml")) == 1 and local_site.requests == []


async def test_a_host_name_entry_allows_that_name_not_its_address(local_site: LocalSite) -> None:
    local_site.serve("/page", "hello")
    limits = HttpLimits(UA, allowed_networks=("localhost",))
    async with SafeClient(limits) as client:
        by_name = await client.get(f"http://localhost:{local_site.port}/page")
        with pytest.raises(BlockedAddress):
            await client.get(local_site.url("/page"))  # 127.0.0.1 as a literal
    assert by_name.status == 200 and by_name.body == b"hello"
    assert len(local_site.hits("/page")) == 1


async def test_the_spider_crawls_the_allowed_address_only(
    db: Database,
    guarded: Settings,
    fresh_dsn: str,
    local_site: LocalSite,
    partner_site: LocalSite,
) -> None:
    sources = SourceRepository(db)
    for name, site in (("intranet", partner_site), ("loopback", local_site)):
        site.serve("/robots.txt", "", status=404)
        site.serve("/", f'<html><body><a href="/2024/01/01/{name}">story</a></body></html>')
        site.serve(f"/2024/01/01/{name}", article(name))
        await sources.add(
            name,
            base_url=site.url("/"),
            mode=IngestionMode.SPIDER,
            rate_limit_ms=0,
            article_patterns=[r"/\d{4}/\d{2}/\d{2}/"],
        )

    allowed = await crawl_in_child(job_for(guarded, fresh_dsn, "intranet"))
    refused = await crawl_in_child(job_for(guarded, fresh_dsn, "loopback"))

    assert allowed.exit_code == 0 and allowed.summary.pages_crawled >= 1
    assert allowed.summary.blocked == 0 and allowed.summary.articles_found == 1
    assert refused.summary.blocked >= 1 and refused.summary.pages_crawled == 0
    assert partner_site.hits("/") and local_site.requests == []

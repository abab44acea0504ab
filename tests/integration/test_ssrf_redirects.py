"""The SSRF guard through a redirect, for each part that makes requests: a host treated as
public (127.0.0.1, through `HttpLimits.allowed_networks`, the tests' stand-in for the
internet) redirects to cloud metadata, to another loopback address and to IPv6 loopback.
The poller refuses the hop, the fetcher refuses the target it was handed, and the spider's
guard refuses the request Scrapy's redirect middleware makes of the hop. The private
side never sees a request."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from scrapy.downloadermiddlewares.redirect import RedirectMiddleware
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

from fetcher.config import FetcherConfig
from fetcher.worker import Fetcher
from frontier.db import Database
from frontier.queue_values import QueuePolicy
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.sinks.postgres import PostgresSink
from frontier.sources import SourceRepository
from poller.policy import PollPolicy
from poller.scheduler import Poller
from spider.middlewares import BlockedRequest, SsrfGuardMiddleware
from tests.fetch_harness import UA, article, frontier_row, submit
from tests.local_site import LocalSite

PUBLIC = HttpLimits(UA, allowed_networks=("127.0.0.1/32",))
T0 = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)  # after any row's default now()


@pytest.fixture
def private_site(partner_site: LocalSite) -> LocalSite:
    return partner_site  # 127.0.0.2: not in PUBLIC's allowed networks


def targets(private_site: LocalSite) -> list[str]:
    return [
        "http://169.254.169.254/latest/meta-data/",
        private_site.url("/secret"),
        f"http://[::1]:{private_site.port}/secret",
    ]


async def test_the_poller_refuses_a_feed_redirecting_to_a_private_address(
    db: Database, local_site: LocalSite, private_site: LocalSite
) -> None:
    sources = SourceRepository(db)
    for i, target in enumerate(targets(private_site)):
        local_site.redirect(f"/feed{i}.xml", target)
        await sources.add(f"hop{i}", feed_url=local_site.url(f"/feed{i}.xml"))
    async with SafeClient(PUBLIC) as client:
        policy = PollPolicy(concurrency=4, per_host=4, lease_s=60)
        summaries = await Poller(db, client, policy).run_once(now=T0)

    assert len(summaries) == 3
    assert all(not s.ok and "not a public address" in s.error for s in summaries)
    assert private_site.requests == []
    assert await db.fetchval("SELECT count(*) FROM url_frontier") == 0


async def test_the_fetcher_submits_the_redirect_target_and_refuses_to_fetch_it(
    db: Database, local_site: LocalSite, private_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    local_site.redirect("/moved", private_site.url("/secret"))
    private_site.serve("/secret", article("internal"))
    await submit(db, local_site.url("/moved"))
    config = FetcherConfig(user_agent=UA, worker_id="w-ssrf", concurrency=4)
    async with SafeClient(PUBLIC) as client:
        fetcher = Fetcher(db, client, PostgresSink(db), config, QueuePolicy(default_delay_ms=0))
        await fetcher.run(until_idle=True)

    moved = await frontier_row(db, local_site.url("/moved"))
    assert (moved["status"], moved["dead_reason"]) == ("dead", "redirect")
    secret = await frontier_row(db, private_site.url("/secret"))
    assert (secret["status"], secret["dead_reason"]) == ("dead", "blocked_by_policy")
    assert "not public" in secret["last_error"]
    assert private_site.requests == []  # neither robots.txt nor the page
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 0


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.2:8080/secret",
        "http://[::1]:8080/secret",
        "http://10.0.0.7/admin",
    ],
)
def test_the_spider_refuses_the_hop_scrapy_makes_of_a_redirect(target: str) -> None:
    crawler = get_crawler(settings_dict={"REDIRECT_MAX_TIMES": 5})
    redirects = RedirectMiddleware.from_crawler(crawler)
    request = Request("https://news.example/old-section")
    response = HtmlResponse(request.url, status=302, headers={"Location": target}, request=request)
    hop = redirects.process_response(request, response)
    assert isinstance(hop, Request) and hop.url == target  # Scrapy follows it as a new request,
    with pytest.raises(BlockedRequest):  # which passes the downloader middlewares again
        SsrfGuardMiddleware(allow_private=False).process_request(hop)

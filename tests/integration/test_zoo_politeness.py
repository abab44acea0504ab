"""Issue 14, item 8: politeness across every requester. A spider and two fetcher processes
work on one host at once; measured at the server, no two requests to the host come closer
than its delay, whoever sent them (every requester takes the same `host_state` slot)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from pathlib import Path

import pytest

from frontier.db import Database
from frontier.queue import Candidate, QueuePolicy, QueueRepository
from frontier.settings import Settings
from frontier.sources import SourceRepository
from frontier.states import IngestionMode, Origin
from spider.service import crawl_in_child, job_for
from tests.conditions import wait_until
from tests.local_site import LocalSite
from tests.processes import frontier_process
from tests.zoo.politeness import PoliteNewsSite

DELAY_MS = 300
# Arrival times are taken by this process's event loop; a packet capture on loopback
# agreed with them to 0.1 ms under load. Gaps 22-62 ms short of the delay, seen in CI and
# under load until 2026-11-27, were requests leaving the fetchers that late after their
# slot was checked (fetcher/politeness.py): they now go out within the margin or not at all.
CLOCK_TOLERANCE_S = 0.005
SPIDER_AGENT = "zoo-spider/1.0"
FETCHER_AGENT = "zoo-fetcher"


@pytest.mark.xfail(
    strict=False,
    reason="open defect, narrowed: requests leaving 61-93 ms after their slot's check are "
    "now refused (11 of 11 runs under load passed), but a clean-clone CI run on PostgreSQL "
    "15 (2026-11-27) saw 264.8 ms of 300 between two fetchers' articles; see that day's note",
)
async def test_a_spider_and_two_fetcher_processes_never_come_closer_than_the_delay(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite, tmp_path: Path
) -> None:
    news = PoliteNewsSite(local_site, sections=4, articles=20, fetcher_agent=FETCHER_AGENT)
    source = await SourceRepository(db).add(
        "polite-news",
        base_url=local_site.url("/"),
        mode=IngestionMode.BOTH,
        rate_limit_ms=DELAY_MS,
        article_patterns=[r"/\d{4}/\d{2}/\d{2}/"],
    )
    # The articles are known already (from the feed, say): the fetchers start on them at
    # once while the spider walks the listing pages.
    await QueueRepository(db, QueuePolicy()).submit(
        [Candidate(local_site.url(path), source.ref, Origin.FEED) for path in news.articles]
    )
    spider_settings = settings.model_copy(update={"user_agent": SPIDER_AGENT})

    # The spider starts first: its front page is held until a fetcher has sent a
    # request, so it is still crawling while the fetchers work (however slowly the
    # processes start on a loaded machine).
    stop = asyncio.Event()  # set only if the test fails before the crawl ends
    job = job_for(spider_settings, fresh_dsn, "polite-news")
    crawl = asyncio.create_task(crawl_in_child(job, stop=stop))
    try:
        await wait_until(
            lambda: any(s.headers.get("User-Agent") == SPIDER_AGENT for s in local_site.requests),
            deadline_s=60,
            what="the spider's first request",
        )
        async with (
            frontier_process(
                fresh_dsn,
                tmp_path,
                "fetch",
                "--until-idle",
                FRONTIER_USER_AGENT=f"{FETCHER_AGENT}-a/1",
            ) as first,
            frontier_process(
                fresh_dsn,
                tmp_path,
                "fetch",
                "--until-idle",
                FRONTIER_USER_AGENT=f"{FETCHER_AGENT}-b/1",
            ) as second,
        ):
            codes = await asyncio.wait_for(asyncio.gather(first.wait(), second.wait()), 120)
        spider = await asyncio.wait_for(asyncio.shield(crawl), 120)
    finally:
        if not crawl.done():
            stop.set()  # the child is sent SIGTERM, then killed
            with contextlib.suppress(Exception):
                await crawl

    assert codes == [0, 0] and spider.exit_code == 0, spider.summary
    seen = news.requests_by_time()
    agents = [s.headers.get("User-Agent", "") for s in seen]
    senders = {agent.split("/")[0] for agent in agents}
    assert senders == {"zoo-spider", f"{FETCHER_AGENT}-a", f"{FETCHER_AGENT}-b"}, agents
    # The spider went on while the fetchers worked: its requests fall between theirs.
    fetcher_times = [s.at for s, a in zip(seen, agents, strict=True) if a.startswith(FETCHER_AGENT)]
    spider_times = [s.at for s, a in zip(seen, agents, strict=True) if a.startswith("zoo-spider")]
    assert any(fetcher_times[0] < t < fetcher_times[-1] for t in spider_times), agents
    gaps = [
        (later.at - earlier.at, f"{earlier.path} -> {later.path}")
        for earlier, later in itertools.pairwise(seen)
    ]
    too_close = [
        (round(gap * 1000, 1), which)
        for gap, which in gaps
        if gap < DELAY_MS / 1000 - CLOCK_TOLERANCE_S
    ]
    assert not too_close, too_close
    # Everything was done, once: each article fetched and stored, each listing page walked.
    for path in news.articles:
        assert len(local_site.hits(path)) == 1, path
    for path in ["/", *news.sections]:
        assert len(local_site.hits(path)) == 1, path
    stored = await db.fetchval("SELECT count(*) FROM raw_content WHERE body LIKE '%city council%'")
    assert stored == len(news.articles)

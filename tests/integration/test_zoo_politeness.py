"""Issue 31: politeness by construction, across every requester. A spider, two fetcher
processes and a poller (two sources' feeds on the one host) work on one host at once, with
two CPU-burning processes beside them on this 2-core machine. Measured at the server, a
request never arrives while another is in flight, and never sooner than the host's delay
after the previous answer was written, whoever sent it: every requester holds the host
while its request is in flight and gives it back when the answer is in
(frontier/sql/hosts.sql)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from frontier.db import Database
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy
from frontier.settings import Settings
from frontier.sources import SourceRepository
from frontier.states import IngestionMode, Origin
from spider.service import crawl_in_child, job_for
from tests.conditions import wait_until
from tests.local_site import LocalSite
from tests.processes import frontier_process
from tests.zoo.politeness import FEEDS, STAMP_TOLERANCE_S, PoliteNewsSite, precise_stamps

DELAY_MS = 300
SPIDER_AGENT = "zoo-spider/1.0"
POLLER_AGENT = "zoo-poller/1.0"
FETCHER_AGENT = "zoo-fetcher"
ARTICLE_PATTERN = r"/\d{4}/\d{2}/\d{2}/"


@contextlib.asynccontextmanager
async def cpu_burners(count: int) -> AsyncIterator[None]:
    """`count` processes spinning on a core each, killed at the end."""
    burners = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", "while True: pass")
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            await burner.wait()


async def test_every_requester_together_keeps_one_request_in_flight_and_the_delay(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite, tmp_path: Path
) -> None:
    news = PoliteNewsSite(local_site, sections=4, articles=48)
    sources = SourceRepository(db)
    source = await sources.add(
        "polite-news",
        base_url=local_site.url("/"),
        feed_url=local_site.url(FEEDS[0]),
        mode=IngestionMode.BOTH,
        rate_limit_ms=DELAY_MS,
        article_patterns=[ARTICLE_PATTERN],
    )
    await sources.add(
        "polite-news-b",
        feed_url=local_site.url(FEEDS[1]),
        rate_limit_ms=DELAY_MS,
        article_patterns=[ARTICLE_PATTERN],
    )
    # The articles are known already (from a feed read earlier, say): the fetchers start
    # on them at once; the spider and the poller join while they work.
    await QueueRepository(db, QueuePolicy()).submit(
        [Candidate(local_site.url(path), source.ref, Origin.FEED) for path in news.articles]
    )
    spider_settings = settings.model_copy(update={"user_agent": SPIDER_AGENT})
    stop = asyncio.Event()  # set only if the test fails before the crawl ends
    crawl: asyncio.Task | None = None
    with precise_stamps():
        async with cpu_burners(2):
            try:
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
                    await wait_until(
                        lambda: any(
                            s.headers.get("User-Agent", "").startswith(FETCHER_AGENT)
                            and s.path.startswith("/2024/")
                            for s in local_site.requests
                        ),
                        deadline_s=90,
                        what="the fetchers' first article request",
                    )
                    crawl = asyncio.create_task(
                        crawl_in_child(
                            job_for(spider_settings, fresh_dsn, "polite-news"), stop=stop
                        )
                    )
                    async with frontier_process(
                        fresh_dsn, tmp_path, "poll", "--once", FRONTIER_USER_AGENT=POLLER_AGENT
                    ) as poller:
                        codes = await asyncio.wait_for(
                            asyncio.gather(first.wait(), second.wait(), poller.wait()), 180
                        )
                    spider = await asyncio.wait_for(asyncio.shield(crawl), 180)
            finally:
                if crawl is not None and not crawl.done():
                    stop.set()  # the child is sent SIGTERM, then killed
                    with contextlib.suppress(Exception):
                        await crawl

    assert codes == [0, 0, 0] and spider.exit_code == 0, spider.summary
    answers = news.answers_by_arrival()
    assert len(answers) == len(local_site.requests)  # every request was answered
    agents = [a.request.headers.get("User-Agent", "") for a in answers]
    senders = {agent.split("/")[0] for agent in agents}
    assert senders == {"zoo-spider", "zoo-poller", f"{FETCHER_AGENT}-a", f"{FETCHER_AGENT}-b"}
    # The rule, at the server: each request arrives after the previous answer was written,
    # and at least the delay after it (a request arriving while another is in flight has a
    # negative gap).
    gaps = [
        (later.request.at - earlier.at, f"{earlier.request.path} -> {later.request.path}")
        for earlier, later in itertools.pairwise(answers)
    ]
    too_close = [
        (round(gap * 1000, 1), which)
        for gap, which in gaps
        if gap < DELAY_MS / 1000 - STAMP_TOLERANCE_S
    ]
    assert not too_close, too_close
    # The spider and the poller went on while the fetchers worked: their requests fall
    # between the fetchers'.
    fetcher_times = [a.request.at for a, u in zip(answers, agents, strict=True) if "fetcher" in u]
    for other in ("zoo-spider", "zoo-poller"):
        times = [a.request.at for a, u in zip(answers, agents, strict=True) if u.startswith(other)]
        assert any(fetcher_times[0] < t < fetcher_times[-1] for t in times), (other, agents)
    # Everything was done, once: each article fetched and stored, each listing page
    # walked, each feed read.
    for path in news.articles:
        assert len(local_site.hits(path)) == 1, path
    for path in ["/", *news.sections, *FEEDS]:
        assert len(local_site.hits(path)) == 1, path
    stored = await db.fetchval("SELECT count(*) FROM raw_content WHERE body LIKE '%city council%'")
    assert stored == len(news.articles)

"""One robots.txt verdict over HTTP (issue 34, item 2): the same robots.txt, served by a
real local site on 127.0.0.1, lets the fetcher and the spider request the same pages.

The file has a UTF-8 BOM, a group for `bot` (named in our user agent's comment, not its
product token), our product token written with a version, and a NUL inside a rule: before,
the spider matched the whole user agent (so the `bot` group shut it out) and the fetcher
read `frontier-test/2.0 (...)` as a crawler of its own (so no group applied to it).
tests/unit/test_robots_verdict.py holds the two paths to one table of answers."""

from __future__ import annotations

from frontier.db import Database
from frontier.settings import Settings
from spider.service import crawl_in_child, job_for
from tests.fetch_harness import UA, after, fetcher_for, frontier_row, submit
from tests.integration.test_spider import add_spider_source, html
from tests.local_site import LocalSite

ROBOTS = (
    b"\xef\xbb\xbfUser-agent: bot\nDisallow: /\n\n"
    b"User-agent: frontier-test/2.0 (+http://example.org/)\n"
    b"Disallow: /mine/\nDisallow: /pri\x00vate/\n"
)
PAGES = ("/", "/open/list", "/mine/list", "/private/list")


async def test_the_fetcher_and_the_spider_request_the_same_pages(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite
) -> None:
    assert "/bot" in UA  # the comment names the group that is not ours
    local_site.serve("/robots.txt", ROBOTS, content_type="text/plain")
    local_site.serve("/", html(*PAGES[1:]))
    for path in PAGES[1:]:
        local_site.serve(path, html())
    await add_spider_source(db, "verdict", local_site.url("/"))

    ours = settings.model_copy(update={"user_agent": UA})
    result = await crawl_in_child(job_for(ours, fresh_dsn, "verdict", max_depth=1))
    spider_saw = {seen.path for seen in local_site.requests} - {"/robots.txt"}
    seen = len(local_site.requests)

    await submit(db, *(local_site.url(path) for path in PAGES))
    async with fetcher_for(db) as fetcher:
        for turn in range(len(PAGES)):
            await fetcher.run_once(now=after(10 * turn))
    fetcher_saw = {seen.path for seen in local_site.requests[seen:]} - {"/robots.txt"}

    assert spider_saw == fetcher_saw == {"/", "/open/list"}
    assert result.summary.robots_blocked == 2
    for path in ("/mine/list", "/private/list"):
        assert (await frontier_row(db, local_site.url(path)))["dead_reason"] == "robots_blocked"

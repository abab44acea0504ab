"""robots.txt fetched from a real local site: 2xx, 4xx, 5xx, timeout and redirect, with
what each leaves in host_state and what happens to the page."""

from __future__ import annotations

import asyncio

from aiohttp import web

from frontier.db import Database
from frontier.hosts import HostRepository
from tests.fetch_harness import after, article, fetcher_for, frontier_row, host_row, submit
from tests.local_site import LocalSite

ROBOTS = (
    "User-agent: *\nDisallow: /\n\n"
    "User-agent: frontier-test\nDisallow: /secret\nCrawl-delay: 2\n\n"
    "Sitemap: http://example.org/sitemap.xml\nSitemap: http://example.org/news.xml\n"
)


def host_of(site: LocalSite) -> str:
    return f"{site.address}:{site.port}"


async def test_2xx_is_parsed_with_our_product_token(db: Database, local_site: LocalSite) -> None:
    local_site.serve("/robots.txt", ROBOTS, content_type="text/plain")
    local_site.serve("/open", article("Open"))
    await submit(db, local_site.url("/open"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    host = await host_row(db, host_of(local_site))
    assert (host["robots_status"], host["robots_http_status"]) == ("ok", 200)
    assert host["crawl_delay_ms"] == 2000
    assert await HostRepository(db).sitemaps([host_of(local_site)]) == {
        host_of(local_site): ["http://example.org/sitemap.xml", "http://example.org/news.xml"]
    }
    assert (await frontier_row(db, local_site.url("/open")))["status"] == "fetched"
    # cached: a second URL does not fetch robots.txt again
    await submit(db, local_site.url("/secret/1"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once(now=after(10))  # past the 2 s crawl delay
    assert len(local_site.hits("/robots.txt")) == 1
    assert (await frontier_row(db, local_site.url("/secret/1")))["dead_reason"] == "robots_blocked"


async def test_crawl_delay_is_capped(db: Database, local_site: LocalSite) -> None:
    local_site.serve("/robots.txt", "User-agent: *\nCrawl-delay: 3600\n", content_type="text/plain")
    await submit(db, local_site.url("/a"))
    # a cap of 2 s, not the default 30: the page after robots.txt waits out the delay
    async with fetcher_for(db, robots_max_crawl_delay_ms=2_000) as fetcher:
        await fetcher.run_once()
    assert (await host_row(db, host_of(local_site)))["crawl_delay_ms"] == 2_000


async def test_4xx_means_allow_all(db: Database, local_site: LocalSite) -> None:
    local_site.serve("/robots.txt", "forbidden", status=403)
    local_site.serve("/a", article("A"))
    await submit(db, local_site.url("/a"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    host = await host_row(db, host_of(local_site))
    assert (host["robots_status"], host["robots_http_status"]) == ("allow_all", 403)
    assert (await frontier_row(db, local_site.url("/a")))["status"] == "fetched"


async def test_5xx_disallows_for_now_and_is_retried_later(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", "oops", status=503)
    local_site.serve("/a", article("A"))
    await submit(db, local_site.url("/a"))
    async with fetcher_for(db, robots_retry_s=600) as fetcher:
        await fetcher.run_once()
        host = await host_row(db, host_of(local_site))
        assert (host["robots_status"], host["robots_failures"]) == ("disallow_all", 1)
        assert host["robots_retry_at"] is not None and host["lease_owner"] is None
        row = await frontier_row(db, local_site.url("/a"))
        assert (row["status"], row["retry_count"], row["fetch_count"]) == ("pending", 0, 0)
        assert local_site.hits("/a") == []
        # later, robots.txt answers: it is fetched again and the page goes through
        local_site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
        await fetcher.run_once(now=after(3600))  # past the robots.txt retry
    host = await host_row(db, host_of(local_site))
    assert (host["robots_status"], host["robots_failures"]) == ("ok", 0)
    assert (await frontier_row(db, local_site.url("/a")))["status"] == "fetched"


async def test_timeout_disallows_and_is_never_cached_as_allow_all(
    db: Database, local_site: LocalSite
) -> None:
    release = asyncio.Event()

    async def stall(_request: web.Request) -> web.StreamResponse:
        await release.wait()
        return web.Response(text="User-agent: *\nAllow: /\n")

    local_site.route("/robots.txt", stall)
    await submit(db, local_site.url("/a"))
    try:
        async with fetcher_for(db, timeout_s=0.5) as fetcher:
            await fetcher.run_once()
    finally:
        release.set()
    host = await host_row(db, host_of(local_site))
    assert host["robots_status"] == "disallow_all"
    assert "timed out" in host["robots_error"]
    assert local_site.hits("/a") == []


async def test_redirects_are_followed_up_to_five(db: Database, local_site: LocalSite) -> None:
    local_site.redirect("/robots.txt", "/r1")
    for i in range(1, 5):
        local_site.redirect(f"/r{i}", f"/r{i + 1}")
    local_site.serve("/r5", "User-agent: *\nDisallow: /blocked\n", content_type="text/plain")
    await submit(db, local_site.url("/blocked"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    assert (await host_row(db, host_of(local_site)))["robots_status"] == "ok"
    assert (await frontier_row(db, local_site.url("/blocked")))["dead_reason"] == "robots_blocked"


async def test_more_than_five_redirects_is_unavailable(db: Database, local_site: LocalSite) -> None:
    local_site.redirect("/robots.txt", "/r1")
    for i in range(1, 8):
        local_site.redirect(f"/r{i}", f"/r{i + 1}")
    await submit(db, local_site.url("/a"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    assert (await host_row(db, host_of(local_site)))["robots_status"] == "allow_all"


async def test_large_robots_is_parsed_to_500_kib(db: Database, local_site: LocalSite) -> None:
    filler = "# " + "x" * 100 + "\n"
    body = "User-agent: *\n" + filler * 4500 + "Disallow: /late\n"  # rule at ~460 KiB
    assert 450_000 < len(body) < 500_000
    local_site.serve("/robots.txt", body + filler * 5000, content_type="text/plain")
    await submit(db, local_site.url("/late"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    assert (await frontier_row(db, local_site.url("/late")))["dead_reason"] == "robots_blocked"

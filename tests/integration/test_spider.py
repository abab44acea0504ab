"""The discovery spider end to end: a real Scrapy crawl (in a child process, as the CLI runs
it) against local sites on 127.0.0.1/2/3, submitting to a real PostgreSQL."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from frontier.db import Database
from frontier.fetch_log import FetchLogRepository
from frontier.settings import Settings
from frontier.sources import SourceRepository
from frontier.states import FetchKind, IngestionMode
from spider.service import configure, crawl_in_child, due_sources, job_for
from spider.state import SpiderRepository
from tests.local_site import LocalSite, running_site

DATED = r"/\d{4}/\d{2}/\d{2}/"


def html(*links: str, extra: str = "") -> str:
    anchors = "".join(f'<a href="{href}">link</a>\n' for href in links)
    return f"<html><head><title>t</title>{extra}</head><body>{anchors}</body></html>"


class Pages:
    """Listing pages with ETags: a matching If-None-Match gets a 304 (counted)."""

    def __init__(self, site: LocalSite) -> None:
        self.site = site
        self.not_modified: Counter[str] = Counter()

    def page(self, path: str, body: str, etag: str | None = None) -> None:
        async def handler(request: web.Request) -> web.StreamResponse:
            if etag and request.headers.get("If-None-Match") == etag:
                self.not_modified[path] += 1
                return web.Response(status=304, headers={"ETag": etag})
            headers = {"ETag": etag} if etag else {}
            return web.Response(text=body, content_type="text/html", headers=headers)

        self.site.route(path, handler)


@pytest.fixture
async def other_site() -> AsyncIterator[LocalSite]:
    async with running_site("127.0.0.3") as site:
        yield site


def build_news_site(site: LocalSite, partner: LocalSite, other: LocalSite) -> Pages:
    pages = Pages(site)
    site.serve("/robots.txt", "User-agent: *\nDisallow: /members/\n", content_type="text/plain")
    pages.page(
        "/",
        html(
            "/2024/01/01/alpha",
            "/2024/01/01/alpha#comments",
            "/section/world",
            "/members/",
            "/old-section",
            "/missing",
            "/page/2",
            "/static/logo.png",
            "mailto:desk@example.com",
            partner.url("/2024/05/05/partner-story"),
            partner.url("/about"),
            other.url("/2024/06/06/other-story"),
            other.url("/"),
        ),
        etag='"home-1"',
    )
    pages.page("/page/2", html("/2024/01/02/beta", "/page/3", "/"), etag='"p2-1"')
    pages.page("/page/3", html("/2024/01/03/gamma", "/page/2"))  # no validators
    pages.page("/section/world", html("/2024/02/01/delta", "/"), etag='"world-1"')
    pages.page("/section/tech", html("/2024/02/02/epsilon"), etag='"tech-1"')
    pages.page("/members/", html("/2024/03/03/secret"), etag='"m-1"')
    site.redirect("/old-section", site.url("/section/tech"))
    return pages


async def frontier_rows(db: Database) -> set[tuple[str, int, str, str, str | None, int]]:
    records = await db.fetch(
        "SELECT u.url, u.depth, u.origin, s.name, u.parent_url, u.priority "
        "FROM url_frontier u LEFT JOIN sources s ON s.id = u.source_id"
    )
    return {tuple(r) for r in records}  # type: ignore[misc]


async def add_sources(db: Database, site: LocalSite, partner: LocalSite) -> None:
    repo = SourceRepository(db)
    await repo.add(
        "news",
        base_url=site.url("/"),
        mode=IngestionMode.SPIDER,
        rate_limit_ms=0,
        priority=6,
        article_patterns=[DATED],
    )
    await repo.add(
        "partner",
        base_url=partner.url("/"),
        feed_url=partner.url("/feed.xml"),
        priority=5,
        article_patterns=[DATED],
    )


async def add_spider_source(db: Database, name: str, base_url: str) -> None:
    """A spider source with the dated-article pattern and no rate limit."""
    await SourceRepository(db).add(
        name,
        base_url=base_url,
        rate_limit_ms=0,
        mode=IngestionMode.SPIDER,
        article_patterns=[DATED],
    )


async def test_crawl_submits_exactly_the_article_urls_and_a_second_run_nothing_new(
    db: Database,
    settings: Settings,
    fresh_dsn: str,
    local_site: LocalSite,
    partner_site: LocalSite,
    other_site: LocalSite,
) -> None:
    pages = build_news_site(local_site, partner_site, other_site)
    await add_sources(db, local_site, partner_site)
    # Batches of 2: most writes happen in the background during the crawl, the rest on close.
    small_batches = settings.model_copy(update={"spider_batch_size": 2})
    job = job_for(small_batches, fresh_dsn, "news", max_depth=2)

    first = await crawl_in_child(job)

    u = local_site.url
    assert await frontier_rows(db) == {
        (u("/2024/01/01/alpha"), 1, "spider", "news", u("/"), 5),
        (u("/2024/01/02/beta"), 2, "spider", "news", u("/page/2"), 4),
        (u("/2024/01/03/gamma"), 3, "spider", "news", u("/page/3"), 3),
        (u("/2024/02/01/delta"), 2, "spider", "news", u("/section/world"), 4),
        (u("/2024/02/02/epsilon"), 2, "spider", "news", u("/section/tech"), 4),
        (partner_site.url("/2024/05/05/partner-story"), 1, "spider", "partner", u("/"), 4),
    }
    summary = first.summary
    # The 404 is a dead link of the site, counted; the crawl went through (issue 14, item 9).
    assert first.exit_code == 0, summary
    assert summary.pages_crawled == 6  # /, /page/2, /page/3, world, old-section, missing
    assert summary.articles_found == 6 and summary.new_urls == 6
    assert summary.external_links == 3  # partner /about, other story, other home
    assert summary.known_source_links == 1
    assert summary.robots_blocked == 1 and summary.errors == 1
    assert summary.http_statuses == {"404": 1}
    assert summary.classification == "patterns"
    assert not local_site.hits("/members/")  # robots.txt disallows it
    assert not partner_site.requests and not other_site.requests  # never crawled
    log = await FetchLogRepository(db).recent(kind=FetchKind.SPIDER)
    assert [(e["outcome"], e["items_seen"], e["items_new"]) for e in log] == [("ok", 6, 6)]
    # the run's last error is its cause, then the URL (issue 16: it read "1 errors")
    assert summary.last_error == f"HTTP 404 ({u('/missing')})"
    assert log[0]["error"] == summary.last_error

    second = await crawl_in_child(job)

    assert second.summary.new_urls == 0, second.summary
    assert len(await frontier_rows(db)) == 6
    # Pages with an ETag answered 304 (tech through the redirect); page 3 was refetched
    # and found unchanged.
    assert set(pages.not_modified) == {"/", "/page/2", "/section/world", "/section/tech"}
    assert second.summary.pages_unchanged == 5
    assert len(local_site.hits("/page/3")) == 2


async def test_external_links_go_to_discovered_only_when_allowed(
    db: Database,
    settings: Settings,
    fresh_dsn: str,
    local_site: LocalSite,
    partner_site: LocalSite,
    other_site: LocalSite,
) -> None:
    build_news_site(local_site, partner_site, other_site)
    await add_sources(db, local_site, partner_site)
    await configure(db, "news", allow_external=True)

    result = await crawl_in_child(job_for(settings, fresh_dsn, "news", max_depth=0))

    rows = await frontier_rows(db)
    story = other_site.url("/2024/06/06/other-story")
    assert (story, 1, "spider", "discovered", local_site.url("/"), 1) in rows
    assert other_site.url("/") not in {row[0] for row in rows}  # not an article
    assert result.summary.external_queued == 1
    assert result.summary.pages_crawled == 1  # depth 0: the start page only


async def test_ssrf_guard_refuses_loopback_unless_private_networks_are_allowed(
    db: Database,
    settings: Settings,
    fresh_dsn: str,
    local_site: LocalSite,
    partner_site: LocalSite,
    other_site: LocalSite,
) -> None:
    build_news_site(local_site, partner_site, other_site)
    await add_sources(db, local_site, partner_site)
    guarded = settings.model_copy(update={"allow_private_networks": False})

    result = await crawl_in_child(job_for(guarded, fresh_dsn, "news"))

    assert result.summary.blocked >= 1 and result.summary.pages_crawled == 0
    assert result.exit_code == 1
    # A name resolving to loopback is refused by the resolver, before any connection.
    await SourceRepository(db).add(
        "by-name",
        base_url=f"http://localhost:{local_site.port}/",
        mode=IngestionMode.SPIDER,
        rate_limit_ms=0,
    )
    by_name = await crawl_in_child(job_for(guarded, fresh_dsn, "by-name"))
    assert by_name.summary.blocked >= 1 and by_name.summary.pages_crawled == 0
    assert local_site.requests == []  # not even robots.txt
    assert await frontier_rows(db) == set()


async def test_heuristic_classification_and_og_type_article(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    local_site.serve(
        "/",
        html(
            "/tag/politics",
            "/news/a-long-story-about-the-city-council",
            "/12345-short-title",
            "/about",
            "/logo.svg",
        ),
    )
    local_site.serve("/tag/politics", html("/2023/11/elections-today"))
    local_site.serve("/about", html(), content_type="text/plain")
    local_site.serve("/12345-short-title", "")
    await SourceRepository(db).add(
        "blog", base_url=local_site.url("/"), rate_limit_ms=0, mode=IngestionMode.SPIDER
    )
    # An og:type=article page the URL heuristic cannot tell: found on a listing page.
    local_site.serve("/tag/politics", html("/2023/11/elections-today", "/weekly", "/tag/economy"))
    local_site.serve("/weekly", html(extra='<meta property="og:type" content="article">'))

    result = await crawl_in_child(job_for(settings, fresh_dsn, "blog", max_depth=2))

    u = local_site.url
    assert {(row[0], row[1]) for row in await frontier_rows(db)} == {
        (u("/news/a-long-story-about-the-city-council"), 1),
        (u("/12345-short-title"), 1),
        (u("/2023/11/elections-today"), 2),
        (u("/weekly"), 2),
    }
    assert result.summary.classification == "heuristic"
    assert result.summary.pages_not_html == 1  # /about is text/plain


async def test_a_nofollow_page_has_none_of_its_links_followed(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite
) -> None:
    """Google's robots meta tag spec: `nofollow` (or `none`), in the robots meta tag or the
    X-Robots-Tag header, for every crawler or for ours, means its links are not followed;
    a rule for another crawler changes nothing."""
    token = settings.user_agent.split("/", 1)[0]
    local_site.serve("/robots.txt", "", status=404)
    sections = ["/meta", "/header", "/ours", "/none", "/googlebot", "/other-header"]
    local_site.serve("/", html("/2024/01/01/home-story", *sections))
    local_site.serve(
        "/meta", html("/2024/01/02/a", extra='<meta name="robots" content="nofollow">')
    )
    local_site.serve("/header", html("/2024/01/03/b"), headers={"X-Robots-Tag": "nofollow"})
    local_site.serve("/ours", html("/2024/01/04/c", extra=f'<meta name="{token}" content="none">'))
    local_site.serve("/none", html("/2024/01/05/d"), headers={"X-Robots-Tag": f"{token}: none"})
    local_site.serve(
        "/googlebot", html("/2024/01/06/e", extra='<meta name="googlebot" content="nofollow">')
    )
    local_site.serve(
        "/other-header", html("/2024/01/07/f"), headers={"X-Robots-Tag": "otherbot: nofollow"}
    )
    await add_spider_source(db, "sections", local_site.url("/"))

    result = await crawl_in_child(job_for(settings, fresh_dsn, "sections", max_depth=2))

    u = local_site.url
    assert {row[0] for row in await frontier_rows(db)} == {
        u("/2024/01/01/home-story"),
        u("/2024/01/06/e"),
        u("/2024/01/07/f"),
    }
    assert result.summary.pages_nofollow == 4 and result.summary.pages_crawled == 7


async def test_due_sources_are_claimed_once_per_interval(
    db: Database, local_site: LocalSite
) -> None:
    repo = SourceRepository(db)
    await repo.add("a", base_url=local_site.url("/"), mode=IngestionMode.SPIDER)
    await repo.add("b", base_url=local_site.url("/b"), mode=IngestionMode.BOTH)
    await repo.add("feed-only", feed_url=local_site.url("/feed"), mode=IngestionMode.FEED)
    await configure(db, "b", interval_hours=1)

    assert sorted(await due_sources(db)) == ["a", "b"]
    assert await due_sources(db) == []  # claimed: the next run is an interval away
    source = await repo.get("b")
    options = await SpiderRepository(db).options(source.id)
    assert options.interval_minutes == 60 and options.next_run_at is not None
    never = await SpiderRepository(db).options((await repo.get("feed-only")).id)
    assert never.next_run_at is None and never.interval_minutes == 24 * 60


async def test_a_dropped_database_connection_mid_crawl_is_ridden_out(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite
) -> None:
    """The crawl's database connections are terminated while it is on a listing page: the
    pool replaces them and every write goes through; nothing is lost. (A database still
    down at write time is retried by `FrontierPipeline._write_patiently`.)"""
    arrived, release = asyncio.Event(), asyncio.Event()

    async def held_listing(_request: web.Request) -> web.StreamResponse:
        arrived.set()
        await release.wait()
        return web.Response(text=html("/2024/02/02/held-story"), content_type="text/html")

    local_site.serve("/robots.txt", "", status=404)
    local_site.serve("/", html("/2024/01/01/first-story", "/page/2"))
    local_site.route("/page/2", held_listing)
    await SourceRepository(db).add(
        "news",
        base_url=local_site.url("/"),
        rate_limit_ms=0,
        mode=IngestionMode.SPIDER,
        article_patterns=[DATED],
    )
    name = "spider-under-test"
    dsn = f"{fresh_dsn}{'&' if '?' in fresh_dsn else '?'}application_name={name}"
    crawl = asyncio.create_task(crawl_in_child(job_for(settings, dsn, "news")))
    try:
        await asyncio.wait_for(arrived.wait(), 60)
        terminated = await db.fetchval(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = $1",
            name,
        )
        assert terminated >= 1
    finally:
        release.set()
    result = await asyncio.wait_for(crawl, 120)

    assert result.exit_code == 0, result.summary
    assert result.summary.submit_errors == 0
    assert {row[0] for row in await frontier_rows(db)} == {
        local_site.url("/2024/01/01/first-story"),
        local_site.url("/2024/02/02/held-story"),
    }


async def _abort(request: web.Request) -> web.Response:
    assert request.transport is not None
    request.transport.close()  # no answer at all: "unreachable"
    raise ConnectionResetError


@pytest.mark.parametrize("robots", ["503", "unreachable"])
async def test_robots_5xx_or_unreachable_disallows_the_whole_site(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite, robots: str
) -> None:
    # Issue 19, item 8 (RFC 9309): Scrapy's own middleware allowed everything here.
    if robots == "503":
        local_site.serve("/robots.txt", "down for maintenance", status=503)
    else:
        local_site.route("/robots.txt", _abort)
    local_site.serve("/", html("/2024/01/01/alpha"))
    await add_spider_source(db, "down", local_site.url("/"))

    result = await crawl_in_child(job_for(settings, fresh_dsn, "down", max_depth=1))

    assert local_site.hits("/robots.txt") and not local_site.hits("/"), local_site.requests
    assert result.summary.pages_crawled == 0 and result.summary.robots_blocked >= 1
    assert await frontier_rows(db) == set()


async def test_a_huge_robots_txt_is_read_to_512_kib_and_its_rules_apply(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite
) -> None:
    # A 3 MB robots.txt whose Disallow sits at ~460 KiB; the page cap (64 KiB) is far below.
    filler = "# " + "x" * 97 + "\n"
    robots = "User-agent: *\n" + filler * 4800 + "Disallow: /late/\n" + filler * 26000
    assert 460 * 1024 < robots.index("Disallow") < 500 * 1024 and len(robots) > 3_000_000
    local_site.serve("/robots.txt", robots, content_type="text/plain")
    local_site.serve("/", html("/late/section", "/open-section"))
    local_site.serve("/late/section", html("/2024/01/01/hidden"))
    local_site.serve("/open-section", html("/2024/01/01/open"))
    await SourceRepository(db).add(
        "big",
        base_url=local_site.url("/"),
        rate_limit_ms=0,
        mode=IngestionMode.SPIDER,
        article_patterns=[DATED],
    )
    small_pages = settings.model_copy(update={"spider_max_body_bytes": 64 * 1024})

    result = await crawl_in_child(job_for(small_pages, fresh_dsn, "big", max_depth=2))

    assert local_site.hits("/open-section") and not local_site.hits("/late/section")
    assert {row[0] for row in await frontier_rows(db)} == {local_site.url("/2024/01/01/open")}
    assert result.summary.robots_blocked == 1

"""The CMS zoo, redirects and cookies (tests/zoo/redirects.py): identity versus request
spelling, same-identity redirects followed inline, per-chain cookies and meta refreshes.

Each test checks, at the server and in the database: the article is stored with its real
text, once, at no more requests than a browser makes, and nothing a browser shows ends
`dead`."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest
from aiohttp import web

from frontier.db import Database
from frontier.imports import Line, import_lines
from frontier.queue import QueueRepository
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings
from frontier.sources import SourceRepository
from frontier.states import IngestionMode
from frontier.urls import normalize_url, url_hash
from poller.policy import PollPolicy
from poller.scheduler import Poller
from spider.service import crawl_in_child, job_for
from tests.fetch_harness import UA, fetcher_for, frontier_row, manual_ref, submit
from tests.local_site import LocalSite, running_site
from tests.zoo import redirects as zoo

Installer = Callable[[LocalSite, Iterable[str]], object]


async def drain(db: Database) -> int:
    """Run the fetcher until nothing is claimable now; returns the URLs claimed."""
    claimed = 0
    async with fetcher_for(db) as fetcher:
        while (batch := await fetcher.run_once()).claimed:
            claimed += batch.claimed
    return claimed


def page_hits(site: LocalSite, path: str) -> int:
    """Requests for `path` in any spelling (slash or not, any query)."""
    bare = path.rstrip("/")
    return sum(1 for seen in site.requests if seen.path.split("?")[0].rstrip("/") == bare)


async def assert_stored_once(db: Database, url: str, path: str) -> dict[str, object]:
    row = await frontier_row(db, url)
    assert (row["status"], row["dead_reason"]) == ("fetched", None), row["last_error"]
    docs = await db.fetch(
        "SELECT title, body FROM raw_content WHERE url_hash = $1", row["url_hash"]
    )
    assert len(docs) == 1
    assert docs[0]["title"] == zoo.title_of(path)
    assert "paragraph 3" in docs[0]["body"]
    return row


async def make_due_again(db: Database) -> None:
    """A revisit: every fetched row pending and due now, its host's summary to match."""
    await db.execute(
        "UPDATE url_frontier SET status = 'pending', next_fetch_at = now() WHERE status = 'fetched'"
    )
    await db.execute(
        "UPDATE host_state h SET pending_count = s.n, pending_priority = s.p, "
        "pending_due_at = now() FROM (SELECT host, count(*) AS n, max(priority) AS p "
        "FROM url_frontier WHERE status = 'pending' GROUP BY host) s WHERE h.host = s.host"
    )


# (installer, the spelling a feed or a link gives, the path the site serves)
CMS_SLASH_CASES = [
    pytest.param(zoo.install_wordpress, "/2026/01/budget-vote/", "/2026/01/budget-vote/", id="wp"),
    pytest.param(
        zoo.install_wordpress, "/2026/01/budget-vote", "/2026/01/budget-vote/", id="wp-bare"
    ),
    pytest.param(zoo.install_django_append_slash, "/news/budget", "/news/budget/", id="django"),
    pytest.param(zoo.install_ghost, "/budget-vote", "/budget-vote/", id="ghost"),
    pytest.param(zoo.install_drupal, "/node/budget/", "/node/budget", id="drupal"),
    pytest.param(zoo.install_rails, "/articles/budget/", "/articles/budget", id="rails"),
    pytest.param(zoo.install_meta_refresh, "/old/budget", "/old/budget/", id="meta-refresh"),
]


@pytest.mark.parametrize(("install", "linked", "served"), CMS_SLASH_CASES)
async def test_a_cms_slash_convention_costs_a_browser_s_requests_then_one(
    db: Database, local_site: LocalSite, install: Installer, linked: str, served: str
) -> None:
    install(local_site, [served])
    await submit(db, local_site.url(linked))
    assert await drain(db) == 1
    first = page_hits(local_site, served)
    # A browser asks for the linked spelling, then follows the site's redirect, if any.
    assert first == (1 if linked == served or install is zoo.install_rails else 2)
    row = await assert_stored_once(db, local_site.url(linked), served)
    if install is not zoo.install_rails:
        assert row["fetch_url"] in (None, local_site.url(served))
        assert (row["fetch_url"] or row["url"]) == local_site.url(served)

    await make_due_again(db)
    assert await drain(db) == 1
    assert page_hits(local_site, served) == first + 1  # the revisit goes straight there
    await assert_stored_once(db, local_site.url(linked), served)


async def test_every_article_of_a_slash_flipping_site_costs_two_requests_then_one(
    db: Database, local_site: LocalSite, partner_site: LocalSite
) -> None:
    """DONE-WHEN of issue 14: a site that redirects every article between slash spellings
    (WordPress adds the slash, Drupal removes it; feeds and links use the other one)."""
    wordpress = [f"/2026/02/story-{i}/" for i in range(4)]
    drupal = [f"/node/story-{i}" for i in range(4)]
    zoo.install_wordpress(local_site, wordpress)
    zoo.install_drupal(partner_site, drupal)
    linked = [local_site.url(p.rstrip("/")) for p in wordpress]
    linked += [partner_site.url(p + "/") for p in drupal]
    await submit(db, *linked)
    assert await drain(db) == 8
    sites = [(local_site, p) for p in wordpress] + [(partner_site, p) for p in drupal]
    assert [page_hits(s, p) for s, p in sites] == [2] * 8
    for (_site, path), url in zip(sites, linked, strict=True):
        await assert_stored_once(db, url, path)

    await make_due_again(db)
    assert await drain(db) == 8
    assert [page_hits(s, p) for s, p in sites] == [3] * 8  # one request per revisit
    assert await db.fetchval("SELECT count(*) FROM url_frontier WHERE status = 'dead'") == 0
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 8


async def test_a_tracking_parameter_stripped_by_a_301_is_followed_inline(
    db: Database, local_site: LocalSite
) -> None:
    zoo.install_utm_stripper(local_site, ["/world/summit"])
    linked = local_site.url("/world/summit?utm_source=rss&utm_medium=feed")
    await submit(db, linked)
    await drain(db)
    assert [s.path for s in local_site.requests if s.path != "/robots.txt"] == [
        "/world/summit?utm_source=rss&utm_medium=feed",
        "/world/summit",
    ]
    row = await assert_stored_once(db, linked, "/world/summit")
    assert row["url"] == local_site.url("/world/summit")
    assert row["fetch_url"] is None  # the server's spelling is the identity itself


async def test_a_redirect_spelling_the_host_in_capitals_is_followed_inline(
    db: Database, local_site: LocalSite
) -> None:
    zoo.install_apache_server_name(local_site, ["/docs/story/"], "LocalHost")
    linked = f"http://localhost:{local_site.port}/docs/story"
    await submit(db, linked)
    await drain(db)
    assert [s.path for s in local_site.requests if s.path != "/robots.txt"] == [
        "/docs/story",
        "/docs/story/",
    ]
    row = await assert_stored_once(db, linked, "/docs/story/")
    assert row["fetch_url"] == f"http://localhost:{local_site.port}/docs/story/"


@pytest.mark.parametrize("install", [zoo.install_consent_wall, zoo.install_session_wall])
async def test_a_cookie_wall_redirecting_to_the_same_url_is_passed_as_a_browser_does(
    db: Database, local_site: LocalSite, install: Installer
) -> None:
    install(local_site, ["/politics/vote"])
    await submit(db, local_site.url("/politics/vote"))
    await drain(db)
    hits = local_site.hits("/politics/vote")
    assert len(hits) == 2
    assert "Cookie" not in hits[0].headers and hits[1].headers.get("Cookie")
    await assert_stored_once(db, local_site.url("/politics/vote"), "/politics/vote")

    await make_due_again(db)
    await drain(db)
    # The jar was dropped with the chain: the revisit meets the wall again, as a new
    # browser session would, and passes it again.
    hits = local_site.hits("/politics/vote")
    assert len(hits) == 4 and "Cookie" not in hits[2].headers
    await assert_stored_once(db, local_site.url("/politics/vote"), "/politics/vote")


async def test_cookies_of_one_chain_go_to_no_other_fetch(
    db: Database, local_site: LocalSite
) -> None:
    zoo.install_consent_wall(local_site, ["/a"])
    zoo.install_wordpress(local_site, ["/b/"])
    await submit(db, local_site.url("/a"))
    await drain(db)
    await submit(db, local_site.url("/b"))
    await drain(db)
    assert local_site.hits("/a")[-1].headers.get("Cookie") == "euconsent=granted"
    assert [s.headers.get("Cookie") for s in local_site.requests if s.path.startswith("/b")] == [
        None,
        None,
    ]


async def test_a_chain_sends_its_cookies_to_no_other_host(local_site: LocalSite) -> None:
    """Within one chain (the poller follows every redirect), a cookie reaches the later
    hops on its own host only; one that names another host's domain is refused."""
    async with running_site("127.0.0.3") as other:
        other.serve("/feed", "<rss/>", content_type="application/rss+xml")

        async def start(_request: web.Request) -> web.Response:
            response = zoo._moved("/next", 302)
            response.set_cookie("mine", "1", path="/")
            response.set_cookie("theirs", "1", domain="127.0.0.3", path="/")
            return response

        local_site.route("/start", start)
        local_site.route("/next", lambda _r: zoo._absolute(other, "/feed", 302))
        async with SafeClient(HttpLimits(UA, allow_private_networks=True)) as client:
            response = await client.get(local_site.url("/start"))
            again = await client.get(local_site.url("/next"), follow_redirects=False)
        assert response.status == 200 and len(response.history) == 2
        assert local_site.hits("/next")[0].headers.get("Cookie") == "mine=1"
        assert "Cookie" not in other.requests[0].headers
        assert again.status == 302 and "Cookie" not in local_site.hits("/next")[1].headers


async def test_a_redirect_to_another_identity_still_goes_through_the_frontier(
    db: Database, local_site: LocalSite
) -> None:
    zoo.install_wordpress(local_site, ["/2026/03/renamed-story/"])
    local_site.route("/2026/03/first-title/", lambda _r: zoo._relative("/2026/03/renamed-story/"))
    await submit(db, local_site.url("/2026/03/first-title/"))
    await drain(db)
    old = await frontier_row(db, local_site.url("/2026/03/first-title/"))
    assert (old["status"], old["dead_reason"]) == ("dead", "redirect")
    await assert_stored_once(
        db, local_site.url("/2026/03/renamed-story/"), "/2026/03/renamed-story/"
    )
    target = await frontier_row(db, local_site.url("/2026/03/renamed-story/"))
    assert target["fetch_url"] == local_site.url(
        "/2026/03/renamed-story/"
    )  # as the server spelt it
    assert page_hits(local_site, "/2026/03/renamed-story/") == 1


async def test_a_meta_refresh_to_another_identity_is_a_redirect(
    db: Database, local_site: LocalSite
) -> None:
    zoo.install_ghost(local_site, ["/moved-here/"])
    local_site.serve("/old-home", zoo.meta_refresh_page("/moved-here/", quote=""))
    await submit(db, local_site.url("/old-home"))
    await drain(db)
    old = await frontier_row(db, local_site.url("/old-home"))
    assert (old["status"], old["dead_reason"]) == ("dead", "redirect")
    assert old["final_url"] == normalize_url(local_site.url("/moved-here/"))
    await assert_stored_once(db, local_site.url("/moved-here/"), "/moved-here/")
    assert page_hits(local_site, "/moved-here") == 1


async def test_a_same_identity_loop_is_retried_with_a_clear_error(
    db: Database, local_site: LocalSite
) -> None:
    zoo.install_slash_loop(local_site, "/a")
    await submit(db, local_site.url("/a"))
    await drain(db)
    row = await frontier_row(db, local_site.url("/a"))
    assert (row["status"], row["retry_count"]) == ("pending", 1)
    assert "more than 5 redirects" in row["last_error"]
    assert "/a/ -> " in row["last_error"]
    assert page_hits(local_site, "/a") == 6  # the first request and five hops, no more
    assert row["url_hash"] == url_hash(normalize_url(local_site.url("/a")))


# -- every submit path stores the spelling it found ---------------------------------------


async def fetch_urls(db: Database) -> dict[str, str | None]:
    rows = await db.fetch("SELECT url, fetch_url FROM url_frontier WHERE origin <> 'manual'")
    return {r["url"]: r["fetch_url"] for r in rows}


async def test_the_feed_and_sitemap_poller_submit_the_spelling_they_found(
    db: Database, local_site: LocalSite
) -> None:
    zoo.install_wordpress(local_site, ["/2026/04/feed-story/", "/2026/04/map-story/"])
    item = "<item><title>t</title><link>/2026/04/feed-story/?utm_source=rss#more</link></item>"
    local_site.serve(
        "/feed/",
        f"<rss version='2.0'><channel><title>s</title>{item}</channel></rss>",
        content_type="application/rss+xml",
    )
    local_site.serve(
        "/sitemap.xml",
        "<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
        f"<url><loc>{local_site.url('/2026/04/map-story/')}</loc></url></urlset>",
        content_type="application/xml",
    )
    await SourceRepository(db).add(
        "wp",
        feed_url=local_site.url("/feed/"),
        sitemap_url=local_site.url("/sitemap.xml"),
        rate_limit_ms=0,
    )
    async with SafeClient(HttpLimits(UA, allow_private_networks=True)) as client:
        await Poller(db, client, PollPolicy(concurrency=2, per_host=2, lease_s=60)).run_once()
    u = local_site.url
    assert await fetch_urls(db) == {
        u("/2026/04/feed-story"): u("/2026/04/feed-story/?utm_source=rss"),
        u("/2026/04/map-story"): u("/2026/04/map-story/"),
    }
    assert await drain(db) == 2
    assert page_hits(local_site, "/2026/04/feed-story/") == 1  # no redirect to pay
    await assert_stored_once(db, u("/2026/04/map-story/"), "/2026/04/map-story/")


async def test_an_import_keeps_each_line_s_spelling_and_a_known_url_keeps_its_own(
    db: Database, local_site: LocalSite
) -> None:
    ref = await manual_ref(db)
    queue = QueueRepository(db)
    summary = await import_lines(
        queue,
        iter([Line(1, local_site.url("/a/?b=2&a=1#x")), Line(2, "http://127.0.0.2:9/c")]),
        ref,
    )
    assert (summary.accepted, summary.rejected) == (2, 0)
    await import_lines(queue, iter([Line(1, local_site.url("/a?a=1&b=2&utm_medium=x"))]), ref)
    rows = {r["url"]: r["fetch_url"] for r in await db.fetch("SELECT * FROM url_frontier")}
    assert rows == {
        local_site.url("/a?a=1&b=2"): local_site.url("/a/?b=2&a=1"),
        "http://127.0.0.2:9/c": None,  # the same as its identity
    }
    claims = await queue.claim("w", 10)
    assert {c.fetch_url for c in claims} == {
        local_site.url("/a/?b=2&a=1"),
        "http://127.0.0.2:9/c",
    }


async def test_the_spider_submits_links_as_the_page_spelt_them(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite
) -> None:
    zoo.install_wordpress(local_site, ["/2024/01/01/alpha/"])
    local_site.serve(
        "/", "<html><body><a href='/2024/01/01/alpha/'>a</a><a href='/about/'>b</a></body></html>"
    )
    await SourceRepository(db).add(
        "wp",
        base_url=local_site.url("/"),
        mode=IngestionMode.SPIDER,
        rate_limit_ms=0,
        article_patterns=[r"/\d{4}/\d{2}/\d{2}/"],
    )
    await crawl_in_child(job_for(settings, fresh_dsn, "wp", max_depth=1))
    assert await fetch_urls(db) == {
        local_site.url("/2024/01/01/alpha"): local_site.url("/2024/01/01/alpha/")
    }
    assert await drain(db) == 1
    assert page_hits(local_site, "/2024/01/01/alpha/") == 1

"""Is this the article? End to end, against the zoo's sites (tests/zoo/walls.py,
tests/zoo/not_articles.py) and a real PostgreSQL, over a pinned clock: a challenge of any
vendor, a login wall reached by redirect, `noindex`, a soft 404 and an empty page are never
stored; each ends with its own reason after the requests a browser would have made; an
article is stored once; and a challenged article is stored once the wall lifts, never
`dead`. Requests are counted at the server; documents in `raw_content`."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from frontier.api.app import create_app
from frontier.api.metrics import read_snapshot
from frontier.db import Database
from frontier.settings import Settings
from frontier.stats import StatsRepository
from frontier.why_waiting import why_url_waits
from tests.browser import serving
from tests.fetch_harness import UA, article, fetcher_for, frontier_row, host_row, submit
from tests.integration.test_zoo_walls import pages, run_over, start
from tests.local_site import LocalSite
from tests.zoo import not_articles, walls

STORIES = [f"/2026/11/27/story-{i}" for i in range(3)]
TOKEN = UA.split("/", 1)[0]  # our product token, as the robots rules name us


async def documents(db: Database) -> list[str]:
    return [r["url"] for r in await db.fetch("SELECT url FROM raw_content ORDER BY url")]


@pytest.mark.parametrize(
    ("page", "status", "headers"),
    [
        (walls.CLOUDFLARE_CHALLENGE.format(host="news"), 403, {"cf-mitigated": "challenge"}),
        (walls.CLOUDFLARE_CHALLENGE.format(host="news"), 200, {}),
        ("<html><body><noscript>JavaScript is disabled</noscript></body></html>", 202,
         {"x-amzn-waf-action": "challenge"}),
        (walls.DATADOME_BLOCK, 403, {"X-DataDome": "protected"}),
        (walls.IMPERVA_CHALLENGE, 200, {}),
        (walls.PERIMETERX_BLOCK, 403, {}),
        (walls.SUCURI_CHALLENGE, 200, {"Server": "Sucuri/Cloudproxy"}),
        (walls.AKAMAI_CRYPTO_CHALLENGE, 200, {}),
        ("<html><title>One moment</title><body>Enable JavaScript and cookies to continue"
         "</body></html>", 503, {}),
    ],
    ids=["cloudflare-403", "cloudflare-200", "aws-waf-202", "datadome-403", "imperva-200",
         "perimeterx-403", "sucuri-200", "akamai-200", "generic-503"],
)  # fmt: skip
async def test_a_challenge_is_never_stored_backs_the_host_off_and_lifts(
    db: Database, local_site: LocalSite, page: str, status: int, headers: dict[str, str]
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    walls.interstitial(local_site, STORIES, page, status=status, headers=headers)
    await submit(db, *(local_site.url(p) for p in STORIES))
    t0 = start()
    async with fetcher_for(db, max_retries=6) as fetcher:
        await run_over(fetcher, t0, 3600, 120)
        walled = pages(local_site)
        assert 1 <= len(walled) <= 5, walled  # a wall for the host, like a 403
        assert await documents(db) == []
        host = await host_row(db, f"{local_site.address}:{local_site.port}")
        assert host["backoff_until"] is not None and host["backoff_until"] > t0
        for path in STORIES:
            row = await frontier_row(db, local_site.url(path))
            assert row["status"] == "pending" and row["dead_reason"] is None, row
            if path in walled:
                assert "challenge page:" in row["last_error"], row["last_error"]
        # The wall lifts: every article is stored, once.
        for i, path in enumerate(STORIES):
            local_site.serve(path, article(f"Story {i}", word=f"word{i}"))
        await run_over(fetcher, t0 + timedelta(seconds=3720), 3 * 86_400, 900)
    assert await documents(db) == sorted(local_site.url(p) for p in STORIES)
    for path in STORIES:
        assert (await frontier_row(db, local_site.url(path)))["status"] == "fetched"
        assert len(local_site.hits(path)) == walled.count(path) + 1


async def test_a_challenge_that_never_lifts_ends_failed_not_dead(
    db: Database, local_site: LocalSite
) -> None:
    walls.interstitial(local_site, STORIES[:1], walls.PERIMETERX_BLOCK, status=403)
    url = local_site.url(STORIES[0])
    await submit(db, url)
    t0 = start()
    async with fetcher_for(db, max_retries=2) as fetcher:
        await run_over(fetcher, t0, 7 * 86_400, 1800)
    row = await frontier_row(db, url)
    assert (row["status"], row["dead_reason"], row["retry_count"]) == ("failed", None, 3)
    assert len(pages(local_site)) == 3 and await documents(db) == []
    why = why_url_waits(row, None, now=t0)
    assert "challenge page" in why.sentence and "frontier urls requeue" in why.sentence


async def test_an_article_redirecting_to_a_login_page_ends_without_queueing_it(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    for i, path in enumerate(STORIES[:2]):
        local_site.serve(path, article(f"Open {i}", word=f"open{i}"))
    members = "/2026/11/27/members-only-scoop"
    walls.login_redirect(local_site, members)
    await submit(db, *(local_site.url(p) for p in [*STORIES[:2], members]))
    t0 = start()
    async with fetcher_for(db) as fetcher:
        await run_over(fetcher, t0, 20 * 60, 60)
    assert sorted(pages(local_site)) == sorted([*STORIES[:2], members, members])
    assert not local_site.hits("/wp-login.php")  # neither requested nor queued
    assert await db.fetchval("SELECT count(*) FROM url_frontier") == 3
    row = await frontier_row(db, local_site.url(members))
    assert (row["status"], row["dead_reason"], row["http_status"]) == (
        "dead",
        "login_required",
        302,
    )
    assert "/wp-login.php?redirect_to=" in row["last_error"]
    assert await documents(db) == sorted(local_site.url(p) for p in STORIES[:2])
    host = await host_row(db, f"{local_site.address}:{local_site.port}")
    assert host["backoff_until"] is None
    assert "login or subscription page" in why_url_waits(row, None, now=t0).sentence


NOINDEX = {
    "/header-noindex": ("header", "noindex"),
    "/header-none": ("header", "none"),
    "/header-for-us": ("header", f"{TOKEN}: noindex, nofollow"),
    "/meta-noindex": ("robots", "noindex, follow"),
    "/meta-for-us": (TOKEN, "noindex"),
}
INDEXED = {
    "/header-for-another-bot": ("header", "otherbot: noindex"),
    "/meta-for-googlebot": ("googlebot", "noindex"),
    "/meta-index": ("robots", "index, follow, max-image-preview:large"),
}


async def test_noindex_for_everyone_or_for_us_is_final_and_nothing_is_stored(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    for path, (where, value) in {**NOINDEX, **INDEXED}.items():
        if where == "header":
            not_articles.noindex_header(local_site, path, f"Story {path}", value)
        else:
            not_articles.noindex_meta(local_site, path, f"Story {path}", where, value)
    await submit(db, *(local_site.url(p) for p in [*NOINDEX, *INDEXED]))
    t0 = start()
    async with fetcher_for(db) as fetcher:
        await run_over(fetcher, t0, 20 * 60, 60)
    assert sorted(pages(local_site)) == sorted([*NOINDEX, *INDEXED])  # one request each
    for path in NOINDEX:
        row = await frontier_row(db, local_site.url(path))
        assert (row["status"], row["dead_reason"]) == ("dead", "noindex"), path
        assert "noindex" in row["last_error"]
    assert await documents(db) == sorted(local_site.url(p) for p in INDEXED)
    row = await frontier_row(db, local_site.url("/header-noindex"))
    assert row["last_error"] == "X-Robots-Tag: noindex"
    assert "asks not to be indexed" in why_url_waits(row, None, now=t0).sentence


async def test_soft_404s_and_empty_pages_end_with_their_reasons_counted_and_shown(
    db: Database, local_site: LocalSite, fresh_dsn: str, tmp_path: Path
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    not_articles.soft_404(local_site, "/2026/11/01/removed-story")
    not_articles.empty_page(local_site, "/app/story")
    about = "/2026/11/27/404-not-found-the-error-that-built-the-web"
    local_site.serve(about, article("404 Not Found: the error that built the web"))
    await submit(db, *(local_site.url(p) for p in ["/2026/11/01/removed-story", "/app/story"]))
    await submit(db, local_site.url(about))
    t0 = start()
    async with fetcher_for(db) as fetcher:
        await run_over(fetcher, t0, 30 * 60, 60)
    asked = pages(local_site)
    assert asked.count("/2026/11/01/removed-story") == 2 and asked.count("/app/story") == 2
    assert asked.count(about) == 1
    soft = await frontier_row(db, local_site.url("/2026/11/01/removed-story"))
    assert (soft["status"], soft["dead_reason"]) == ("dead", "soft_404")
    assert soft["last_error"].startswith("soft 404: WordPress's error404 template")
    empty = await frontier_row(db, local_site.url("/app/story"))
    assert (empty["status"], empty["dead_reason"]) == ("failed", None)  # never dead
    assert empty["last_error"] == "no body text"
    assert "had no body text" in why_url_waits(empty, None, now=t0).sentence
    assert "says it was not found" in why_url_waits(soft, None, now=t0).sentence
    assert await documents(db) == [local_site.url(about)]
    # /metrics counts each reason apart; the dashboard's recent failures show them.
    snapshot = await read_snapshot(db)
    assert snapshot.log[("page", "soft_404")] == 2 and snapshot.log[("page", "empty")] == 2
    recent = (await StatsRepository(db).stats(recent_errors=10)).recent_errors
    assert {r["outcome"] for r in recent} == {"soft_404", "empty"}
    settings = Settings.load(database_url=fresh_dsn, home=tmp_path, _env_file=None)
    async with serving(create_app(settings, db)) as base, httpx.AsyncClient() as client:
        page = (await client.get(base + "/")).text
        metrics = (await client.get(base + "/metrics")).text
    failures = page[page.index('data-testid="recent-failures"') :]
    assert "soft_404" in failures and "no body text" in failures
    assert 'frontier_fetches_total{kind="page",outcome="soft_404"} 2.0' in metrics

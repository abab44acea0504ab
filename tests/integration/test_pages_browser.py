"""The dashboard's article, URL, host and source pages in a real headless Chromium (the
harness of test_dashboard.py): reached by the links a person would click, showing what the
database holds, with hostile text from crawled pages shown as text, never run. Each page's
screenshot is saved in the test's directory (the paths are printed)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from frontier.clock import utcnow
from frontier.db import Database
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, Outcome, OutcomeKind, SourceRef
from frontier.sinks import RawDocument
from frontier.sinks.postgres import PostgresSink
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.states import FetchKind, LogOutcome, Origin
from tests.browser import chromium_page, needs_chromium
from tests.integration.test_dashboard import served

__all__ = ["served"]  # the fixture, shared with the overview's test

pytestmark = needs_chromium

HOSTILE_TITLE = '<script>document.title="owned"</script>Tram line <b>opens</b>'
# As the extractors write it: one paragraph a line, no blank line between
BODY = (
    "The new tram line opened on Monday after three years of works.\n"
    "Riders said <img src=x onerror=\"document.title='owned'\"> the trip takes twelve "
    "minutes.\nA second line is planned for 2028."
)


async def seed(db: Database) -> dict[str, Any]:
    sources = SourceRepository(db)
    city = await sources.create(
        parse_config({"name": "City News", "feed_url": "https://news.example/rss"})
    )
    await db.execute(
        "UPDATE feed_state SET last_outcome = 'failed', last_error = 'HTTP 503 from feed', "
        "consecutive_errors = 2, last_polled_at = now() WHERE source_id = $1",
        city.id,
    )
    queue = QueueRepository(db)
    ref = SourceRef(city.id, priority=6)
    await queue.submit(
        [Candidate(f"https://news.example/story/{i}", ref, Origin.FEED) for i in range(4)]
    )
    await db.execute(
        "UPDATE host_state SET robots_status = 'ok', robots_fetched_at = now(), "
        "robots_txt = E'User-agent: *\\nDisallow: /private/\\n'"
    )
    claims = await queue.claim("worker-1", 1)
    await queue.complete("worker-1", [Outcome(claims[0], OutcomeKind.FETCHED, 200)])
    await db.execute(
        "UPDATE host_state SET backoff_until = now() + interval '20 min', consecutive_failures = 5"
    )
    now = utcnow()
    docs = [
        RawDocument(
            url_hash=claims[0].url_hash, url=claims[0].url, final_url=None, source_id=city.id,
            source_name="City News", host="news.example", origin="feed", title=HOSTILE_TITLE,
            body=BODY, summary=None, author="Desk", published_at=now - timedelta(hours=2),
            image_url=None, language="en", content_hash=None, word_count=len(BODY.split()),
            extractor="generic", http_status=200, fetched_at=now,
        )
    ] + [
        RawDocument(
            url_hash=f"{i:064x}", url=f"https://blog.example/post/{i}", final_url=None,
            source_id=city.id, source_name="City News", host="blog.example", origin="feed",
            title=f"Older post {i}", body="Words " * 40, summary=None, author=None,
            published_at=None, image_url=None, language="en", content_hash=None,
            word_count=40, extractor="selectors", http_status=200,
            fetched_at=now - timedelta(hours=i),
        )
        for i in range(1, 4)
    ]  # fmt: skip
    await PostgresSink(db).write(docs)
    await FetchLogRepository(db).record(
        [
            LogEntry(FetchKind.PAGE, city.id, claims[0].url, LogOutcome.FAILED, 503, error="busy"),
            LogEntry(FetchKind.PAGE, city.id, claims[0].url, LogOutcome.OK, 200, elapsed_ms=80),
            LogEntry(
                FetchKind.FEED, city.id, "https://news.example/rss", LogOutcome.FAILED, 503,
                error="HTTP 503 from feed",
            ),
        ]
    )  # fmt: skip
    return {"fetched": claims[0], "city": city}


async def test_every_page_by_its_links(db: Database, served: str, tmp_path: Path) -> None:
    async_api = pytest.importorskip("playwright.async_api")
    seeded = await seed(db)
    shots: list[Path] = []
    async with (
        async_api.async_playwright() as playwright,
        chromium_page(playwright, tmp_path / "chromium-profile", width=1280) as page,
    ):

        async def shot(name: str) -> None:
            path = tmp_path / f"{name}.png"
            await page.screenshot(path=str(path), full_page=True)
            shots.append(path)
            assert await page.title() != "owned"  # no crawled script ran

        assert (await page.goto(served)).status == 200  # type: ignore[union-attr]
        await page.get_by_test_id("articles-link").click()
        await page.wait_for_url("**/documents")
        rows = page.get_by_test_id("documents").locator("tr")
        assert await rows.count() == 1 + 4
        listed = await page.get_by_test_id("documents").inner_text()
        assert "<script>" in listed and "Tram line <b>opens</b>" in listed  # as text
        await shot("documents")

        await page.get_by_label("search").fill("tram twelve")
        await page.get_by_role("button", name="Filter").click()
        await page.wait_for_url("**/documents?search=tram+twelve*")
        assert await rows.count() == 1 + 1
        await shot("documents-search")

        await page.get_by_role("link", name=HOSTILE_TITLE).click()
        await page.wait_for_url(f"**/documents/{seeded['fetched'].url_hash}")
        assert await page.get_by_test_id("title").inner_text() == HOSTILE_TITLE
        text = await page.get_by_test_id("text").inner_text()
        assert "twelve minutes" in text and '<img src=x onerror="' in text
        paragraphs = page.get_by_test_id("text").locator("p")
        assert await paragraphs.count() == 3
        first, second = [await paragraphs.nth(i).bounding_box() for i in (0, 1)]
        assert first and second and second["y"] - (first["y"] + first["height"]) >= 8  # spaced
        assert await page.get_by_test_id("text").locator("img").count() == 0
        assert await page.get_by_test_id("extractor").inner_text() == "generic"
        await shot("document")

        await page.get_by_role("link", name=seeded["fetched"].url_hash).click()
        await page.wait_for_url("**/urls/*")
        why = page.get_by_test_id("why")
        assert await why.get_attribute("data-cause") == "fetched"
        assert "frontier urls requeue" in await why.inner_text()
        assert await page.get_by_test_id("fetch-log").locator("tr").count() == 1 + 2
        assert await page.get_by_test_id("next-fetch").count() == 0  # fetched: none to come
        await shot("url")

        await page.get_by_role("link", name="news.example").first.click()
        await page.wait_for_url("**/hosts/news.example")
        assert await page.get_by_test_id("why").get_attribute("data-cause") == "host_backoff"
        assert await page.get_by_test_id("pending").inner_text() == "3"
        assert await page.get_by_test_id("robots").inner_text() == "ok"
        assert "Disallow: /private/" in await page.get_by_test_id("robots-txt").inner_text()
        await shot("host")

        await page.goto(served)
        # (the sources table's link: the overview lists a failing source twice)
        await page.get_by_test_id("sources-table").get_by_role("link", name="City News").click()
        await page.wait_for_url("**/sources/City%20News")
        assert await page.get_by_test_id("count-pending").inner_text() == "3"
        assert await page.get_by_test_id("count-fetched").inner_text() == "1"
        assert await page.get_by_test_id("consecutive-errors").inner_text() == "2"
        assert "HTTP 503 from feed" in await page.content()
        await shot("source")

        await page.goto(served)
        await page.get_by_test_id("fetch-log").get_by_role("link").first.click()
        await page.wait_for_url("**/urls/**")
        assert await page.get_by_test_id("url").inner_text() == seeded["fetched"].url

        missing = await page.goto(served + "hosts/nowhere.example")
        assert missing is not None and missing.status == 404
        await shot("missing")
        bad = await page.goto(served + "documents?since=someday")
        assert bad is not None and bad.status == 400
        assert "since" in await page.get_by_test_id("problem").inner_text()
    for path in shots:
        print(f"screenshot: {path}")
        assert path.stat().st_size > 5_000

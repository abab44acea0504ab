"""The dashboard in a real headless Chromium (Debian's `chromium`, driven by Playwright with
the system executable) over a seeded database: the numbers on the page match the database,
and a screenshot is saved as a test artefact (its path is printed)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from frontier.api.app import create_app
from frontier.db import Database
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, Outcome, OutcomeKind, SourceRef
from frontier.settings import Settings
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.states import FetchKind, LogOutcome, Origin
from tests.browser import CHROMIUM, CHROMIUM_ARGS, chromium_page, needs_chromium, serving

pytestmark = needs_chromium
__all__ = ["CHROMIUM", "CHROMIUM_ARGS"]  # (tests.browser's) for the other browser tests


async def seed(db: Database) -> None:
    sources = SourceRepository(db)
    news = await sources.create(
        parse_config({"name": "City News", "priority": 6, "feed_url": "https://news.example/rss"})
    )
    await sources.create(
        parse_config({"name": "Quiet Blog", "feed_url": "https://blog.example/feed"})
    )
    await db.execute(
        "UPDATE feed_state SET last_outcome = 'failed', last_error = 'HTTP 503 from feed', "
        "consecutive_errors = 3, last_polled_at = now() WHERE source_id = $1",
        news.id,
    )
    queue = QueueRepository(db)
    ref = SourceRef(news.id, priority=6)
    await queue.submit(
        [Candidate(f"https://host{i % 4}.example/story/{i}", ref, Origin.FEED) for i in range(57)]
    )
    claims = await queue.claim("worker-1", 3)
    await queue.complete(
        "worker-1",
        [
            Outcome(claims[0], OutcomeKind.FETCHED, 200),
            Outcome(claims[1], OutcomeKind.NOT_FOUND, 404),
        ],
    )
    await db.execute(
        "UPDATE host_state SET consecutive_failures = 4 WHERE host = $1", claims[1].host
    )
    # One pending URL waiting for a revisit (fetched before, on its source's schedule).
    await db.execute(
        "UPDATE url_frontier SET revisit_step = 1 WHERE url_hash = "
        "(SELECT min(url_hash) FROM url_frontier WHERE status = 'pending')"
    )
    await FetchLogRepository(db).record(
        [
            LogEntry(FetchKind.PAGE, news.id, claims[0].url, LogOutcome.OK, 200, elapsed_ms=87),
            LogEntry(
                FetchKind.PAGE, news.id, claims[1].url, LogOutcome.NOT_FOUND, 404, elapsed_ms=12
            ),
            LogEntry(
                FetchKind.FEED,
                news.id,
                "https://news.example/rss",
                LogOutcome.FAILED,
                503,
                elapsed_ms=40,
                error="HTTP 503 from feed",
            ),
        ]
        + [
            LogEntry(
                FetchKind.PAGE,
                news.id,
                f"https://host1.example/old/{i}",
                LogOutcome.OK,
                200,
                elapsed_ms=30 + i,
            )
            for i in range(5)
        ]
    )


@pytest.fixture
async def served(db: Database, fresh_dsn: str, tmp_path: Path) -> AsyncIterator[str]:
    settings = Settings.load(database_url=fresh_dsn, home=tmp_path, _env_file=None)
    async with serving(create_app(settings, db)) as base:
        yield base + "/"


def number(text: str) -> int:
    return int(text.replace(",", "").strip())


async def test_dashboard_numbers_match_the_database(
    db: Database, served: str, tmp_path: Path
) -> None:
    async_api = pytest.importorskip("playwright.async_api")
    await seed(db)
    expected = {
        row["status"]: row["n"]
        for row in await db.fetch("SELECT status, count(*) AS n FROM url_frontier GROUP BY 1")
    }
    assert expected == {"pending": 54, "fetching": 1, "fetched": 1, "dead": 1}

    profile = tmp_path / "chromium-profile"
    async with (
        async_api.async_playwright() as playwright,
        chromium_page(playwright, profile) as page,
    ):
        response = await page.goto(served)
        assert response is not None and response.status == 200

        async def shown(testid: str) -> int:
            return number(await page.get_by_test_id(testid).inner_text())

        for status in ("pending", "fetching", "fetched", "failed", "dead"):
            assert await shown(f"status-{status}") == expected.get(status, 0), status
        assert await shown("total") == await db.fetchval("SELECT count(*) FROM url_frontier")
        assert await shown("hosts-known") == await db.fetchval("SELECT count(*) FROM host_state")
        assert await shown("sources") == await db.fetchval("SELECT count(*) FROM sources")
        assert await shown("revisits") == 1
        assert await shown("hour-pages_ok") == await db.fetchval(
            "SELECT count(*) FROM fetch_log WHERE kind = 'page' AND outcome = 'ok'"
        )
        assert await shown("hour-polls") == 1
        log_rows = page.get_by_test_id("fetch-log").locator("tr")
        assert await log_rows.count() == 1 + await db.fetchval("SELECT count(*) FROM fetch_log")
        sources_text = await page.get_by_test_id("sources-table").inner_text()
        assert "City News" in sources_text and "HTTP 503 from feed" in sources_text
        assert await page.locator("svg.chart").count() == 2

        screenshot = tmp_path / "dashboard.png"
        await page.screenshot(path=str(screenshot), full_page=True)
        print(f"dashboard screenshot: {screenshot}")
        assert screenshot.stat().st_size > 10_000

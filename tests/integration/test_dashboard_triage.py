"""The dashboard for triage in a real headless Chromium, with FRONTIER_API_READ_AUTH on:
the login form, the overview with a read session (failing things first, no actions), then
with a write session the actions (disable, enable, fire) clicked through, and every page
it links to. Screenshots are saved under tmp_path (their paths are printed) and looked at."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from frontier.api.app import create_app
from frontier.db import Database
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, SourceRef
from frontier.settings import Settings
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.states import FetchKind, LogOutcome, Origin
from tests.browser import chromium_page, needs_chromium, serving

pytestmark = needs_chromium
WRITE, READ = "write-token-for-the-test-0123456789", "read-token-for-the-test-0123456789"


class Fired:
    def as_json(self) -> dict[str, Any]:
        return {
            "source": "City News",
            "outcome": "ok",
            "items_seen": 4,
            "items_new": 2,
            "error": None,
        }


async def fire(
    settings: Settings, db: Database, source_id: UUID, *, dry_run: bool, client: Any
) -> Fired:
    """The app's fire function (the poller's in production): records that it ran."""
    await db.execute("UPDATE sources SET priority = 9 WHERE id = $1", source_id)
    return Fired()


async def seed(db: Database) -> None:
    sources = SourceRepository(db)
    news = await sources.create(
        parse_config({"name": "City News", "feed_url": "https://news.example/rss"})
    )
    maps = await sources.create(
        parse_config(
            {
                "name": "Map Site",
                "sitemap_url": "https://maps.example/sitemap.xml",
                "ingestion_mode": "feed",
            }
        )
    )
    wire = await sources.create(
        parse_config(
            {"name": "Wire", "base_url": "https://wire.example/", "ingestion_mode": "spider"}
        )
    )
    await db.execute(
        "UPDATE feed_state SET consecutive_errors = 3, last_polled_at = now(), "
        "last_error = 'DNS lookup failed for news.example (https://news.example/rss)' "
        "WHERE source_id = $1",
        news.id,
    )
    await db.execute(
        "UPDATE feed_state SET sitemap_consecutive_errors = 2, last_polled_at = now(), "
        "sitemap_last_error = 'answered HTTP 503 (https://maps.example/sitemap.xml)' "
        "WHERE source_id = $1",
        maps.id,
    )
    await db.execute(
        "INSERT INTO spider_state (source_id, last_run_at, last_outcome) "
        "VALUES ($1, now(), 'failed')",
        wire.id,
    )
    await QueueRepository(db).submit(
        [
            Candidate(f"https://slow{i}.example/a", SourceRef(news.id, 5), Origin.FEED)
            for i in range(3)
        ]
    )
    await db.execute(
        "UPDATE host_state SET backoff_until = now() + interval '20 minutes', "
        "consecutive_failures = 4 WHERE host = 'slow1.example'"
    )
    await FetchLogRepository(db).record(
        [
            LogEntry(
                FetchKind.SPIDER,
                wire.id,
                "https://wire.example/",
                LogOutcome.FAILED,
                items_seen=0,
                items_new=0,
                elapsed_ms=1200,
                error="robots.txt unreachable: connection refused (wire.example)",
            ),
            LogEntry(
                FetchKind.PAGE,
                news.id,
                "https://slow1.example/a",
                LogOutcome.RATE_LIMITED,
                503,
                elapsed_ms=90,
                error="HTTP 503 with Retry-After 1200",
            ),
        ]
    )


@pytest.fixture
async def served(db: Database, fresh_dsn: str, tmp_path: Path) -> AsyncIterator[str]:
    settings = Settings.load(
        database_url=fresh_dsn,
        home=tmp_path,
        api_token=WRITE,
        api_read_token=READ,
        api_read_auth=True,
        api_dashboard_refresh_s=0,
        _env_file=None,
    )
    async with serving(create_app(settings, db, fire=fire)) as base:
        yield base


async def test_triage_login_overview_actions_and_pages(
    db: Database, served: str, tmp_path: Path
) -> None:
    async_api = pytest.importorskip("playwright.async_api")
    await seed(db)
    shots: list[Path] = []
    async with (
        async_api.async_playwright() as playwright,
        chromium_page(playwright, tmp_path / "profile") as page,
    ):

        async def shot(name: str) -> None:
            path = tmp_path / f"{name}.png"
            await page.screenshot(path=str(path), full_page=True)
            shots.append(path)

        await page.goto(served + "/")
        assert page.url.startswith(served + "/login?next=")  # a form, not a JSON 401
        await page.get_by_test_id("login-form").wait_for()
        await page.fill("#token", "not-a-token")
        await page.click("button[type=submit]")
        assert (
            "not the read or the write token"
            in await page.get_by_test_id("login-error").inner_text()
        )
        await shot("login-refused")
        await page.fill("#token", READ)
        await page.click("button[type=submit]")
        assert page.url == served + "/"
        failing = await page.get_by_test_id("failing-sources").inner_text()
        for cause in (
            "DNS lookup failed for news.example",
            "answered HTTP 503",
            "robots.txt unreachable",
        ):
            assert cause in failing, failing
        assert await page.locator("[data-testid^=fire-]").count() == 0  # read session
        assert "slow1.example" in await page.get_by_test_id("hosts-backing-off").inner_text()
        assert (
            "HTTP 503 with Retry-After" in await page.get_by_test_id("recent-failures").inner_text()
        )
        assert "robots.txt unreachable" in await page.get_by_test_id("spider-runs").inner_text()
        sources = await page.get_by_test_id("sources-table").inner_text()
        assert "answered HTTP 503" in sources  # a sitemap source's error, not "errors 0"
        names = page.get_by_test_id("sources-table").locator("tr td:first-child a")
        assert (await names.all_inner_texts())[:3] == ["City News", "Map Site", "Wire"]
        await shot("overview-read")

        await page.get_by_test_id("logout").click()
        await page.fill("#token", WRITE)
        await page.click("button[type=submit]")
        await page.get_by_test_id("disable-Map Site").first.click()
        assert "Map Site: disabled" in await page.get_by_test_id("notice").inner_text()
        assert await db.fetchval("SELECT enabled FROM sources WHERE name = 'Map Site'") is False
        await page.get_by_test_id("enable-Map Site").first.click()
        assert await db.fetchval("SELECT enabled FROM sources WHERE name = 'Map Site'") is True
        await page.get_by_test_id("fire-City News").first.click()
        assert (
            "City News: fired: ok, seen 4, new 2"
            in await page.get_by_test_id("notice").inner_text()
        )
        assert await db.fetchval("SELECT priority FROM sources WHERE name = 'City News'") == 9
        await shot("overview-write")

        for path, name in (
            ("/sources/City%20News", "source"),
            ("/hosts/slow1.example", "host"),
            ("/documents", "documents"),
            ("/urls/https%3A%2F%2Fslow1.example%2Fa", "url"),
        ):
            response = await page.goto(served + path)
            assert response is not None and response.status == 200, path
            await shot(f"page-{name}")
    for shot_path in shots:
        print(f"screenshot: {shot_path}")
        assert shot_path.stat().st_size > 5_000

"""The overview's listings in headless Chromium keep what tells rows apart: news URLs that
differ only in their slug show their host and slug end in the fetch log, each whole in
its cell's title, and a recent failure shows its URL after its cause. Nothing of either is
hidden by the cell's width (its text fits: no ellipsis from the browser)."""

from __future__ import annotations

from pathlib import Path

import pytest

from frontier.db import Database
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.states import FetchKind, LogOutcome
from tests.browser import chromium_page, needs_chromium
from tests.integration.test_dashboard import served

__all__ = ["served"]

pytestmark = needs_chromium

STORY = "https://www.example-news.com/2026/11/27/politics/{}-minister-resigns-after-the-vote.html"
CAUSE = "HTTP 503 from upstream: the server is overloaded, try again in a few minutes please"

FITS = "el => el.scrollWidth <= el.clientWidth"


async def test_urls_keep_their_host_and_slug(db: Database, served: str, tmp_path: Path) -> None:
    async_api = pytest.importorskip("playwright.async_api")
    urls = [STORY.format(word) for word in ("finance", "health")]
    await FetchLogRepository(db).record(
        [LogEntry(FetchKind.PAGE, None, url, LogOutcome.OK, 200, elapsed_ms=40) for url in urls]
        + [LogEntry(FetchKind.PAGE, None, urls[0], LogOutcome.FAILED, 503, error=CAUSE)]
    )
    async with (
        async_api.async_playwright() as playwright,
        chromium_page(playwright, tmp_path / "chromium-profile", width=1280) as page,
    ):
        assert (await page.goto(served)).status == 200  # type: ignore[union-attr]
        cells = page.get_by_test_id("fetch-log").locator("td[title^='https://']")
        assert await cells.count() == 3
        shown = {await cells.nth(i).get_attribute("title"): await cells.nth(i).inner_text()
                 for i in range(3)}  # fmt: skip
        assert set(shown) == set(urls)
        for url, text in shown.items():
            assert text.startswith("https://www.example-news.com/"), text
            assert text.endswith("vote.html") and url.split("/")[-1][:8] in text
            assert len(text) < len(url)
        for i in range(3):
            assert await cells.nth(i).locator("a").evaluate(FITS), "cut by the cell"
        failure = page.get_by_test_id("failure-url")
        assert await failure.count() == 1
        text = await failure.inner_text()
        assert text.startswith("https://www.example-news.com/finance") and text.endswith(".html")
        await page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)
        assert await failure.evaluate(FITS), "the URL after the cause is cut by the cell"
        await page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)
        print(f"screenshot: {tmp_path / 'overview.png'}")

"""Article versions (issue 30 item 4) against the real database and a local site: a revisit
whose text changed keeps the earlier version (its number, time, content hash, archive
record and text), the sink holding the newest; the API and `frontier documents show
--versions` list both and give their diff; FRONTIER_DOCUMENT_VERSIONS bounds how many
are kept."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from frontier.api.app import create_app
from frontier.db import Database
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy
from frontier.settings import Settings
from frontier.sinks import Sink
from frontier.sinks.elasticsearch import ElasticsearchSink
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.states import Origin
from frontier.urls import normalize_url, url_hash
from frontier.versions import DocumentVersions
from tests.browser import chromium_page, needs_chromium
from tests.es_standin import ElasticsearchStandIn
from tests.fetch_harness import after, article, fetcher_for
from tests.integration.test_dashboard import served
from tests.local_site import LocalSite
from tests.processes import frontier_env, frontier_output

HOUR = 3600
__all__ = ["served"]  # the dashboard's fixture


@pytest.fixture
async def api(db: Database, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, db)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as client:
        yield client


def edition(number: int) -> str:
    """The article as served at its `number`th fetch: the second corrects a figure."""
    page = article("Harbour reopens")
    return page.replace("paragraph 2:", "paragraph 2 (corrected):") if number > 1 else page


async def revisited(
    db: Database, site: LocalSite, archive: Path, editions: int, sink: Sink | None = None
) -> str:
    """The page fetched `editions` times, an hour apart, its text changed each time."""
    source = await SourceRepository(db).create(
        parse_config({"name": "Daily", "revisit": ["1h", "1h", "1h", "1h"]})
    )
    url = site.url("/harbour")
    await QueueRepository(db, QueuePolicy(default_delay_ms=0)).submit(
        [Candidate(url, source.ref, Origin.FEED)]
    )
    async with fetcher_for(db, archive_dir=archive, document_versions=2, sink=sink) as fetcher:
        for number in range(1, editions + 1):
            text = edition(number) if number < 3 else edition(2).replace("news", f"news{number}")
            site.serve("/harbour", text)
            summary = await fetcher.run_once(now=after((number - 1) * (HOUR + 5)))
            assert summary.claimed == 1
        await fetcher.close()
    return url


async def test_a_revisit_with_changed_text_keeps_two_versions_with_a_diff(
    db: Database, settings: Settings, local_site: LocalSite, api: httpx.AsyncClient
) -> None:
    url = await revisited(db, local_site, settings.home / "archive", editions=2)
    digest = url_hash(normalize_url(url))
    current = await db.fetchrow("SELECT * FROM raw_content WHERE url_hash = $1", digest)
    assert current is not None and "(corrected)" in current["body"]  # the sink holds v2

    answer = await api.get(f"/api/v1/documents/{quote(url, safe='')}/versions")
    assert answer.status_code == 200, answer.text
    versions = answer.json()["versions"]
    assert [(v["version"], v["current"]) for v in versions] == [(1, False), (2, True)]
    first, second = versions
    assert first["content_hash"] != second["content_hash"] == current["content_hash"]
    assert first["warc_record_id"] and first["warc_record_id"] != second["warc_record_id"]
    assert first["fetched_at"] < second["fetched_at"]

    answer = await api.get(f"/api/v1/documents/{digest}/diff", params={"old": 1, "new": 2})
    assert answer.status_code == 200, answer.text
    diff = answer.json()["diff"]
    assert diff.startswith("--- version 1\n+++ version 2\n")
    removed = [line for line in diff.splitlines() if line.startswith("-Harbour")]
    added = [line for line in diff.splitlines() if line.startswith("+Harbour")]
    assert len(removed) == len(added) == 1 and "(corrected)" in added[0]
    missing = await api.get(f"/api/v1/documents/{digest}/diff", params={"old": 1, "new": 9})
    assert missing.status_code == 404

    env = frontier_env(settings.database_url or "")
    code, out, err = await frontier_output(
        "documents", "show", url, "--versions", "--diff", "1", "2", "--json", env=env
    )
    assert code == 0, err
    shown: dict[str, Any] = json.loads(out)
    assert [v["version"] for v in shown["versions"]] == [1, 2] and shown["diff"] == diff
    code, out, err = await frontier_output("documents", "show", url, "--versions", env=env)
    assert code == 0 and "(current)" in out, err


async def test_the_setting_bounds_the_versions_kept(
    db: Database, settings: Settings, local_site: LocalSite
) -> None:
    url = await revisited(db, local_site, settings.home / "archive", editions=4)
    kept = await db.fetch(
        "SELECT version FROM document_versions WHERE url_hash = $1 ORDER BY version",
        url_hash(normalize_url(url)),
    )
    assert [k["version"] for k in kept] == [2, 3]  # at most 2 earlier ones: the oldest went


@needs_chromium
async def test_the_article_page_shows_the_history_and_the_diff(
    db: Database, settings: Settings, local_site: LocalSite, served: str, tmp_path: Path
) -> None:
    async_api = pytest.importorskip("playwright.async_api")
    url = await revisited(db, local_site, settings.home / "archive", editions=2)
    digest = url_hash(normalize_url(url))
    shot = tmp_path / "document-history.png"
    async with (
        async_api.async_playwright() as playwright,
        chromium_page(playwright, tmp_path / "chromium-profile", width=1280) as page,
    ):
        assert (await page.goto(f"{served}documents/{digest}")).status == 200  # type: ignore[union-attr]
        history = page.get_by_test_id("history")
        assert await history.locator("tr").count() == 1 + 2
        assert "current" in await history.locator("tr").nth(1).inner_text()
        diff = page.get_by_test_id("diff")
        assert await diff.locator("span.added").count() == 1
        assert "(corrected)" in await diff.locator("span.added").inner_text()
        assert await diff.locator("span.removed").count() == 1
        await page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 5_000


async def test_versions_are_kept_whichever_sink_holds_the_documents(
    db: Database, settings: Settings, local_site: LocalSite
) -> None:
    """With Elasticsearch the earlier version is read back as JSON (dates as text)."""
    standin = await ElasticsearchStandIn().start()
    sink = ElasticsearchSink(standin.url, flush_interval_s=0)
    try:
        await sink.ensure_index()
        url = await revisited(db, local_site, settings.home / "archive", editions=2, sink=sink)
        digest = url_hash(normalize_url(url))
        current = await sink.get(digest)
        assert current is not None and "(corrected)" in current["body"]
        kept = await DocumentVersions(db, 2).history(digest, current)
        assert [(v["version"], v["current"]) for v in kept] == [(1, False), (2, True)]
        assert kept[0]["fetched_at"] < kept[1]["fetched_at"]
        diff = await DocumentVersions(db, 2).diff(digest, 1, 2, current)
        assert "+Harbour reopens paragraph 2 (corrected)" in diff
        assert standin.rejected_requests == []
    finally:
        await sink.close()
        await standin.stop()

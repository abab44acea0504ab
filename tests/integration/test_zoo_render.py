"""Issue 32 item 1: client-rendered articles, rendered in Debian's headless Chromium (driven
by Playwright) under a source's `render: auto`, with the fetcher's rules held inside the
browser: a private address the page's script tries is refused (nothing arrives there),
and the browser's requests keep the host's politeness with the plain fetcher's. The sites
are tests/zoo/client_rendered.py's. One browser pool serves the whole module."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fastwarc.warc import ArchiveIterator, WarcRecordType

from fetcher.config import FetcherConfig, archive_location
from fetcher.reextract import run_reextract
from fetcher.render_pool import BrowserPool, RenderLimits, find_chromium
from fetcher.render_step import RenderStep
from fetcher.worker import Fetcher
from frontier.archive.files import Location
from frontier.archive.reader import read_record
from frontier.db import Database
from frontier.documents import DocumentFilter
from frontier.host_slots import HostSlots
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings
from frontier.sinks.postgres import PostgresSink
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.states import Origin
from tests.browser import needs_chromium
from tests.fetch_harness import UA, frontier_row
from tests.local_site import LocalSite
from tests.zoo.client_rendered import next_shell, prying_shell, react_shell, story
from tests.zoo.politeness import STAMP_TOLERANCE_S, article_html, precise_stamps

pytestmark = needs_chromium
# The site is on 127.0.0.1 and allowed; every other private address stays refused.
LIMITS = HttpLimits(UA, allowed_networks=("127.0.0.1/32",))
RENDER = RenderLimits(find_chromium("chromium"), browsers=2, timeout_s=30.0, user_agent=UA)
DELAY_MS = 300


@pytest.fixture(scope="module")
async def browsers() -> AsyncIterator[BrowserPool]:
    pool = BrowserPool(RENDER)
    try:
        yield pool
    finally:
        await pool.close()


async def fetch_all(
    db: Database, browsers: BrowserPool, *, concurrency: int = 4, archive: Path | None = None
) -> None:
    """Fetch every URL due, rendering through `browsers` and a client holding hosts."""
    slots = HostSlots(db, "render-test", new_host_delay_ms=0, lease_s=60)
    config = FetcherConfig(
        user_agent=UA, worker_id="w-render", concurrency=concurrency, archive_dir=archive
    )
    async with SafeClient(LIMITS) as client, SafeClient(LIMITS, slots) as render_client:
        renderer = RenderStep(RENDER, render_client, pool=browsers)
        fetcher = Fetcher(
            db, client, PostgresSink(db), config, QueuePolicy(default_delay_ms=0), renderer=renderer
        )
        await fetcher.run(until_idle=True)
        await fetcher.close()
        await renderer.close()


async def add(db: Database, name: str, site: LocalSite, **values: Any) -> Any:
    return await SourceRepository(db).create(
        parse_config({"name": name, "base_url": site.url("/"), **values})
    )


async def submit(db: Database, source: Any, urls: list[str]) -> None:
    await QueueRepository(db).submit([Candidate(u, source.ref, Origin.MANUAL) for u in urls])


async def stored(db: Database, url: str) -> tuple[str | None, str | None]:
    """The title and body stored for `url` (None, None: nothing stored)."""
    row = await db.fetchrow("SELECT title, body FROM raw_content WHERE url = $1", url)
    return (row["title"], row["body"]) if row else (None, None)


async def test_client_rendered_articles_are_stored_with_their_full_text_under_auto(
    db: Database, settings: Settings, local_site: LocalSite, browsers: BrowserPool
) -> None:
    """...and archived: the rendered DOM as a conversion record of the page's response,
    which the document points at, the requests of its scripts as exchanges of their own;
    `frontier reextract` reads the DOM back and finds the same documents."""
    local_site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
    react_shell(local_site, "/story/bridge", "/api/story/bridge.json", "swing")
    next_shell(local_site, "/news/bridge", "lifting")
    react_shell(local_site, "/plain/bridge", "/api/plain/bridge.json", "foot")
    auto = await add(db, "harbour-daily", local_site, render="auto")
    never = await add(db, "harbour-daily-plain", local_site, render="never")
    rendered = [local_site.url("/story/bridge"), local_site.url("/news/bridge")]
    await submit(db, auto, rendered)
    await submit(db, never, [local_site.url("/plain/bridge")])

    archive = archive_location(settings)
    await fetch_all(db, browsers, archive=archive)

    for url, subject in zip(rendered, ("swing", "lifting"), strict=True):
        row = await frontier_row(db, url)
        assert row["status"] == "fetched", (url, row["last_error"])
        title, body = await stored(db, url)
        expected = story(subject)
        assert body is not None and all(p in body for p in expected["paragraphs"]), body
        assert title == expected["title"]
    # The same shell under `never`: the plain page, which has no text.
    plain = await frontier_row(db, local_site.url("/plain/bridge"))
    assert plain["status"] != "fetched" and "no body text" in (plain["last_error"] or "")
    assert local_site.hits("/api/plain/bridge.json") == []
    # The browser did not request the page again: its document is the fetcher's answer;
    # nor the shell's image (FRONTIER_RENDER_MEDIA is off).
    assert len(local_site.hits("/story/bridge")) == 1
    assert local_site.hits("/logo192.png") == []
    # The archive: the document's pointer is the rendered DOM, converted from the response.
    where = await db.fetchrow(
        "SELECT warc_file, warc_offset, warc_length FROM raw_content WHERE url = $1", rendered[0]
    )
    record = read_record(archive, Location(*where.values()))
    assert record.headers["WARC-Type"] == "conversion" and record.headers["WARC-Refers-To"]
    assert story("swing")["paragraphs"][0].encode() in record.payload
    archived = set()
    for path in archive.iterdir():
        with path.open("rb") as stream:
            archived |= {
                r.headers["WARC-Target-URI"]
                for r in ArchiveIterator(stream, record_types=WarcRecordType.response)
            }
    assert {rendered[0], local_site.url("/api/story/bridge.json")} <= archived
    again = await run_reextract(
        settings, db, DocumentFilter(source_id=auto.id), extract_processes=0
    )
    assert (again.examined, again.unchanged, again.unreadable, again.failed) == (2, 2, 0, 0)


async def test_a_private_address_tried_by_the_pages_script_is_refused(
    db: Database, local_site: LocalSite, partner_site: LocalSite, browsers: BrowserPool
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    partner_site.serve("/admin", "router admin")  # 127.0.0.2: private, not allowed
    prying_shell(
        local_site, "/story/prying", "/api/prying.json", partner_site.url("/admin"), "cable"
    )
    source = await add(db, "prying-daily", local_site, render="auto")
    await submit(db, source, [local_site.url("/story/prying")])

    await fetch_all(db, browsers)

    assert partner_site.requests == []  # nothing arrived at the private address
    assert len(local_site.hits("/go/admin")) == 1  # the redirect there was not followed
    row = await frontier_row(db, local_site.url("/story/prying"))
    assert row["status"] == "fetched", row["last_error"]
    _title, body = await stored(db, local_site.url("/story/prying"))
    assert body is not None and all(p in body for p in story("cable")["paragraphs"])


async def test_browser_and_plain_fetches_keep_the_hosts_politeness_at_the_server(
    db: Database, local_site: LocalSite, browsers: BrowserPool
) -> None:
    """Plain articles and client-rendered ones of one host, fetched together: measured at
    the server, no request arrives while another is in flight, nor sooner than the host's
    delay after the previous answer, whether the fetcher or a browser sent it."""
    local_site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
    plain_paths = [f"/2026/05/plain-{n}" for n in range(4)]
    for number, path in enumerate(plain_paths):
        local_site.serve(path, article_html(number))
    shells = [f"/story/shell-{n}" for n in range(3)]
    for n, path in enumerate(shells):
        react_shell(local_site, path, f"/api/story/shell-{n}.json", f"number {n}")
    plain = await add(db, "polite-plain", local_site, rate_limit_ms=DELAY_MS)
    rendered = await add(db, "polite-rendered", local_site, rate_limit_ms=DELAY_MS, render="auto")
    await submit(db, plain, [local_site.url(p) for p in plain_paths])
    await submit(db, rendered, [local_site.url(p) for p in shells])

    with precise_stamps():
        await fetch_all(db, browsers, concurrency=8)

    for path in plain_paths + shells:
        row = await frontier_row(db, local_site.url(path))
        assert row["status"] == "fetched", (path, row["last_error"])
    # the browser's requests are among them: the bundle and each story's JSON
    paths = [a.request.path for a in local_site.answers]
    assert sum(p.startswith("/static/js/main.") for p in paths) == 3
    assert all(f"/api/story/shell-{n}.json" in paths for n in range(3))
    answers = sorted(local_site.answers, key=lambda a: a.request.at)
    assert len(answers) == len(local_site.requests)
    too_close = [
        (round((later.request.at - earlier.at) * 1000, 1), earlier.request.path, later.request.path)
        for earlier, later in itertools.pairwise(answers)
        if later.request.at - earlier.at < DELAY_MS / 1000 - STAMP_TOLERANCE_S
    ]
    assert not too_close, too_close

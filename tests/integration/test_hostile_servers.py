"""Hostile servers against the fetcher and the poller (issue 9, "Hostile servers"): real
local sites that dribble a body and never finish it, loop redirects, serve a robots.txt of
binary garbage or an HTML error page, a sitemap index naming itself, a gzip bomb sitemap,
a page costlier to extract than the extraction limit.

Scenarios already covered elsewhere are not repeated here: a server that never sends
headers (test_fetch_outcomes, test_safe_http), redirect loops and gzip bombs at the HTTP
client (test_safe_http), a robots.txt above 500 KiB and robots redirect loops
(test_robots_fetch). Nothing sleeps: a held response waits on an `asyncio.Event`, and the
client timeouts are small.
"""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from uuid import UUID

import pytest
from aiohttp import web

from frontier.db import Database
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.sources import SourceRepository
from poller.policy import PollPolicy
from poller.scheduler import Poller
from poller.sitemap_parse import MAX_BYTES
from tests.fetch_harness import article, fetcher_for, frontier_row, host_row, submit
from tests.local_site import Handler, LocalSite, running_site
from tests.processes import frontier_env, frontier_output

T0 = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
TICK_S = 0.05  # how often a dribbling server sends its next byte


def dribble(release: asyncio.Event, *, first: bytes, content_type: str) -> Handler:
    """A slowloris handler: headers and `first` at once, then one byte every TICK_S (never
    enough to trip a read timeout) until `release` is set, which the test does at its end."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": content_type})
        await response.prepare(request)
        await response.write(first)
        while not release.is_set():
            try:
                await asyncio.wait_for(release.wait(), timeout=TICK_S)
            except TimeoutError:
                try:
                    await response.write(b" ")
                except (ConnectionResetError, RuntimeError):  # the client gave up
                    return response
        return response

    return handler


@pytest.fixture
async def poll_client() -> AsyncIterator[SafeClient]:
    limits = HttpLimits(
        "frontier-test/1", allow_private_networks=True, read_timeout_s=0.5, total_timeout_s=0.8
    )
    async with SafeClient(limits) as client:
        yield client


def host_of(site: LocalSite) -> str:
    return f"{site.address}:{site.port}"


# -- fetcher -------------------------------------------------------------------------


async def test_fetcher_slowloris_body_times_out_and_the_url_is_retried(
    db: Database, local_site: LocalSite
) -> None:
    release = asyncio.Event()
    local_site.route("/slow", dribble(release, first=b"<html><body>", content_type="text/html"))
    await submit(db, local_site.url("/slow"))
    try:
        async with fetcher_for(db, timeout_s=0.5) as fetcher:
            await fetcher.run_once()
    finally:
        release.set()
    slow = await frontier_row(db, local_site.url("/slow"))
    assert (slow["status"], slow["retry_count"], slow["claimed_by"]) == ("pending", 1, None)
    assert "timed out" in (slow["last_error"] or "")
    assert slow["next_fetch_at"] > slow["updated_at"]  # backed off, not lost


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (bytes(range(256)) * 64 + b"\x00\xff\xfe" * 1000, "application/octet-stream"),
        (
            b"<!doctype html><html><head><title>Error</title></head><body><h1>Something went"
            b" wrong</h1><p>Disallow: / is not a rule here</p></body></html>",
            "text/html",
        ),
        ("User-agent: *\nDisallow: /private\n".encode("utf-16"), "text/plain"),
    ],
    ids=["binary", "html-error-page", "utf16"],
)
async def test_robots_garbage_or_html_error_page_allows_and_does_not_crash(
    db: Database, local_site: LocalSite, body: bytes, content_type: str
) -> None:
    local_site.serve("/robots.txt", body, content_type=content_type)
    local_site.serve("/a", article("After garbage robots"))
    await submit(db, local_site.url("/a"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    host = await host_row(db, host_of(local_site))
    # No group applies to us in such a file, so RFC 9309 allows everything.
    assert host["robots_status"] == "ok"
    assert (await frontier_row(db, local_site.url("/a")))["status"] == "fetched"


async def test_robots_slowloris_disallows_for_now_and_the_url_waits(
    db: Database, local_site: LocalSite
) -> None:
    release = asyncio.Event()
    local_site.route(
        "/robots.txt", dribble(release, first=b"User-agent: *\n", content_type="text/plain")
    )
    await submit(db, local_site.url("/a"))
    try:
        async with fetcher_for(db, timeout_s=0.5) as fetcher:
            await fetcher.run_once()
    finally:
        release.set()
    host = await host_row(db, host_of(local_site))
    assert host["robots_status"] == "disallow_all" and "timed out" in host["robots_error"]
    row = await frontier_row(db, local_site.url("/a"))
    assert row["status"] == "pending" and row["claimed_by"] is None
    assert local_site.hits("/a") == []


async def test_fetcher_gzip_bomb_page_is_capped(db: Database, local_site: LocalSite) -> None:
    bomb = gzip.compress(b"<html>" + b" " * 20_000_000)
    assert len(bomb) < 100_000
    local_site.serve("/bomb", bomb, headers={"Content-Encoding": "gzip"})
    await submit(db, local_site.url("/bomb"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    row = await frontier_row(db, local_site.url("/bomb"))
    assert (row["status"], row["dead_reason"]) == ("dead", "unsupported_content")
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 0


# -- poller --------------------------------------------------------------------------


async def feed_state(db: Database, source_id: UUID) -> dict:
    record = await db.fetchrow("SELECT * FROM feed_state WHERE source_id = $1", source_id)
    assert record is not None
    return dict(record)


async def test_poller_slowloris_feed_times_out_and_backs_off(
    db: Database, poll_client: SafeClient, local_site: LocalSite
) -> None:
    release = asyncio.Event()
    local_site.route(
        "/feed.xml",
        dribble(release, first=b'<?xml version="1.0"?><rss>', content_type="application/rss+xml"),
    )
    source = await SourceRepository(db).add("slow", feed_url=local_site.url("/feed.xml"))
    try:
        summaries = await Poller(db, poll_client, PollPolicy()).run_once(now=T0)
    finally:
        release.set()
    assert summaries[0].ok is False and "timed out" in summaries[0].error
    state = await feed_state(db, source.id)
    assert state["consecutive_errors"] == 1 and state["next_poll_at"] > T0
    assert state["poll_lease_owner"] is None
    logged = await db.fetch("SELECT outcome FROM fetch_log WHERE kind = 'feed'")
    assert [r["outcome"] for r in logged] == ["failed"]


async def test_poller_redirect_loop_is_a_clear_failure(
    db: Database, poll_client: SafeClient, local_site: LocalSite
) -> None:
    local_site.redirect("/feed.xml", "/loop.xml", status=302)
    local_site.redirect("/loop.xml", "/feed.xml", status=302)
    source = await SourceRepository(db).add("loop", feed_url=local_site.url("/feed.xml"))
    summaries = await Poller(db, poll_client, PollPolicy()).run_once(now=T0)
    assert summaries[0].ok is False and "redirect" in summaries[0].error
    assert len(local_site.requests) <= 6  # the first request and at most 5 redirects
    state = await feed_state(db, source.id)
    assert state["consecutive_errors"] == 1 and state["next_poll_at"] > T0
    assert (await SourceRepository(db).get("loop")).feed_url == local_site.url("/feed.xml")
    logged = await db.fetchrow("SELECT outcome, error FROM fetch_log")
    assert logged is not None and logged["outcome"] == "failed"
    assert "redirect" in logged["error"]


async def test_sitemap_index_pointing_to_itself_is_read_once(
    db: Database, poll_client: SafeClient, local_site: LocalSite
) -> None:
    index = (
        f"<sitemapindex><sitemap><loc>{local_site.url('/index.xml')}</loc></sitemap>"
        f"<sitemap><loc>/index.xml?again</loc></sitemap>"
        f"<sitemap><loc>{local_site.url('/pages.xml')}</loc></sitemap></sitemapindex>"
    )
    local_site.serve("/index.xml", index, content_type="application/xml")
    local_site.serve("/index.xml?again", index, content_type="application/xml")
    local_site.serve(
        "/pages.xml",
        f"<urlset><url><loc>{local_site.url('/p1')}</loc></url></urlset>",
        content_type="application/xml",
    )
    source = await SourceRepository(db).add("selfref", sitemap_url=local_site.url("/index.xml"))
    summaries = await Poller(db, poll_client, PollPolicy()).run_once(now=T0)
    assert [s.ok for s in summaries if s.source == "selfref"] == [True]
    assert len(local_site.hits("/index.xml")) == 1
    assert len(local_site.hits("/pages.xml")) == 1
    assert len(local_site.requests) <= PollPolicy().max_sitemap_files
    urls = {r["url"] for r in await db.fetch("SELECT url FROM url_frontier")}
    assert urls == {local_site.url("/p1")}
    state = await feed_state(db, source.id)
    assert state["sitemap_consecutive_errors"] == 0


async def test_gzip_bomb_sitemap_stops_at_the_size_cap(
    db: Database, poll_client: SafeClient, local_site: LocalSite
) -> None:
    head = b"<urlset>" + b"".join(
        b"<url><loc>" + local_site.url(f"/p{i}").encode() + b"</loc></url>" for i in range(3)
    )
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # a gzip stream
    chunk = b" " * 1_000_000
    parts = [packer.compress(head)] + [
        packer.compress(chunk) for _ in range(MAX_BYTES // len(chunk) + 20)
    ]
    bomb = b"".join(parts) + packer.compress(b"</urlset>") + packer.flush()
    assert len(bomb) < 200_000  # ~70 MB of XML once inflated
    local_site.serve("/sitemap.xml.gz", bomb, content_type="application/x-gzip")
    source = await SourceRepository(db).add("bomb", sitemap_url=local_site.url("/sitemap.xml.gz"))
    summaries = await Poller(db, poll_client, PollPolicy()).run_once(now=T0)
    mine = [s for s in summaries if s.source == "bomb"]
    assert mine and mine[0].ok is True
    state = await feed_state(db, source.id)
    assert "size or URL limit" in (state["sitemap_last_error"] or "")
    urls = {r["url"] for r in await db.fetch("SELECT url FROM url_frontier")}
    assert urls == {local_site.url(f"/p{i}") for i in range(3)}


async def test_nul_bytes_and_wrong_charsets_in_pages_and_feeds_are_read(
    db: Database, poll_client: SafeClient, local_site: LocalSite
) -> None:
    page = article("Nul\x00story").replace("<p>", "<p>\x00bad\x00 ", 2).encode()
    local_site.serve("/nul", page, content_type="text/html; charset=utf-8")
    local_site.serve(
        "/lie",
        article("Caf\u00e9 story").encode("utf-16"),
        content_type="text/html; charset=no-such-charset",
    )
    feed = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>T\x00</title><item>'
        f"<title>A\x00b</title><link>{local_site.url('/from-feed')}</link>"
        "<description>d\x00</description></item></channel></rss>"
    ).encode()
    local_site.serve("/feed.xml", feed, content_type="application/rss+xml")
    await submit(db, local_site.url("/nul"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
        await submit(db, local_site.url("/lie"))
        await fetcher.run_once()
    for path in ("/nul", "/lie"):
        row = await frontier_row(db, local_site.url(path))
        assert row["status"] == "fetched", (path, row["last_error"])
    await SourceRepository(db).add("nulfeed", feed_url=local_site.url("/feed.xml"))
    summaries = await Poller(db, poll_client, PollPolicy()).run_once(now=T0)
    assert [s.source for s in summaries] == ["nulfeed"]
    urls = {r["url"] for r in await db.fetch("SELECT url FROM url_frontier")}
    # A NUL in a title once failed the whole poll (jsonb cannot hold \u0000): it is dropped.
    assert summaries[0].ok is True and local_site.url("/from-feed") in urls
    meta = await db.fetchval("SELECT discovery_meta FROM url_frontier WHERE origin = 'feed'")
    assert meta["title"] == "Ab"


async def test_a_page_over_the_extraction_time_limit_fails_once_and_the_others_are_stored(
    db: Database, fresh_dsn: str
) -> None:
    """2 MiB of nothing but `<br>` tags, tens of seconds to extract (issue 35), through a
    real `frontier fetch` with a 2 s limit: the page fails with the reason, is requested
    once, and the page of another site beside it is stored."""
    async with running_site("127.0.0.41") as bad, running_site("127.0.0.42") as good:
        bad.serve("/br", b"<br>" * 2**19)
        good.serve("/a", article("Beside it"))
        await submit(db, bad.url("/br"), good.url("/a"))
        env = frontier_env(fresh_dsn, FRONTIER_EXTRACT_TIMEOUT_S="2")
        code, _out, err = await frontier_output(
            "fetch", "--until-idle", "--extract-processes", "1", env=env
        )
        assert len(bad.hits("/br")) == 1
    assert code == 0, err
    hostile = await frontier_row(db, bad.url("/br"))
    assert hostile["status"] == "failed"
    assert hostile["last_error"] == "extraction failed: over the 2 s time limit"
    assert (await frontier_row(db, good.url("/a")))["status"] == "fetched"

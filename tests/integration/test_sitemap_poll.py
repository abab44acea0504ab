"""Sitemap polling against real local servers: the corpus served as-is (every file reads
or is refused clearly), robots.txt discovery, index following, lastmod filtering,
conditional GET."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web

from frontier.db import Database
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.sources import SourceRepository
from poller.errors import SitemapRefused
from poller.policy import PollPolicy
from poller.scheduler import Poller
from poller.sitemap_parse import parse_sitemap
from tests.corpus_path import CORPUS
from tests.local_site import LocalSite

SITEMAPS = CORPUS / "sitemaps"
GO = SITEMAPS / "go-sitemap-parser"
T0 = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
async def client() -> AsyncIterator[SafeClient]:
    async with SafeClient(HttpLimits("frontier-test/1", allow_private_networks=True)) as c:
        yield c


def serve_dir(site: LocalSite, folder: Path, prefix: str = "") -> None:
    host = f"{site.address}:{site.port}"
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        body = path.read_bytes().replace(b"HOST", host.encode())
        name = path.name.replace(".robots.txt", "")
        route = prefix + "/" + str(path.relative_to(folder).with_name(name))

        async def handler(_r: web.Request, body: bytes = body) -> web.Response:
            return web.Response(body=body, content_type="application/octet-stream")

        site.route(route, handler)


async def test_every_corpus_sitemap_reads_or_is_refused_clearly(
    local_site: LocalSite, client: SafeClient
) -> None:
    serve_dir(local_site, SITEMAPS, "/c")
    read = refused = 0
    for path in sorted(p for p in SITEMAPS.rglob("*") if p.is_file() and "robots" not in p.name):
        response = await client.get(local_site.url("/c/" + str(path.relative_to(SITEMAPS))))
        try:
            sitemap = parse_sitemap(response.body)
        except SitemapRefused as exc:
            refused += 1
            assert str(exc)
            continue
        read += 1
        assert all(u.loc.startswith(("http://", "https://")) for u in sitemap.urls), path
    assert read >= 30 and refused >= 2  # atom.xml, corrupted.gz, the empty gzip


async def test_robots_discovery_follows_the_index_and_filters_by_lastmod(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    serve_dir(local_site, GO)
    local_site.serve(
        "/robots.txt",
        (GO / "robots-with-sitemapindex.robots.txt")
        .read_text()
        .replace("HOST", f"{local_site.address}:{local_site.port}"),
        content_type="text/plain",
    )
    source = await SourceRepository(db).add("go", base_url=local_site.url("/"))
    # The corpus dates are from 2024: a window reaching back that far keeps them all.
    policy = PollPolicy(sitemap_window_s=(T0 - datetime(2024, 1, 1, tzinfo=UTC)).total_seconds())
    await db.execute(
        "UPDATE feed_state SET next_poll_at = 'infinity' WHERE source_id = $1", source.id
    )

    summaries = await Poller(db, client, policy).run_once(now=T0)

    assert summaries[0].ok, summaries
    urls = {
        r["url"] for r in await db.fetch("SELECT url FROM url_frontier WHERE origin = 'sitemap'")
    }
    # sitemap-02.xml is missing from the corpus (404): its siblings are still read.
    assert urls == {local_site.url(f"/page-0{i}") for i in (1, 4, 5, 6)}
    assert "HTTP 404 (http" in summaries[0].error and "sitemap-02.xml)" in summaries[0].error
    state = await db.fetchrow("SELECT * FROM feed_state WHERE source_id = $1", source.id)
    assert state is not None and state["sitemap_location"] == local_site.url("/sitemapindex-1.xml")
    assert state["sitemap_next_poll_at"] >= T0 + timedelta(hours=3)  # phase-aligned, >= half
    log = await db.fetchrow("SELECT kind, outcome, items_new FROM fetch_log")
    assert log is not None and log["kind"] == "sitemap" and log["items_new"] == len(urls)


async def test_lastmod_window_and_conditional_get(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    fresh = (T0 - timedelta(hours=1)).isoformat()
    stale = (T0 - timedelta(days=10)).isoformat()
    body = (
        f"<urlset><url><loc>{local_site.url('/new')}</loc><lastmod>{fresh}</lastmod></url>"
        f"<url><loc>{local_site.url('/old')}</loc><lastmod>{stale}</lastmod></url>"
        f"<url><loc>{local_site.url('/undated')}</loc></url></urlset>"
    ).encode()

    async def handler(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"s1"':
            return web.Response(status=304)
        return web.Response(body=body, content_type="application/xml", headers={"ETag": '"s1"'})

    local_site.route("/sm.xml", handler)
    source = await SourceRepository(db).add("sm", sitemap_url=local_site.url("/sm.xml"))
    poller = Poller(db, client, PollPolicy())
    await poller.run_once(now=T0)
    urls = {r["url"] for r in await db.fetch("SELECT url FROM url_frontier")}
    assert urls == {local_site.url("/new"), local_site.url("/undated")}

    state = await db.fetchrow("SELECT * FROM feed_state WHERE source_id = $1", source.id)
    assert state is not None
    summaries = await poller.run_once(now=state["sitemap_next_poll_at"] + timedelta(seconds=1))
    assert [s.outcome for s in summaries if s.source == "sm"] == ["not_modified"]
    assert local_site.hits("/sm.xml")[-1].headers["If-None-Match"] == '"s1"'


async def test_a_rate_limited_or_missing_sitemap_is_logged_as_such_and_backs_off(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    """The same response decision as feeds: 429 honours Retry-After, 404 is not_found
    (before, a sitemap logged both as `failed` and ignored Retry-After)."""
    local_site.serve("/busy.xml", "slow down", status=429, headers={"Retry-After": "172800"})
    local_site.serve("/missing.xml", "no", status=404)
    repo = SourceRepository(db)
    busy = await repo.add("busy", sitemap_url=local_site.url("/busy.xml"))
    missing = await repo.add("missing", sitemap_url=local_site.url("/missing.xml"))
    policy = PollPolicy()

    summaries = await Poller(db, client, policy).run_once(now=T0)

    by_name = {s.source: s for s in summaries}
    assert by_name["busy"].ok is False and "answered HTTP 429" in by_name["busy"].error
    assert by_name["missing"].ok is False and "answered HTTP 404" in by_name["missing"].error
    logged = await db.fetch("SELECT url, outcome FROM fetch_log")
    outcomes = {r["url"]: r["outcome"] for r in logged}
    assert outcomes == {
        local_site.url("/busy.xml"): "rate_limited",
        local_site.url("/missing.xml"): "not_found",
    }
    states = {
        r["source_id"]: r
        for r in await db.fetch("SELECT source_id, sitemap_next_poll_at FROM feed_state")
    }
    # Two days asked for, far beyond the sitemap interval's first backoff step.
    assert states[busy.id]["sitemap_next_poll_at"] >= T0 + timedelta(seconds=172800)
    assert states[missing.id]["sitemap_next_poll_at"] < T0 + timedelta(seconds=172800)


async def test_bad_index_children_are_skipped_and_the_rest_is_read(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    """Issue 19, item 14: children go through normalize_url and the safe client; one bad
    child (unparseable, not http, unreachable) is skipped and named, the others read."""
    host = f"{local_site.address}:{local_site.port}"
    children = [
        "http://[oops/sitemap.xml",  # not a URL
        "javascript:alert(1)",  # not http(s)
        "http://127.0.0.1:1/unreachable.xml",  # connection refused
        f"HTTP://{host.upper()}/a.xml#frag",  # the site's odd spelling of a good one
        "/b.xml",  # relative
        f"http://{host}/a.xml",  # the same identity again: read once
    ]
    index = (
        "<sitemapindex>"
        + "".join(f"<sitemap><loc>{c}</loc></sitemap>" for c in children)
        + "</sitemapindex>"
    )
    local_site.serve("/index.xml", index, content_type="application/xml")
    for name in ("a", "b"):
        local_site.serve(
            f"/{name}.xml",
            f"<urlset><url><loc>{local_site.url('/' + name)}</loc></url></urlset>",
            content_type="application/xml",
        )
    source = await SourceRepository(db).add("idx", sitemap_url=local_site.url("/index.xml"))
    await db.execute(
        "UPDATE feed_state SET next_poll_at = 'infinity' WHERE source_id = $1", source.id
    )

    summaries = await Poller(db, client, PollPolicy()).run_once(now=T0)

    assert summaries[0].ok, summaries
    urls = {r["url"] for r in await db.fetch("SELECT url FROM url_frontier")}
    assert urls == {local_site.url("/a"), local_site.url("/b")}
    assert len(local_site.hits("/a.xml")) == 1 and len(local_site.hits("/b.xml")) == 1
    error = summaries[0].error or ""
    assert "[oops" in error and "javascript" in error and "unreachable.xml" in error


async def test_robots_sitemap_lines_are_normalised_and_bad_ones_skipped(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    host = f"{local_site.address}:{local_site.port}"
    local_site.serve(
        "/robots.txt",
        f"User-agent: *\nSitemap: http://[bad/s.xml\nSitemap: HTTP://{host}/s.xml#x\n",
        content_type="text/plain",
    )
    local_site.serve(
        "/s.xml",
        f"<urlset><url><loc>{local_site.url('/p')}</loc></url></urlset>",
        content_type="application/xml",
    )
    source = await SourceRepository(db).add("rb", base_url=local_site.url("/"))
    await db.execute(
        "UPDATE feed_state SET next_poll_at = 'infinity' WHERE source_id = $1", source.id
    )

    summaries = await Poller(db, client, PollPolicy()).run_once(now=T0)

    assert summaries[0].ok, summaries
    assert {r["url"] for r in await db.fetch("SELECT url FROM url_frontier")} == {
        local_site.url("/p")
    }
    state = await db.fetchrow(
        "SELECT sitemap_location FROM feed_state WHERE source_id = $1", source.id
    )
    assert state is not None and state["sitemap_location"] == local_site.url("/s.xml")
